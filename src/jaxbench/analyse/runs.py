"""Whether two commits' results were measured in one run or in separate runs (pure).

The within-run tests of warm times (Welch on per-round medians, Mann-Whitney
on pooled samples: :func:`jaxbench.analyse.stats.compare_samples`) see the
spread between the processes of *one* run. Between separate ``asv run``s the
machine's load, clock frequency and neighbours change, and that spread is in
no round: on a fresh clone, two of three comparisons of identical code were
"significant" warm-time changes (issue 29). So :mod:`jaxbench.analyse.compare`
uses them only when base and head come from one run.

The rule, from what asv writes into each result file: every benchmark row
holds ``started_at`` (when its *last* round started, ms since the epoch) and
``duration`` (seconds, all its rounds together). One commit's file in one
environment was measured during the interval that ends at its last
``started_at`` and is as long as its durations add up to
(:func:`measured_interval`). Base and head are **one run** when those
intervals overlap (:func:`one_run`):

- ``asv run --interleave-rounds`` over base and head alone: the rounds of
  each side alternate, so each side's interval reaches back over the other's
  earlier rounds (as soon as there are two rounds and a round outlasts the
  reinstall between them);
- ``jaxbench ab``: both sides get the same ``started_at`` and duration;
- commits measured one after the other (separate ``asv run``s, or one run of
  many commits whose windows do not overlap, as ``make measure`` writes
  them): separate runs, and the interval, shorter than the real span (the
  time between benchmarks is not in it), cannot reach the other commit.

A side with no ``started_at`` or ``duration`` (a file written by hand, a
point built in code) is not known to be one run with anything: separate.
A benchmark re-measured later into an old file moves that file's interval
to the re-measurement; it then overlaps only a run made at that time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from jaxbench.store.results import Point

__all__ = ["Interval", "measured_interval", "one_run"]


@dataclass(frozen=True)
class Interval:
    """When one side was measured (ms since the epoch)."""

    start: float
    end: float

    def overlaps(self, other: Interval) -> bool:
        return self.start <= other.end and other.start <= self.end


def measured_interval(points: Iterable[Point]) -> Interval | None:
    """The interval one result file (one commit, one environment) was measured in.

    Read from its rows (every point of a row shares them): it ends at the
    last row's ``started_at`` and is as long as the rows' durations together.
    None when no row has both.
    """
    rows: dict[str, tuple[int, float]] = {}
    for point in points:
        if point.started_at is not None and point.duration is not None:
            rows[point.key.benchmark] = (point.started_at, point.duration)
    if not rows:
        return None
    end = float(max(started for started, _ in rows.values()))
    length_ms = 1000.0 * sum(max(0.0, duration) for _, duration in rows.values())
    return Interval(end - length_ms, end)


def one_run(base: Iterable[Point], head: Iterable[Point]) -> dict[str, bool]:
    """Environment -> whether base and head were measured in one run there.

    Environments that only one side has are left out.
    """
    sides: list[dict[str, list[Point]]] = [{}, {}]
    for side, points in zip(sides, (base, head), strict=True):
        for point in points:
            side.setdefault(point.key.env_name, []).append(point)
    found: dict[str, bool] = {}
    for env_name in sorted(set(sides[0]) & set(sides[1])):
        b, h = (measured_interval(side[env_name]) for side in sides)
        found[env_name] = b is not None and h is not None and b.overlaps(h)
    return found
