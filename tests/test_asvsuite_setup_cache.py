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

# Each suite's function keeps 32 MiB of host memory from each trace (a cache
# that grows): what the workload adds to a fresh process is at least that, in
# either module, only if its memory is measured where it was not traced yet.
SUITE = textwrap.dedent(
    """
    import dataclasses
    from typing import Any

    import jax.numpy as jnp
    import numpy as np

    from jaxbench.measure import workloads
    from jaxbench.measure.asvsuite import jax_suite

    _KEPT: list[Any] = []


    def keeps(x: Any, w: Any) -> Any:
        _KEPT.append(np.ones((8 * 1024 * 1024,), np.float32))
        return jnp.tanh(x @ w)


    def make() -> workloads.Workload:
        return dataclasses.replace(workloads.get("predict"), fn=keeps)


    {name}, {name}Figures = jax_suite("{name}", make)
    """
)
KEPT = 32 * 1024 * 1024
# At least three quarters of it shows (the allocator may reuse a page or two
# that another workload freed); a process that traced the workload before shows ~0.
SEEN = KEPT * 3 // 4


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
        assert figures.memory["peak_rss_rise_bytes"].value >= SEEN
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


@pytest.mark.parametrize("method", ["track_workload_peak_rss_bytes", "track_lower_seconds"])
def test_a_suite_the_cache_lacks_measures_its_memory_before_tracing_it(
    cache_dir: Path, tmp_path: Path, method: str
) -> None:
    # A cache without the other module's suite (setup_cache could not fork):
    # the track measures in its own process, the memory first, never after a trace.
    with open(tmp_path / "cache.pickle", "wb") as handle:
        pickle.dump({}, handle)
    result = tmp_path / "result.json"
    benchmark = f"b_other.OtherFigures.{method}"
    root = str(cache_dir.parent / "benchmarks")
    _asv(tmp_path, "run", root, benchmark, "{}", "None", str(result))
    value = json.loads(result.read_text())
    if method == "track_workload_peak_rss_bytes":
        assert value >= SEEN
    else:
        assert value > 0


FRESH = textwrap.dedent(
    """
    import json, os
    from jaxbench.measure.forks import in_fresh_processes as _in_fresh_processes

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


PLAIN = textwrap.dedent(
    """
    from jaxbench.measure.asvsuite import jax_suite

    {name}, {name}Figures = jax_suite("{name}", "predict")
    """
)


def _jaxbench(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(jaxbench.__file__).parents[1])}
    return subprocess.run(
        [sys.executable, "-m", "jaxbench", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=cwd,
        check=False,
    )


def test_first_call_measures_what_a_trace_keeps_pair_by_pair(tmp_path: Path) -> None:
    # jaxbench first-call's worker runs setup_cache as asv's own process does:
    # the memory in fresh processes, so the head's 32 MiB a trace is seen. Five
    # pairs: with three, one process's 2 MiB of noise left it at Holm p > 0.01
    # (CI: differences 35.4, 31.1 and 35.8 MiB).
    sides = {}
    for side, text in (("base", PLAIN), ("head", SUITE)):
        root = tmp_path / side / "benchmarks"
        root.mkdir(parents=True)
        (root / "__init__.py").write_text("")
        (root / "a_first.py").write_text(text.format(name="First"))
        sides[side] = root
    results = tmp_path / "results"
    done = _jaxbench(
        tmp_path,
        "first-call",
        "--base-commit",
        "a" * 40,
        "--head-commit",
        "b" * 40,
        "--base-benchmarks",
        str(sides["base"]),
        "--head-benchmarks",
        str(sides["head"]),
        "--machine",
        "m",
        "--env",
        "e",
        "--results",
        str(results),
        "--rounds",
        "5",
    )
    assert done.returncode == 0, done.stderr
    files = [str(results / "m" / f"{c * 8}-e.json") for c in "ab"]
    done = _jaxbench(tmp_path, "compare", *files, "--format", "json")
    rows = {r["benchmark"].rsplit(".", 1)[-1]: r for r in json.loads(done.stdout)["rows"]}
    memory = rows["track_workload_peak_rss_bytes"]
    assert memory["verdict"] == "regression", memory
    assert memory["n_base"] == memory["n_head"] == 5
    assert memory["head"] - memory["base"] >= SEEN
    assert done.returncode == 1


def test_the_worker_and_the_suite_agree_on_the_memory_figures_and_the_variable() -> None:
    from jaxbench.kinds import WORKLOAD_MEMORY_TRACKS
    from jaxbench.lockstep import first_call_worker
    from jaxbench.measure import asvsuite

    assert set(WORKLOAD_MEMORY_TRACKS) == first_call_worker.MEMORY_METHODS
    assert first_call_worker.FIGURES_PROCESS == asvsuite.FIGURES_PROCESS
