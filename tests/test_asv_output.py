"""asv run's output, short on the terminal and whole in its log (``jaxbench asv-tee``).

Fed real output of ``asv run --show-stderr`` (``tests/data/asv_logs``,
PROVENANCE.md): ``make bench``'s 6,102 lines for three commits in two
environments become asv's steps and one line per environment's benchmarks;
a failed benchmark is named on its environment's line, a build that failed
keeps asv's line, a suite that did not import keeps asv's; the log keeps
every byte. ``make bench`` itself prints it so (``tests/test_e2e_init.py``).
"""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

from jaxbench.render.asv_output import MAX_LINE_CHARS, NAMED, ShortAsvOutput
from jaxbench.store.asv_log import asv_line

LOGS = Path(__file__).parent / "data" / "asv_logs"
BUILD_FAILURE = Path(__file__).parent / "data" / "asv-build-failure" / "asv-run.log"


def _lines(path: Path) -> list[str]:
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8") as packed:
            return packed.readlines()
    with path.open(encoding="utf-8") as handle:
        return handle.readlines()


def _short(lines: list[str], *, seconds_a_line: float = 0.01, every: float = 60.0) -> list[str]:
    short = ShortAsvOutput("LOG", every=every)
    shown: list[str] = []
    for number, raw in enumerate(lines):
        shown += short.feed(raw, number * seconds_a_line)
    return shown + short.close(len(lines) * seconds_a_line)


def test_make_bench_s_six_thousand_lines_are_asv_s_steps_and_a_line_an_environment() -> None:
    lines = _lines(LOGS / "make-bench-three-commits.log.gz")
    assert len(lines) == 6102
    shown = _short(lines)
    benchmarking = [s for s in shown if "·· Benchmarking virtualenv-" in s]
    done = [s for s in shown if " ··· 176 benchmarks in " in s]
    assert len(benchmarking) == len(done) == 6  # 3 commits x 2 environments
    assert all(s.endswith(": 176 ok") for s in done), done
    total = "asv run: 1,056 results (3 commits, 2 environments), none failed"
    assert shown[-1] == f"{total}; its whole output: LOG"
    assert sum(1 for s in shown if " · For jaxbench commit " in s) == 3
    steps = sum(1 for raw in lines if 1 <= asv_line(raw).depth <= 2)
    assert len(shown) == steps + len(done) + 1 == 25, shown
    # every line shown is asv's own, as it printed it, or one of the summary's
    said = {raw.rstrip("\n") for raw in lines}
    own = [s for s in shown if s not in said]
    assert own == [*done, shown[-1]]


def test_a_failed_benchmark_is_named_on_its_environment_s_line() -> None:
    shown = _short(_lines(LOGS / "benchmark-failed.log"))
    assert "[50.00%] ··· 2 benchmarks in 0 s: 1 ok, 1 failed (bad.time_b)" in shown
    total = "asv run: 2 results (1 commit, 1 environment), 1 failed"
    assert shown[-1] == f"{total}; its whole output: LOG"
    assert not any("Traceback" in s or "RuntimeError" in s for s in shown)  # in the log


def test_a_build_that_failed_keeps_asv_s_line_and_its_skipped_benchmarks_are_counted() -> None:
    shown = _short(_lines(BUILD_FAILURE))
    error = [s for s in shown if "··· Error running " in s]
    assert len(error) == 1, error
    assert len(error[0]) <= MAX_LINE_CHARS, error
    assert "[25.00%] ·· Skipping virtualenv-py3.11" in shown
    assert "[37.50%] ··· 2 benchmarks in 0 s: 2 skipped" in shown
    failed = [s for s in shown if s.startswith("[25.00%] ··· 2 benchmarks in ")]
    assert failed, shown
    assert failed[0].endswith(" s: 2 failed (bench.S.time_b, bench.time_a)"), shown
    assert shown[-1].startswith("asv run: 8 results (4 commits, 1 environment), 2 failed;")
    assert len(shown) < 40 < len(_lines(BUILD_FAILURE))


def test_a_suite_that_did_not_import_keeps_asv_s_words_and_ran_nothing() -> None:
    shown = _short(_lines(LOGS / "suite-syntax-error.log"))
    assert "·· Failed to build the project and import the benchmark suite." in shown
    assert shown[-1] == "asv run: no benchmark ran; its whole output: LOG"
    assert all(len(s) <= MAX_LINE_CHARS for s in shown)


def test_a_commit_benchmarked_in_two_rounds_is_one_commit() -> None:
    lines = [
        f"[{pct:5.2f}%] · For p commit {commit} <main> (round {r}/2):\n"
        f"[{pct:5.2f}%] ·· Benchmarking env-a\n"
        f"[{pct:5.2f}%] ··· m.S.track_x                 1.0\n"
        for pct, commit, r in ((0, "0123abcd", 1), (25, "4567ef01", 1), (50, "4567ef01", 2),
                               (75, "0123abcd", 2))
    ]  # fmt: skip
    shown = _short("".join(lines).splitlines(keepends=True))
    assert shown[-1].startswith("asv run: 4 results (2 commits, 1 environment), none failed;")


def test_commits_measured_before_are_nothing_left_to_run() -> None:
    lines = _lines(LOGS / "make-bench-three-commits.log.gz")
    planned = next(i for i, raw in enumerate(lines) if "Running 1056 total" in raw)
    shown = _short(lines[: planned + 1])  # asv --skip-existing: every result on file
    assert shown[-1].startswith("asv run: nothing left to run (every benchmark of these"), shown


def test_many_failures_are_counted_past_the_first_few_named() -> None:
    head = ["[ 0.00%] · For p commit 0123abcd <main>:\n", "[ 0.00%] ·· Benchmarking env-a\n"]
    results = [f"[{i:5.2f}%] ··· m.S.time_{i}                 failed\n" for i in range(10)]
    shown = _short(head + results)
    line = next(s for s in shown if "benchmarks in" in s)
    named = ", ".join(f"m.S.time_{i}" for i in range(NAMED))
    assert line.endswith(f": 10 failed ({named}, {10 - NAMED} more)"), line


def test_a_long_environment_says_how_far_it_is_once_a_minute() -> None:
    head = ["[ 0.00%] · For p commit 0123abcd <main>:\n", "[ 0.00%] ·· Benchmarking env-a\n"]
    results = [f"[{i:5.2f}%] ··· m.S.time_{i}                 ok\n" for i in range(40)]
    shown = _short(head + results, seconds_a_line=10.0)  # 400 s of benchmarks
    far = [s for s in shown if " so far, " in s]
    assert len(far) == 6, shown  # at 60, 120, ... 360 s
    assert far[0] == "[ 5.00%] ··· 6 benchmarks so far, 1 min 00 s: 6 ok"


def test_what_comes_before_asv_s_first_line_and_asv_s_own_traceback_are_shown() -> None:
    lines = [
        "UserWarning: a plugin could not be loaded\n",
        "· Creating environments\n",
        "Traceback (most recent call last):\n",
        '  File "asv/main.py", line 1, in main\n',
        "OSError: [Errno 28] No space left on device\n",
    ]
    shown = _short(lines)
    assert shown[0] == "UserWarning: a plugin could not be loaded"
    assert "asv's last words: OSError: [Errno 28] No space left on device" in shown


def test_the_table_or_error_of_the_last_benchmark_is_not_asv_s_last_words() -> None:
    """The rows of a result's table and a failed benchmark's traceback follow asv's line
    of that benchmark: they stay in the log, even when the output ends with them."""
    head = ["[ 0.00%] · For p commit 0123abcd <main>:\n", "[ 0.00%] ·· Benchmarking env-a\n"]
    table = [
        "[50.00%] ··· m.S.peakmem_call                 ok\n",
        "[50.00%] ··· ====== =======\n",
        "              rows         \n",
        "             ------ -------\n",
        "               64    41.8M \n",
        "             ====== =======\n",
    ]
    failed = [
        "[99.00%] ··· m.S.time_step                    failed\n",
        "[99.00%] ···· For parameters: 64\n",
        "              Traceback (most recent call last):\n",
        '                File "benchmarks/m.py", line 9, in time_step\n',
        "              RuntimeError: boom\n",
    ]
    for ending in (table, table + failed):
        shown = _short(head + ending)
        assert not [s for s in shown if s.startswith("asv's last words")], shown


def test_a_line_of_asv_is_read_with_its_progress_bullet_and_result() -> None:
    line = asv_line("[16.67%] ··· \x1b[31m...oads.PredictFigures.track_x\x1b[0m   1/2 failed\n")
    assert (line.depth, line.progress, line.benchmark, line.status) == (
        3, "[16.67%]", "...oads.PredictFigures.track_x", "1/2 failed",
    )  # fmt: skip
    assert line.failed
    assert not line.skipped
    assert asv_line("[ 2.38%] ··· Setting up measure.asvsuite:602     ok").benchmark is None
    assert asv_line("· Creating environments").depth == 1
    assert asv_line("              rows        ").depth == 0


def test_asv_tee_keeps_every_byte_and_shows_the_short_output(tmp_path: Path) -> None:
    raw = BUILD_FAILURE.read_bytes()
    log = tmp_path / "asv-run.log"
    done = subprocess.run(
        [sys.executable, "-m", "jaxbench", "asv-tee", str(log)],
        input=raw, capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert log.read_bytes() == raw
    out = done.stdout.decode()
    assert out.splitlines()[-1].endswith(f"2 failed; its whole output: {log}")
    assert len(out.splitlines()) < 40
    full = subprocess.run(
        [sys.executable, "-m", "jaxbench", "asv-tee", "--full", str(log)],
        input=raw, capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    assert full.stdout == raw
    assert log.read_bytes() == raw


def test_asv_tee_to_a_log_it_cannot_write_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "jaxbench", "asv-tee", str(tmp_path / "no" / "such" / "x.log")],
        input=b"x\n", capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    said = done.stderr.decode().strip().splitlines()
    assert len(said) == 1, said
    assert said[0].startswith("jaxbench: error: cannot write asv's log "), said
    assert done.stdout == b""
