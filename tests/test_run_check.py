"""A run that measured nothing is never shown as nothing found.

asv's real output (``tests/data/asv_logs``, PROVENANCE.md) says when it could
not build the project or import the suite; the paired history's files say
when a pair timed nothing. ``jaxbench check-run`` reads both and ends the job
non-zero with the cause; silent and 0 when the run measured what it could.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from jaxbench.analyse.paired_history import gaps
from jaxbench.jobs.run_check import run_problems
from jaxbench.render.paired import format_paired_text, pair_history_summary, untimed_lines
from jaxbench.store.asv_log import read_suite_failure, selected_nothing, suite_failure
from jaxbench.store.paired import PairedEstimate, PairedRun, Untimed, read_paired, write_paired

LOGS = Path(__file__).parent / "data" / "asv_logs"
#: where the logs were made (their paths are under it)
ROOT = Path("/tmp/t2/r")
A, B, C = "a" * 40, "b" * 40, "c" * 40


@pytest.mark.parametrize(
    ("log", "said"),
    [
        (
            "suite-syntax-error.log",
            "asv could not import the benchmark suite: benchmarks/bad.py, line 3: "
            "SyntaxError: invalid syntax",
        ),
        (
            "suite-import-error.log",
            "asv could not import the benchmark suite: benchmarks/bad.py, line 2: "
            "ModuleNotFoundError: No module named 'nonexistent_mod'",
        ),
        ("build-error.log", "asv could not build the project: RuntimeError: setup broke"),
        (
            "multiple-wheels.log",
            "asv could not build the project: the build made several wheels (asv's default "
            "build_command builds the dependencies' too) and asv cannot tell which to install; "
            "give asv.conf.json a build_command that builds the project's alone: "
            '"python -m pip wheel --no-deps -w {build_cache_dir} {build_dir}" '
            "(as jaxbench init writes it)",
        ),
    ],
)
def test_asvs_output_says_why_it_measured_nothing(log: str, said: str) -> None:
    found = read_suite_failure(LOGS / log, ROOT)
    assert found is not None
    assert str(found) == said


def test_a_run_that_imported_the_suite_has_no_suite_failure() -> None:
    """A failing benchmark is the listing's business, not a failed run."""
    assert read_suite_failure(LOGS / "benchmark-failed.log", ROOT) is None


def test_asvs_progress_lines_are_never_the_cause() -> None:
    """The real log without asv's "Last error" line: nothing says why, and it says so
    (not "Installing ... into ...")."""
    lines = (LOGS / "multiple-wheels.log").read_text(encoding="utf-8").splitlines()
    found = suite_failure([line for line in lines if "Last error" not in line], ROOT)
    assert found is not None
    assert str(found) == "asv could not build the project: asv printed no error text"


def test_a_run_whose_b_selected_nothing_is_told_apart(tmp_path: Path) -> None:
    """asv's exit 1 when ``-b`` leaves nothing to run (a review's first step on a suite
    of plain ``time_*`` benchmarks) is no failure of the suite."""
    assert selected_nothing(LOGS / "nothing-selected.log")
    assert read_suite_failure(LOGS / "nothing-selected.log", ROOT) is None
    for other in ("benchmark-failed.log", "build-error.log", "multiple-wheels.log"):
        assert not selected_nothing(LOGS / other), other
    assert not selected_nothing(tmp_path / "no-such.log")
    (tmp_path / "empty.log").write_text("")
    assert not selected_nothing(tmp_path / "empty.log")


def test_a_b_pattern_that_selects_nothing_is_named_with_the_fix(tmp_path: Path) -> None:
    """``make bench ASV_ARGS='-b typo'``: asv exits 1 after "No benchmarks selected"; the
    job's last word says so (the pattern, or an empty suite) instead of "read why"."""

    def problems() -> list[str]:
        return run_problems(
            asv_log=LOGS / "nothing-selected.log",
            asv_status=1,
            commits=[A],
            results=tmp_path,
            machine="m",
            root=ROOT,
        )

    where = f" and run again (asv's output: {LOGS / 'nothing-selected.log'})"
    assert problems() == [  # no benchmarks.json: either
        "asv run selected no benchmark: its -b (--bench) pattern matches no benchmark's name, "
        "or the suite has none; fix the pattern (ASV_ARGS in make) or the suite" + where
    ]
    (tmp_path / "benchmarks.json").write_text('{"version": 2}')
    (empty,) = problems()
    assert empty.startswith("asv found no benchmark in the suite: asv.conf.json's benchmark_dir")
    entry = {"name": "bench_double.TimeDouble.time_double", "type": "time", "unit": "seconds",
             "param_names": [], "params": [], "version": "1"}  # fmt: skip
    benchmarks = {"version": 2, "bench_double.TimeDouble.time_double": entry}
    (tmp_path / "benchmarks.json").write_text(json.dumps(benchmarks))
    assert problems() == [
        "asv run selected no benchmark: its -b (--bench) pattern, a regular expression searched "
        "in each name, matches none of the suite's 1 (e.g. bench_double.TimeDouble.time_double); "
        "fix the pattern (ASV_ARGS in make)" + where
    ]
    assert run_problems(  # asv ran (0): the log's last line is not read as a failure
        asv_log=LOGS / "nothing-selected.log", asv_status=0, commits=[A], results=tmp_path,
        machine="m", root=ROOT,
    ) == []  # fmt: skip


def _run(base: str, head: str, **fields: object) -> PairedRun:
    run = PairedRun(
        machine="m",
        env_name="env",
        base_commit=base,
        head_commit=head,
        per_round=20,
        factor=1.02,
        alpha=0.01,
        date=1,
        estimates=(),
    )
    return replace(run, **fields)  # type: ignore[arg-type]


def _estimate(name: str) -> PairedEstimate:
    return PairedEstimate(name, (), 1.0, 0.99, 1.01, 0.5, 10, 200, "unchanged")


def test_a_pair_that_timed_nothing_is_named_with_its_cause(tmp_path: Path) -> None:
    cause = "ModuleNotFoundError: No module named 'pkg._version'"
    nothing = _run(
        A, B, untimed=(Untimed("b.T.time_x", (), cause), Untimed("b.T.time_y", ("1",), cause))
    )
    partial = _run(
        B,
        C,
        date=2,
        estimates=(_estimate("b.T.time_x"),),
        untimed=(Untimed("b.T.time_y", (), "boom"),),
    )
    for run in (nothing, partial):
        assert read_paired(write_paired(tmp_path, run)) == run  # untimed round-trips
    assert [g.run for g in gaps([partial, nothing])] == [nothing, partial]  # nothing first
    problems = run_problems(
        asv_log=LOGS / "benchmark-failed.log",
        asv_status=2,
        commits=[B, C],
        results=tmp_path,
        machine="m",
        root=ROOT,
    )
    assert problems == [f"the pair aaaaaaaa..bbbbbbbb [env] timed nothing: {cause}"]
    assert untimed_lines(nothing) == [f"2 not timed: {cause} (b.T.time_x, b.T.time_y(1))"]
    summary = pair_history_summary([nothing, partial], skipped=0)
    assert summary.endswith(
        f"2 pair(s) measured; 1 timed nothing: aaaaaaaa..bbbbbbbb [env]: {cause}"
    )
    text = format_paired_text([], [nothing, partial])
    assert "1 pair(s) timed nothing, 1 timed part of their items" in text
    assert "no commit flagged" in text
    assert "timed nothing  aaaaaaaa..bbbbbbbb  env" in text
    assert "1 of 2 timed" in text


def test_pairs_that_all_timed_nothing_never_read_as_a_clean_bill() -> None:
    error = "commit aaaaaaaaaaaa: its build failed (LookupError: no version)"
    text = format_paired_text([], [_run(A, B, error=error), _run(B, C, error=error)])
    assert "no commit flagged" not in text
    assert text.startswith(
        "Paired history (2 commit pair(s) timed side by side, 0 series): "
        "no pair timed anything (2 of 2 timed nothing)"
    )


def test_skips_alone_are_not_a_failed_pair() -> None:
    """A benchmark asv skips (too few devices) is not a fault of the run."""
    skipped = _run(A, B, untimed=(Untimed("b.T.time_x", (), "needs 4 devices", skipped=True),))
    assert not skipped.timed_nothing
    assert gaps([skipped]) == []


def _check_run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jaxbench", "check-run", "--machine", "m", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


def test_check_run_fails_with_the_cause_in_its_last_line(tmp_path: Path) -> None:
    (tmp_path / "status").write_text("1\n")
    done = _check_run(
        "--job", "make bench", "--asv-log", str(LOGS / "suite-syntax-error.log"),
        "--asv-status", str(tmp_path / "status"), cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("make bench: failed: asv could not import the benchmark suite: ")
    assert "bad.py, line 3: SyntaxError: invalid syntax" in last
    assert "fix that file and run again" in last


def test_check_run_is_silent_when_the_run_measured_what_it_could(tmp_path: Path) -> None:
    write_paired(tmp_path / "results", _run(A, B, estimates=(_estimate("b.T.time_x"),)))
    done = _check_run(
        "--asv-log", str(LOGS / "benchmark-failed.log"), "--asv-status", "2", cwd=tmp_path
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    done = _check_run("--asv-status", "1", cwd=tmp_path)  # no log kept: the status says
    assert done.returncode == 1
    assert "asv run exited with status 1" in done.stderr
