"""Verdicts for one benchmark between a base and a head run (pure; scipy).

Three rules, one per kind of figure (see :mod:`jaxbench.kinds`):

* :func:`compare_samples` for warm times, which asv records as many samples:
  a two-sided test *and* an effect-size gate: the ratio of medians must be
  beyond ``factor`` and the Hodges-Lehmann shift must point the same way.
  The test is a Welch t-test on the logarithms of the per-round medians
  (:func:`rounds_p_value`) when the samples split back into whole rounds
  (asv appends ``repeat`` samples per round, in order): one value per
  process, because processes differ far more than samples of one process
  (``docs/detection-power.md``: pooled, 10 of 20 unchanged heads were
  flagged on a busy machine; per round, 1). Otherwise an exact (or, with
  ties or many samples, tie-corrected normal) Mann-Whitney U test on the
  pooled samples.
  Without samples it falls back to asv's own rule (99 % intervals that do not
  overlap, plus the factor) and says so in the reason.
* :func:`compare_factor` for figures with one value per side (first-call
  and compile times from one ``asv run``, peak memory): no test is possible,
  so a change beyond the factor is shown as "moved, not tested" and fails
  no check unless asked to.
* :func:`compare_exact` for deterministic figures (XLA work counts): any
  relative change beyond ``1e-9`` is a change.

Why two-sided: a comparison reports both regressions and improvements, so it
asks "did it change?"; testing each direction one-sided at ``alpha`` would
double the false-alarm rate. Why ``alpha = 0.01``: a pull-request comment
holds tens of rows and one false alarm per comment would teach people to
ignore it; the factor gate filters most of what slips through, and asv's own
0.002 needs seven samples a side where 0.01 needs five. Samples from one
process are not independent (process-to-process variance dominates on a
shared machine), so pooled p-values are optimistic: hence the per-round test
where rounds are known, and the factor gate, which keeps a tiny but
"significant" drift from being called a regression. Whole runs also shift
against each other on a busy machine, which no within-run test sees: run
base and head with ``asv run --interleave-rounds``.

Base and head measured side by side by ``jaxbench ab`` (sample ``i`` of
each round of base taken within milliseconds of sample ``i`` of head) are
tested by :func:`compare_paired`: per round, the median log ratio of the
paired samples; across rounds, a paired t-test, and a smaller gate
(``PAIRED_FACTOR``), because pairing removes the drift that the other tests
must allow for. First-call figures measured in fresh processes side by side
(``jaxbench first-call``) are tested the same way, one pair a round.

One review holds tens of tested rows; :func:`holm_adjust` turns their
p-values into family-wise ones, so that a review of harmless code fails at
most ``alpha`` of the time, not ``alpha`` per row.

The pooled test is never allowed to call a difference significant from fewer
samples than it needs: with ``n`` and ``m`` samples the smallest two-sided
p-value an exact test can return is ``2 / C(n + m, n)`` (1/3 for 2 and 2);
when that is not below ``alpha`` the verdict is INCONCLUSIVE. The per-round
Welch test needs two rounds a side.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_FACTOR",
    "EXACT_RTOL",
    "FIRST_LOOK_SHARE",
    "KEEP_LOOKING_BELOW",
    "MIN_PAIRED_ROUNDS",
    "PAIRED_FACTOR",
    "REVIEW_PAIRED_FACTOR",
    "SECOND_LOOK_BELOW",
    "Comparison",
    "Verdict",
    "compare_across_runs",
    "compare_exact",
    "compare_factor",
    "compare_failures",
    "compare_new",
    "compare_paired",
    "compare_paired_amounts",
    "compare_removed",
    "compare_samples",
    "cross_run_p_value",
    "hodges_lehmann",
    "holm_adjust",
    "keep_looking",
    "look_again",
    "min_p_value",
    "paired_p_value",
    "paired_round_estimates",
    "paired_samples_p_value",
    "round_medians",
    "rounds_p_value",
    "rounds_variance",
    "second_look_wanted",
    "step_p_value",
    "successive_variance",
    "two_look_p_value",
]

DEFAULT_ALPHA = 0.01
DEFAULT_FACTOR = 1.05
#: The gate of the paired test: a lockstep estimate is good to about a
#: percent (``docs/detection-power.md``), so a 2 % change can be called.
PAIRED_FACTOR = 1.02
#: The gate on a warm time's paired ratio where a commit or two are timed
#: side by side with many samples a round: ``jaxbench review`` (flags) and
#: ``jaxbench bisect`` (calls a step *different*), so that a change the
#: review flags can be bisected. 1 %, half of :data:`PAIRED_FACTOR`
#: (``compare --paired-factor``'s default, the paired history's). The gate
#: only sizes what is called: a flag still needs the paired t-test's
#: Holm-adjusted p-value under 0.01, which holds the false alarms to 1 % by
#: itself. In whole reviews on this project's 2-core machine
#: (docs/measured.md), 10 A/A reviews at this gate flagged no row (smallest
#: Holm p-value 0.05, ratios within 0.8 %) while +2 % heads, measured at
#: 1.009x to 1.024x, were found in 15 of 16 (13 of 16 at a 1.02 gate); on a
#: slower machine, 0 of 12 A/A and 8 of 12 at +2 %, the misses held back by
#: the Holm family, not by this gate.
REVIEW_PAIRED_FACTOR = 1.01
EXACT_RTOL = 1e-9
#: A paired test with a second look (:func:`two_look_p_value`) spends this
#: share of alpha at the first look and the rest at the second.
FIRST_LOOK_SHARE = 0.1
#: The first look's p-value below which a second look is worth its rounds
#: (:func:`second_look_wanted`); above it the series stops, undecided.
SECOND_LOOK_BELOW = 0.1
#: A second look taken in batches: a series goes on while the p-value of its
#: rounds so far stays below this (:func:`keep_looking`). Looser than the first
#: look's bar: a changed series' p-value wanders over 0.1 now and then early on,
#: and each stop there costs power (tests/test_stats.py simulates both).
KEEP_LOOKING_BELOW = 0.2
# Above this many samples in all, or with ties, scipy's exact distribution is
# replaced by the tie-corrected normal approximation.
_EXACT_MAX_TOTAL = 60


class Verdict(Enum):
    """The outcome of comparing one benchmark between base and head."""

    REGRESSION = "regression"
    IMPROVEMENT = "improvement"
    NOT_SIGNIFICANT = "not significant"
    UNCHANGED = "unchanged"
    CHANGED = "changed"  # informational: a change that is neither better nor worse
    #: A figure that moved beyond its factor where no test can tell a change
    #: from noise (one value per side, or separate runs with too little
    #: history): shown, never counted as a change, never failed on by default.
    UNTESTED = "moved, not tested"
    INCONCLUSIVE = "inconclusive"  # too little data to decide either way
    NEW = "new"
    REMOVED = "removed"
    FAILED = "failed"  # passed at base, fails at head
    FIXED = "fixed"  # failed at base, passes at head
    STILL_FAILING = "still failing"
    SKIPPED = "skipped"  # asv skipped it on one side or both: nothing to compare
    #: The workload is declared ``Unchecked`` (no reference) at head: its
    #: accuracy figures do not exist, by declaration, not by a skip.
    UNCHECKED = "unchecked"


@dataclass(frozen=True)
class Comparison:
    """One benchmark's verdict. ``ratio`` is head / base (medians where samples exist)."""

    base: float | None
    head: float | None
    ratio: float | None
    p_value: float | None
    verdict: Verdict
    reason: str
    shift: float | None = None  # Hodges-Lehmann estimate of head - base
    n_base: int = 0
    n_head: int = 0
    #: ``p_value`` adjusted for every tested row of the review (Holm), once
    #: :func:`holm_adjust` has been applied; None before, or for untested rows.
    p_family: float | None = None
    #: asv skipped the benchmark on that side (its value is NaN in asv's file)
    base_skipped: bool = False
    head_skipped: bool = False


def _finite(values: Sequence[float]) -> list[float]:
    return [float(v) for v in values if math.isfinite(v)]


def _ratio(base: float | None, head: float | None) -> float | None:
    if base is None or head is None:
        return None
    if base == 0.0:
        return 1.0 if head == 0.0 else math.inf
    return head / base


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return ordered[mid - 1] / 2 + ordered[mid] / 2


def min_p_value(n: int, m: int) -> float:
    """The smallest two-sided p-value an exact Mann-Whitney test on ``n`` and ``m`` can give."""
    if n <= 0 or m <= 0:
        return 1.0
    try:
        return min(1.0, 2.0 / math.comb(n + m, n))
    except OverflowError:  # C(n + m, n) beyond a float: the bound is 0 to double precision
        return 0.0


def hodges_lehmann(base: Sequence[float], head: Sequence[float]) -> float:
    """Median of all pairwise differences ``head_i - base_j``: a robust shift estimate."""
    return _median([h - b for h in head for b in base])


def _mann_whitney_p(x: list[float], y: list[float]) -> float:
    from scipy.stats import mannwhitneyu

    # Order the two samples canonically so that swapping base and head gives
    # bit-for-bit the same p-value.
    first, second = (x, y) if sorted(x) <= sorted(y) else (y, x)
    if len(set(first) | set(second)) == 1:
        return 1.0  # every value equal: no evidence of any difference
    ties = len(set(first) | set(second)) < len(first) + len(second)
    method = "exact" if not ties and len(first) + len(second) <= _EXACT_MAX_TOTAL else "asymptotic"
    result = mannwhitneyu(first, second, alternative="two-sided", method=method)
    p = float(result.pvalue)
    return min(1.0, p) if math.isfinite(p) else 1.0


# scipy.stats' t-tests, on scipy.special's distribution function: the same
# formulas (tests/test_stats.py checks them against scipy.stats), without
# importing scipy.stats, which costs every analysing command 0.6 s.
def _two_sided_t(statistic: float, dof: float) -> float:
    from scipy.special import stdtr  # scipy.stats.t's own distribution function

    return 2.0 * float(stdtr(dof, -abs(statistic)))


def _mean_var(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample variance (ddof=1) of at least two values."""
    mean = math.fsum(values) / len(values)
    return mean, math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1)


def _welch_p(x: Sequence[float], y: Sequence[float]) -> float:
    """``scipy.stats.ttest_ind(x, y, equal_var=False).pvalue``."""
    mx, vx = _mean_var(x)
    my, vy = _mean_var(y)
    ex, ey = vx / len(x), vy / len(y)
    if ex + ey == 0:
        return math.nan
    dof = (ex + ey) ** 2 / (ex**2 / (len(x) - 1) + ey**2 / (len(y) - 1))
    return _two_sided_t((mx - my) / math.sqrt(ex + ey), dof)


def _one_sample_p(values: Sequence[float]) -> float:
    """``scipy.stats.ttest_1samp(values, 0.0).pvalue``."""
    mean, var = _mean_var(values)
    if var == 0:
        return math.nan
    return _two_sided_t(mean / math.sqrt(var / len(values)), len(values) - 1)


def round_medians(samples: Sequence[float], round_size: int) -> list[float] | None:
    """Median of each round, or None unless ``samples`` split into >= 2 whole rounds.

    asv appends the samples of each round (process) in order, ``round_size``
    (the benchmark's ``repeat``) per round, so they split back by position.
    Non-finite samples are dropped inside their round; a round left empty
    means the split is not trusted (None).
    """
    if round_size < 1 or len(samples) < 2 * round_size or len(samples) % round_size:
        return None
    medians = []
    for start in range(0, len(samples), round_size):
        finite = _finite(samples[start : start + round_size])
        if not finite:
            return None
        medians.append(_median(finite))
    return medians


def rounds_p_value(base: Sequence[float], head: Sequence[float]) -> float:
    """Two-sided Welch t-test on the logarithms of per-round medians.

    One value per process: the test sees the process-to-process variance that
    dominates warm times, instead of treating every sample of a process as
    independent. Logarithms because times are positive and skewed (and a
    slowdown is a ratio). Both sides constant: 1 if equal, else 0.
    """
    x = sorted(math.log(v) for v in base if v > 0)
    y = sorted(math.log(v) for v in head if v > 0)
    if len(x) < 2 or len(y) < 2:
        return 1.0
    first, second = (x, y) if x <= y else (y, x)  # symmetric in base and head, bit for bit
    if len(set(first)) == 1 and len(set(second)) == 1:
        return 1.0 if first[0] == second[0] else 0.0
    p = _welch_p(first, second)
    return min(1.0, p) if math.isfinite(p) else 1.0


def successive_variance(parts: Sequence[Any]) -> tuple[float, int]:
    """The spread of a series from its successive differences, and how many there are.

    von Neumann's estimator, ``sigma^2 = mean(diff^2) / 2``, over the
    differences within each part (NumPy arrays of one value per commit, in
    commit order; a part boundary is not differenced). A level shift
    between commits adds one large difference, so a real step only widens
    it. The one estimate of a series' commit-to-commit spread: the history
    listing's step test (:func:`step_p_value`) and ``compare``'s test across
    runs (:func:`cross_run_p_value`) both read it. ``(0.0, 0)`` without a
    difference.
    """
    import numpy as np

    diffs = [np.diff(part) for part in parts if len(part) > 1]
    if not diffs:
        return 0.0, 0
    joined = np.concatenate(diffs)
    return float(np.dot(joined, joined)) / len(joined) / 2, len(joined)


def rounds_variance(rounds: Sequence[float] | None) -> float | None:
    """A run's ``var(log round medians) / n`` (:func:`cross_run_p_value`'s
    measure of how well a run knows its value); None for fewer than two rounds."""
    variance, dof = _rounds_variance(rounds)
    return variance if dof > 0 else None


def _rounds_variance(rounds: Sequence[float] | None) -> tuple[float, int]:
    """The variance of a side's log value from its own rounds, and its degrees of freedom.

    asv's value is the median of all samples; the mean of the log round
    medians stands in for it, with ``var(log medians) / n``. ``(0.0, 0)`` for
    fewer than two positive rounds."""
    import numpy as np

    if rounds is None:
        return 0.0, 0
    logs = np.log(np.asarray([r for r in rounds if r > 0 and math.isfinite(r)], dtype=np.float64))
    if len(logs) < 2:
        return 0.0, 0
    return float(np.var(logs, ddof=1)) / len(logs), len(logs) - 1


def cross_run_p_value(
    base: float,
    head: float,
    history: Sequence[Sequence[float]],
    *,
    base_rounds: Sequence[float] | None = None,
    head_rounds: Sequence[float] | None = None,
    typical_rounds: float | None = None,
) -> float:
    """Two-sided p-value that ``head`` differs from ``base``, measured in separate runs.

    ``base`` and ``head`` are one value per commit (asv's median), each from
    its own run; ``history`` is the same series at other commits (in commit
    order, cut where they are not consecutive: base and head left out). The
    spread of one commit's value between runs is the history's
    (:func:`successive_variance`, on logarithms: a change is a ratio), and
    the difference of two such values has twice its variance. Each side's
    own run says how well it knows its value: the variance of its log round
    medians over their number (``base_rounds``, ``head_rounds``). The
    history's spread already holds a typical run's share of that, so each
    side's excess over a typical run is added. ``typical_rounds`` is that
    share as the history's own runs measured it (the median of their
    ``var(log round medians) / n``); without it, or where a side is quieter
    still, the quieter side stands for a typical run. A run disturbed while
    it measured (another job loading the machine for part of it) has rounds
    that disagree, so its value counts for less, and when both runs were
    disturbed both excesses count (against the quieter side alone, two
    loaded runs of identical code read 0.50x at p=0.0005); two quiet runs add
    almost nothing, and the test keeps its power.
    The log ratio over the square root of the sum is read against Student's
    t, with Welch-Satterthwaite degrees of freedom (at most the history's
    differences, so the p-value is never below the history's alone). Non-positive values: 1. Fewer
    than two differences: 1.
    """
    import numpy as np
    from scipy.special import stdtr

    parts = [np.asarray(part, dtype=np.float64) for part in history]
    parts = [part[np.isfinite(part)] for part in parts]
    if not (base > 0 and head > 0) or any(bool(np.any(part <= 0)) for part in parts):
        return 1.0
    variance, n_diffs = successive_variance([np.log(part) for part in parts])
    if n_diffs < 2:
        return 1.0
    shift = abs(math.log(head) - math.log(base))
    # The history's spread already holds a typical run's own noise; each
    # side's excess over it is added (never less than the noisier side's
    # excess over the quieter one).
    (v_base, d_base), (v_head, d_head) = (
        _rounds_variance(base_rounds),
        _rounds_variance(head_rounds),
    )
    typical = min(v_base, v_head)
    if typical_rounds is not None and math.isfinite(typical_rounds):
        typical = min(typical, max(typical_rounds, 0.0))
    terms = [
        (2.0 * variance, n_diffs),
        (v_base - typical, d_base),
        (v_head - typical, d_head),
    ]
    total = sum(v for v, _ in terms)
    if total == 0:
        return 0.0 if shift > 0 else 1.0
    # Welch-Satterthwaite, never more than the history's differences: the
    # added term only ever widens the test
    df = min(n_diffs, total**2 / sum(v**2 / d for v, d in terms if d > 0 and v > 0))
    p = 2.0 * float(stdtr(df, -shift / math.sqrt(total)))
    return min(1.0, p) if math.isfinite(p) else 1.0


def step_p_value(
    before: Sequence[float],
    after: Sequence[float],
    context: tuple[Sequence[float], Sequence[float]],
) -> float:
    """p-value that the values ``after`` a step are higher than those ``before`` it.

    ``before`` and ``after`` hold one value per commit on either side of a
    step that a fit found; ``context`` is the whole series cut at the step
    (the values up to it, and from it on). The spread is not taken from
    ``before`` and ``after`` themselves: the fit chose them by their values,
    and in a series whose processes switch between a fast and a slow state it
    puts each state in its own level, each with a small spread. It comes from
    the successive differences of the whole series on each side of the step
    (von Neumann's estimator, ``sigma^2 = mean(diff^2) / 2``, which a real
    step elsewhere only widens), and the one-sided t statistic
    ``shift / (sigma * sqrt(1/n_before + 1/n_after))`` is read against
    Student's t with as many degrees of freedom as differences. Logarithms
    when every value is positive (a step is a ratio). The fit chose the
    position among every position of the series (``context``), at least
    ``n_before + n_after - 1``, so the p-value is multiplied by that number
    (Bonferroni). Fewer than two values on a side, or fewer than
    two differences: 1.
    """
    import numpy as np
    from scipy.special import stdtr  # scipy.stats.t's own distribution function; imports faster

    def finite(values: Sequence[float]) -> Any:
        array = np.asarray(values, dtype=np.float64)
        return array[np.isfinite(array)]

    x, y = finite(before), finite(after)
    parts = [finite(part) for part in context]
    if len(x) < 2 or len(y) < 2:
        return 1.0
    if all(bool(np.all(a > 0)) for a in (x, y, *parts)):
        x, y = np.log(x), np.log(y)
        parts = [np.log(part) for part in parts]
    variance, n_diffs = successive_variance(parts)
    if n_diffs < 2:
        return 1.0
    shift = float(y.mean() - x.mean())
    if variance == 0:
        return 0.0 if shift > 0 else 1.0
    statistic = shift / math.sqrt(variance * (1 / len(x) + 1 / len(y)))
    p = float(stdtr(n_diffs, -statistic))
    positions = max(len(x) + len(y), sum(len(part) for part in parts)) - 1
    return min(1.0, p * positions) if math.isfinite(p) else 1.0


def _direction(base: float, head: float, factor: float) -> Verdict:
    """REGRESSION / IMPROVEMENT if the change is beyond ``factor``, else UNCHANGED.

    Written with multiplications so that swapping base and head swaps the
    answer exactly, with no rounding asymmetry.
    """
    if head > base * factor and head > base:
        return Verdict.REGRESSION
    if base > head * factor and base > head:
        return Verdict.IMPROVEMENT
    return Verdict.UNCHANGED


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def compare_new(head: float | None, *, skipped: bool = False) -> Comparison:
    """A benchmark that only the head results have (``skipped``: asv skipped it there)."""
    why = "not in the base results" + ("; skipped at head" if skipped else "")
    return Comparison(None, head, None, None, Verdict.NEW, why, head_skipped=skipped)


def compare_removed(base: float | None, *, skipped: bool = False) -> Comparison:
    """A benchmark that only the base results have (``skipped``: asv skipped it there)."""
    why = "not in the head results" + ("; skipped at base" if skipped else "")
    return Comparison(base, None, None, None, Verdict.REMOVED, why, base_skipped=skipped)


def compare_failures(base: float | None, head: float | None) -> Comparison:
    """FAILED / FIXED / STILL_FAILING: at least one side has no value (asv: failed)."""
    if base is None and head is None:
        return Comparison(None, None, None, None, Verdict.STILL_FAILING, "fails at base and head")
    if head is None:
        return Comparison(
            base,
            None,
            None,
            None,
            Verdict.FAILED,
            "passed at base, fails at head (asv recorded no result)",
        )
    if base is None:
        return Comparison(None, head, None, None, Verdict.FIXED, "failed at base, passes at head")
    raise ValueError("compare_failures needs a missing value on at least one side")


def compare_skipped(
    base: float | None, head: float | None, *, base_skipped: bool, head_skipped: bool
) -> Comparison:
    """SKIPPED: asv skipped the benchmark (NaN) on at least one side, so nothing compares.

    As in ``asv compare``, a skip is never a failure: only a side that asv
    recorded as failed (``null``) at head after a skip at base is FAILED.
    """
    if not (base_skipped or head_skipped):
        raise ValueError("compare_skipped needs a skipped side")
    sides = {"base_skipped": base_skipped, "head_skipped": head_skipped}
    if base_skipped and head_skipped:
        return Comparison(
            None, None, None, None, Verdict.SKIPPED, "skipped at base and head", **sides
        )
    if base_skipped:
        if head is None:
            return Comparison(
                None, None, None, None, Verdict.FAILED, "skipped at base, fails at head", **sides
            )
        return Comparison(
            None, head, None, None, Verdict.SKIPPED, "skipped at base: not compared", **sides
        )
    what = "failed at base" if base is None else "not compared"
    return Comparison(base, None, None, None, Verdict.SKIPPED, f"skipped at head: {what}", **sides)


def compare_factor(base: float, head: float, *, factor: float, fail: bool = False) -> Comparison:
    """A figure with one value per side: no test is possible.

    Beyond ``factor`` it is UNTESTED ("moved, not tested"), which fails no
    check; with ``fail`` it is a REGRESSION or IMPROVEMENT, as asv's own
    factor-only rule would call it. Within ``factor``: UNCHANGED.
    """
    ratio = _ratio(base, head)
    if not (math.isfinite(base) and math.isfinite(head)):
        return Comparison(base, head, ratio, None, Verdict.INCONCLUSIVE, "value is not finite")
    verdict = _direction(base, head, factor)
    if verdict is Verdict.UNCHANGED:
        return Comparison(
            base, head, ratio, None, verdict, f"within factor {factor:g} (one value a side)"
        )
    reason = f"beyond factor {factor:g}, one value a side: no test possible"
    return Comparison(base, head, ratio, None, verdict if fail else Verdict.UNTESTED, reason)


def compare_across_runs(
    base: float,
    head: float,
    history: Sequence[Sequence[float]],
    *,
    factor: float = DEFAULT_FACTOR,
    alpha: float = DEFAULT_ALPHA,
    n_base: int = 0,
    n_head: int = 0,
    base_rounds: Sequence[float] | None = None,
    head_rounds: Sequence[float] | None = None,
    typical_rounds: float | None = None,
) -> Comparison:
    """Warm times of base and head measured in separate runs: the history's spread.

    ``base`` and ``head`` are each side's value (asv's median), ``history``
    the series at the other commits, ``base_rounds`` and ``head_rounds``
    each side's round medians, ``typical_rounds`` the history's typical
    :func:`rounds_variance` (:func:`cross_run_p_value`). A verdict needs
    the two-sided p-value below ``alpha`` and the ratio beyond ``factor``.
    The rounds alone never decide: the runs' own shift is not in them; they
    only widen the spread of a side whose run disagreed with itself.
    """
    if factor < 1.0:
        raise ValueError(f"factor must be >= 1, got {factor}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    ratio = _ratio(base, head)
    shift = head - base
    sizes = {"n_base": n_base, "n_head": n_head}
    n_commits = sum(len(part) for part in history)
    test = f"across runs: t on the log ratio, spread of {n_commits} other commits"
    if base_rounds is not None or head_rounds is not None:
        test += (
            f" and of each side's rounds ({len(base_rounds or ())} and {len(head_rounds or ())})"
        )
    p = cross_run_p_value(
        base,
        head,
        history,
        base_rounds=base_rounds,
        head_rounds=head_rounds,
        typical_rounds=typical_rounds,
    )
    return _tested(
        (base, head, ratio, shift),
        p,
        _direction(base, head, factor),
        test=test,
        alpha=alpha,
        gate=("ratio beyond", "change within", factor),
        sizes=sizes,
    )


def compare_exact(base: float, head: float, *, rtol: float = EXACT_RTOL) -> Comparison:
    """A deterministic figure: any relative change beyond ``rtol`` is a change."""
    ratio = _ratio(base, head)
    if not (math.isfinite(base) and math.isfinite(head)):
        if base == head or (math.isnan(base) and math.isnan(head)):
            return Comparison(base, head, ratio, None, Verdict.UNCHANGED, "exact figure unchanged")
        return Comparison(base, head, ratio, None, Verdict.INCONCLUSIVE, "value is not finite")
    if abs(head - base) <= rtol * max(abs(base), abs(head)):
        return Comparison(base, head, ratio, None, Verdict.UNCHANGED, "exact figure unchanged")
    verdict = Verdict.REGRESSION if head > base else Verdict.IMPROVEMENT
    return Comparison(base, head, ratio, None, verdict, "work changed")


def _ci_usable(ci: tuple[float, float] | None) -> bool:
    return ci is not None and all(math.isfinite(v) for v in ci)


def compare_samples(
    base_samples: Sequence[float],
    head_samples: Sequence[float],
    *,
    base_value: float | None = None,
    head_value: float | None = None,
    base_ci: tuple[float, float] | None = None,
    head_ci: tuple[float, float] | None = None,
    factor: float = DEFAULT_FACTOR,
    alpha: float = DEFAULT_ALPHA,
    round_size: int | None = None,
) -> Comparison:
    """Warm times: a two-sided test at ``alpha`` and a ratio beyond ``factor``.

    With ``round_size`` (asv's ``repeat`` per round) and at least two whole
    rounds on each side, the test is :func:`rounds_p_value` on per-round
    medians; otherwise a Mann-Whitney U test on the pooled samples. The ratio
    is always that of the pooled medians. NaN and infinite samples are
    dropped. ``*_value`` and ``*_ci`` (asv's median and 99 % interval) are
    used only when a side has no samples.
    """
    if factor < 1.0:
        raise ValueError(f"factor must be >= 1, got {factor}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    base = _finite(base_samples)
    head = _finite(head_samples)
    if not base or not head:
        return _compare_intervals(base_value, head_value, base_ci, head_ci, factor)

    b_med, h_med = _median(base), _median(head)
    ratio = _ratio(b_med, h_med)
    shift = hodges_lehmann(base, head)
    sizes = {"n_base": len(base), "n_head": len(head)}
    b_rounds = round_medians(base_samples, round_size) if round_size else None
    h_rounds = round_medians(head_samples, round_size) if round_size else None
    smallest = min_p_value(len(base), len(head))
    if b_rounds is not None and h_rounds is not None:
        test = f"Welch t on log round medians ({len(b_rounds)} and {len(h_rounds)} rounds)"
        p = rounds_p_value(b_rounds, h_rounds)
    elif smallest >= alpha:
        return _inconclusive(
            (b_med, h_med, ratio, shift),
            f"too few samples ({len(base)} and {len(head)}): the smallest p-value the test "
            f"can give is {_fmt(smallest)}, not below alpha {alpha:g}; record more samples",
            sizes,
        )
    else:
        test = "Mann-Whitney"
        p = _mann_whitney_p(base, head)
    direction = _direction(b_med, h_med, factor)
    agrees = (direction is Verdict.REGRESSION and shift > 0) or (
        direction is Verdict.IMPROVEMENT and shift < 0
    )
    return _tested(
        (b_med, h_med, ratio, shift),
        p,
        direction if agrees else Verdict.UNCHANGED,
        test=test,
        alpha=alpha,
        gate=("ratio beyond", "change within", factor),
        sizes=sizes,
    )


def _measured(
    values: tuple[float, float, float | None, float],
    p: float | None,
    verdict: Verdict,
    reason: str,
    sizes: dict[str, int],
) -> Comparison:
    """A comparison of two measured sides: (base, head, ratio, shift), p, verdict and why."""
    b_med, h_med, ratio, shift = values
    return Comparison(
        b_med,
        h_med,
        ratio,
        p,
        verdict,
        reason,
        shift,
        n_base=sizes["n_base"],
        n_head=sizes["n_head"],
    )


def _inconclusive(
    values: tuple[float, float, float | None, float], reason: str, sizes: dict[str, int]
) -> Comparison:
    """Too little data for the test to reach alpha: (base, head, ratio, shift) and why."""
    return _measured(values, None, Verdict.INCONCLUSIVE, reason, sizes)


def _tested(
    values: tuple[float, float, float | None, float],
    p: float,
    direction: Verdict,
    *,
    test: str,
    alpha: float,
    gate: tuple[str, str, float],
    sizes: dict[str, int],
) -> Comparison:
    """A test's verdict: significant at ``alpha`` and beyond the gate, or not significant.

    ``values`` is (base, head, ratio, shift); ``direction`` is the gate's
    answer (UNCHANGED: within it); ``gate`` words the reason.
    """
    beyond, within, factor = gate
    if p < alpha and direction is not Verdict.UNCHANGED:
        reason = f"{test} p={_fmt(p)} < {alpha:g} and {beyond} {factor:g}"
        return _measured(values, p, direction, reason, sizes)
    if p < alpha:
        reason = f"{test} p={_fmt(p)} < {alpha:g} but {within} factor {factor:g}"
    else:
        reason = f"{test} p={_fmt(p)} >= {alpha:g}"
    return _measured(values, p, Verdict.NOT_SIGNIFICANT, reason, sizes)


def _compare_intervals(
    base_value: float | None,
    head_value: float | None,
    base_ci: tuple[float, float] | None,
    head_ci: tuple[float, float] | None,
    factor: float,
) -> Comparison:
    """asv's rule without samples: 99 % intervals that do not overlap, and the factor."""
    ratio = _ratio(base_value, head_value)
    if (
        base_value is None
        or head_value is None
        or not (math.isfinite(base_value) and math.isfinite(head_value))
    ):
        return Comparison(
            base_value,
            head_value,
            ratio,
            None,
            Verdict.INCONCLUSIVE,
            "no samples and no finite value recorded; rerun asv with --record-samples",
        )
    if base_ci is None or head_ci is None or not (_ci_usable(base_ci) and _ci_usable(head_ci)):
        return Comparison(
            base_value,
            head_value,
            ratio,
            None,
            Verdict.INCONCLUSIVE,
            "no samples and no finite 99% interval recorded; rerun asv with --record-samples",
        )
    direction = _direction(base_value, head_value, factor)
    overlap = base_ci[1] >= head_ci[0] and base_ci[0] <= head_ci[1]
    note = "no samples recorded: asv's rule (99% intervals"
    if overlap or direction is Verdict.UNCHANGED:
        why = "overlap" if overlap else f"apart, but change within factor {factor:g}"
        return Comparison(
            base_value, head_value, ratio, None, Verdict.NOT_SIGNIFICANT, f"{note} {why})"
        )
    return Comparison(
        base_value,
        head_value,
        ratio,
        None,
        direction,
        f"{note} apart and ratio beyond {factor:g})",
    )


def paired_round_estimates(
    base: Sequence[float], head: Sequence[float], round_size: int
) -> list[float] | None:
    """Per round, the median of ``log(head_i / base_i)`` over the round's pairs.

    ``base`` and ``head`` hold the same number of samples, ``round_size`` per
    round, sample ``i`` of one side taken beside sample ``i`` of the other
    (``jaxbench ab``). None unless they split into >= 2 whole rounds; pairs
    with a non-finite or non-positive sample are dropped inside their round,
    and a round left empty means the split is not trusted.
    """
    if (
        round_size < 1
        or len(base) != len(head)
        or len(base) < 2 * round_size
        or len(base) % round_size
    ):
        return None
    estimates = []
    for start in range(0, len(base), round_size):
        logs = [
            math.log(h / b)
            for b, h in zip(
                base[start : start + round_size], head[start : start + round_size], strict=True
            )
            if math.isfinite(b) and math.isfinite(h) and b > 0 and h > 0
        ]
        if not logs:
            return None
        estimates.append(_median(logs))
    return estimates


def compare_paired_amounts(
    base_samples: Sequence[float],
    head_samples: Sequence[float],
    *,
    factor: float,
    absolute: float,
    absolute_text: str = "",
    alpha: float = DEFAULT_ALPHA,
    what: str = "fresh-process pairs",
) -> Comparison | None:
    """Amounts measured side by side, one value a pair, that may be 0 (memory).

    What a workload adds to a fresh process's memory is 0 B for some and
    moves by pages from process to process, so there are no logarithms: the
    test is a two-sided paired t-test of the differences ``head_i - base_i``
    (:func:`paired_p_value`), and the gate asks both for the median
    difference beyond ``absolute`` and for the medians' ratio beyond
    ``factor`` (the absolute part alone where base's median is 0). ``shift``
    is the median difference. Pairs with a non-finite side are dropped; fewer
    than :data:`MIN_PAIRED_ROUNDS` pairs: INCONCLUSIVE. None when the two
    sides hold different counts (not pairs). ``absolute_text``: ``absolute``
    with its unit, for the reason.
    """
    if factor < 1.0:
        raise ValueError(f"factor must be >= 1, got {factor}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if len(base_samples) != len(head_samples):
        return None
    pairs = [
        (float(b), float(h))
        for b, h in zip(base_samples, head_samples, strict=True)
        if math.isfinite(b) and math.isfinite(h)
    ]
    if not pairs:
        return None
    differences = [h - b for b, h in pairs]
    b_med, h_med = _median([b for b, _ in pairs]), _median([h for _, h in pairs])
    shift = _median(differences)
    ratio = h_med / b_med if b_med > 0 else None
    sizes = {"n_base": len(pairs), "n_head": len(pairs)}
    test = f"paired t over {len(pairs)} {what}"
    if len(pairs) < MIN_PAIRED_ROUNDS:
        return _inconclusive(
            (b_med, h_med, ratio, shift),
            f"{test}: needs {MIN_PAIRED_ROUNDS} or more; measure more rounds",
            sizes,
        )
    direction = Verdict.UNCHANGED
    if abs(shift) > absolute:
        if b_med <= 0 or h_med <= 0:
            direction = Verdict.REGRESSION if shift > 0 else Verdict.IMPROVEMENT
        else:
            direction = _direction(b_med, h_med, factor)
    return _tested(
        (b_med, h_med, ratio, shift),
        paired_p_value(differences),
        direction,
        test=test,
        alpha=alpha,
        gate=(
            f"median difference beyond {absolute_text or f'{absolute:g}'} and ratio beyond",
            "median difference or ratio within",
            factor,
        ),
        sizes=sizes,
    )


def paired_p_value(estimates: Sequence[float]) -> float:
    """Two-sided one-sample t-test of per-round log ratios around 0 (a paired t-test).

    A t-test rather than a rank test: its p-value is continuous, so a review
    can hold its family of rows to 1 % (:func:`holm_adjust`) with ten or a
    dozen rounds, where the smallest exact Wilcoxon p-value (``2 / 2**r``)
    could never get below ``0.01 / rows``. An outlying round widens the
    spread, which makes the test less, not more, likely to fire; the ratio
    gate (on the median) decides the size. All estimates equal: 1 if they
    are 0, else 0.
    """
    values = sorted(estimates)  # order-independent, bit for bit
    if len(values) < 2:
        return 1.0
    if len(set(values)) == 1:
        return 1.0 if values[0] == 0.0 else 0.0
    p = _one_sample_p(values)
    return min(1.0, p) if math.isfinite(p) else 1.0


def paired_samples_p_value(
    base: Sequence[float], head: Sequence[float], round_size: int
) -> float | None:
    """:func:`paired_p_value` of samples taken side by side in rounds of ``round_size``.

    What both two-look rules read after a first look (:func:`look_again` in
    ``jaxbench ab``, :func:`second_look_wanted` in ``jaxbench pair-history``).
    None when the samples do not split into rounds
    (:func:`paired_round_estimates`).
    """
    estimates = paired_round_estimates(base, head, round_size)
    return None if estimates is None else paired_p_value(estimates)


#: Fewest rounds (pairs) the paired test accepts: the t-test needs a spread.
MIN_PAIRED_ROUNDS = 3


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the order given.

    Calling a row significant when its adjusted p-value is below ``alpha``
    keeps the chance that *any* row of the family is a false alarm at or
    below ``alpha`` (family-wise error rate), whatever the dependence between
    the rows: sort ascending, multiply the ``i``-th smallest by ``m - i``
    (``i`` from 0), and carry the running maximum so the order is kept.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def two_look_p_value(first: float, second: float | None, share: float = FIRST_LOOK_SHARE) -> float:
    """One p-value for a test looked at twice: weighted Bonferroni over the looks.

    ``first`` is the test's p-value on the first look's rounds, ``second`` on
    all rounds after the second look (None: no second look was taken). The
    result, ``min(1, first / share, second / (1 - share))``, is a valid
    p-value whatever the looks' dependence: under no change, the chance that
    it is at or below ``u`` is at most ``share * u + (1 - share) * u = u``.
    Stopping after the first look (no ``second``) only makes it larger, so
    the rule that decides whether to look again (:func:`second_look_wanted`)
    cannot raise the false-alarm rate, and the value can join a Holm family.
    """
    if not 0.0 < share < 1.0:
        raise ValueError(f"share must be in (0, 1), got {share}")
    p = first / share
    if second is not None:
        p = min(p, second / (1.0 - share))
    return min(1.0, p)


def second_look_wanted(
    first: float,
    *,
    family: int = 1,
    alpha: float = DEFAULT_ALPHA,
    share: float = FIRST_LOOK_SHARE,
    below: float = SECOND_LOOK_BELOW,
) -> bool:
    """Whether a paired series whose first look gave p-value ``first`` should get more rounds.

    Yes when the first look is suggestive (``first < below``) but not yet
    decisive for a family of ``family`` series (Bonferroni, the strictest
    step of Holm's adjustment: ``first / share * family >= alpha``). Most
    unchanged series stop after the first look, so the second look costs
    rounds only where they can change the verdict.
    """
    return first < below and first / share * family >= alpha


def look_again(first: float, *, below: float = SECOND_LOOK_BELOW) -> bool:
    """Whether a warm time timed in two looks (``jaxbench ab --second-look``) gets more rounds.

    Yes when the first look's paired p-value is suggestive (``first < below``),
    whatever the direction or size. Unlike :func:`second_look_wanted`, the
    first look never decides: ``compare --paired`` tests every series with
    the plain paired t-test on all of its rounds, and needs to know nothing
    about the looks, because that p-value stays valid under this rule. Under
    no change, for ``u < below`` it is at or below ``u`` only if the test on
    all rounds is (chance ``<= u``); for ``u >= below``, only if the first
    look's p-value is at or below ``u`` or below ``below`` (chance
    ``<= u``). So each row's p-value can join the review's Holm family as
    is. A series whose first look is not suggestive stops with a p-value of
    at least ``below``, which no family at 1 % flags; a changed one gets all
    its rounds, so the test keeps the power of a single look of them all.

    The second look is taken in batches, and after each a series goes on
    only while :func:`keep_looking` says so. The argument holds: a series
    that stops reports a p-value of at least :data:`KEEP_LOOKING_BELOW`; one
    that goes on is tested on the rounds it has when the look ends, a count
    set by the look's most rounds or the clock (a budget), never by its own
    p-values being small. Stopping a series early can only lose power.
    """
    return first < below


def keep_looking(so_far: float, *, below: float = KEEP_LOOKING_BELOW) -> bool:
    """Whether a series in a second look, after a batch of it, gets more rounds:
    while ``so_far`` (the paired p-value of every round so far) is below
    ``below``. It never stops a series for looking decided, so the p-value of
    the rounds it ends with stays valid (:func:`look_again`)."""
    return so_far < below


def compare_paired(
    base_samples: Sequence[float],
    head_samples: Sequence[float],
    *,
    round_size: int,
    factor: float = PAIRED_FACTOR,
    alpha: float = DEFAULT_ALPHA,
    what: str = "side-by-side rounds",
    first_look: int | None = None,
) -> Comparison | None:
    """Figures measured side by side: a paired test over rounds.

    The estimate of head / base is ``exp`` of the median of the per-round
    estimates (:func:`paired_round_estimates`); the verdict needs a two-sided
    paired t-test on them (:func:`paired_p_value`) at ``alpha`` and the
    estimate beyond ``factor``. Warm times (``jaxbench ab``) pair
    ``round_size`` samples a round; first-call figures measured in fresh
    processes side by side (``jaxbench first-call``) pair one value a round
    (``round_size=1``). Fewer than :data:`MIN_PAIRED_ROUNDS` rounds:
    INCONCLUSIVE. None when the samples are not paired (different counts, or
    not whole rounds); the caller then tests them unpaired.

    ``first_look``: the samples were taken in two looks, the first of
    ``first_look`` rounds and a second only where the first asked for it
    (:func:`second_look_wanted`); the p-value is then the two looks' combined
    one (:func:`two_look_p_value`), whether or not the second was taken.
    """
    if factor < 1.0:
        raise ValueError(f"factor must be >= 1, got {factor}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    estimates = paired_round_estimates(base_samples, head_samples, round_size)
    if estimates is None:
        return None
    base, head = _finite(base_samples), _finite(head_samples)
    b_med, h_med = _median(base), _median(head)
    shift = _median(estimates)
    ratio = math.exp(shift)
    sizes = {"n_base": len(base), "n_head": len(head)}
    rounds = len(estimates)
    test = f"paired t over {rounds} {what}"
    if rounds < MIN_PAIRED_ROUNDS:
        return _inconclusive(
            (b_med, h_med, ratio, shift),
            f"{test}: needs {MIN_PAIRED_ROUNDS} or more; measure more rounds",
            sizes,
        )
    p = paired_p_value(estimates)
    if first_look is not None and first_look >= 2:
        first_p = paired_p_value(estimates[:first_look])
        p = two_look_p_value(first_p, p if rounds > first_look else None)
        test += f" (looks at {first_look}" + (f" and {rounds}" if rounds > first_look else "")
        test += f"; alpha split {FIRST_LOOK_SHARE:g} / {1 - FIRST_LOOK_SHARE:g})"
    return _tested(
        (b_med, h_med, ratio, shift),
        p,
        _direction(1.0, ratio, factor),
        test=test,
        alpha=alpha,
        gate=("paired ratio beyond", "paired ratio within", factor),
        sizes=sizes,
    )
