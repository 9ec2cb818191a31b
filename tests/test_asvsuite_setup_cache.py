"""The figures cache as asv's own ``setup_cache`` process builds it, for a two-module suite.

asv runs ``setup_cache`` in a fresh process (``asv/benchmark.py setup_cache
BENCHMARK_DIR BENCHMARK_ID``) that imports only the module of ``BENCHMARK_ID``.
The cache must still hold the other module's suites (each measured in a fresh
process, its workload-memory figures with it), and every suite's workload-memory
figures, so that the ``track_*`` benchmarks look their values up instead of
measuring them once per benchmark.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import asv
import pytest

import jaxbench

pytestmark = pytest.mark.slow

RUN_SCRIPT = Path(asv.__file__).parent / "benchmark.py"

SUITE = textwrap.dedent(
    """
    from jaxbench.measure.asvsuite import jax_suite

    {name}, {name}Figures = jax_suite("{name}", "predict")
    """
)


def _asv(cwd: Path, *args: str) -> None:
    # asv's script drops PYTHONPATH's entries and keeps ASV_PYTHONPATH's
    env = {**os.environ, "ASV_PYTHONPATH": str(Path(jaxbench.__file__).parents[1])}
    done = subprocess.run(
        [sys.executable, str(RUN_SCRIPT), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("suite") / "benchmarks"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "a_first.py").write_text(SUITE.format(name="First"))
    (root / "b_other.py").write_text(SUITE.format(name="Other"))
    cache = root.parent / "cache"
    cache.mkdir()
    # asv names the first benchmark of the setup_cache group: a_first's
    _asv(cache, "setup_cache", str(root), "a_first.FirstFigures.track_lower_seconds", "{}")
    return cache


def _cache(cache_dir: Path) -> dict[tuple[str, tuple[Any, ...]], Any]:
    with open(cache_dir / "cache.pickle", "rb") as handle:
        loaded: dict[tuple[str, tuple[Any, ...]], Any] = pickle.load(handle)
    return loaded


def test_the_cache_holds_the_modules_asv_did_not_import(cache_dir: Path) -> None:
    cache = _cache(cache_dir)
    assert set(cache) == {("benchmarks.a_first:First", ()), ("benchmarks.b_other:Other", ())}
    first, other = cache[("benchmarks.a_first:First", ())], cache[("benchmarks.b_other:Other", ())]
    for figures in (first, other):
        assert figures.first_call["lower"] > 0
        assert figures.memory["peak_rss_rise_bytes"].value >= 0
        skip = figures.memory["device_peak_bytes"].skip
        assert skip == "device_peak_bytes is not reported on cpu"


@pytest.mark.parametrize("suite", ["a_first.First", "b_other.Other"])
@pytest.mark.parametrize(
    ("method", "figure"),
    [("track_lower_seconds", "lower"), ("track_workload_peak_rss_bytes", "peak_rss_rise_bytes")],
)
def test_every_track_looks_its_value_up(
    cache_dir: Path, suite: str, method: str, figure: str
) -> None:
    result = cache_dir / f"{suite}.{method}.json"
    module, name = suite.split(".")
    benchmark = f"{module}.{name}Figures.{method}"
    _asv(
        cache_dir, "run", str(cache_dir.parent / "benchmarks"), benchmark, "{}", "None", str(result)
    )
    figures = _cache(cache_dir)[(f"benchmarks.{module}:{name}", ())]
    expected = (
        figures.memory[figure].value if figure in figures.memory else figures.first_call[figure]
    )
    assert json.loads(result.read_text()) == expected


FRESH = textwrap.dedent(
    """
    import json, os
    from jaxbench.measure.asvsuite import _in_fresh_processes

    def value(index):
        return lambda: index if index != 3 else os._exit(1)  # 3: ends with no result

    print(json.dumps(_in_fresh_processes([value(i) for i in range(6)], at_a_time=2)))
    """
)


def test_fresh_processes_two_at_a_time_keep_each_result_in_its_place() -> None:
    # in a process of its own: jax's backend must not be running where it forks
    done = subprocess.run(
        [sys.executable, "-c", FRESH], capture_output=True, text=True, timeout=120, check=True
    )
    found = json.loads(done.stdout.splitlines()[-1])
    assert found[:3] + found[4:] == [0, 1, 2, 4, 5]
    assert found[3].startswith("RuntimeError: a fresh figures process ended with wait status")
