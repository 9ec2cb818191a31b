"""The review's gate on a warm time's paired ratio: 1 %, where ``compare``'s default is 2 %.

A head 1.5 % slower in every round (rounds of 100 samples side by side, 1 %
noise a sample) is called by the review's settings and, by the same test on
the same samples, left within the gate by ``compare``'s default; A/A rounds
are called by neither.
"""

from __future__ import annotations

import numpy as np
import pytest

from jaxbench.analyse.compare import Settings
from jaxbench.analyse.stats import PAIRED_FACTOR, REVIEW_PAIRED_FACTOR, Verdict, compare_paired
from jaxbench.jobs.review import ReviewSettings

ROUNDS, PER_ROUND = 12, 100


def _sides(seed: int, slower: float) -> tuple[list[float], list[float]]:
    """Base and head samples of ``ROUNDS`` rounds, each round's speed drifting (as on a
    shared machine) for both sides alike; head ``slower`` times base."""
    rng = np.random.default_rng(seed)
    drift = np.repeat(np.exp(rng.normal(0.0, 0.05, ROUNDS)), PER_ROUND)
    base = 25e-6 * drift * np.exp(rng.normal(0.0, 0.01, ROUNDS * PER_ROUND))
    head = 25e-6 * slower * drift * np.exp(rng.normal(0.0, 0.01, ROUNDS * PER_ROUND))
    return list(base), list(head)


def _verdict(factor: float, seed: int, slower: float) -> Verdict:
    base, head = _sides(seed, slower)
    compared = compare_paired(base, head, round_size=PER_ROUND, factor=factor)
    assert compared is not None
    return compared.verdict


def test_the_review_gates_warm_times_at_1_percent_and_compare_keeps_2() -> None:
    assert ReviewSettings().compare.paired_factor == REVIEW_PAIRED_FACTOR
    assert Settings().paired_factor == PAIRED_FACTOR
    assert REVIEW_PAIRED_FACTOR < PAIRED_FACTOR


@pytest.mark.parametrize("seed", range(5))
def test_a_head_1_5_percent_slower_is_called_by_the_review_not_by_compares_default(
    seed: int,
) -> None:
    review = ReviewSettings().compare.paired_factor
    assert _verdict(review, seed, 1.015) is Verdict.REGRESSION
    assert _verdict(Settings().paired_factor, seed, 1.015) is Verdict.NOT_SIGNIFICANT


@pytest.mark.parametrize("seed", range(5))
def test_an_unchanged_head_is_called_by_neither(seed: int) -> None:
    for factor in (ReviewSettings().compare.paired_factor, Settings().paired_factor):
        assert _verdict(factor, seed, 1.0) is Verdict.NOT_SIGNIFICANT
