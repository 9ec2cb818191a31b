"""``jaxbench compare`` of identical code measured in separate runs and paired by the main job.

Issue 40: ``compare`` of two commits that ``asv run`` measured in separate runs
showed "3 changed (not tested)", warm times 1.21x-1.35x, for a pair the
paired history had timed side by side at 1.00x/1.01x. Here, all real: a git
repository made in a temporary folder (``toylib``: pure Python, a src layout
with its pyproject.toml; three commits that change only the README), a real
``asv run`` per commit, each its own run, in a real virtualenv asv creates
(its default ``build_cache_size``: the first commit's wheel is gone by the
third), then ``jaxbench pair-history`` over the three commits, as ``make
bench`` runs it (two pairs), then ``jaxbench compare``. No row may read
changed; the warm times of adjacent commits come from the paired history
(the pair's verdict), those of the outer two from its chain (evidence, never
a verdict). The separate runs' own ratios are printed by the rows' reasons
("separate runs read ..."), never asserted: timings are noise here.
"""

from __future__ import annotations

import datetime
import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from e2e_repo import asv, asv_environ, git, jaxbench_cli
from jaxbench.analyse.paired_history import chain_series
from jaxbench.store.paired import load_paired

pytestmark = pytest.mark.e2e

MACHINE = "aa"
ENV = "virtualenv-py3.11"
WORK = "def work(n):\n    return sum(i * i for i in range(n))\n"
PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "toylib"
version = "0.1.0"

[tool.setuptools.packages.find]
where = ["src"]
"""
SUITE = """\
import toylib


class Sums:
    params = [1000, 3000]
    param_names = ["n"]
    number = 20
    repeat = 5

    def time_sum(self, n):
        toylib.work(n)
"""
CONF = {
    "version": 1, "project": "toylib", "repo": ".", "branches": ["main"], "dvcs": "git",
    "environment_type": "virtualenv", "pythons": ["3.11"], "env_dir": ".asv/env",
    "results_dir": "results", "html_dir": "html", "benchmark_dir": "benchmarks",
    # the project's own wheel only (asv's default also builds the dependencies);
    # setuptools from the environment, so that no build fetches it
    "build_command": [
        "python -m pip wheel --no-deps --no-build-isolation -w {build_cache_dir} {build_dir}"
    ],
    "install_command": ["in-dir={env_dir} python -m pip install --no-deps {wheel_file}"],
    "uninstall_command": ["return-code=any python -m pip uninstall -y {project}"],
    "launch_method": "spawn",
}  # fmt: skip
#: Words that would call a row, or the summary, a change.
CHANGED = re.compile(r"\bchanged\b|regression|improvement")


@dataclass(frozen=True)
class Measured:
    root: Path
    commits: tuple[str, str, str]  # oldest first
    pair_log: str


def _make(root: Path) -> tuple[str, str, str]:
    (root / "src" / "toylib").mkdir(parents=True)
    (root / "src" / "toylib" / "__init__.py").write_text(WORK)
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "benchmarks").mkdir()
    (root / "benchmarks" / "__init__.py").write_text("")
    (root / "benchmarks" / "bench.py").write_text(SUITE)
    (root / "asv.conf.json").write_text(json.dumps(CONF, indent=2))
    (root / ".gitignore").write_text("/results/\n/html/\n/.asv/\n")
    git(root, "init", "-q", "-b", "main")
    commits = []
    start = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
    for i in range(1, 4):
        (root / "README.md").write_text(f"toylib, revision {i} (the library code is identical)\n")
        git(root, "add", "-A")
        git(
            root,
            "commit",
            "-q",
            "-m",
            f"c{i}",
            date=(start + datetime.timedelta(hours=i)).isoformat(),
        )
        commits.append(git(root, "rev-parse", "HEAD"))
    return commits[0], commits[1], commits[2]


def _jaxbench(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return jaxbench_cli(cwd, *args, environ=asv_environ())


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Measured:
    root = tmp_path_factory.mktemp("aa") / "toylib"
    root.mkdir()
    commits = _make(root)
    asv(root, ["machine", "--yes", "--machine", MACHINE], timeout=60)
    for commit in commits:  # separate runs, one after the other
        asv(root, ["run", "--machine", MACHINE, "--record-samples", f"{commit}^!"], timeout=600)
    done = _jaxbench(
        "pair-history", *reversed(commits), "--machine", MACHINE, "--rounds", "10",
        "--per-round", "10", cwd=root,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return Measured(root, commits, done.stderr)


def _compare(measured: Measured, base: str, head: str, *extra: str) -> tuple[int, str]:
    done = _jaxbench(
        "compare", base[:12], head[:12], "--machine", MACHINE, *extra, cwd=measured.root
    )
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, done.stdout


def test_every_commit_was_measured_in_its_own_run_and_paired(measured: Measured) -> None:
    files = sorted((measured.root / "results" / MACHINE).glob(f"*-{ENV}.json"))
    assert [f.name[:8] for f in files] == sorted(c[:8] for c in measured.commits)
    runs = load_paired(measured.root / "results", machine=MACHINE)
    assert {(r.base_commit, r.head_commit) for r in runs} == {
        (measured.commits[0], measured.commits[1]),
        (measured.commits[1], measured.commits[2]),
    }
    assert "2 pair(s) measured" in measured.pair_log
    _, out = _compare(measured, measured.commits[0], measured.commits[1], "--format", "json")
    assert json.loads(out)["one_run"] == {ENV: False}  # separate runs


@pytest.mark.parametrize("pair", [(0, 1), (1, 2)])
def test_adjacent_commits_show_no_changed_row_and_the_pairs_verdict(
    measured: Measured, pair: tuple[int, int]
) -> None:
    base, head = (measured.commits[i] for i in pair)
    status, out = _compare(measured, base, head, "--format", "json")
    doc: dict[str, Any] = json.loads(out)
    warm = [r for r in doc["rows"] if r["kind"] == "time"]
    assert len(warm) == 2
    assert {r["warm_test"] for r in warm} == {"paired history"}
    # the verdict and Holm p of the paired history's own listing
    runs = [r for r in load_paired(measured.root / "results", machine=MACHINE)
            if (r.base_commit, r.head_commit) == (base, head)]  # fmt: skip
    listed = {s.params: s.points[-1] for s in chain_series(runs, [base, head])}
    assert set(listed) == {("1000",), ("3000",)}  # asv's parameter reprs, as in its results
    for row in warm:
        point = listed[tuple(row["params"])]
        assert point.step is not None
        assert row["ratio"] == pytest.approx(point.step.ratio)
        assert row["p_family"] == pytest.approx(point.holm_p)
        assert row["reason"].startswith("paired history: ")
        assert "separate runs read " in row["reason"]
    assert not any(CHANGED.search(r["verdict"]) for r in doc["rows"]), doc["rows"]
    assert not any(r["verdict"] == "moved, not tested" for r in doc["rows"])
    assert not CHANGED.search(doc["summary"])
    assert doc["not_tested"] is None
    assert status == 0
    _, text = _compare(measured, base, head)
    assert not CHANGED.search(text), text


def test_the_outer_commits_are_chained_evidence_and_never_changed(measured: Measured) -> None:
    base, _, head = measured.commits
    status, out = _compare(measured, base, head, "--format", "json")
    doc: dict[str, Any] = json.loads(out)
    warm = [r for r in doc["rows"] if r["kind"] == "time"]
    assert {r["warm_test"] for r in warm} == {"chained"}
    for row in warm:
        assert row["p_value"] is None  # evidence, not a test
        assert "chained over 2 pairs" in row["reason"]
        assert row["verdict"] in ("unchanged", "inconclusive", "moved, not tested")
    assert not any(CHANGED.search(r["verdict"]) for r in doc["rows"]), doc["rows"]
    assert not CHANGED.search(doc["summary"])
    assert doc["not_tested"].startswith("Not tested: 2 warm times in separate runs")
    assert status == 0
    _, text = _compare(measured, base, head)
    assert not CHANGED.search(text), text
