"""Regressions grouped into events: the commits that made things worse, worst first.

An :class:`Event` is one machine and environment's step at one commit (the
range from the last good commit to the first bad one): every series whose
regression starts there. Events are ranked by severity:

1. kind first: an event with a correctness regression, then one with a work
   (XLA flops, bytes, HLO ops) regression, then the rest;
2. then by the total size of its steps, ``sum(log(ratio))`` over its series
   (each capped at x100), so that both a large step and a broad one rank high.

An event that moves at least :data:`BROAD_SHARE` of the series measured at
that commit on its machine and environment (and at least :data:`BROAD_MIN`
series) is *broad*: "likely an environment, machine or core change". It is
still listed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from jaxbench.analyse.detect import Regression
from jaxbench.kinds import Kind

__all__ = ["BROAD_LABEL", "BROAD_MIN", "BROAD_SHARE", "Event", "group_events"]

#: Share of a machine and environment's series that makes an event broad.
BROAD_SHARE = 0.25
#: Fewest series in a broad event.
BROAD_MIN = 5
BROAD_LABEL = "likely an environment, machine or core change"
_RATIO_CAP = 100.0
_KIND_RANK = {Kind.ACCURACY: 0, Kind.WORK: 1}


@dataclass(frozen=True)
class Event:
    """The series of one machine and environment that stepped up at one commit."""

    machine: str
    env_name: str
    good_commit: str | None
    bad_commit: str
    date: int
    #: worst first (kind, then ratio)
    regressions: tuple[Regression, ...]
    #: series measured at ``bad_commit`` on this machine and environment
    series_measured: int
    broad: bool
    severity: float

    @property
    def kinds(self) -> tuple[Kind, ...]:
        """Kinds present, most severe first."""
        return tuple(dict.fromkeys(r.kind for r in self.regressions))

    @property
    def worst_ratio(self) -> float:
        """The largest step ratio of the event."""
        return max(r.ratio for r in self.regressions)

    @property
    def share(self) -> float:
        """Share of the measured series that stepped."""
        return len(self.regressions) / self.series_measured if self.series_measured else 1.0


def _kind_rank(reg: Regression) -> int:
    return _KIND_RANK.get(reg.kind, 2)


def _size(reg: Regression) -> float:
    ratio = reg.ratio if math.isfinite(reg.ratio) else _RATIO_CAP
    return math.log(min(max(ratio, 1.0), _RATIO_CAP))


def group_events(
    regressions: Sequence[Regression], series_at: Mapping[tuple[str, str, str], int]
) -> list[Event]:
    """Events of ``regressions``, most severe first (see module doc).

    ``series_at`` maps (machine, environment, commit) to the number of series
    measured there (the denominator of the broad share).
    """
    groups: dict[tuple[str, str, str], list[Regression]] = {}
    for reg in regressions:
        groups.setdefault((reg.key.machine, reg.key.env_name, reg.bad_commit), []).append(reg)
    events: list[Event] = []
    for (machine, env, bad), regs in groups.items():
        regs.sort(key=lambda r: (_kind_rank(r), -_size(r), r.key))
        goods = [r.good_commit for r in regs if r.good_commit is not None]
        good = max(set(goods), key=goods.count) if goods else None
        measured = max(series_at.get((machine, env, bad), 0), len(regs))
        broad = len(regs) >= BROAD_MIN and len(regs) >= BROAD_SHARE * measured
        events.append(
            Event(
                machine=machine,
                env_name=env,
                good_commit=good,
                bad_commit=bad,
                date=regs[0].date,
                regressions=tuple(regs),
                series_measured=measured,
                broad=broad,
                severity=sum(_size(r) for r in regs),
            )
        )
    events.sort(
        key=lambda e: (
            min(_kind_rank(r) for r in e.regressions),
            -e.severity,
            -e.date,
            e.machine,
            e.env_name,
        )
    )
    return events
