"""What the paired history says about head / base of two commits, series by series (pure).

``jaxbench compare BASE HEAD`` reads it for its warm times (``time_*``):
``jaxbench pair-history`` may already have timed those two commits side by
side, where ``asv run`` measured them in separate runs (whose shift between
runs no test inside them can tell from a change: :mod:`jaxbench.analyse.runs`).
Two kinds of evidence, per environment, benchmark and parameter set:

* **the pair itself**: a paired file for exactly (base, head), in the same
  machine and environment (either order: a pair read backwards is inverted).
  Its estimate (ratio, interval, the looks' p-value) and its verdict after
  the Holm adjustment over the series of its pair, the rule the paired
  history flags commits by (:func:`jaxbench.analyse.paired_history.flagged_in_pair`),
  decide the row: a compare of those two commits says what the paired
  history's listing says about them.
* **a chain**: base and head in one chained segment of the paired history
  (:func:`jaxbench.analyse.paired_history.chain_series`: every pair between
  them on file, one host), not adjacent. The product of the step ratios,
  its interval the steps' log half-widths in quadrature. Evidence, never a
  verdict, because no valid p-value for the product exists in the files:
  the pairs were measured in two looks, the second only where the first
  was suggestive, so a t test on their pooled rounds would overstate its
  significance (each pair's own p-value accounts for its looks; a product
  of ratios has none); the quadrature of t intervals with different degrees
  of freedom is an approximation, good to read, not calibrated to gate a
  false-alarm rate; and every step was already judged where it happened, in
  its own pair's family (``jaxbench regressions`` lists a flagged step at its
  commit).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from jaxbench.analyse.paired_history import PairedRun, chain_series
from jaxbench.analyse.stats import Verdict

__all__ = ["PairedEvidence", "SeriesKey", "paired_evidence"]

#: (benchmark, parameters, environment): one warm-time series of a compare
SeriesKey = tuple[str, tuple[str, ...], str]

_FLIP = {Verdict.REGRESSION: Verdict.IMPROVEMENT, Verdict.IMPROVEMENT: Verdict.REGRESSION}


@dataclass(frozen=True)
class PairedEvidence:
    """head / base of one series from the paired history: its own pair, or a chain."""

    ratio: float
    low: float
    high: float
    #: pairs multiplied: 1 for the pair itself, more for a chain
    pairs: int
    #: the pair's gate and alpha (``jaxbench pair-history``'s, as compare --paired's)
    factor: float
    alpha: float
    #: rounds of the pair itself (0 for a chain)
    rounds: int = 0
    #: the pair's p-value (its looks combined), and Holm-adjusted over its series
    p_value: float | None = None
    holm_p: float | None = None
    #: series of the pair: the Holm family
    family: int = 0
    #: the pair's verdict after Holm; None for a chain (evidence, not a test)
    verdict: Verdict | None = None

    @property
    def chained(self) -> bool:
        return self.pairs > 1


def _inverse(x: float) -> float:
    if x == 0.0:
        return math.inf
    return 0.0 if math.isinf(x) else 1.0 / x


def _verdict(name: str, holm_p: float | None, alpha: float) -> Verdict:
    """The pair's verdict after Holm: a regression or improvement only below alpha."""
    try:
        verdict = Verdict(name)
    except ValueError:
        return Verdict.INCONCLUSIVE
    if verdict in _FLIP and not (holm_p is not None and holm_p < alpha):
        return Verdict.NOT_SIGNIFICANT
    return verdict


def _direct(run: PairedRun, backwards: bool) -> dict[SeriesKey, PairedEvidence]:
    found: dict[SeriesKey, PairedEvidence] = {}
    family = sum(e.p_value is not None for e in run.estimates)
    for series in chain_series([run], [run.base_commit, run.head_commit]):
        point = series.points[-1]
        step = point.step
        if step is None:  # pragma: no cover - a one-pair series always ends in its step
            continue
        verdict = _verdict(step.verdict, point.holm_p, run.alpha)
        ratio, low, high = step.ratio, step.low, step.high
        if backwards:
            ratio, low, high = _inverse(ratio), _inverse(high), _inverse(low)
            verdict = _FLIP.get(verdict, verdict)
        found[(step.benchmark, step.params, run.env_name)] = PairedEvidence(
            ratio=ratio,
            low=low,
            high=high,
            pairs=1,
            factor=run.factor,
            alpha=run.alpha,
            rounds=step.rounds,
            p_value=step.p_value,
            holm_p=point.holm_p,
            family=family,
            verdict=verdict,
        )
    return found


def _log_half(low: float, high: float) -> float:
    if low > 0 and math.isfinite(high):
        return (math.log(high) - math.log(low)) / 2
    return math.inf


def _chained(
    runs: Sequence[PairedRun], order: Sequence[str], base: str, head: str
) -> dict[SeriesKey, PairedEvidence]:
    """Base and head in one segment of a chained series, more than one pair apart."""
    found: dict[SeriesKey, PairedEvidence] = {}
    for series in chain_series(runs, order):
        segment: dict[str, tuple[int, float, float]] = {}  # commit -> (index, log value, half)
        found_here: PairedEvidence | None = None
        for index, point in enumerate((*series.points, None)):
            if point is None or point.step is None:  # a segment ends: both in it?
                if base in segment and head in segment:
                    found_here = _between(segment[base], segment[head], runs)
                    break
                segment = {}
                if point is None:
                    break
            segment[point.commit] = (index, math.log(point.value), _log_half(point.low, point.high))
        if found_here is not None and found_here.pairs > 1:
            found[(series.benchmark, series.params, series.env_name)] = found_here
    return found


def _between(
    base: tuple[int, float, float], head: tuple[int, float, float], runs: Sequence[PairedRun]
) -> PairedEvidence:
    (b_index, b_log, b_half), (h_index, h_log, h_half) = base, head
    log_ratio = h_log - b_log
    half = math.sqrt(abs(h_half**2 - b_half**2)) if math.isfinite(h_half + b_half) else math.inf
    first = runs[0]
    return PairedEvidence(
        ratio=math.exp(log_ratio),
        low=math.exp(log_ratio - half),
        high=math.exp(log_ratio + half) if math.isfinite(half) else math.inf,
        pairs=abs(h_index - b_index),
        factor=first.factor,
        alpha=first.alpha,
    )


def paired_evidence(
    runs: Iterable[PairedRun], commit_order: Sequence[str], base: str, head: str
) -> dict[SeriesKey, PairedEvidence]:
    """The paired history's evidence on head / base, per series (see the module docstring).

    ``runs``: the paired files of the compare's machine; ``commit_order``:
    the commits with asv results, oldest first (a chain runs through them).
    Series of the pair itself win over a chain; a series the pair on file
    did not time (added to the suite later) falls back to a chain, else
    has no entry.
    """
    by_env: dict[str, list[PairedRun]] = {}
    for run in runs:
        by_env.setdefault(run.env_name, []).append(run)
    found: dict[SeriesKey, PairedEvidence] = {}
    for env_runs in by_env.values():
        direct: dict[SeriesKey, PairedEvidence] = {}
        for run in env_runs:
            if (run.base_commit, run.head_commit) == (base, head):
                direct.update(_direct(run, backwards=False))
            elif (run.base_commit, run.head_commit) == (head, base):
                direct.update(_direct(run, backwards=True))
        position = {c: i for i, c in enumerate(commit_order)}
        if base in position and head in position and base != head:
            older, newer = sorted((base, head), key=position.__getitem__)
            chained = _chained(env_runs, commit_order, older, newer)
            for key, evidence in chained.items():
                if older != base:  # a chain read backwards
                    evidence = PairedEvidence(
                        ratio=_inverse(evidence.ratio),
                        low=_inverse(evidence.high),
                        high=_inverse(evidence.low),
                        pairs=evidence.pairs,
                        factor=evidence.factor,
                        alpha=evidence.alpha,
                    )
                found.setdefault(key, evidence)
        found.update(direct)
    return found
