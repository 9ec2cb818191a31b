"""End to end: real ``asv run`` of this project's real programs (benchmarks/programs.py).

A throw-away git repository holds ``src/``, ``pyproject.toml`` and
``benchmarks/programs.py`` with its golden file, and an ``asv.conf.json`` of
one environment (jax 0.10.2 with optax and equinox pinned as in the
project's matrix). Two commits (the project; a README-only change) are run
by asv in one round (``-a rounds=1``, samples recorded: asv's default two
rounds are the other end-to-end tests'); every benchmark of the programs
suite must be measured (skipped only where the CPU reports no device
memory), none failed; then ``jaxbench compare`` reads the two runs.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from asv.results import Results

from e2e_repo import MACHINE, PROJECT, asv, git, write_conf

pytestmark = pytest.mark.e2e

REQ = {"optax": ["0.2.8"], "equinox": ["0.13.8"]}
ENV_NAME = (
    "virtualenv-py3.11-equinox0.13.8-jax0.10.2-optax0.2.8-"
    "XLA_FLAGS--xla_force_host_platform_device_count=4"
)
SUITES = ("TrainStep", "EqxForward", "ScanRnn", "Noise")
#: The CPU backend reports no memory_stats(): asv records the skip as NaN.
SKIPPED_ON_CPU = "track_workload_device_peak_bytes"
#: A figure XLA's cost analysis leaves out (e.g. transcendentals of a ReLU
#: network) is skipped (NaN), never 0; every other figure must be a number.
MAY_BE_UNREPORTED = "Figures.track_work_"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("e2e-programs") / "repo"
    root.mkdir()
    shutil.copytree(
        PROJECT / "src", root / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
    )
    shutil.copy2(PROJECT / "pyproject.toml", root / "pyproject.toml")
    (root / "benchmarks" / "golden").mkdir(parents=True)
    (root / "benchmarks" / "__init__.py").write_text("", encoding="utf-8")
    shutil.copy2(PROJECT / "benchmarks" / "programs.py", root / "benchmarks" / "programs.py")
    for golden in (PROJECT / "benchmarks" / "golden").glob("*.npz"):
        shutil.copy2(golden, root / "benchmarks" / "golden" / golden.name)
    (root / "README.md").write_text("# e2e copy\n", encoding="utf-8")
    (root / ".gitignore").write_text("/results/\n/.asv/\n/html/\n", encoding="utf-8")
    write_conf(root / "asv.conf.json", results_dir="results", env_dir=".asv/env", req=REQ)
    git(root, "init", "-q", "-b", "main")
    commits = []
    for i, message in enumerate(("c1: the project", "c2: README only")):
        if i:
            (root / "README.md").write_text("# e2e copy\n\nA no-op.\n", encoding="utf-8")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", message, date=f"2024-01-01T0{i}:00:00+00:00")
        commits.append(git(root, "rev-parse", "HEAD"))
    hashes = root / ".asv" / "hashes.txt"
    hashes.parent.mkdir()
    hashes.write_text("\n".join(commits) + "\n", encoding="utf-8")
    asv(root, ["machine", "--yes", "--machine", MACHINE], timeout=120)
    run = ["run", "--machine", MACHINE, "--record-samples", "-a", "rounds=1", "--show-stderr"]
    asv(root, [*run, f"HASHFILE:{hashes}"], timeout=1500)
    return root, commits


def test_every_program_benchmark_is_measured_none_failed(repo: tuple[Path, list[str]]) -> None:
    root, commits = repo
    benchmarks = json.loads((root / "results" / "benchmarks.json").read_text(encoding="utf-8"))
    names = sorted(n for n in benchmarks if n.startswith("programs."))
    for suite in SUITES:
        assert f"programs.{suite}.time_warm" in names
        assert f"programs.{suite}Figures.track_work_flops" in names
        assert f"programs.{suite}Figures.track_workload_peak_rss_bytes" in names
    for commit in commits:
        result = Results.load(str(root / "results" / MACHINE / f"{commit[:8]}-{ENV_NAME}.json"))
        for name in names:
            params = benchmarks[name]["params"]
            values = result.get_result_value(name, params)
            assert values is not None, name
            for value in values:
                assert value is not None, f"{name} failed at {commit[:8]}"
                if name.endswith(SKIPPED_ON_CPU):
                    assert math.isnan(value), name
                elif MAY_BE_UNREPORTED not in name or "flops" in name or "hlo_" in name:
                    assert math.isfinite(value), (name, value)
        rss = result.get_result_value(
            "programs.TrainStepFigures.track_workload_peak_rss_bytes",
            benchmarks["programs.TrainStep.time_warm"]["params"],
        )
        assert rss[0] > 0


def test_compare_reads_the_two_runs(repo: tuple[Path, list[str]]) -> None:
    root, commits = repo
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "jaxbench",
            "compare",
            commits[0][:10],
            commits[1][:10],
            "--format",
            "json",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    rows = {row["benchmark"]: row for row in json.loads(done.stdout)["rows"]}
    for suite in SUITES:
        assert f"programs.{suite}.time_warm" in rows
        work = rows[f"programs.{suite}Figures.track_work_flops"]
        assert work["verdict"] == "unchanged", work  # the same program: the same flops
