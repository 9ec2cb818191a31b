"""Telling one run from separate runs by asv's ``started_at`` and ``duration``."""

from __future__ import annotations

from jaxbench.analyse.runs import measured_interval, one_run
from jaxbench.store.results import Point, SeriesKey


def _side(commit: str, rows: list[tuple[int, float]], env: str = "env") -> list[Point]:
    """One result file: (started_at ms, duration s) of each benchmark row."""
    return [
        Point(SeriesKey("m", env, f"b.B.time_{i}", (), "1"), commit, 0, 1.0, (), started_at=s,
              duration=d)
        for i, (s, d) in enumerate(rows)
    ]  # fmt: skip


def test_interleaved_rounds_overlap() -> None:
    # asv run --interleave-rounds, 2 rounds of two 10 s benchmarks: A1 B1 B2 A2
    # (asv reverses the commit order every other round). started_at is each
    # row's last round; duration both rounds. Reinstalls take 5 s.
    a1, b1 = 0, 25_000
    b2, a2 = b1 + 25_000, b1 + 50_000
    base = _side("a", [(a2, 20.0), (a2 + 10_000, 20.0)])
    head = _side("b", [(b2, 20.0), (b2 + 10_000, 20.0)])
    assert a1 < b1
    assert one_run(base, head) == {"env": True}


def test_commits_measured_one_after_the_other_are_separate_runs() -> None:
    # One round each, the second commit 5 s after the first ended.
    base = _side("a", [(0, 10.0), (10_000, 10.0)])
    head = _side("b", [(25_000, 10.0), (35_000, 10.0)])
    assert one_run(base, head) == {"env": False}
    interval = measured_interval(base)
    assert interval is not None
    assert (interval.start, interval.end) == (-10_000.0, 10_000.0)


def test_ab_writes_one_start_for_both_sides() -> None:
    rows = [(5_000, 3.0), (5_000, 3.0)]
    assert one_run(_side("a", rows), _side("b", rows)) == {"env": True}


def test_no_timing_is_not_one_run() -> None:
    base = [Point(SeriesKey("m", "env", "b.B.time_x", (), "1"), "a", 0, 1.0)]
    head = _side("b", [(0, 1.0)])
    assert measured_interval(base) is None
    assert one_run(base, head) == {"env": False}
    assert one_run(base, _side("b", [(0, 1.0)], env="other")) == {}
