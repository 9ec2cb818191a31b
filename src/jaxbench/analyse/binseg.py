"""A fast step fit: binary segmentation with the history's own step test.

asv's step fit (:mod:`jaxbench.analyse.steps`) solves an L1 Potts problem for
about ten penalties per series; on a history of 8,000 series over 900
commits that is minutes of one core (``bench/bench_scan_parts.py``), and one
appended commit changes every series' penalty, so every series is fitted
again. jaxbench lists a step only when the values confirm it
(:mod:`jaxbench.analyse.evidence`: a one-sided t test whose spread comes
from the successive differences of the series), so the fit only has to
propose the candidates. :func:`detect_steps` proposes them with that test:

1. the values (NaN, asv's missing data, and points of non-positive weight
   left out, as asv's fit does) in logarithms when all are positive (a step
   is a ratio), each with asv's weight (``2 / width of the 99 % interval``)
   divided by the series' median weight and capped at 1: a point whose own
   runs were noisy counts less, none counts more (an unknown weight is 1);
2. for every split position, the two-sided t statistic of the difference of
   the weighted means, each side counting its effective number of values
   (``sum(w)^2 / sum(w^2)``), with the spread from the successive differences
   of the part (von Neumann's estimator, as the evidence test), all
   positions at once from cumulative sums;
3. the part is cut at the largest statistic when its p-value, times the
   number of positions (Bonferroni), is below :data:`SPLIT_ALPHA`; each side
   is cut again the same way, until no cut passes. A part between two cuts
   keeps at least :data:`MIN_INNER` values; the first part of the series at
   least :data:`MIN_PART`, the last part :data:`MIN_LAST` (so a step at the
   newest commit is proposed, as asv's fit and ``detect_regressions`` propose
   it, and the evidence test counts it as not yet tested).

Each part becomes an asv-style step ``(left, right, level, minimum, error
per point)``: the level is the weighted median of the part's values, the
error their weighted mean absolute deviation from it (asv's levels are
weighted medians too). asv's ``detect_regressions`` and the evidence test
then run on these steps exactly as on asv's. The evidence test's Holm family
counts every series searched (:func:`jaxbench.analyse.evidence.judge`), so a
fit that proposes only likely steps is corrected for all it looked at.

Measured against asv's fit on the same histories (``bench/bench_step_evidence.py
--detectors asv,binseg``, pvlib's real history in the tests, and
``bench/bench_scan.py``): see ``docs/measured.md``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

__all__ = ["MIN_INNER", "MIN_LAST", "MIN_PART", "RULES", "SPLIT_ALPHA", "cuts", "detect_steps"]

#: Fewest values before the first cut (the evidence test needs
#: :data:`jaxbench.analyse.evidence.MIN_SIDE` either side to list a step).
MIN_PART = 2
#: Fewest values after the last cut: one, so that a step at the newest commit
#: is proposed (asv's ``detect_regressions`` accepts a short last level); the
#: evidence test lists it once :data:`jaxbench.analyse.evidence.MIN_SIDE`
#: commits follow it, and the listing counts it as not yet tested until then.
MIN_LAST = 1
#: Fewest values of a part between two cuts (the evidence test's MIN_SIDE).
MIN_INNER = 4
#: Level of each cut's test, Bonferroni over the positions of its part. The
#: evidence test decides what is listed (Holm over the scan at 1 %); this one
#: only proposes, so it is looser.
SPLIT_ALPHA = 0.05
#: The fit's rules, in the digest of every cached fit (detect.py): bumped when
#: they change, so that a history's cached fits of the old rules are not reused.
RULES = 2

FloatArray = np.ndarray[Any, np.dtype[np.float64]]
Step = tuple[int, int, float, float, float]


@lru_cache(maxsize=4096)
def _critical_t(df: int, positions: int, alpha: float) -> float:
    """|t| above which a cut among ``positions`` passes at ``alpha`` (two-sided)."""
    from scipy.special import stdtrit  # scipy.stats.t's own inverse; imports faster

    return -float(stdtrit(df, alpha / (2 * positions)))


def _best_cut(
    z: FloatArray, w: FloatArray, min_left: int, min_right: int, alpha: float
) -> int | None:
    """Where to cut ``z`` (an index 1..n-1), or None when no cut passes.

    ``w``: each value's weight (0..1); means are weighted, and each side counts
    its effective number of values, ``sum(w)^2 / sum(w^2)``.
    """
    n = len(z)
    if n < min_left + min_right:
        return None
    d = np.diff(z)
    dw = np.minimum(w[1:], w[:-1])
    dw_sum = float(dw.sum())
    if dw_sum <= 0:
        return None
    variance = float(np.dot(dw * d, d)) / dw_sum / 2
    if variance == 0.0:
        return None  # no value differs from the one before it: nothing to cut
    cw = np.cumsum(w)
    cwz = np.cumsum(w * z)
    cww = np.cumsum(w * w)
    lo, hi = min_left - 1, n - min_right  # left side ends at index lo..hi-1 (inclusive)
    w_left, wz_left, ww_left = cw[lo:hi], cwz[lo:hi], cww[lo:hi]
    w_right, wz_right, ww_right = cw[-1] - w_left, cwz[-1] - wz_left, cww[-1] - ww_left
    with np.errstate(divide="ignore", invalid="ignore"):
        shift = wz_right / w_right - wz_left / w_left
        spread = np.sqrt(ww_left / (w_left * w_left) + ww_right / (w_right * w_right))
        scaled = np.abs(shift) / spread
    scaled[~np.isfinite(scaled)] = 0.0
    if not len(scaled):
        return None
    j = int(np.argmax(scaled))
    statistic = float(scaled[j]) / math.sqrt(variance)
    if statistic > _critical_t(len(d), len(scaled), alpha):
        return min_left + j
    return None


def cuts(z: FloatArray, w: FloatArray | None = None, alpha: float = SPLIT_ALPHA) -> list[int]:
    """The cut positions of ``z`` (sorted, each 1..n-1) by binary segmentation.

    A part that borders another cut needs :data:`MIN_INNER` values; the first
    part of the series :data:`MIN_PART`, the last :data:`MIN_LAST`.
    """
    n = len(z)
    weights = np.ones(n) if w is None else w
    found: list[int] = []
    stack = [(0, n)]
    while stack:
        a, b = stack.pop()
        min_left = MIN_PART if a == 0 else MIN_INNER
        min_right = MIN_LAST if b == n else MIN_INNER
        cut = _best_cut(z[a:b], weights[a:b], min_left, min_right, alpha)
        if cut is None:
            continue
        found.append(a + cut)
        stack.append((a, a + cut))
        stack.append((a + cut, b))
    return sorted(found)


def detect_steps(
    y: Sequence[float | None] | FloatArray,
    w: Sequence[float | None] | FloatArray | None = None,
    *,
    alpha: float = SPLIT_ALPHA,
) -> list[Step]:
    """Steps of ``y`` in asv's format (indices into ``y``); None or NaN is missing.

    ``w``: asv's weights (``2 / width of the 99 % interval``; None or NaN:
    unknown, 1): a point of zero or less weight is left out, as asv's fit
    does; the others weigh their weight over the median weight, at most 1.
    """
    values = np.asarray(y, dtype=np.float64)  # None -> NaN
    weights = np.ones(len(values)) if w is None else np.asarray(w, dtype=np.float64)
    keep = ~np.isnan(values) & ~(weights <= 0)
    index = np.flatnonzero(keep)
    if not len(index):
        return []
    v = values[index]
    wv = weights[index]
    known = np.sort(wv[~np.isnan(wv)])
    half = len(known) // 2
    median_w = float((known[half] + known[~half]) / 2) if len(known) else 1.0
    wv = np.where(np.isnan(wv), 1.0, wv / (median_w or 1.0))
    wv = np.minimum(wv, 1.0)  # a point with noisy runs counts less; none counts more
    z = np.log(v) if bool(np.all(v > 0)) else v
    bounds = [0, *cuts(z, wv, alpha), len(v)]
    steps: list[Step] = []
    for a, b in itertools.pairwise(bounds):
        part = v[a:b]
        level = _weighted_median(part, wv[a:b])
        steps.append(
            (
                int(index[a]),
                int(index[b - 1]) + 1,
                level,
                float(part.min()),
                float(np.mean(np.abs(part - level) * wv[a:b])),
            )
        )
    return steps


def _weighted_median(values: FloatArray, weights: FloatArray) -> float:
    """The weighted median (the mean of the two middle values at an exact half)."""
    order = np.argsort(values, kind="stable")
    v, cw = values[order], np.cumsum(weights[order])
    half = cw[-1] / 2
    j = int(np.searchsorted(cw, half))
    if j + 1 < len(v) and math.isclose(float(cw[j]), float(half), rel_tol=1e-12, abs_tol=0.0):
        return float((v[j] + v[j + 1]) / 2)
    return float(v[min(j, len(v) - 1)])
