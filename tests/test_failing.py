"""Failing benchmarks are news: a real asv run over a real git repository.

One module-scoped fixture writes a plain asv suite into a throw-away git
repository of three commits (c1 and c2 fine, c3 makes ``time_step`` raise
``RuntimeError: Array has been deleted ...``; ``track_always`` raises at every
commit) and runs the real ``asv run --show-stderr`` at each commit in this
interpreter's environment (``-E existing``: no new virtualenv, a few seconds
a commit), keeping asv's output as a log. asv writes each failure as a null
result and no error text (``asv/results.py``). ``regressions``, ``publish``
and the HTML page must name both benchmarks, the log gives their error line,
and ``--fail-on newly-failing`` exits 1 for ``time_step`` only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from conftest import AsvResultsWriter, commit_hash
from jaxbench.cli import main
from jaxbench.store.asv_log import error_line, parse_asv_log
from jaxbench.store.results import SeriesKey

ASV = Path(sys.executable).parent / "asv"
MACHINE = "m1"
ERROR = "RuntimeError: Array has been deleted with shape=float32[3]."
SUITE = """\
BROKEN = False


class Suite:
    params = [1, 2]

    def time_ok(self, n):
        sum(range(100))

    def time_step(self, n):
        if BROKEN:
            raise RuntimeError("Array has been deleted with shape=float32[3].")
        sum(range(100))


def track_always():
    raise ValueError("never worked")


def track_fine():
    return 1.0
"""


@dataclass(frozen=True)
class Run:
    root: Path
    commits: tuple[str, ...]  # oldest first
    log: Path
    env_name: str

    @property
    def results(self) -> Path:
        return self.root / "results"


def _git(root: Path, *args: str, date: str | None = None) -> str:
    environ = dict(os.environ)
    if date is not None:
        environ.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    done = subprocess.run(
        ["git", *args], cwd=root, env=environ, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    root = tmp_path_factory.mktemp("failing") / "repo"
    (root / "benchmarks").mkdir(parents=True)
    (root / "benchmarks" / "__init__.py").write_text("")
    (root / "benchmarks" / "bench.py").write_text(SUITE)
    conf = {
        "version": 1,
        "project": "failing",
        "repo": ".",
        "branches": ["main"],
        "environment_type": "virtualenv",
        "benchmark_dir": "benchmarks",
        "results_dir": "results",
        "html_dir": "html",
    }
    (root / "asv.conf.json").write_text(json.dumps(conf))
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "t@example.com")
    _git(root, "config", "user.name", "t")
    commits = []
    for day, change in ((1, None), (2, "README"), (3, "broken")):
        if change == "README":
            (root / "README").write_text("c2\n")
        elif change == "broken":
            suite = root / "benchmarks" / "bench.py"
            suite.write_text(SUITE.replace("BROKEN = False", "BROKEN = True"))
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", f"c{day}", date=f"2026-01-0{day}T00:00:00Z")
        commits.append(_git(root, "rev-parse", "HEAD"))
    environ = dict(os.environ, HOME=str(root.parent / "home"))
    Path(environ["HOME"]).mkdir()
    subprocess.run(
        [str(ASV), "machine", "--yes", "--machine", MACHINE],
        cwd=root,
        env=environ,
        capture_output=True,
        check=True,
        timeout=120,
    )
    log = root.parent / "asv-run.log"
    output = []
    for commit in commits:
        _git(root, "checkout", "-q", commit)
        done = subprocess.run(
            [
                *(str(ASV), "run", "-E", f"existing:{sys.executable}", "--set-commit-hash"),
                *(commit, "--machine", MACHINE, "--show-stderr", "--record-samples"),
            ],
            cwd=root,
            env=environ,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 2, done.stdout + done.stderr  # 2: a benchmark failed
        output.append(done.stdout + done.stderr)
    _git(root, "checkout", "-q", "main")
    log.write_text("".join(output))
    env_name = next(p.name for p in (root / "results" / MACHINE).glob(f"{commits[0][:8]}-*.json"))
    return Run(root, tuple(commits), log, env_name[9:-5])


def regressions(run: Run, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jaxbench", "regressions", *args],
        cwd=run.root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.slow
def test_asv_keeps_no_error_text_in_its_result_files(run: Run) -> None:
    raw = (run.results / MACHINE / f"{run.commits[2][:8]}-{run.env_name}.json").read_text()
    data = json.loads(raw)
    assert data["results"]["bench.Suite.time_step"][0] is None  # null: failed
    assert "stderr" not in data["result_columns"]
    assert "Array has been deleted" not in raw


@pytest.mark.slow
def test_text_names_each_failing_benchmark_newly_failing_first(run: Run) -> None:
    done = regressions(run)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    c2, c3 = run.commits[1][:8], run.commits[2][:8]
    assert lines[0] == (
        "3 benchmarks fail at the newest commit (2 newly failing, "
        "1 failing at every commit measured), worst first:"
    )
    assert lines[1].startswith(f"newly failing since {c3} (last value at {c2})  2026-01-03")
    assert lines[2] == "   bench.Suite.time_step(1)  failed at 1 of 3 commits: no error text"
    assert lines[3] == "   bench.Suite.time_step(2)  failed at 1 of 3 commits: no error text"
    assert lines[4].startswith(f"failing since {run.commits[0][:8]}, the first commit measured")
    assert lines[5] == "   bench.track_always  failed at 3 of 3 commits: no error text"
    assert lines[6].startswith("No error text: asv keeps none in its result files")
    assert lines[7] == "No regressions in 6 series."


@pytest.mark.slow
def test_the_asv_log_gives_the_last_line_of_each_error(run: Run) -> None:
    done = regressions(run, "--asv-log", str(run.log))
    assert done.returncode == 0, done.stderr
    assert f"   bench.Suite.time_step(1)  failed at 1 of 3 commits: {ERROR}" in done.stdout
    assert f"   bench.Suite.time_step(2)  failed at 1 of 3 commits: {ERROR}" in done.stdout
    assert "   bench.track_always  failed at 3 of 3 commits: ValueError: never worked" in (
        done.stdout
    )
    assert "No error text" not in done.stdout


@pytest.mark.slow
def test_json_carries_the_failures(run: Run) -> None:
    done = regressions(run, "--format", "json", "--asv-log", str(run.log))
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["format"] == 5
    assert doc["newly_failing"] == 2
    assert doc["retired"] == []
    assert doc["asv_logs"] == [str(run.log)]
    newly, always = doc["failing"]
    assert newly["newly"] is True
    assert newly["since_commit"] == run.commits[2]
    assert newly["last_good_commit"] == run.commits[1]
    assert (newly["series_measured"], newly["whole_result"], newly["retired"]) == (6, False, False)
    assert (newly["error"], newly["build_error"], newly["failed_commits"]) == (ERROR, False, 1)
    assert [f["params"] for f in newly["failures"]] == [["1"], ["2"]]
    first = newly["failures"][0]
    assert first["benchmark"] == "bench.Suite.time_step"
    assert (first["failed_commits"], first["measured_commits"]) == (1, 3)
    assert first["error"] == ERROR
    assert always["newly"] is False
    assert always["last_good_commit"] is None
    assert [f["benchmark"] for f in always["failures"]] == ["bench.track_always"]
    assert always["failures"][0]["error"] == "ValueError: never worked"


@pytest.mark.slow
def test_fail_on_newly_failing_exits_1_and_always_failing_is_not_fatal(run: Run) -> None:
    assert regressions(run, "--fail-on", "newly-failing").returncode == 1
    assert regressions(run, "--fail-on", "failing").returncode == 1
    # track_always alone has never had a value: listed, not fatal unless asked
    only = ["--benchmark", "track_always"]
    done = regressions(run, *only, "--fail-on", "newly-failing")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "bench.track_always  failed at 3 of 3 commits" in done.stdout
    assert "time_step" not in done.stdout
    assert regressions(run, *only, "--fail-on", "failing").returncode == 1
    # JSON output keeps the exit status
    assert regressions(run, "--format", "json", "--fail-on", "newly-failing").returncode == 1


@pytest.mark.slow
def test_compare_keeps_the_still_failing_rows(run: Run) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "jaxbench", "compare", *run.commits[1:], "--format", "json"],
        cwd=run.root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1, done.stderr  # time_step now fails
    rows = {(r["benchmark"], tuple(r["params"])): r for r in json.loads(done.stdout)["rows"]}
    assert rows[("bench.track_always", ())]["verdict"] == "still failing"
    assert rows[("bench.Suite.time_step", ("1",))]["verdict"] == "failed"


class _Failing(HTMLParser):
    """The rows of the page's ``failing`` section: (class, data-commit, cell texts)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, str, list[str]]] = []
        self._in = False
        self._cells: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "section":
            self._in = found.get("id") == "failing"
        elif self._in and tag == "tr" and found.get("data-commit"):
            self._cells = []
            self.rows.append((found.get("class") or "", found["data-commit"] or "", self._cells))
        elif self._cells is not None and tag == "td":
            self._cells.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "tr":
            self._cells = None

    def handle_data(self, data: str) -> None:
        if self._cells:
            self._cells[-1] += data


@pytest.mark.slow
def test_publish_summary_and_page_name_them(
    run: Run, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(run.root)
    assert main(["publish", "--asv-log", str(run.log)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(
        f"jaxbench: published {run.root / 'html'}: 0 regression(s) and 3 failing "
        "benchmark(s) in 2 group(s) (2 newly failing) listed in "
    )
    assert len(out) == 1  # said once: the page and `jaxbench regressions` list them
    page = (run.root / "html" / "jaxbench" / "regressions.html").read_text()
    parser = _Failing()
    parser.feed(page)
    assert [(cls, commit, cells[0]) for cls, commit, cells in parser.rows] == [
        ("failing newly", run.commits[2], "bench.Suite.time_step"),
        ("failing newly", run.commits[2], "bench.Suite.time_step"),
        ("failing", run.commits[0], "bench.track_always"),
    ]
    assert parser.rows[0][2][1:] == ["param1=1", "1 of 3", ERROR]
    assert parser.rows[2][2][1:] == ["", "3 of 3", "ValueError: never worked"]
    assert "3 benchmark(s) fail at the newest commit (2 newly failing)." in page


@pytest.mark.browser
def test_the_page_shows_them_in_chromium(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    chromium = Path(os.environ.get("JAXBENCH_CHROMIUM", "/usr/bin/chromium"))
    if not chromium.exists():
        pytest.skip(f"no {chromium}: install it with 'apt-get install -y chromium'")
    monkeypatch.chdir(run.root)
    assert main(["publish", "--asv-log", str(run.log)]) == 0
    from playwright.sync_api import sync_playwright

    page_path = run.root / "html" / "jaxbench" / "regressions.html"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium), args=["--no-sandbox"])
        try:
            tab = browser.new_page()
            errors: list[str] = []
            tab.on("pageerror", lambda exc: errors.append(str(exc)))
            tab.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
            tab.goto(page_path.as_uri())
            section = tab.locator("#failing")
            assert section.is_visible()
            text = section.inner_text()
            toc = tab.locator(".toc").inner_text()
        finally:
            browser.close()
    assert errors == []
    assert "Failing at the newest commit\n3" in text or "Failing at the newest commit 3" in text
    assert f"newly failing since {run.commits[2][:8]}" in text
    assert ERROR in text
    assert "ValueError: never worked" in text
    assert "Failing benchmarks" in toc


# --- the parts, on files asv's own writer makes -------------------------------------


def test_failures_across_benchmark_versions_are_newly_failing(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    """Editing a benchmark changes its asv version: a value under the old version still
    makes its failure under the new one "newly failing"."""
    asv_writer.add_benchmark("w.W.time_x")
    asv_writer.add_benchmark("w.W.time_y")
    asv_writer.write_meta()
    day = 86_400_000
    for i in range(4):
        values = {"w.W.time_x": 1e-5 if i < 2 else None, "w.W.time_y": 2e-5}
        version = {"w.W.time_x": "v1" if i < 2 else "v2"}
        asv_writer.write_result(
            commit_hash(i), 1_700_000_000_000 + i * day, values, versions=version
        )
    argv = ["regressions", "--results", str(asv_writer.root), "--no-cache"]
    assert main([*argv, "--fail-on", "newly-failing"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith(
        f"newly failing since {commit_hash(2)[:8]} (last value at {commit_hash(1)[:8]})"
    )
    assert out[2] == "   w.W.time_x  failed at 2 of 4 commits: no error text"
    # a benchmark fixed at the newest commit is not listed
    asv_writer.write_result(commit_hash(4), 1_700_000_000_000 + 4 * day, {"w.W.time_x": 1e-5})
    assert main([*argv, "--fail-on", "failing"]) == 0
    assert "fail at the newest commit" not in capsys.readouterr().out


def test_error_line_of_asv_output() -> None:
    chained = [
        "Traceback (most recent call last):",
        '  File "a.py", line 1, in f',
        "KeyError: 'x'",
        "",
        "During handling of the above exception, another exception occurred:",
        "",
        "Traceback (most recent call last):",
        '  File "a.py", line 3, in f',
        "    raise ValueError('bad')",
        "ValueError: bad",
        "asv: benchmark failed (exit status 1)",
    ]
    assert error_line(chained) == "ValueError: bad"
    assert error_line(["asv: benchmark timed out (timeout 60.0s)"]) == (
        "asv: benchmark timed out (timeout 60.0s)"
    )
    assert error_line(["asv: benchmark failed (exit status -11)"]) == (
        "asv: benchmark failed (exit status -11)"
    )
    log = parse_asv_log(
        [
            "[ 0.00%] · For p commit 0123abcd <main>:\n",
            "[ 0.00%] ·· Benchmarking env-a\n",
            "[50.00%] ··· m.f                   \x1b[31mfailed\x1b[0m\n",
            "[50.00%] ···· Traceback (most recent call last):\n",
            '                 File "m.py", line 2, in f\n',
            "               OSError: disk\n",
            "[99.00%] ··· m.g                   1.0\n",
            "unrelated CI output\n",
        ]
    )
    assert log.errors == {("0123abcd", "env-a", "m.f"): {None: "OSError: disk"}}
    cut = parse_asv_log(
        [
            "[ 0.00%] · For p commit 0123abcd <main>:\n",
            "[ 0.00%] ·· Benchmarking env-a\n",
            "[50.00%] ··· ...oads.PredictFigures.track_first_call_seconds   failed\n",
            "[50.00%] ···· For parameters: 64\n",
            "              ValueError: wrong\n",
        ]
    )
    key = SeriesKey(
        "m", "env-a", "workloads.PredictFigures.track_first_call_seconds", ("64",), None
    )
    assert cut.error(key, "0123abcd" + "0" * 32) == "ValueError: wrong"
    assert cut.error(key, "ffffffff" + "0" * 32) is None


# --- the main workflow's gate -------------------------------------------------------

PROJECT = Path(__file__).resolve().parents[1]
WORKFLOWS = [
    PROJECT / ".github" / "workflows" / "benchmarks.yml",
    PROJECT / "src" / "jaxbench" / "templates" / "workflows" / "benchmarks.yml.tmpl",
]


def _jobs(path: Path) -> dict[str, Any]:
    import yaml

    text = path.read_text(encoding="utf-8").replace("@@", "")  # the template's placeholders
    jobs: dict[str, Any] = yaml.safe_load(text)["jobs"]
    return jobs


@pytest.mark.slow
@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_the_main_workflow_fails_on_a_newly_failing_benchmark(
    run: Run, workflow: Path, tmp_path: Path
) -> None:
    """The publish job's regressions step, run as Actions runs it (bash -e) on the
    real history: the summary names the failures, the step passes the verdict to
    the deploy job, whose last step fails."""
    jobs = _jobs(workflow)
    step = next(s for s in jobs["publish"]["steps"] if s.get("id") == "regressions")
    assert jobs["publish"]["outputs"]["newly-failing"] == (
        "${{ steps.regressions.outputs.newly-failing }}"
    )
    gate = jobs["deploy"]["steps"][-1]
    assert gate["if"] == "needs.publish.outputs.newly-failing == '1'"
    bin_dir = tmp_path / "bin"  # `jaxbench` as pip installs it
    bin_dir.mkdir()
    (bin_dir / "jaxbench").write_text(f'#!/bin/sh\nexec {sys.executable} -m jaxbench "$@"\n')
    (bin_dir / "jaxbench").chmod(0o755)

    def step_run(root: Path) -> tuple[subprocess.CompletedProcess[str], str, str]:
        summary, output = tmp_path / "summary.md", tmp_path / "output"
        summary.write_text("")
        output.write_text("")
        environ = dict(
            os.environ,
            PATH=f"{bin_dir}:{os.environ['PATH']}",
            GITHUB_STEP_SUMMARY=str(summary),
            GITHUB_OUTPUT=str(output),
            ASV_LOGS=str(logs),
        )
        done = subprocess.run(
            ["bash", "-eo", "pipefail", "-c", step["run"]],
            cwd=root,
            env=environ,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        return done, summary.read_text(), output.read_text()

    logs = tmp_path / "asv-logs"  # what the publish job downloads from the measuring jobs
    logs.mkdir()
    shutil.copy2(run.log, logs / "asv-run-m1.log")
    done, summary, output = step_run(run.root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert output == "newly-failing=1\n"
    assert "newly failing since" in summary
    assert "bench.Suite.time_step(1)  failed at 1 of 3 commits" in summary
    assert "bench.track_always  failed at 3 of 3 commits: ValueError: never worked" in summary
    assert "bench.track_always  failed at 3 of 3 commits" in done.stdout  # the log's end
    gate_run = subprocess.run(
        ["bash", "-c", gate["run"]], capture_output=True, text=True, check=False
    )
    assert gate_run.returncode == 1
    assert "::error::a benchmark newly fails" in gate_run.stdout


def test_a_missing_asv_log_is_one_line_and_exit_2(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    asv_writer.add_benchmark("w.W.time_x")
    asv_writer.write_meta()
    asv_writer.write_result(commit_hash(0), 1_700_000_000_000, {"w.W.time_x": None})
    missing = tmp_path / "nope.log"
    argv = ["regressions", "--results", str(asv_writer.root), "--asv-log", str(missing)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"jaxbench: error: --asv-log {missing}: cannot read it (")
    assert len(err.strip().splitlines()) == 1


def test_pvlib_newest_commit_failed_whole_environments(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """pvlib's real history: at b2eca71b (2022-08-16) asv wrote null for every benchmark
    of two environments (7 series each), which were then never measured again: the next
    day's commits were measured in two new environments ("-build-" in their names), up to
    2023-03-18. Each is one whole-result line, on a retired environment: not news."""
    from conftest import PVLIB_RESULTS

    argv = ["regressions", "--results", str(PVLIB_RESULTS), "--no-cache", "--format", "json"]
    assert main([*argv, "--fail-on", "newly-failing"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["newly_failing"] == 0
    assert [
        (g["since_commit"][:8], g["series_measured"], g["whole_result"], g["retired"], g["newly"])
        for g in doc["failing"]
    ] == [("b2eca71b", 7, True, True, False), ("b2eca71b", 7, True, True, False)]
    assert all(f["error"] is None for g in doc["failing"] for f in g["failures"])
    # 12 environments over the years: the two measured at the newest commit are live
    live = {f.stem[9:] for f in PVLIB_RESULTS.glob("*/7a2ec9b4-*.json")}
    assert len(live) == 2
    assert len(doc["retired"]) == 10
    assert not live & {r["env_name"] for r in doc["retired"]}
    retired = {r["env_name"]: r for r in doc["retired"]}
    for group in doc["failing"]:
        assert retired[group["env_name"]]["last_commit"] == group["since_commit"]
        assert retired[group["env_name"]]["later_commits"] == 60
    assert main([*argv[:-2], "--fail-on", "failing"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0] == (
        "14 benchmarks fail at the newest commit (0 newly failing, 0 failing at every "
        "commit measured, 14 on retired environments), worst first; --failing lists each:"
    )
    assert text[1].startswith("failing since b2eca71b (last value at 4d75e259)  2022-08-16  7 of 7")
    assert text[1].endswith(
        " (retired): every benchmark failed (a build, install or suite import that failed; "
        "no error text)"
    )
    assert text[3].startswith("Retired (newer commits measured only on other machines or ")
    assert text[3].endswith("their failures are not newly failing and --fail-on ignores them.")


# --- whole results and retired environments -------------------------------------------

BUILD_FAILURE = Path(__file__).parent / "data" / "asv-build-failure"
BUILD_ENV = "virtualenv-py3.11"
IMPORT_ERROR = "ImportError: cannot import name _core from partially initialized module proj"
BUILD_ERROR = "error: Microsoft Visual C++ 14.0 or greater is required"


def test_asv_log_of_a_failed_build_gives_its_error_once_for_the_environment() -> None:
    """Real asv output (tests/data/asv-build-failure): at 92ff49f1 the build failed and asv
    skipped every benchmark; at 42846112 each benchmark failed at the suite's import."""
    from jaxbench.store.asv_log import read_asv_log

    log = read_asv_log([BUILD_FAILURE / "asv-run.log"])
    assert log.build_errors == {("92ff49f1", BUILD_ENV): BUILD_ERROR}
    assert log.build_error(BUILD_ENV, "92ff49f1cc6f2e70b14275677ca76c52c7107494") == BUILD_ERROR
    assert log.build_error(BUILD_ENV, "42846112") is None
    key = SeriesKey(MACHINE, BUILD_ENV, "bench.S.time_b", ("2",), None)
    assert log.error(key, "42846112") == IMPORT_ERROR
    assert log.error(key, "92ff49f1") is None  # skipped: no benchmark ran
    # a build that printed no error, in a log of several environments built together
    other = parse_asv_log(
        [
            "[ 0.00%] · For p commit 0123abcd <main>:\n",
            "[ 0.00%] ·· Building for env-a, env-b\n",
            "[ 0.00%] ··· Error running python -m pip wheel . (exit status 1)\n",
            "             STDOUT -------->\n",
            "             collected\n",
            "             STDERR -------->\n",
            "             \n",
            "[ 0.00%] ·· Skipping env-a\n",
            "[50.00%] ··· m.f skipped\n",
            "[50.00%] ·· Skipping env-b\n",
            "[99.00%] ··· m.f skipped\n",
        ]
    )
    assert other.build_errors == {("0123abcd", "env-a"): "collected", ("0123abcd", "env-b"): ""}


def _one_line_listing(
    results: Path, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[list[str], dict[str, Any]]:
    argv = ["regressions", "--results", str(results), "--no-cache", *args]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert main([*argv, "--format", "json"]) == 0
    return lines, json.loads(capsys.readouterr().out)


def test_a_whole_result_failure_is_one_line_with_the_cause_asv_gave(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Every benchmark failed at the last two commits (a build, then an import): one line,
    whose cause is the newest commit's; without the log, it says what it likely is."""
    log = ["--asv-log", str(BUILD_FAILURE / "asv-run.log")]
    lines, doc = _one_line_listing(BUILD_FAILURE / "results", capsys, *log)
    whole = (
        "newly failing since 92ff49f1 (last value at 8560cfcf)  2026-01-03  3 of 3 series  "
        f"{MACHINE} / {BUILD_ENV}: every benchmark failed"
    )
    assert lines == [
        "3 benchmarks fail at the newest commit (3 newly failing, 0 failing at every commit "
        "measured), worst first; --failing lists each:",
        f"{whole}: {IMPORT_ERROR}",
        "No regressions in 3 series.",
        "Too few commits to test a step: 2 commits measured at most, and a step is listed "
        "with 4 on each side; 'jaxbench review BASE HEAD' times two commits side by side.",
    ]
    (group,) = doc["failing"]
    assert (group["whole_result"], group["failed_commits"]) == (True, 2)
    assert (group["error"], group["build_error"]) == (IMPORT_ERROR, False)
    every, _doc = _one_line_listing(BUILD_FAILURE / "results", capsys, *log, "--failing")
    assert every[2:5] == [
        f"   bench.S.time_b(1)  failed at 2 of 4 commits: {IMPORT_ERROR}",
        f"   bench.S.time_b(2)  failed at 2 of 4 commits: {IMPORT_ERROR}",
        f"   bench.time_a  failed at 2 of 4 commits: {IMPORT_ERROR}",
    ]
    # up to the failed build only: its error stands for every benchmark
    results = tmp_path / "results"
    shutil.copytree(BUILD_FAILURE / "results", results)
    (results / MACHINE / f"42846112-{BUILD_ENV}.json").unlink()
    lines, doc = _one_line_listing(results, capsys, *log)
    assert lines[1] == f"{whole}; asv could not build or install it: {BUILD_ERROR}"
    assert not any(line.startswith("No error text") for line in lines)
    (group,) = doc["failing"]
    assert (group["error"], group["build_error"], group["failed_commits"]) == (
        BUILD_ERROR,
        True,
        1,
    )
    lines, _doc = _one_line_listing(results, capsys)
    assert lines[1] == (f"{whole} (a build, install or suite import that failed; no error text)")
    assert lines[2].startswith("No error text: asv keeps none in its result files")


def test_an_environment_no_longer_measured_is_retired_not_news(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    """An environment whose last commit failed, then replaced by another for 20 commits:
    its failure is listed as retired, and neither --fail-on counts it."""
    asv_writer.add_benchmark("w.W.time_x")
    asv_writer.write_meta()
    day = 86_400_000
    for i in range(30):
        value = None if i == 9 else 1e-5
        env = "old" if i < 10 else "new"
        asv_writer.write_result(
            commit_hash(i), 1_700_000_000_000 + i * day, {"w.W.time_x": value}, env_name=env
        )
    argv = ["regressions", "--results", str(asv_writer.root), "--no-cache"]
    for gate in ("newly-failing", "failing"):
        assert main([*argv, "--fail-on", gate]) == 0
        out = capsys.readouterr().out.splitlines()
    assert out[:4] == [
        "1 benchmark fails at the newest commit (0 newly failing, 0 failing at every commit "
        "measured, 1 on retired environments), worst first:",
        f"failing since {commit_hash(9)[:8]} (last value at {commit_hash(8)[:8]})  2023-11-23  "
        "1 of 1 series  m1 / old (retired)",
        "   w.W.time_x  failed at 1 of 10 commits: no error text",
        f"Retired (newer commits measured only on other machines or environments): m1 / old "
        f"after {commit_hash(9)[:8]} (20 newer commits); its failures are not newly failing "
        "and --fail-on ignores them.",
    ]
    assert main([*argv, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["newly_failing"] == 0
    assert doc["retired"] == [
        {
            "machine": "m1",
            "env_name": "old",
            "last_commit": commit_hash(9),
            "date": 1_700_000_000_000 + 9 * day,
            "later_commits": 20,
        }
    ]
    # the same failure on the environment measured at the newest commit is news
    asv_writer.write_result(
        commit_hash(30), 1_700_000_000_000 + 30 * day, {"w.W.time_x": None}, env_name="new"
    )
    assert main([*argv, "--fail-on", "newly-failing"]) == 1
    assert capsys.readouterr().out.startswith("2 benchmarks fail at the newest commit (1 newly")


def test_retired_allows_each_environment_its_own_cadence(asv_writer: AsvResultsWriter) -> None:
    """Commit dates, 100 days: one environment every day, one every other day, a weekly one
    (7 days behind the newest), one stopped at day 50 and one measured once, at day 0:
    the last two are retired."""
    from jaxbench.analyse.failures import retired_of
    from jaxbench.store.series_table import load_series_table

    asv_writer.add_benchmark("w.W.time_x")
    asv_writer.write_meta()
    day = 86_400_000
    measured = {
        "daily": range(100),
        "every-other": range(1, 100, 2),
        "weekly": range(0, 93, 7),
        "stopped": range(51),
        "once": range(1),
    }
    for env, days in measured.items():
        for i in days:
            asv_writer.write_result(
                commit_hash(i), 1_700_000_000_000 + i * day, {"w.W.time_x": 1e-5}, env_name=env
            )
    table = load_series_table(asv_writer.root, use_cache=False)
    retired = retired_of(table.files)
    assert sorted(retired) == [("m1", "once"), ("m1", "stopped")]
    assert retired[("m1", "stopped")].later_commits == 49
    assert retired[("m1", "once")].later_commits == 99


def _groups(n_groups: int, per_group: int) -> list[Any]:
    """``n_groups`` partial groups of ``per_group`` series each, each its own cause."""
    from jaxbench.analyse.failures import Failure, group_failures

    failures = [
        Failure(
            key=SeriesKey("m1", "env", f"b.B{g:02d}.time_x", (str(k),), None),
            since_commit=commit_hash(g),
            date=1_700_000_000_000 + g * 86_400_000,
            last_good_commit=commit_hash(100 + g),
            failed_commits=1 + g,
            measured_commits=50,
            newest_commit=commit_hash(99),
            series_measured=n_groups * per_group,
            error=f"ValueError: {g}",
        )
        for g in range(n_groups)
        for k in range(per_group)
    ]
    return group_failures(failures)


def test_the_failures_fit_their_budget_most_important_first() -> None:
    """40 causes of 5 series each in 20 lines: the first groups keep their worst series,
    the rest are counted in one line; --failing lists every series."""
    from jaxbench.render.failures import failures_text

    groups = _groups(40, 5)
    assert [g.failed_commits for g in groups[:2]] == [40, 39]  # the longest run first
    lines = failures_text(groups, budget=20)
    assert len(lines) == 20
    assert lines[0].endswith("worst first; --failing lists each:")
    assert lines[1].startswith(f"newly failing since {commit_hash(39)[:8]}")
    assert lines[1].endswith(": ValueError: 39")
    assert lines[2] == "   b.B39.time_x(0)  failed at 40 of 50 commits: ValueError: 39"
    assert lines[5] == "   ... and 2 more series (--failing, --format json)"
    assert lines[6].startswith(f"newly failing since {commit_hash(38)[:8]}")
    shown = [line for line in lines if line.startswith("newly failing since")]
    assert len(shown) == 20 - 1 - 4 - 1  # the summary, the first's series, the count
    assert lines[-1] == "... and 26 more groups of failing benchmarks (130 series)"
    every = failures_text(groups, every=True)
    assert len(every) == 1 + 40 * 6  # the summary, each group and its series
    assert not any("... and" in line for line in every)


def test_the_events_keep_the_screen_whatever_the_failures() -> None:
    """The listing's two parts share 60 lines: failures at most 20 when the events need
    the rest; all of them when the events leave room."""
    from jaxbench.render.regressions import FAILURE_LINES, SCREEN_LINES, listing_text

    groups = _groups(40, 5)
    asked: list[int | None] = []

    def events(n: int) -> Any:
        def text(budget: int | None) -> str:
            asked.append(budget)
            lines = n if budget is None else min(n, budget)
            return "".join(f"event line {i}\n" for i in range(lines))

        return text

    screen = listing_text(groups, events(50)).splitlines()
    assert len(screen) == SCREEN_LINES
    assert sum(line.startswith("event line") for line in screen) == SCREEN_LINES - FAILURE_LINES
    assert asked == [SCREEN_LINES, SCREEN_LINES - FAILURE_LINES]
    few = listing_text(groups, events(5)).splitlines()
    assert len(few) == SCREEN_LINES
    assert sum(line.startswith("event line") for line in few) == 5
    # --limit N / --series: the events as asked, the failures in their share
    asked.clear()
    many = listing_text(groups, events(100), budgeted=False).splitlines()
    assert asked == [None]
    assert len(many) == FAILURE_LINES + 100
    # --failing: every failing series, the events on a screen of their own
    every = listing_text(groups, events(100), every_failing=True).splitlines()
    assert len(every) == 1 + 40 * 6 + SCREEN_LINES
