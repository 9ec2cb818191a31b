"""The whole-job progress line (render/progress.py): the line itself, a terminal, a log."""

from __future__ import annotations

import io

from jaxbench.render.progress import Progress, Snapshot, format_duration, format_line, time_left


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_durations_read_in_seconds_minutes_hours() -> None:
    assert format_duration(0.4) == "0 s"
    assert format_duration(42.2) == "42 s"
    assert format_duration(185) == "3 min 05 s"
    assert format_duration(3720) == "1 h 02 min"


def test_time_left_scales_the_elapsed_time_by_the_work_left() -> None:
    assert time_left(0, 10, 5.0) is None
    assert time_left(2, 10, 60.0) == 240.0
    assert time_left(10, 10, 60.0) == 0.0


def test_the_line_says_step_share_elapsed_and_left() -> None:
    line = format_line(Snapshot("jaxbench ab", 3, 12, "round", 3, 12, 62.0))
    assert line == "jaxbench ab: round 3/12 (25 %), 1 min 02 s elapsed, ~3 min 06 s left"
    first = format_line(Snapshot("jaxbench ab", 1, 12, "round", 0, 12, 1.0))
    assert first.endswith("time left unknown")


def test_a_log_gets_one_line_per_finished_step_and_the_whole_job_is_counted() -> None:
    clock, out = _Clock(), io.StringIO()
    progress = Progress("jaxbench pair-history", 3, 4, label="pair", stream=out, clock=clock)
    for step in (1, 2):
        for done in range(1, 5):
            clock.now += 10
            progress.within(step)(done, 4)
    progress.close()
    lines = out.getvalue().splitlines()
    assert lines == [
        "jaxbench pair-history: pair 1/3 (33 %), 40 s elapsed, ~1 min 20 s left",
        "jaxbench pair-history: pair 2/3 (67 %), 1 min 20 s elapsed, ~40 s left",
    ]


def test_a_second_look_adds_rounds_to_the_job() -> None:
    clock, out = _Clock(), io.StringIO()
    progress = Progress("jaxbench ab", 6, 1, label="round", stream=out, clock=clock)
    for done in range(1, 7):
        clock.now += 10
        progress.rounds(done, 6)
    clock.now += 10
    progress.rounds(7, 12)  # six more rounds for a suggestive first look
    assert out.getvalue().splitlines()[-1] == (
        "jaxbench ab: round 7/12 (58 %), 1 min 10 s elapsed, ~50 s left"
    )


def test_a_deadline_caps_the_time_left() -> None:
    """The review's second look may add up to 42 rounds; its budget ends it sooner."""
    clock, out = _Clock(), io.StringIO()
    progress = Progress(
        "jaxbench ab", 6, 1, label="round", stream=out, clock=clock, deadline=clock.now + 100
    )
    for done in range(1, 7):
        clock.now += 10
        progress.rounds(done, 6)
    clock.now += 10
    progress.rounds(7, 48)  # 41 rounds at 10 s each would be 6 min 50 s
    assert out.getvalue().splitlines()[-1] == (
        "jaxbench ab: round 7/48 (15 %), 1 min 10 s elapsed, ~30 s left"
    )


def test_a_terminal_gets_one_line_redrawn_in_place() -> None:
    clock, out = _Clock(), io.StringIO()
    progress = Progress("jaxbench ab", 1, 3, label="pair", stream=out, live=True, clock=clock)
    progress.advance(1, 1, 3)
    progress.advance(1, 2, 3)
    assert out.getvalue().count("\r\x1b[K") == 2
    assert "\n" not in out.getvalue()
    progress.close()  # interrupted: the line is ended
    assert out.getvalue().endswith("\n")


def test_a_log_by_default_when_the_stream_is_not_a_terminal() -> None:
    out = io.StringIO()
    progress = Progress("jaxbench ab", 2, 1, label="round", stream=out)
    progress.rounds(1, 2)
    assert "\r" not in out.getvalue()
    assert out.getvalue().startswith("jaxbench ab: round 1/2 (50 %), ")


def test_time_left_of_later_steps_comes_from_what_the_finished_steps_took() -> None:
    clock, out = _Clock(), io.StringIO()
    progress = Progress("jaxbench pair-history", 4, 10, label="pair", stream=out, clock=clock)
    step = progress.within(1)
    for done in range(1, 11):  # a first look of 10 rounds, 6 s each
        clock.now += 6
        step(done, 10)
    for done in range(11, 21):  # a second look: 10 more rounds of one benchmark, 1 s each
        clock.now += 1
        step(done, 20)
    step = progress.within(2)
    for done in range(1, 11):  # pair 1 took 70 s; pair 2 takes 60 s
        clock.now += 6
        step(done, 10)
    # 70 s a pair for the 3 pairs from pair 2 on, less the 60 s pair 2 took
    assert out.getvalue().splitlines()[-1].endswith("2 min 10 s elapsed, ~2 min 30 s left")
