"""The conformance corpus (``tests/corpus/idioms.py``): real JAX code as its users write it.

Every idiom goes through both measuring paths (``bench/corpus_table.py``:
``jaxbench report`` and asv_runner's figures and timing loop, in a process with
4 logical CPU devices), and the whole corpus once through a real ``asv run``
(``--python=same``: this virtualenv, no new environment) in a git repository
made in a temporary folder.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
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
    out = tmp_path_factory.mktemp("corpus") / "rows.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "corpus_table.py"), "--repeats", "3",
         "--json", str(out)],
        capture_output=True, text=True, env=_env(), timeout=900, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "idiom" in done.stdout
    assert "first call" in done.stdout
    return {row["idiom"]: row for row in json.loads(out.read_text())}


@pytest.mark.slow
def test_the_corpus_has_the_issues_idioms(rows: dict[str, dict[str, Any]]) -> None:
    assert len(idioms.IDIOMS) >= 15
    assert set(rows) == set(idioms.IDIOMS) | set(idioms.FAILS)


@pytest.mark.slow
@pytest.mark.parametrize("idiom", list(idioms.IDIOMS))
def test_each_idiom_passes_both_paths(rows: dict[str, dict[str, Any]], idiom: str) -> None:
    row = rows[idiom]
    assert row["passed"], row
    assert row["report_status"] == 0
    assert row["warm"] > 0
    assert row["first_call"] > 0
    asv = row["asv"]
    assert 0 <= asv["track_tolerance_used"] <= 1
    assert asv["time_warm"] > 0
    # a warm call compiles nothing, except a library API declared to compile at every call
    compiles = 1.0 if idioms.make(idiom).compiles_every_call else 0.0
    assert row["compiles_per_call"] == asv["track_compiles_per_call"] == compiles
    if idiom in idioms.NO_WORK:  # the warning says why, in the report and asv's skip
        assert not row["work"]
        assert any(idioms.NO_WORK[idiom] in line for line in row["warnings"])
        assert idioms.NO_WORK[idiom] in asv["track_work_flops"]
    else:
        assert row["work"]
        assert asv["track_work_flops"] > 0
        assert row["warnings"] == []


@pytest.mark.slow
def test_the_kinds_of_reference(rows: dict[str, dict[str, Any]]) -> None:
    assert rows["optax_step"]["reference"] == "float64"
    assert rows["bfloat16"]["reference"] == "float64"
    assert rows["eqx_module"]["reference"] == "numpy"
    # integer state in a lax.cond: x64's int64 meets int32; the reference still runs
    assert rows["hmc_integer_state"]["reference"] == "float64"


@pytest.mark.slow
def test_the_same_array_donated_twice_fails_with_one_line(
    rows: dict[str, dict[str, Any]],
) -> None:
    row = rows["same_array_twice_donated"]
    message = idioms.FAILS["same_array_twice_donated"][1]
    assert row["report_status"] == 2
    assert row["report_stderr"].count("\n") == 0
    assert message in row["report_stderr"]
    assert all(message in value for value in row["asv"].values())


@pytest.mark.e2e
def test_the_whole_corpus_under_a_real_asv_run(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "benchmarks").mkdir(parents=True)
    (repo / "benchmarks" / "__init__.py").write_text("")
    shutil.copy(CORPUS, repo / "benchmarks" / "idioms.py")
    done, results = asv_run_same(
        repo, "corpus-box", _env(HOME=str(tmp_path), JAXBENCH_MACHINE="corpus-box")
    )
    output = done.stdout + done.stderr
    assert done.returncode in (0, 2), output[-3000:]  # 2: the one idiom that must fail
    for idiom in idioms.IDIOMS:
        suite = f"idioms.{idioms.suite_name(idiom)}"
        (warm,) = results[f"{suite}.time_warm"][0]
        assert warm is not None, (idiom, output[-3000:])
        assert warm > 0
        (used,) = results[f"{suite}Figures.track_tolerance_used"][0]
        assert used is not None, idiom
        assert 0 <= used <= 1, idiom
        (flops,) = results[f"{suite}Figures.track_work_flops"][0]
        skipped = flops is None or math.isnan(flops)  # asv records a skip as NaN
        assert skipped == (idiom in idioms.NO_WORK), idiom
        (compiles,) = results[f"{suite}Figures.track_compiles_per_call"][0]
        assert compiles == (1.0 if idioms.make(idiom).compiles_every_call else 0.0), idiom
    failing = f"idioms.{idioms.suite_name('same_array_twice_donated')}.time_warm"
    assert results[failing][0] in (None, [None])  # failed: no time recorded
    assert idioms.FAILS["same_array_twice_donated"][1] in output
    assert "Array has been deleted" not in output
