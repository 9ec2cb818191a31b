"""The paired history: each commit timed side by side with the one before it (pure).

``jaxbench pair-history`` times every ``time_*`` benchmark of a commit and of
the previous measured commit in lockstep (:mod:`jaxbench.lockstep`) and keeps,
per benchmark and parameter set, one :class:`PairedEstimate`: head / base with
its interval, the paired test's p-value and verdict
(:func:`jaxbench.analyse.stats.compare_paired`: the gate and alpha of
``compare --paired``). A backfill over N commits makes N - 1 pairs.

Per series (machine, environment, benchmark, parameters) the pairs chain into
a *relative time* series (the "relative speed" graph): the first commit is
1.0 and each later commit is the product of the paired ratios up to it, so
2.0 means twice as slow as the first commit. Its interval adds the pairs'
log half-widths in quadrature (independent pairs). A commit is *flagged*
when its own pair says regression: a step is listed at the exact commit, and
noise between unrelated processes never enters (both sides of a ratio were
sampled within milliseconds of each other). As in a pull-request review, the
series of one pair (one commit, machine and environment) are one family:
their p-values are Holm-adjusted together, and a commit is flagged only when
the adjusted p-value is below the pair's alpha (and the ratio beyond its
gate), so that an unchanged commit is flagged in at most ``alpha`` of its
pairs, however many benchmarks the suite has.

The interval of one pair is a Student t interval on the per-round log
estimates at confidence ``1 - alpha`` (the rounds are the independent units;
the samples inside a round are not).

A pair is measured in up to two looks: ``rounds`` rounds for every series,
then a second look of up to as many rounds again for the series whose first
look is suggestive but not decisive (:func:`wants_second_look`), each going
on while it stays suggestive (:func:`wants_more_rounds`). The p-value is
the two looks' combined one (:func:`jaxbench.analyse.stats.two_look_p_value`:
a tenth of alpha spent at the first look), so the false-alarm rate stays at
``alpha`` while a +5 % step missed at 10 rounds gets the power of 20; most
unchanged series stop after the first look, so the second costs little.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from jaxbench.analyse.stats import (
    DEFAULT_ALPHA,
    PAIRED_FACTOR,
    compare_paired,
    holm_adjust,
    keep_looking,
    paired_round_estimates,
    paired_samples_p_value,
    second_look_wanted,
)
from jaxbench.store.paired import PairedEstimate, PairedRun, check_commits

#: PairGap.cause when a pair's untimed items have no cause written.
NO_CAUSE = "no cause recorded"

__all__ = [
    "ChainPoint",
    "PairGap",
    "PairedEstimate",
    "PairedRun",
    "PairedSeries",
    "chain_series",
    "estimate_pair",
    "flagged",
    "flagged_in_pair",
    "gaps",
    "paired_series",
    "wants_more_rounds",
    "wants_second_look",
]


def _t_quantile(p: float, dof: int) -> float:
    from scipy.special import stdtrit  # scipy.stats.t's own inverse; imports faster

    return float(stdtrit(dof, p))


def estimate_pair(
    benchmark: str,
    params: tuple[str, ...],
    base_samples: Sequence[float],
    head_samples: Sequence[float],
    *,
    per_round: int,
    factor: float = PAIRED_FACTOR,
    alpha: float = DEFAULT_ALPHA,
    first_look: int | None = None,
) -> PairedEstimate | None:
    """The paired estimate of one item, or None when the samples are not whole paired rounds.

    ``first_look``: the rounds of the first look when the pair was measured
    in two looks (the p-value is then the looks' combined one).
    """
    comparison = compare_paired(
        base_samples,
        head_samples,
        round_size=per_round,
        factor=factor,
        alpha=alpha,
        first_look=first_look,
    )
    estimates = paired_round_estimates(base_samples, head_samples, per_round)
    if comparison is None or estimates is None or comparison.ratio is None:
        return None
    n = len(estimates)
    mean = sum(estimates) / n
    sd = math.sqrt(sum((e - mean) ** 2 for e in estimates) / (n - 1)) if n > 1 else math.inf
    half = _t_quantile(1 - alpha / 2, n - 1) * sd / math.sqrt(n) if n > 1 else math.inf
    centre = math.log(comparison.ratio)
    return PairedEstimate(
        benchmark=benchmark,
        params=params,
        ratio=comparison.ratio,
        low=math.exp(centre - half),
        high=math.exp(centre + half),
        p_value=comparison.p_value,
        rounds=n,
        samples=len(base_samples),
        verdict=comparison.verdict.value,
        reason=comparison.reason,
    )


def wants_second_look(
    base_samples: Sequence[float],
    head_samples: Sequence[float],
    *,
    per_round: int,
    family: int,
    alpha: float = DEFAULT_ALPHA,
) -> bool:
    """Whether one series of a pair, after its first look, should be sampled further.

    ``family`` is the number of series of the pair (the Holm family); see
    :func:`jaxbench.analyse.stats.second_look_wanted`.
    """
    first = paired_samples_p_value(base_samples, head_samples, per_round)
    return first is not None and second_look_wanted(first, family=family, alpha=alpha)


def wants_more_rounds(
    base_samples: Sequence[float],
    head_samples: Sequence[float],
    *,
    per_round: int,
    first_look: int,
    family: int,
    alpha: float = DEFAULT_ALPHA,
) -> bool:
    """Whether one series of a pair gets more rounds, after its first look of
    ``first_look`` rounds (:func:`wants_second_look`) or a batch of its second.

    In the second look a series goes on while its rounds so far stay
    suggestive (:func:`jaxbench.analyse.stats.keep_looking`), and stops as
    soon as they are not: never because they look decisive, so the two
    looks' combined p-value (:func:`jaxbench.analyse.stats.two_look_p_value`)
    stays valid for any value a family at ``alpha`` could flag. A series that
    stops early reports a second look's p-value of at least
    :data:`~jaxbench.analyse.stats.KEEP_LOOKING_BELOW`, which can only lower
    its chance of a flag.
    """
    if min(len(base_samples), len(head_samples)) <= first_look * per_round:
        return wants_second_look(
            base_samples, head_samples, per_round=per_round, family=family, alpha=alpha
        )
    so_far = paired_samples_p_value(base_samples, head_samples, per_round)
    return so_far is not None and keep_looking(so_far)


@dataclass(frozen=True)
class ChainPoint:
    """One commit of a chained series; the first commit of a segment has no ``step``."""

    commit: str
    value: float
    low: float
    high: float
    step: PairedEstimate | None = None
    #: the step's p-value, Holm-adjusted over the series of its pair
    holm_p: float | None = None
    #: the step's pair says regression after the adjustment
    flagged: bool = False
    #: the base commit of the step's pair (the newest earlier commit measured, which may
    #: be many commits back); "" for the first commit of a segment
    base_commit: str = ""


@dataclass(frozen=True)
class PairedSeries:
    """The chained paired ratios of one benchmark, parameter set, environment and machine."""

    machine: str
    env_name: str
    benchmark: str
    params: tuple[str, ...]
    points: tuple[ChainPoint, ...]

    @property
    def name(self) -> str:
        return self.benchmark + (f"({', '.join(self.params)})" if self.params else "")

    @property
    def flagged(self) -> tuple[ChainPoint, ...]:
        return tuple(p for p in self.points if p.flagged)


def _log_half(e: PairedEstimate) -> float:
    if e.low > 0 and math.isfinite(e.low) and math.isfinite(e.high):
        return (math.log(e.high) - math.log(e.low)) / 2
    return math.inf


def flagged_in_pair(run: PairedRun) -> list[PairedEstimate]:
    """The estimates of one pair that flag their commit (Holm over the pair's series)."""
    adjusted = _holm(run)
    return [
        e
        for e in run.estimates
        if e.regression and adjusted.get((e.benchmark, e.params), 1.0) < run.alpha
    ]


def _holm(run: PairedRun) -> dict[tuple[str, tuple[str, ...]], float]:
    """Each tested estimate's p-value, Holm-adjusted over the series of its pair."""
    tested = [e for e in run.estimates if e.p_value is not None]
    adjusted = holm_adjust([e.p_value for e in tested if e.p_value is not None])
    return {(e.benchmark, e.params): p for e, p in zip(tested, adjusted, strict=True)}


def chain_series(runs: Iterable[PairedRun], commit_order: Sequence[str]) -> list[PairedSeries]:
    """Chain the pairs of each series in ``commit_order`` (oldest first).

    A pair whose base is not the head of the pair before it starts a new
    segment at 1.0 (a commit was not paired), and so does a pair measured
    on another host (its machine fingerprint differs from the pair before):
    a series never multiplies across a gap or a machine change. Each ratio
    itself is always one host at one time (both sides were sampled together).
    Pairs naming commits outside ``commit_order`` are left out
    (the caller reports them).
    """
    position = {c: i for i, c in enumerate(commit_order)}
    edges: dict[tuple[str, str, str, tuple[str, ...]], list[tuple[int, PairedRun, PairedEstimate]]]
    edges = {}
    holm: dict[int, dict[tuple[str, tuple[str, ...]], float]] = {}
    for run in runs:
        if run.head_commit not in position or run.base_commit not in position:
            continue
        holm[id(run)] = _holm(run)
        for e in run.estimates:
            key = (run.machine, run.env_name, e.benchmark, e.params)
            edges.setdefault(key, []).append((position[run.head_commit], run, e))
    out = []
    for (machine, env_name, benchmark, params), found in sorted(edges.items()):
        found.sort(key=lambda t: t[0])
        points: list[ChainPoint] = []
        log_value, log_var = 0.0, 0.0
        fingerprint: str | None = None
        for _, run, e in found:
            moved = run.fingerprint is not None and fingerprint not in (None, run.fingerprint)
            fingerprint = run.fingerprint or fingerprint
            if not points or points[-1].commit != run.base_commit or moved:
                log_value, log_var = 0.0, 0.0
                points.append(ChainPoint(run.base_commit, 1.0, 1.0, 1.0))
            log_value += math.log(e.ratio)
            log_var += _log_half(e) ** 2
            half = math.sqrt(log_var)
            adjusted = holm[id(run)].get((e.benchmark, e.params))
            points.append(
                ChainPoint(
                    run.head_commit,
                    math.exp(log_value),
                    math.exp(log_value - half),
                    math.exp(log_value + half) if math.isfinite(half) else math.inf,
                    e,
                    holm_p=adjusted,
                    flagged=e.regression and adjusted is not None and adjusted < run.alpha,
                    base_commit=run.base_commit,
                )
            )
        out.append(PairedSeries(machine, env_name, benchmark, params, tuple(points)))
    return out


def flagged(series: Iterable[PairedSeries]) -> list[tuple[PairedSeries, ChainPoint]]:
    """Every flagged commit of every series, worst step first."""
    found = [(s, p) for s in series for p in s.flagged]
    found.sort(key=lambda sp: (-(sp[1].step.ratio if sp[1].step else 0.0), sp[0].name))
    return found


def paired_series(
    runs: Sequence[PairedRun], commit_order: Sequence[str], results_dir: Path
) -> list[PairedSeries]:
    """The chained series of ``runs``, after refusing any pair that names an unknown commit."""
    check_commits(runs, set(commit_order), results_dir)
    return chain_series(runs, commit_order)


@dataclass(frozen=True)
class PairGap:
    """A pair that did not time every item it set out to time."""

    run: PairedRun
    #: the pair's error, else the most frequent cause of its items not timed
    cause: str


def gaps(runs: Iterable[PairedRun]) -> list[PairGap]:
    """The pairs with items not timed (asv's skips aside): those that timed nothing
    first, then by how many items they missed, newest first."""
    found = []
    for run in runs:
        faults = [u.cause for u in run.untimed if not u.skipped]
        if run.error is None and not faults:
            continue
        cause = run.error or max(sorted(set(faults)), key=faults.count) or NO_CAUSE
        found.append(PairGap(run, cause))
    found.sort(
        key=lambda g: (
            not g.run.timed_nothing,
            -(g.run.items - len(g.run.estimates)),
            -g.run.date,
        )
    )
    return found
