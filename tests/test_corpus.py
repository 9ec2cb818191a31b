"""The conformance corpus (``tests/corpus/idioms.py``): real JAX code as its users write it.

Every idiom goes through both measuring paths, in processes with 4 logical
CPU devices: ``jaxbench report`` (``bench/corpus_table.py --paths report``) and
a real ``asv run`` of the whole corpus (``--python=same``: this virtualenv, no
new environment) in a git repository made in a temporary folder; each idiom's
figures are checked in both, and against each other.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from e2e_repo import asv_run_same

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "corpus" / "idioms.py"
sys.path.insert(0, str(CORPUS.parent))

import idioms  # noqa: E402


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASV")}
    return env | {
        "JAX_PLATFORMS": "cpu",
        "XLA_FLAGS": "--xla_force_host_platform_device_count=4",
        **extra,
    }


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """``jaxbench report`` of every idiom (asv's path: :func:`asv_run`)."""
    out = tmp_path_factory.mktemp("corpus") / "rows.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "corpus_table.py"), "--repeats", "3",
         "--paths", "report", "--json", str(out)],
        capture_output=True, text=True, env=_env(), timeout=900, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "idiom" in done.stdout
    assert "first call" in done.stdout
    return {row["idiom"]: row for row in json.loads(out.read_text())}


@dataclass(frozen=True)
class AsvRun:
    """The whole corpus through one real ``asv run``: its exit status, output and results."""

    status: int
    output: str
    results: dict[str, Any]

    def value(self, idiom: str, benchmark: str) -> Any:
        """The one value asv recorded for ``idiom``'s ``benchmark`` (None: failed)."""
        figures = benchmark.startswith("track_")
        name = f"idioms.{idioms.suite_name(idiom)}{'Figures' if figures else ''}.{benchmark}"
        (value,) = self.results[name][0]
        return value


@pytest.fixture(scope="module")
def asv_run(tmp_path_factory: pytest.TempPathFactory) -> AsvRun:
    tmp = tmp_path_factory.mktemp("corpus-asv")
    repo = tmp / "repo"
    (repo / "benchmarks").mkdir(parents=True)
    (repo / "benchmarks" / "__init__.py").write_text("")
    shutil.copy(CORPUS, repo / "benchmarks" / "idioms.py")
    done, results = asv_run_same(
        repo, "corpus-box", _env(HOME=str(tmp), JAXBENCH_MACHINE="corpus-box")
    )
    return AsvRun(done.returncode, done.stdout + done.stderr, results)


@pytest.mark.slow
def test_the_corpus_has_the_issues_idioms(rows: dict[str, dict[str, Any]]) -> None:
    assert len(idioms.IDIOMS) >= 15
    assert set(rows) == set(idioms.IDIOMS) | set(idioms.FAILS)


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.parametrize("idiom", list(idioms.IDIOMS))
def test_each_idiom_passes_both_paths(
    rows: dict[str, dict[str, Any]], asv_run: AsvRun, idiom: str
) -> None:
    row = rows[idiom]
    assert row["passed"], row
    assert row["report_status"] == 0
    assert row["warm"] > 0
    assert row["first_call"] > 0
    assert asv_run.value(idiom, "time_warm") > 0, asv_run.output[-3000:]
    assert 0 <= asv_run.value(idiom, "track_tolerance_used") <= 1
    # a warm call compiles nothing, except a library API declared to compile at every call
    compiles = 1.0 if idioms.make(idiom).compiles_every_call else 0.0
    assert row["compiles_per_call"] == asv_run.value(idiom, "track_compiles_per_call") == compiles
    flops = asv_run.value(idiom, "track_work_flops")
    if idiom in idioms.NO_WORK:  # the warning says why, in the report; asv records a skip
        assert not row["work"]
        assert any(idioms.NO_WORK[idiom] in line for line in row["warnings"])
        assert flops is None or math.isnan(flops)  # asv records a skip as NaN
    else:
        assert row["work"]
        assert flops > 0
        assert row["warnings"] == []


@pytest.mark.slow
def test_the_kinds_of_reference(rows: dict[str, dict[str, Any]]) -> None:
    assert rows["optax_step"]["reference"] == "float64"
    assert rows["bfloat16"]["reference"] == "float64"
    assert rows["eqx_module"]["reference"] == "numpy"
    # integer state in a lax.cond: x64's int64 meets int32; the reference still runs
    assert rows["hmc_integer_state"]["reference"] == "float64"


@pytest.mark.e2e
@pytest.mark.slow
def test_the_same_array_donated_twice_fails_with_one_line(
    rows: dict[str, dict[str, Any]], asv_run: AsvRun
) -> None:
    row = rows["same_array_twice_donated"]
    message = idioms.FAILS["same_array_twice_donated"][1]
    assert row["report_status"] == 2
    assert row["report_stderr"].count("\n") == 0
    assert message in row["report_stderr"]
    # asv: the one idiom that fails makes asv exit 2, with the one line, no time recorded
    assert asv_run.status == 2, asv_run.output[-3000:]
    assert message in asv_run.output
    assert "Array has been deleted" not in asv_run.output
    failing = f"idioms.{idioms.suite_name('same_array_twice_donated')}.time_warm"
    assert asv_run.results[failing][0] in (None, [None])
