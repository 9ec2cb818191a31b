"""Verdicts of jaxbench.analyse.stats on synthetic samples, and their properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import mannwhitneyu

from jaxbench.analyse.stats import (
    DEFAULT_ALPHA,
    KEEP_LOOKING_BELOW,
    Verdict,
    compare_exact,
    compare_factor,
    compare_failures,
    compare_paired,
    compare_paired_amounts,
    compare_samples,
    hodges_lehmann,
    keep_looking,
    look_again,
    min_p_value,
    paired_p_value,
    paired_round_estimates,
    paired_samples_p_value,
    round_medians,
    rounds_p_value,
    second_look_wanted,
    two_look_p_value,
)
from jaxbench.jobs.review import SECOND_LOOK_IN_BUDGET

SIGNIFICANT = (Verdict.REGRESSION, Verdict.IMPROVEMENT)


def _lognormal(seed: int, n: int, median: float, sigma: float = 0.05) -> list[float]:
    rng = np.random.default_rng(seed)
    return list(median * np.exp(rng.normal(0.0, sigma, n)))


# -- minimum sample sizes ------------------------------------------------------


def test_min_p_value_matches_scipy_exact_test_on_fully_separated_samples() -> None:
    for n, m in [(2, 2), (3, 3), (4, 4), (5, 5), (3, 8), (10, 10)]:
        low = [float(i) for i in range(n)]
        high = [float(100 + i) for i in range(m)]
        exact = mannwhitneyu(low, high, alternative="two-sided", method="exact").pvalue
        assert min_p_value(n, m) == pytest.approx(exact)


def test_min_p_value_of_many_samples_is_zero_not_an_overflow() -> None:
    assert min_p_value(1200, 1200) == 0.0


def test_two_and_two_samples_cannot_reach_alpha() -> None:
    # 2 / C(4, 2) = 1/3: no pair of two-sample sets can give p < 0.01.
    assert min_p_value(2, 2) == pytest.approx(1 / 3)
    result = compare_samples([1.0, 1.0001], [2.0, 2.0001])
    assert result.verdict is Verdict.INCONCLUSIVE
    assert "too few samples" in result.reason
    assert result.p_value is None


def test_five_a_side_is_the_least_that_reaches_one_percent() -> None:
    assert min_p_value(4, 4) >= DEFAULT_ALPHA > min_p_value(5, 5)
    assert compare_samples([1.0] * 4, [2.0] * 4).verdict is Verdict.INCONCLUSIVE
    separated = compare_samples([1.0, 1.01, 1.02, 1.03, 1.04], [2.0, 2.01, 2.02, 2.03, 2.04])
    assert separated.verdict is Verdict.REGRESSION
    assert separated.p_value is not None
    assert separated.p_value < DEFAULT_ALPHA


# -- planted shifts ------------------------------------------------------------


@pytest.mark.parametrize("shift", [1.10, 1.20, 1.50])
def test_planted_slowdown_is_found(shift: float) -> None:
    base = _lognormal(1, 30, 10e-6)
    head = _lognormal(2, 30, 10e-6 * shift)
    result = compare_samples(base, head)
    assert result.verdict is Verdict.REGRESSION, result.reason
    assert result.ratio == pytest.approx(shift, rel=0.05)
    assert result.shift is not None
    assert result.shift > 0


@pytest.mark.parametrize("shift", [1.10, 1.20, 1.50])
def test_planted_speedup_is_found(shift: float) -> None:
    base = _lognormal(3, 30, 10e-6 * shift)
    head = _lognormal(4, 30, 10e-6)
    assert compare_samples(base, head).verdict is Verdict.IMPROVEMENT


def test_identical_distributions_are_not_flagged() -> None:
    flagged = sum(
        compare_samples(_lognormal(2 * i, 20, 5e-3), _lognormal(2 * i + 1, 20, 5e-3)).verdict
        in SIGNIFICANT
        for i in range(200)
    )
    # p < 0.01 alone would flag about 2 of 200; the factor gate removes those too.
    assert flagged == 0


def test_significant_but_small_change_is_not_a_regression() -> None:
    # A 2 % shift with tiny noise: the test is sure, but it is under the 5 % factor.
    base = _lognormal(5, 40, 1.0, sigma=0.001)
    head = _lognormal(6, 40, 1.02, sigma=0.001)
    result = compare_samples(base, head)
    assert result.verdict is Verdict.NOT_SIGNIFICANT
    assert result.p_value is not None
    assert result.p_value < DEFAULT_ALPHA
    assert "within factor" in result.reason
    assert compare_samples(base, head, factor=1.01).verdict is Verdict.REGRESSION


def test_nan_and_inf_samples_are_dropped() -> None:
    base = [1.0, 1.01, 1.02, 1.03, 1.04, math.nan, math.inf]
    head = [2.0, 2.01, 2.02, 2.03, 2.04, -math.inf]
    result = compare_samples(base, head)
    assert (result.n_base, result.n_head) == (5, 5)
    assert result.verdict is Verdict.REGRESSION


def test_hodges_lehmann_is_median_of_pairwise_differences() -> None:
    assert hodges_lehmann([1.0, 2.0], [4.0, 6.0]) == pytest.approx(3.5)  # 3, 2, 5, 4


# -- no samples: asv's interval rule -----------------------------------------


def test_no_samples_falls_back_to_asv_interval_rule() -> None:
    apart = compare_samples(
        [], [], base_value=1.0, head_value=2.0, base_ci=(0.9, 1.1), head_ci=(1.9, 2.1)
    )
    assert apart.verdict is Verdict.REGRESSION
    assert "no samples recorded: asv's rule" in apart.reason
    overlap = compare_samples(
        [], [], base_value=1.0, head_value=2.0, base_ci=(0.5, 1.95), head_ci=(1.9, 2.1)
    )
    assert overlap.verdict is Verdict.NOT_SIGNIFICANT
    assert "overlap" in overlap.reason
    nothing = compare_samples([], [], base_value=1.0, head_value=2.0)
    assert nothing.verdict is Verdict.INCONCLUSIVE
    assert "--record-samples" in nothing.reason


def test_interval_rule_needs_the_factor_too() -> None:
    result = compare_samples(
        [], [], base_value=1.0, head_value=1.01, base_ci=(0.999, 1.001), head_ci=(1.009, 1.011)
    )
    assert result.verdict is Verdict.NOT_SIGNIFICANT


# -- factor, exact, failures -------------------------------------------------


def test_factor_rule_shows_untested_changes_and_fails_only_on_request() -> None:
    beyond = compare_factor(1.0, 1.3, factor=1.25)
    assert beyond.verdict is Verdict.UNTESTED
    assert beyond.verdict.value == "moved, not tested"
    assert "no test possible" in beyond.reason
    assert compare_factor(1.0, 1.2, factor=1.25).verdict is Verdict.UNCHANGED
    assert compare_factor(1.3, 1.0, factor=1.25).verdict is Verdict.UNTESTED
    assert compare_factor(1.0, 1.3, factor=1.25, fail=True).verdict is Verdict.REGRESSION
    assert compare_factor(1.0, 1.2, factor=1.25, fail=True).verdict is Verdict.UNCHANGED
    assert compare_factor(1.3, 1.0, factor=1.25, fail=True).verdict is Verdict.IMPROVEMENT


def test_exact_rule_sees_any_change() -> None:
    assert compare_exact(65536.0, 65536.0).verdict is Verdict.UNCHANGED
    changed = compare_exact(65536.0, 65537.0)
    assert changed.verdict is Verdict.REGRESSION
    assert changed.reason == "work changed"
    assert compare_exact(2.0, 1.0).verdict is Verdict.IMPROVEMENT
    assert compare_exact(0.0, 0.0).verdict is Verdict.UNCHANGED


def test_failures() -> None:
    assert compare_failures(1.0, None).verdict is Verdict.FAILED
    assert compare_failures(None, 1.0).verdict is Verdict.FIXED
    assert compare_failures(None, None).verdict is Verdict.STILL_FAILING
    with pytest.raises(ValueError, match="missing value"):
        compare_failures(1.0, 1.0)


# -- properties ----------------------------------------------------------------

_any_float = st.floats(allow_nan=True, allow_infinity=True, width=64)
_positive = st.floats(min_value=1e-9, max_value=1e3, allow_nan=False)
_samples = st.lists(_any_float, max_size=25)
_ci = st.none() | st.tuples(_any_float, _any_float)
_value = st.none() | _any_float


@settings(max_examples=300, deadline=None)
@given(_samples, _samples, _value, _value, _ci, _ci)
def test_no_input_crashes(
    base: list[float],
    head: list[float],
    base_value: float | None,
    head_value: float | None,
    base_ci: tuple[float, float] | None,
    head_ci: tuple[float, float] | None,
) -> None:
    result = compare_samples(
        base, head, base_value=base_value, head_value=head_value, base_ci=base_ci, head_ci=head_ci
    )
    assert isinstance(result.verdict, Verdict)
    assert result.p_value is None or 0.0 <= result.p_value <= 1.0


@settings(max_examples=300, deadline=None)
@given(st.lists(_positive, min_size=1, max_size=12), st.lists(_positive, min_size=1, max_size=12))
def test_never_significant_with_too_few_samples(base: list[float], head: list[float]) -> None:
    result = compare_samples(base, head)
    if min_p_value(len(base), len(head)) >= DEFAULT_ALPHA:
        assert result.verdict not in SIGNIFICANT
    if result.verdict in SIGNIFICANT:
        assert result.p_value is not None
        assert result.p_value < DEFAULT_ALPHA


_SWAPPED = {
    Verdict.REGRESSION: Verdict.IMPROVEMENT,
    Verdict.IMPROVEMENT: Verdict.REGRESSION,
}


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_positive, min_size=0, max_size=20),
    st.lists(_positive, min_size=0, max_size=20),
    st.floats(min_value=0.5, max_value=2.0),
)
def test_swapping_base_and_head_swaps_the_verdict(
    base: list[float], head: list[float], scale: float
) -> None:
    head = [h * scale for h in head]
    forward = compare_samples(base, head)
    backward = compare_samples(head, base)
    assert backward.verdict is _SWAPPED.get(forward.verdict, forward.verdict)
    assert forward.p_value == backward.p_value


@settings(max_examples=200, deadline=None)
@given(_any_float, _any_float)
def test_exact_and_factor_rules_never_crash_and_swap(base: float, head: float) -> None:
    for rule in (compare_exact, lambda b, h: compare_factor(b, h, factor=1.25)):
        forward, backward = rule(base, head), rule(head, base)
        assert backward.verdict is _SWAPPED.get(forward.verdict, forward.verdict)


# -- per-round (per-process) test ----------------------------------------------


def _rounds(seed: int, rounds: int, median: float, between: float) -> list[float]:
    """``rounds`` x 30 samples: each round (process) has its own level, as on a busy box."""
    rng = np.random.default_rng(seed)
    out: list[float] = []
    for _ in range(rounds):
        level = median * math.exp(rng.normal(0.0, between))
        out.extend(level * np.exp(rng.normal(0.0, 0.02, 30)))
    return out


def test_round_medians_split_samples_back_into_rounds_by_position() -> None:
    samples = [1.0, 2.0, 3.0, 10.0, 20.0, math.nan]
    assert round_medians(samples, 3) == [2.0, 15.0]
    assert round_medians(samples[:3], 3) is None  # one round is no spread
    assert round_medians(samples[:5], 3) is None  # not whole rounds
    assert round_medians([1.0, math.nan, math.nan, math.nan], 2) is None  # an empty round


def test_rounds_p_value_is_symmetric_and_handles_constant_sides() -> None:
    base, head = [1.0, 1.2, 0.9, 1.1], [1.3, 1.5, 1.25, 1.6]
    assert rounds_p_value(base, head) == rounds_p_value(head, base)
    assert rounds_p_value([2.0, 2.0], [2.0, 2.0]) == 1.0
    assert rounds_p_value([2.0, 2.0], [3.0, 3.0]) == 0.0
    assert rounds_p_value([2.0], [3.0, 3.1]) == 1.0  # one round: no test


def test_process_to_process_variance_fools_the_pooled_test_but_not_the_rounds_test() -> None:
    # No change, but every process runs at its own speed (sd 30 % between
    # processes, 2 % within): 120 pooled samples look wildly "significant".
    pooled = rounds = 0
    for i in range(200):
        base = _rounds(2 * i, 4, 1e-4, 0.3)
        head = _rounds(2 * i + 1, 4, 1e-4, 0.3)
        pooled += compare_samples(base, head).verdict in SIGNIFICANT
        rounds += compare_samples(base, head, round_size=30).verdict in SIGNIFICANT
    assert pooled > 60
    assert rounds <= 6  # alpha 0.01 of 200 is 2 (4 here: Welch on 4 and 4 is a little liberal)


def test_rounds_test_catches_a_shift_that_every_process_shows() -> None:
    base = _rounds(1, 6, 1e-4, 0.03)
    head = _rounds(2, 6, 1.2e-4, 0.03)
    result = compare_samples(base, head, round_size=30)
    assert result.verdict is Verdict.REGRESSION
    assert "round medians (6 and 6 rounds)" in result.reason
    # samples that do not split into whole rounds fall back to the pooled test
    fallback = compare_samples(base[:-1], head, round_size=30)
    assert "Mann-Whitney" in fallback.reason


# -- paired (side-by-side) test ---------------------------------------------------


def _paired_rounds(
    seed: int,
    rounds: int,
    per_round: int,
    ratio: float,
    *,
    process_sd: float = 0.3,
    own_sd: float = 0.01,
) -> tuple[list[float], list[float]]:
    """Base and head samples as ``jaxbench ab`` records them, side by side.

    Each round runs at its own speed (``process_sd``, shared by the pair: the
    drift the pairing cancels), each sample moves with the moment it was taken
    (shared by the two samples of a step), and each side has 1 % of its own
    noise per round and per sample.
    """
    rng = np.random.default_rng(seed)
    base: list[float] = []
    head: list[float] = []
    for _ in range(rounds):
        level = 1e-4 * math.exp(rng.normal(0.0, process_sd))
        own_b, own_h = rng.normal(0.0, own_sd, 2)
        for _ in range(per_round):
            moment = math.exp(rng.normal(0.0, 0.2))
            base.append(level * moment * math.exp(own_b + rng.normal(0.0, 0.01)))
            head.append(ratio * level * moment * math.exp(own_h + rng.normal(0.0, 0.01)))
    return base, head


def test_paired_round_estimates_are_per_round_median_log_ratios() -> None:
    base = [1.0, 2.0, 4.0, 1.0, 1.0, 1.0]
    head = [2.0, 2.0, 4.0, 1.0, 3.0, math.nan]
    assert paired_round_estimates(base, head, 3) == [0.0, pytest.approx(math.log(3.0) / 2)]
    # a pair with a NaN is dropped inside its round; unequal sides or partial rounds: None
    assert paired_round_estimates(base, head[:-1], 3) is None
    assert paired_round_estimates(base[:-1], head[:-1], 3) is None
    assert paired_round_estimates(base[:3], head[:3], 3) is None  # one round: no test
    assert paired_round_estimates([1.0, math.nan], [1.0, math.nan], 1) is None


def test_paired_test_finds_a_five_percent_slowdown_under_thirty_percent_drift() -> None:
    base, head = _paired_rounds(1, 12, 100, 1.05)
    result = compare_paired(base, head, round_size=100)
    assert result is not None
    assert result.verdict is Verdict.REGRESSION
    assert result.ratio == pytest.approx(1.05, rel=0.01)
    assert "12 side-by-side rounds" in result.reason
    swapped = compare_paired(head, base, round_size=100)
    assert swapped is not None
    assert swapped.verdict is Verdict.IMPROVEMENT
    # the unpaired per-round test on the same samples cannot see it
    assert compare_samples(base, head, round_size=100).verdict is Verdict.NOT_SIGNIFICANT


def test_paired_test_rarely_flags_no_change() -> None:
    flagged = 0
    for seed in range(200):
        base, head = _paired_rounds(seed, 12, 20, 1.0)
        result = compare_paired(base, head, round_size=20)
        assert result is not None
        flagged += result.verdict in SIGNIFICANT
    assert flagged <= 2  # alpha 0.01 and the 2 % gate


def test_paired_test_gate_keeps_a_tiny_consistent_change_unflagged() -> None:
    base, head = _paired_rounds(3, 12, 50, 1.01, process_sd=0.0, own_sd=0.0)
    result = compare_paired(base, head, round_size=50)
    assert result is not None
    assert result.p_value is not None
    assert result.p_value < DEFAULT_ALPHA
    assert result.verdict is Verdict.NOT_SIGNIFICANT
    assert "within factor 1.02" in result.reason


def test_paired_test_needs_three_rounds() -> None:
    base, head = _paired_rounds(4, 2, 10, 1.5)
    two = compare_paired(base, head, round_size=10)
    assert two is not None
    assert two.verdict is Verdict.INCONCLUSIVE
    assert "measure more rounds" in two.reason
    base, head = _paired_rounds(4, 8, 10, 1.5)
    eight = compare_paired(base, head, round_size=10)
    assert eight is not None
    assert eight.verdict is Verdict.REGRESSION


def test_first_call_pairs_one_value_a_round() -> None:
    base = [0.50, 0.52, 0.49, 0.51, 0.55, 0.50, 0.48, 0.53]
    head = [b * 1.2 * (1 + 0.01 * (-1) ** i) for i, b in enumerate(base)]
    result = compare_paired(base, head, round_size=1, factor=1.10, what="fresh-process pairs")
    assert result is not None
    assert result.verdict is Verdict.REGRESSION
    assert result.ratio == pytest.approx(1.2, rel=0.02)
    assert "8 fresh-process pairs" in result.reason
    same = compare_paired(base, list(reversed(base)), round_size=1, factor=1.10)
    assert same is not None
    assert same.verdict is Verdict.NOT_SIGNIFICANT


def test_paired_test_is_not_used_for_unpaired_samples() -> None:
    assert compare_paired([1.0] * 30, [1.0] * 20, round_size=10) is None
    with pytest.raises(ValueError, match="factor"):
        compare_paired([1.0] * 20, [1.0] * 20, round_size=10, factor=0.5)


def test_paired_p_value_is_a_one_sample_t_test_on_the_estimates() -> None:
    from scipy.stats import ttest_1samp

    values = [0.02, 0.03, -0.01, 0.04, 0.02, 0.05, 0.01, 0.03, 0.02, 0.06]
    p = paired_p_value(values)
    assert p == pytest.approx(float(ttest_1samp(values, 0.0).pvalue))
    assert 0.0 < p < 0.01
    assert paired_p_value(list(reversed(values))) == p  # order-independent
    assert paired_p_value([0.0] * 8) == 1.0
    assert paired_p_value([0.01] * 8) == 0.0  # a constant shift: no spread at all
    assert paired_p_value([0.1]) == 1.0


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(-5000, 5000).map(lambda i: i / 1000), min_size=2, max_size=25),
    st.lists(st.integers(-5000, 5000).map(lambda i: i / 1000), min_size=2, max_size=25),
)
def test_the_t_tests_are_scipy_stats_own(x: list[float], y: list[float]) -> None:
    """rounds_p_value and paired_p_value compute scipy.stats' Welch and one-sample
    t-tests on scipy.special (importing scipy.stats costs each command 0.6 s)."""
    import warnings

    from scipy.stats import ttest_1samp, ttest_ind

    from jaxbench.analyse.paired_history import _t_quantile

    logs = sorted(math.exp(v) for v in x), sorted(math.exp(v) for v in y)
    first, second = sorted([sorted(math.log(v) for v in side) for side in logs])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = float(ttest_ind(first, second, equal_var=False).pvalue)
        want_1 = float(ttest_1samp(sorted(x), 0.0).pvalue)
    got = rounds_p_value(*logs)
    if len(set(first)) > 1 or len(set(second)) > 1:
        assert got == pytest.approx(min(1.0, want) if math.isfinite(want) else 1.0, rel=1e-6)
    if len(set(x)) > 1:
        assert paired_p_value(x) == pytest.approx(min(1.0, want_1), rel=1e-6, abs=1e-300)
    from scipy.stats import t

    assert _t_quantile(0.995, len(x)) == pytest.approx(float(t.ppf(0.995, len(x))), rel=1e-12)


def test_two_look_p_value_is_weighted_bonferroni_over_the_looks() -> None:
    assert two_look_p_value(0.0005, None) == pytest.approx(0.005)  # 0.0005 / 0.1
    assert two_look_p_value(0.05, None) == pytest.approx(0.5)
    assert two_look_p_value(0.05, 0.0045) == pytest.approx(0.005)  # 0.0045 / 0.9
    assert two_look_p_value(0.0001, 0.5) == pytest.approx(0.001)  # the smaller one counts
    assert two_look_p_value(0.5, 0.95) == 1.0
    assert two_look_p_value(0.04, 0.04, share=0.5) == pytest.approx(0.08)
    with pytest.raises(ValueError, match="share"):
        two_look_p_value(0.1, 0.1, share=1.0)


def test_a_second_look_is_wanted_only_where_it_can_change_the_verdict() -> None:
    assert second_look_wanted(0.05)  # suggestive
    assert second_look_wanted(0.002)  # significant at 0.01 alone, not at the first look's 0.001
    assert not second_look_wanted(0.0005)  # decided at the first look
    assert not second_look_wanted(0.3)  # nothing there: stop
    assert second_look_wanted(0.0005, family=40)  # one of 40 series: Holm needs more
    assert not second_look_wanted(0.00001, family=40)


def _two_looks(rng: np.random.Generator, shift: float, sd: float) -> tuple[float, float]:
    """(one look of 10 rounds' p-value, the two-look p-value) of one simulated pair, its
    second look in batches of 2 rounds while :func:`keep_looking` says so, as
    ``pair-history`` takes it on 2 CPUs."""
    rounds = list(rng.normal(shift, sd, 10))
    p1 = paired_p_value(rounds)
    p2 = None
    if second_look_wanted(p1):
        while len(rounds) < 20:
            rounds += list(rng.normal(shift, sd, 2))
            p2 = paired_p_value(rounds)
            if not keep_looking(p2):
                break
    return p1, two_look_p_value(p1, p2)


@pytest.mark.slow
def test_two_looks_keep_the_false_alarm_rate_and_find_what_one_look_misses() -> None:
    """Simulated per-round log ratios: under no change, the two-look p-value is below
    0.01 in about 1 % of 4,000 pairs, as one look; a step one look of 10 rounds
    finds in about half the pairs, two looks find in most."""
    rng = np.random.default_rng(11)
    null = [_two_looks(rng, 0.0, 0.03) for _ in range(4000)]
    one_false = sum(p1 < DEFAULT_ALPHA for p1, _ in null)
    two_false = sum(p < DEFAULT_ALPHA for _, p in null)
    assert 20 <= one_false <= 60
    assert two_false <= 60
    step = [_two_looks(rng, 0.035, 0.03) for _ in range(1000)]
    one_found = sum(p1 < DEFAULT_ALPHA for p1, _ in step)
    two_found = sum(p < DEFAULT_ALPHA for _, p in step)
    assert one_found < 800
    assert two_found >= one_found + 150


def test_paired_samples_p_value_is_the_paired_test_of_the_rounds_or_none() -> None:
    """The first-look p-value both two-look rules read: the paired t-test of the
    per-round estimates, and None when the samples do not split into rounds."""
    base = _lognormal(1, 40, 1.0)
    head = _lognormal(2, 40, 1.1)
    estimates = paired_round_estimates(base, head, 10)
    assert estimates is not None
    assert len(estimates) == 4
    p = paired_samples_p_value(base, head, 10)
    assert p == paired_p_value(estimates)
    assert p is not None
    assert p < 0.01  # a 10 % step, 4 rounds of 10 pairs
    assert paired_samples_p_value(base, head[:-1], 10) is None  # unequal sides
    assert paired_samples_p_value(base[:15], head[:15], 10) is None  # not whole rounds
    assert paired_samples_p_value(base[:10], head[:10], 10) is None  # one round


def _ab_looks(
    rng: np.random.Generator, shift: float, sd: float, more: int = 6
) -> tuple[float, bool]:
    """The p-value compare --paired gives one warm time of jaxbench ab's two looks
    (6 rounds; if suggestive, up to ``more`` more in batches of 2, each batch
    taken while :func:`keep_looking` says so): the plain paired test on every
    round taken; and whether the second look was taken."""
    rounds = list(rng.normal(shift, sd, 6))
    again = look_again(paired_p_value(rounds))
    if again:
        while len(rounds) < 6 + more:
            rounds += list(rng.normal(shift, sd, 2))
            if not keep_looking(paired_p_value(rounds)):
                break
    return paired_p_value(rounds), again


@pytest.mark.slow
def test_ab_second_look_keeps_the_plain_p_value_valid_and_the_power_of_all_rounds() -> None:
    """Under no change, compare's plain p-value of ab's two looks is at or below u in
    at most about u of 10,000 simulated warm times, at every u (so it can join a
    Holm family as is); about 10 % of them take the second look. A 5 % step with a
    3 % spread a round is found about as often as with 12 rounds for every warm time."""
    assert look_again(0.05)
    assert look_again(0.0)
    assert not look_again(0.1)
    assert not look_again(0.5)
    rng = np.random.default_rng(5)
    trials = 10_000
    looks = [_ab_looks(rng, 0.0, 0.03) for _ in range(trials)]
    null = np.array([p for p, _ in looks])
    for u in (0.001, 0.01, 0.05, 0.1, 0.2, 0.5):
        # binomial spread: 3 standard errors over u
        assert (null <= u).mean() <= u + 3 * (u * (1 - u) / trials) ** 0.5, u
    assert 0.08 < sum(again for _, again in looks) / trials < 0.12
    step = [_ab_looks(rng, math.log(1.05), 0.03)[0] for _ in range(2000)]
    twelve = [paired_p_value(list(rng.normal(math.log(1.05), 0.03, 12))) for _ in range(2000)]
    found = sum(p < 0.01 / 60 for p in step)  # Holm's strictest step over 60 rows
    # 12 rounds find about 1,100 of 2,000; 6 rounds alone about 250
    assert found >= sum(p < 0.01 / 60 for p in twelve) - 80


@pytest.mark.slow
def test_the_reviews_second_look_in_its_budget_stays_valid_and_finds_small_steps() -> None:
    """The review's second look, up to SECOND_LOOK_IN_BUDGET rounds while suggestive:
    under no change the plain p-value is at or below u in at most about u of 10,000
    simulated warm times, and a suggestive one stops after a few rounds on average; a
    2 % step with a 3 % spread a round, which 6 more rounds find about 35 times in
    2,000 at Holm's strictest step over 60 rows, it finds over 400 times."""
    assert keep_looking(0.15)
    assert not keep_looking(KEEP_LOOKING_BELOW)
    more = SECOND_LOOK_IN_BUDGET
    rng = np.random.default_rng(7)
    trials = 10_000
    null = np.array([_ab_looks(rng, 0.0, 0.03, more)[0] for _ in range(trials)])
    for u in (0.001, 0.01, 0.05, 0.1, 0.2, 0.5):
        assert (null <= u).mean() <= u + 3 * (u * (1 - u) / trials) ** 0.5, u
    step = np.log(1.02)
    long = sum(_ab_looks(rng, step, 0.03, more)[0] < 0.01 / 60 for _ in range(2000))
    short = sum(_ab_looks(rng, step, 0.03, 6)[0] < 0.01 / 60 for _ in range(2000))
    assert short < 100
    assert long > 400


def test_compare_paired_combines_the_looks_it_was_measured_in() -> None:
    base, head = _paired_rounds(5, 20, 10, 1.03, process_sd=0.3, own_sd=0.02)
    one = compare_paired(base[:100], head[:100], round_size=10)
    both = compare_paired(base, head, round_size=10, first_look=10)
    only_first = compare_paired(base[:100], head[:100], round_size=10, first_look=10)
    assert one is not None
    assert both is not None
    assert only_first is not None
    assert one.p_value is not None
    assert both.p_value is not None
    twenty = paired_p_value(paired_round_estimates(base, head, 10) or [])
    assert both.p_value == pytest.approx(two_look_p_value(one.p_value, twenty))
    assert only_first.p_value == pytest.approx(min(1.0, one.p_value / 0.1))
    assert "paired t over 20 side-by-side rounds (looks at 10 and 20" in both.reason
    assert "(looks at 10;" in only_first.reason


def test_holm_adjust_matches_the_step_down_rule() -> None:
    from jaxbench.analyse.stats import holm_adjust

    p = [0.01, 0.04, 0.03, 0.005]
    # sorted: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> running max 0.06
    assert holm_adjust(p) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm_adjust([]) == []
    assert holm_adjust([0.5, 0.9]) == [1.0, 1.0]


def test_holm_keeps_a_family_of_null_rows_at_alpha() -> None:
    """36 independent null rows (a review's tested rows): any row below 0.01 after Holm
    in at most about 1 % of 2,000 simulated reviews; uncorrected, in about 30 %."""
    import random

    from jaxbench.analyse.stats import holm_adjust

    rng = random.Random(7)
    reviews, any_holm, any_raw = 2000, 0, 0
    for _ in range(reviews):
        p = [rng.random() for _ in range(36)]
        any_raw += min(p) < DEFAULT_ALPHA
        any_holm += min(holm_adjust(p)) < DEFAULT_ALPHA
    assert any_raw > 0.2 * reviews
    assert any_holm <= 0.015 * reviews


MiB = float(1 << 20)


def test_paired_amounts_test_differences_and_take_zero_without_a_ratio() -> None:
    # a workload that adds nothing at base (0 B) and 32 MiB at head
    base = [0.0, 4096.0, 0.0, 8192.0, 0.0]
    head = [32 * MiB + b for b in (4096.0, 0.0, 8192.0, 0.0, 4096.0)]
    got = compare_paired_amounts(base, head, factor=1.10, absolute=MiB, absolute_text="1 MiB")
    assert got is not None
    assert got.verdict is Verdict.REGRESSION
    assert got.ratio is None  # base's median is 0: no ratio, the difference decides
    assert got.shift == pytest.approx(32 * MiB, abs=8192)
    assert "median difference beyond 1 MiB" in got.reason
    # swapped: an improvement, the same p
    back = compare_paired_amounts(head, base, factor=1.10, absolute=MiB)
    assert back is not None
    assert back.verdict is Verdict.IMPROVEMENT
    assert back.p_value == pytest.approx(got.p_value)


def test_paired_amounts_need_both_the_resolution_and_the_factor() -> None:
    rng = np.random.default_rng(7)
    base = list(100 * MiB + rng.integers(0, 64, 8) * 4096.0)
    # +2 MiB on 100 MiB: beyond the resolution, within the factor
    head = [b + 2 * MiB for b in base]
    got = compare_paired_amounts(base, head, factor=1.10, absolute=MiB)
    assert got is not None
    assert got.verdict is Verdict.NOT_SIGNIFICANT
    assert got.p_value is not None
    assert got.p_value < DEFAULT_ALPHA
    # +30 %: both
    head = [b * 1.3 for b in base]
    got = compare_paired_amounts(base, head, factor=1.10, absolute=MiB)
    assert got is not None
    assert got.verdict is Verdict.REGRESSION


def test_paired_amounts_of_noise_alone_are_not_significant() -> None:
    flagged = 0
    for seed in range(200):
        rng = np.random.default_rng(seed)
        base = list(6 * MiB + rng.integers(0, 64, 10) * 4096.0)
        head = list(6 * MiB + rng.integers(0, 64, 10) * 4096.0)
        got = compare_paired_amounts(base, head, factor=1.10, absolute=MiB)
        assert got is not None
        flagged += got.verdict in SIGNIFICANT
    assert flagged == 0


def test_paired_amounts_are_pairs_or_none() -> None:
    assert compare_paired_amounts([1.0, 2.0, 3.0], [1.0, 2.0], factor=1.1, absolute=1.0) is None
    few = compare_paired_amounts([1.0, 2.0], [9.0, 9.0], factor=1.1, absolute=1.0)
    assert few is not None
    assert few.verdict is Verdict.INCONCLUSIVE
