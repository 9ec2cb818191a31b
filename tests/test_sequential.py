"""The first calls' sequential rule (``analyse/sequential.py``) and the review's budget
arithmetic (``analyse/budget.py``): pure functions, simulated.

The rule's promise is checked as stated: whenever it lets the rounds stop, no
figure would be flagged by ``compare`` on the rounds taken, so a review that
stops early can raise no false alarm the full rounds would not have raised.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from jaxbench.analyse.budget import (
    LEAST_PER_ROUND,
    SAMPLE_TIME,
    batches,
    per_round_within,
    sample_seconds,
)
from jaxbench.analyse.compare import Settings
from jaxbench.analyse.sequential import PairedFigure, open_rows
from jaxbench.analyse.stats import Verdict, compare_paired, compare_paired_amounts

SETTINGS = Settings()
FIRST_CALL = "m.XFigures.track_first_call_seconds"
MEMORY = "m.XFigures.track_workload_peak_rss_bytes"


def _figure(name: str, base: np.ndarray, head: np.ndarray, index: int = 0) -> PairedFigure:
    return PairedFigure(name, (str(index),), tuple(map(float, base)), tuple(map(float, head)))


def _first_calls(
    rng: np.random.Generator, rounds: int, change: float, noise: float
) -> PairedFigure:
    base = 2.0 * np.exp(rng.normal(0, noise, rounds))
    head = 2.0 * (1 + change) * np.exp(rng.normal(0, noise, rounds))
    return _figure(FIRST_CALL, base, head)


def _flagged(figure: PairedFigure) -> bool:
    """compare's verdict of the figure alone (its raw p-value: Holm only raises it)."""
    if figure.benchmark == MEMORY:
        found = compare_paired_amounts(
            figure.base, figure.head, factor=SETTINGS.memory_factor, absolute=float(1 << 20)
        )
    else:
        found = compare_paired(
            figure.base, figure.head, round_size=1, factor=SETTINGS.first_call_factor
        )
    assert found is not None
    return found.verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT)


@pytest.mark.parametrize("change", [0.0, 0.05, 0.12, 0.3, -0.2])
def test_a_stop_never_leaves_a_figure_that_compare_would_flag(change: float) -> None:
    rng = np.random.default_rng(7)
    stops = 0
    for _ in range(600):
        rounds = int(rng.integers(3, 11))
        figures = [_first_calls(rng, rounds, change, noise=float(rng.uniform(0.01, 0.2)))]
        base = (6 << 20) + rng.integers(0, 64, rounds) * 4096.0
        grown = change * (4 << 20) if rng.random() < 0.5 else 0.0  # what the workload keeps
        head = base + grown + rng.integers(0, 64, rounds) * 4096.0
        figures.append(_figure(MEMORY, base, head))
        if not open_rows(figures, SETTINGS, below=0.1):
            stops += 1
            assert not any(_flagged(f) for f in figures), figures
    assert stops > 0  # the property was exercised


def test_unchanged_figures_settle_and_a_large_change_stays_open() -> None:
    rng = np.random.default_rng(3)
    settled = sum(
        not open_rows([_first_calls(rng, 4, 0.0, 0.03) for _ in range(5)], SETTINGS, below=0.1)
        for _ in range(200)
    )
    assert settled >= 150  # most unchanged reviews stop at 4 rounds
    kept = sum(
        bool(open_rows([_first_calls(rng, 4, 0.3, 0.03)], SETTINGS, below=0.1)) for _ in range(200)
    )
    assert kept >= 190  # a 30 % slower first call keeps measuring


@pytest.mark.slow
def test_the_sequential_review_keeps_the_fixed_reviews_power_and_false_alarm_rate() -> None:
    """Rounds 4 to 10, stopping when settled: as often right as all 10, never more wrong."""
    rng = np.random.default_rng(11)

    def review(change: float) -> tuple[bool, bool, int]:
        noise = 0.05
        base = 2.0 * np.exp(rng.normal(0, noise, 10))
        head = 2.0 * (1 + change) * np.exp(rng.normal(0, noise, 10))
        fixed = _flagged(_figure(FIRST_CALL, base, head))
        for rounds in range(4, 11):
            figure = _figure(FIRST_CALL, base[:rounds], head[:rounds])
            if rounds == 10 or not open_rows([figure], SETTINGS, below=0.1):
                return fixed, _flagged(figure), rounds
        raise AssertionError("unreachable")

    aa = [review(0.0) for _ in range(2000)]
    assert sum(seq for _, seq, _ in aa) <= sum(fixed for fixed, _, _ in aa)
    assert sum(rounds for _, _, rounds in aa) / len(aa) < 5  # A/A mostly stops at 4
    changed = [review(0.2) for _ in range(500)]
    found_fixed = sum(fixed for fixed, _, _ in changed)
    found_seq = sum(seq for _, seq, _ in changed)
    assert found_seq >= 0.97 * found_fixed, (found_seq, found_fixed)


def test_figures_that_cannot_be_paired_or_are_not_first_calls_are_not_open() -> None:
    assert open_rows([PairedFigure(FIRST_CALL, ("0",), (), ())], SETTINGS) == []
    other = PairedFigure("m.XFigures.track_work_flops", ("0",), (1.0, 1.0, 1.0), (2.0, 2, 2))
    assert open_rows([other], SETTINGS) == []
    # too few pairs to test: open, more rounds will tell
    few = PairedFigure(FIRST_CALL, ("0",), (1.0, 1.1), (2.0, 2.1))
    assert open_rows([few], SETTINGS) == [f"{FIRST_CALL}(0)"]


def test_a_settling_p_value_below_alpha_is_refused() -> None:
    with pytest.raises(ValueError, match="must be at least alpha"):
        open_rows([], SETTINGS, below=SETTINGS.alpha / 2)


def test_samples_a_round_fit_the_budget_and_keep_the_default_where_they_can() -> None:
    # microsecond calls: the default stays
    assert per_round_within(300.0, 50 * 30e-6, batches=4, most=100) == 100
    # 5 ms calls, 50 a sample, six items: 1.5 s a sample a side
    fits = per_round_within(240.0, 1.5, batches=4, most=100)
    assert fits == math.floor(240 / 4 / 2 / 3.0)
    # what the probe says a round costs beside its samples comes off first
    assert per_round_within(240.0, 1.5, batches=4, most=100, rest=50.0) == LEAST_PER_ROUND
    assert per_round_within(10.0, 100.0, batches=4, most=100) == LEAST_PER_ROUND
    assert per_round_within(10.0, 100.0, batches=4, most=3) == 3
    assert per_round_within(10.0, 0.0, batches=4, most=100) == 100


def test_a_sample_costs_number_calls_or_asvs_sample_time() -> None:
    assert sample_seconds([(50, 1e-3), (0, None), (10, None), (20, float("nan"))]) == (
        pytest.approx(50e-3 + SAMPLE_TIME)
    )
    assert batches(6, 2) == 4  # the first alone, then two at a time
    assert batches(1, 2) == 1
    assert batches(6, 1) == 6
