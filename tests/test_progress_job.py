"""``jaxbench progress``: one line per step of a job, the time left from its last run.

The real command line (``jaxbench.cli.main``) on a state file in a temporary
folder; the time left is read from a last run written beforehand, so it does
not depend on how long the test takes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from jaxbench.cli import main
from jaxbench.render.progress import done_line, step_line


def progress(state: Path, *args: str) -> int:
    return main(["progress", "--job", "make bench", "--state", str(state), *args])


def test_the_lines_read_as_people_write_them() -> None:
    assert step_line("make bench", 2, 4, "paired history", 361, 298) == (
        "make bench: step 2/4 paired history, 6 min 01 s elapsed, "
        "~4 min 58 s left (as the last run)"
    )
    assert step_line("make bench", 1, 4, "asv run", 0, None) == (
        "make bench: step 1/4 asv run, 0 s elapsed, time left unknown (no complete run yet)"
    )
    assert done_line("make bench", 670, [("asv run", 361), ("publish", 3)]) == (
        "make bench: done in 11 min 10 s (asv run 6 min 01 s, publish 3 s)"
    )
    assert done_line("review", 80, [("asv run", 22), ("first calls", 13)], "waited 31 s") == (
        "review: done in 1 min 20 s (asv run 22 s, first calls 13 s; waited 31 s)"
    )


def test_a_run_records_its_steps_and_the_next_run_knows_what_is_left(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / ".asv" / "progress.json"
    for step in (["1/4", "asv run"], ["2/4", "paired history"], ["3/4", "publish"],
                 ["4/4", "regressions"], ["done"]):  # fmt: skip
        assert progress(state, *step) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split(",")[0] for line in out[:4]] == [
        "make bench: step 1/4 asv run",
        "make bench: step 2/4 paired history",
        "make bench: step 3/4 publish",
        "make bench: step 4/4 regressions",
    ]
    assert all(line.endswith("time left unknown (no complete run yet)") for line in out[:4])
    assert re.fullmatch(
        r"make bench: done in \d+ s \(asv run \d+ s, paired history \d+ s, "
        r"publish \d+ s, regressions \d+ s\)",
        out[4],
    ), out[4]
    last = json.loads(state.read_text())["make bench"]["last"]
    assert sorted(last) == ["1", "2", "3", "4"]

    # the next run: what the steps from here on took last time
    state.write_text(json.dumps({"make bench": {"last": {"1": 300, "2": 240, "3": 4, "4": 2}}}))
    assert progress(state, "1/4", "asv run") == 0
    assert progress(state, "3/4", "publish") == 0  # PAIRED=0: step 2 skipped
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("~9 min 06 s left (as the last run)")
    assert out[1].endswith("~6 s left (as the last run)")
    run = json.loads(state.read_text())["make bench"]["run"]
    assert [step[:2] for step in run["done"]] == [[1, "asv run"]]


def test_a_step_without_a_run_starts_one_and_done_without_steps_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "progress.json"
    assert progress(state, "done") == 0
    assert capsys.readouterr().out == "make bench: done (no step was reported)\n"
    assert progress(state, "3/4", "publish") == 0
    assert capsys.readouterr().out.startswith("make bench: step 3/4 publish, 0 s elapsed")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["5/4", "x"], "'5/4' is not a step; give STEP/STEPS such as 2/4, or done"),
        (["two", "x"], "'two' is not a step"),
        (["2/4"], "step 2/4 has no name"),
    ],
)
def test_bad_steps_are_one_line_errors_and_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], needle: str
) -> None:
    state = tmp_path / "progress.json"
    assert progress(state, *args) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1, err
    assert needle in err, err
    assert not state.exists()


def test_an_unreadable_state_starts_afresh_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "progress.json"
    state.write_text("{not json")
    assert progress(state, "1/4", "asv run") == 0
    out, err = capsys.readouterr()
    assert err == f"jaxbench progress: {state} is unreadable; starting afresh\n"
    assert "time left unknown" in out
    assert json.loads(state.read_text())["make bench"]["run"]["current"][:2] == [1, "asv run"]
