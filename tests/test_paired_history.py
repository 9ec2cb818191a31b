"""The paired history end to end: a real git repository, real lockstep workers, real chromium.

Six commits of a tiny library (``toylib``, pure Python, no jax: the test is
about pairing, not jax). Commit 4 makes ``toylib.work`` do real extra work
(2x the loop), far above the paired gate (1.02): with 1.5x and 8 rounds, a
run beside a full ``make bench`` on the same 2 cores missed it (p above
1 %). The other commits change the README only. The suite (``benchmarks/``,
the working tree's, as asv runs it for every commit) times ``toylib.work``.
asv's own results for the six commits are written with asv's ``Results``
class (flat values: the unpaired history shows nothing). ``jaxbench
pair-history`` then times each commit beside the one before it, each side
with its commit built as asv builds it (asv.conf.json's ``build_command``:
a wheel of the commit's checkout, with the test's own setuptools) in front
of ``PYTHONPATH``: five pairs.
"""

from __future__ import annotations

import datetime
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import AsvResultsWriter
from e2e_repo import git
from jaxbench.analyse.paired_history import chain_series
from jaxbench.render.progress import done_line
from jaxbench.store.paired import load_paired

#: a real pair-history over six commits (~30 s, once for the module)
pytestmark = pytest.mark.slow

MACHINE = "m1"
ENV = "virtualenv-py3.11"
BENCH = "bench.Work.time_work"
PLANTED = 4  # 1-based
WORK = (
    "def work():\n    total = 0\n    for i in range({n}):\n        total += i\n    return total\n"
)
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


class Work:
    number = 20
    repeat = 5

    def time_work(self):
        toylib.work()
"""


@dataclass(frozen=True)
class Measured:
    root: Path
    commits: tuple[str, ...]  # oldest first
    pair_log: str

    @property
    def results(self) -> Path:
        return self.root / "results"


def _jaxbench(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jaxbench", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=900,
    )


def _make(root: Path) -> tuple[str, ...]:
    (root / "src" / "toylib").mkdir(parents=True)
    (root / "benchmarks").mkdir()
    (root / "benchmarks" / "__init__.py").write_text("")
    (root / "benchmarks" / "bench.py").write_text(SUITE)
    (root / ".gitignore").write_text("/results/\n/html/\n/.asv*\n")
    conf = {
        "version": 1,
        "project": "toylib",
        "repo": ".",
        "branches": ["main"],
        "dvcs": "git",
        "environment_type": "virtualenv",
        "pythons": ["3.11"],
        "results_dir": "results",
        "html_dir": "html",
        "benchmark_dir": "benchmarks",
        "build_command": [
            "python -m pip wheel --no-deps --no-build-isolation -w {build_cache_dir} {build_dir}"
        ],
    }
    (root / "asv.conf.json").write_text(json.dumps(conf, indent=2))
    (root / "pyproject.toml").write_text(PYPROJECT)
    git(root, "init", "-q", "-b", "main")
    commits = []
    start = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
    for i in range(1, 7):
        n = 3000 if i < PLANTED else 6000  # real extra work from commit 4 on
        (root / "src" / "toylib" / "__init__.py").write_text(WORK.format(n=n))
        (root / "README.md").write_text(f"toylib, revision {i}\n")
        git(root, "add", "-A")
        when = (start + datetime.timedelta(hours=i)).isoformat()
        git(root, "commit", "-q", "-m", f"c{i}", date=when)
        commits.append(git(root, "rev-parse", "HEAD"))
    return tuple(commits)


def _asv_results(root: Path, commits: tuple[str, ...]) -> None:
    writer = AsvResultsWriter(root / "results", machine=MACHINE)
    writer.add_benchmark(BENCH)
    writer.write_meta()
    start = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
    for i, commit in enumerate(commits, start=1):
        date = int((start + datetime.timedelta(hours=i)).timestamp() * 1000)
        writer.write_result(commit, date, {BENCH: 100e-6}, env_name=ENV)


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Measured:
    root = tmp_path_factory.mktemp("paired") / "toylib"
    root.mkdir()
    commits = _make(root)
    _asv_results(root, commits)
    done = _jaxbench(
        "pair-history", *reversed(commits), "--machine", MACHINE, "--python", sys.executable,
        "--env", ENV, "--rounds", "10", "--per-round", "5", cwd=root,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return Measured(root, commits, done.stderr)


def test_six_commits_make_five_pairs_and_only_commit_4_is_flagged(measured: Measured) -> None:
    assert "5 pair(s) measured" in measured.pair_log
    runs = load_paired(measured.results)
    assert len(runs) == 5
    # two looks: 10 rounds for all, up to 10 more only where the first was suggestive,
    # not decisive (a series stops in the second look once it is no longer suggestive)
    assert {r.first_look for r in runs} == {10}
    assert all(10 <= e.rounds <= 20 for r in runs for e in r.estimates)
    planted = next(r for r in runs if r.head_commit == measured.commits[PLANTED - 1])
    assert planted.estimates[0].rounds == 10  # 2x the loop: decided at the first look
    assert "(looks at 10" in planted.estimates[0].reason
    (series,) = chain_series(runs, measured.commits)
    assert [p.commit for p in series.points] == list(measured.commits)
    assert [p.commit for p in series.flagged] == [measured.commits[PLANTED - 1]]
    step = series.points[PLANTED - 1].step
    assert step is not None
    # 2x the loop; wide bounds: with other jobs on the 2 cores (a benchmark run
    # beside the tests) this pair has measured above 3x (4.3x once), alone about 2x
    assert 1.4 < step.ratio < 6.0
    # the chain carries the step: the last commit sits about as high
    assert series.points[-1].value > 1.4
    assert series.points[PLANTED - 2].value < 1.15


def test_regressions_lists_the_paired_flag_at_commit_4_only(measured: Measured) -> None:
    done = _jaxbench("regressions", cwd=measured.root)
    assert done.returncode == 0, done.stderr
    assert "No regressions in 1 series." in done.stdout  # asv's flat unpaired values
    section = done.stdout.split("Paired history", 1)[1]
    assert "1 commit flagged" in section
    flagged_rows = [line for line in section.splitlines() if line.startswith(BENCH)]
    assert len(flagged_rows) == 1
    pair = f"{measured.commits[PLANTED - 2][:8]}..{measured.commits[PLANTED - 1][:8]}"
    assert flagged_rows[0].split()[1] == pair  # the pair's base named beside its head
    as_json = _jaxbench("regressions", "--format", "json", cwd=measured.root)
    assert as_json.returncode == 0, as_json.stderr
    paired = json.loads(as_json.stdout)["paired_history"]
    assert paired["pairs"] == 5
    assert [f["commit"] for f in paired["flagged"]] == [measured.commits[PLANTED - 1]]
    assert [f["base_commit"] for f in paired["flagged"]] == [measured.commits[PLANTED - 2]]


def test_pairs_on_file_are_not_measured_again(measured: Measured) -> None:
    done = _jaxbench(
        "pair-history", *reversed(measured.commits[-2:]), "--machine", MACHINE,
        "--python", sys.executable, "--env", ENV, cwd=measured.root,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "0 pair(s) measured" in done.stderr
    assert "on file, skipped" in done.stderr


def test_a_pair_on_file_is_completed_when_the_suite_gains_benchmarks(
    measured: Measured, tmp_path: Path
) -> None:
    """A benchmark added to the suite later is timed for the pairs on file (and only it);
    one that cannot be timed is kept with its cause, never dropped in silence."""
    root = _bad_copy(measured, tmp_path)
    suite = root / "benchmarks" / "bench.py"
    suite.write_text(
        suite.read_text()
        + "\n    def time_again(self):\n        toylib.work()\n"
        + "\n    def time_broken(self):\n        raise RuntimeError('no such thing')\n"
    )
    writer = AsvResultsWriter(root / "results", machine=MACHINE)
    for name in (BENCH, "bench.Work.time_again", "bench.Work.time_broken"):
        writer.add_benchmark(name)
    writer.write_meta()
    pair = (measured.commits[-2], measured.commits[-1])
    before = next(
        r for r in load_paired(root / "results") if (r.base_commit, r.head_commit) == pair
    )
    done = _jaxbench(
        "pair-history", *reversed(pair), "--machine", MACHINE, "--python", sys.executable,
        "--env", ENV, "--rounds", "4", "--second-look", "0", "--per-round", "5", cwd=root,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "without 2 benchmark(s) the suite has now: timing those" in done.stderr
    assert "1 not timed: RuntimeError: no such thing (bench.Work.time_broken)" in done.stderr
    after = next(r for r in load_paired(root / "results") if (r.base_commit, r.head_commit) == pair)
    assert after.estimates[0] == before.estimates[0]  # what was on file is kept as measured
    assert [e.benchmark for e in after.estimates] == [BENCH, "bench.Work.time_again"]
    assert [(u.benchmark, u.cause) for u in after.untimed] == [
        ("bench.Work.time_broken", "RuntimeError: no such thing")
    ]
    again = _jaxbench(
        "pair-history", *reversed(pair), "--machine", MACHINE, "--python", sys.executable,
        "--env", ENV, cwd=root,
    )  # fmt: skip
    assert "on file, skipped" in again.stderr  # complete now: the failed item is on file too


def _bad_copy(measured: Measured, tmp_path: Path) -> Path:
    root = tmp_path / "copy"
    shutil.copytree(measured.root, root, ignore=shutil.ignore_patterns("html"))
    return root


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("corrupt", "not valid JSON (truncated?)"),
        ("future", "paired-history format 3, newer than this jaxbench reads"),
        ("unknown", "which has no asv results in"),
    ],
)
def test_bad_paired_file_is_one_line_exit_2_and_nothing_lost(
    measured: Measured, tmp_path: Path, damage: str, message: str
) -> None:
    root = _bad_copy(measured, tmp_path)
    target = sorted((root / "results" / MACHINE / "paired").iterdir())[0]
    text = target.read_text()
    if damage == "corrupt":
        text = text[: len(text) // 2]
    else:
        data = json.loads(text)
        if damage == "future":
            data["jaxbench_paired_format"] = 3
        else:
            data["head_commit"] = "f" * 40
        text = json.dumps(data)
    target.write_text(text)
    before = {p: p.read_bytes() for p in (root / "results").rglob("*") if p.is_file()}
    for command in (["regressions"], ["publish"]):
        done = _jaxbench(*command, cwd=root)
        assert done.returncode == 2, done.stdout + done.stderr
        assert message in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert "Traceback" not in done.stderr
    after = {p: p.read_bytes() for p in (root / "results").rglob("*") if p.is_file()}
    assert after == before
    assert not (root / "html").exists()


# ---------------------------------------------------------------------------
# The published page, in a real browser

CHROMIUM = Path("/usr/bin/chromium")


@pytest.mark.browser
def test_published_paired_page_renders_the_graph_with_commit_4_marked(measured: Measured) -> None:
    done = _jaxbench("publish", cwd=measured.root)
    assert done.returncode == 0, done.stderr
    html_dir = measured.root / "html"
    assert "jaxbench/paired.html" in (html_dir / "index.html").read_text()
    if not CHROMIUM.exists():
        pytest.skip("no /usr/bin/chromium: install it with 'apt-get install -y chromium'")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            tab = browser.new_page()
            errors: list[str] = []
            tab.on("pageerror", lambda exc: errors.append(str(exc)))
            tab.goto((html_dir / "jaxbench" / "paired.html").as_uri())
            graph = tab.locator("svg.paired-graph")
            assert graph.count() == 1
            box = graph.bounding_box()
            assert box is not None
            assert box["width"] > 300
            assert box["height"] > 100
            marked = tab.locator("svg.paired-graph rect.flagged")
            assert marked.count() == 1
            assert marked.get_attribute("data-commit") == measured.commits[PLANTED - 1]
            assert marked.bounding_box() is not None
            assert tab.locator("svg.paired-graph circle.point").count() == 5
            assert tab.locator("#flagged tbody tr").count() == 1
            assert errors == []
        finally:
            browser.close()


def test_a_commit_without_asv_results_is_not_paired(measured: Measured, tmp_path: Path) -> None:
    root = _bad_copy(measured, tmp_path)
    shutil.rmtree(root / "results" / MACHINE / "paired")
    (root / "results" / MACHINE / f"{measured.commits[-1][:8]}-{ENV}.json").unlink()
    done = _jaxbench(
        "pair-history", *reversed(measured.commits[-2:]), "--machine", MACHINE,
        "--python", sys.executable, "--env", ENV, "--no-previous", cwd=root,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"{measured.commits[-1][:8]} has no asv results" in done.stderr
    assert "0 pair(s) measured" in done.stderr
    assert not (root / "results" / MACHINE / "paired").exists()


def test_an_unknown_commit_is_one_line_exit_2(measured: Measured) -> None:
    done = _jaxbench(
        "pair-history", "nosuchcommit", "--machine", MACHINE, "--python", sys.executable,
        "--env", ENV, cwd=measured.root,
    )  # fmt: skip
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "git rev-parse" in done.stderr


def _bench_cost() -> types.ModuleType:
    path = Path(__file__).resolve().parents[1] / "bench" / "bench_cost.py"
    spec = importlib.util.spec_from_file_location("bench_cost", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_cost"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_bench_cost_reads_each_pairs_time_from_the_real_log(measured: Measured) -> None:
    cost = _bench_cost()
    pairs = cost.pair_times(measured.pair_log)
    assert len(pairs) == 5, measured.pair_log
    assert all(p.seconds > 0 for p in pairs)
    first = f"{measured.commits[0][:8]}..{measured.commits[1][:8]}"
    assert pairs[0].name == f"  pair {first} [{ENV}]"
    steps = [
        cost.Step("environments", 30.0),
        cost.Step("asv run c1", 50.0),
        cost.Step("pairs", 60.0),
        *pairs,
        cost.Step("publish", 10.0),
    ]
    table = cost.format_breakdown(steps)
    assert table.splitlines()[-1] == "whole job / its asv run alone: 1.88x"  # 150 / 80
    assert f"  pair {first} [{ENV}]" in table
    whole = next(line for line in table.splitlines() if line.startswith("whole job "))
    assert whole.split()[-2:] == ["150.0", "100.0%"]


def test_bench_cost_reads_the_pairs_timed_calls_and_a_make_bench_log(measured: Measured) -> None:
    cost = _bench_cost()
    timed = cost.pairs_timed(measured.pair_log)
    pairs = cost.pair_times(measured.pair_log)
    # Inside the timed calls of both sides: more than nothing, less than the pairs'
    # wall time on every CPU (rounds run at most one a CPU).
    assert timed is not None
    assert 0 < timed < sum(p.seconds for p in pairs) * len(os.sched_getaffinity(0))
    assert cost.pairs_timed("jaxbench pair-history: 1 pair(s) measured") is None
    done = done_line(
        "make bench", 600.0, [("asv run", 300.0), ("paired history", 290.0), ("publish", 10.0)]
    )
    steps = cost.steps_of_make_log(f"{measured.pair_log}\n{done}\n")
    assert [s.name for s in steps if not s.name.startswith(" ")] == [
        "asv run",
        "paired history",
        "publish",
    ]
    assert [s.seconds for s in steps if not s.name.startswith(" ")] == [300.0, 290.0, 10.0]
    assert len(steps) == 3 + len(pairs)
    assert cost.format_breakdown(steps).splitlines()[-1] == "whole job / its asv run alone: 2.00x"
    floor = cost.floor_line(steps, 100.0, 2)
    assert floor == (
        "pairs: 290.0 s, of which timed calls 100.0 s (both sides; at 2 round(s) at once, "
        "at least 50.0 s of wall); a 1.2x job leaves the pairs and the rest 60.0 s"
    )
    assert cost.seconds_of("1 h 02 min") == 3720.0
    with pytest.raises(SystemExit, match="make bench: done in"):
        cost.steps_of_make_log(measured.pair_log)
