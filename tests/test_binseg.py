"""analyse/binseg.py: the fast step fit (binary segmentation with the step test)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxbench.analyse import binseg
from jaxbench.analyse.detect import _exact_steps, _exact_steps_of_array


def _noisy(levels: list[tuple[int, float]], sigma: float, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [lvl * math.exp(rng.gauss(0, sigma)) for n, lvl in levels for _ in range(n)]


def test_a_step_is_cut_at_its_commit_with_levels_either_side() -> None:
    y = _noisy([(30, 1.0), (20, 1.3)], 0.02, 1)
    steps = binseg.detect_steps(y)
    assert [(a, b) for a, b, *_ in steps] == [(0, 30), (30, 50)]
    (_, _, before, lo0, err0), (_, _, after, lo1, _err1) = steps
    assert before == pytest.approx(1.0, rel=0.02)
    assert after == pytest.approx(1.3, rel=0.02)
    assert lo0 == min(y[:30])
    assert lo1 == min(y[30:])
    assert 0 < err0 < 0.05


def test_two_steps_and_a_return() -> None:
    y = _noisy([(20, 1.0), (15, 2.0), (20, 1.0)], 0.02, 2)
    assert [a for a, *_ in binseg.detect_steps(y)] == [0, 20, 35]


def test_noise_alone_is_rarely_cut() -> None:
    cut = sum(len(binseg.detect_steps(_noisy([(40, 1.0)], 0.1, seed))) > 1 for seed in range(200))
    assert cut <= 20  # each series at SPLIT_ALPHA (5 %), Bonferroni over positions


def test_missing_values_keep_their_indices() -> None:
    y: list[float | None] = [*_noisy([(10, 1.0)], 0.01, 3), None, math.nan]
    y += _noisy([(10, 2.0)], 0.01, 4)
    steps = binseg.detect_steps(y)
    assert [(a, b) for a, b, *_ in steps] == [(0, 10), (12, 22)]
    assert binseg.detect_steps([None, math.nan]) == []


def test_points_of_zero_weight_are_left_out_and_wide_intervals_count_less() -> None:
    base = _noisy([(40, 1.0)], 0.02, 5)
    bump = [*base[:20], *(3.3 * v for v in base[20:28]), *base[28:]]
    assert len(binseg.detect_steps(bump)) == 3  # a real-looking bump: cut twice
    # the same bump measured with intervals 100x wider (an environment being rebuilt)
    w = [1.0] * 20 + [0.01] * 8 + [1.0] * 12
    assert len(binseg.detect_steps(bump, w)) == 1
    # weight 0: the points are not there at all
    w0 = [1.0] * 20 + [0.0] * 8 + [1.0] * 12
    assert binseg.detect_steps(bump, w0) == [
        (0, 40, *binseg.detect_steps(base[:20] + base[28:])[0][2:])
    ]


def test_short_series_and_the_ends() -> None:
    assert binseg.detect_steps([1.0, 2.0, 3.0]) == [(0, 3, 2.0, 1.0, 2 / 3)]
    # a step two commits before the end is proposed (the evidence test calls it untested)
    y = [*_noisy([(30, 1.0)], 0.01, 6), 2.0, 2.02]
    assert [a for a, *_ in binseg.detect_steps(y)] == [0, 30]
    # but two commits between two cuts are not a level of their own
    inner = [*_noisy([(20, 1.0)], 0.01, 7), 1.5, 1.52, *_noisy([(20, 1.0)], 0.01, 8)]
    assert all(b - a >= binseg.MIN_INNER for a, b, *_ in binseg.detect_steps(inner)[1:-1])


def test_constant_series_and_exact_step() -> None:
    assert binseg.detect_steps([2.0] * 10) == [(0, 10, 2.0, 2.0, 0.0)]
    assert [a for a, *_ in binseg.detect_steps([2.0] * 10 + [3.0] * 10)] == [0, 10]


def test_negative_values_are_not_taken_as_logs() -> None:
    y = [-1.0 + 0.01 * (i % 3) for i in range(20)] + [1.0 + 0.01 * (i % 3) for i in range(20)]
    assert [a for a, *_ in binseg.detect_steps(y)] == [0, 20]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.none(),
            st.sampled_from([0.0, 1.0, -5.0, 100.0]),
            st.sampled_from([1.0 + 1e-10, 1.0 + 2e-9, 1.0 - 6e-10, 100.00000021]),
        ),
        max_size=40,
    )
)
def test_vectorized_exact_steps_equal_the_loop(values: list[float | None]) -> None:
    array = np.asarray([math.nan if v is None else v for v in values], dtype=np.float64)
    assert _exact_steps_of_array(array) == _exact_steps(values)
