"""The lesson's diagnosis: the broken timer mixes setup in and misses the work."""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest

from fakes import FakeClock, RecordingLeaf
from jaxbench.errors import WorkloadError
from jaxbench.measure import diagnosis, workloads

MIN_WORK_SECONDS = 0.010


def recording(log: list[str]) -> tuple[Callable[..., Any], Callable[[], tuple[Any, ...]]]:
    def make_inputs() -> tuple[Any, ...]:
        log.append("make inputs")
        return (RecordingLeaf(log, "input"),)

    def fn(*args: Any) -> Any:
        log.append("call")
        return [RecordingLeaf(log, "output")]

    return fn, make_inputs


def test_broken_timer_mixes_input_creation_and_misses_completion() -> None:
    log: list[str] = []
    fn, make_inputs = recording(log)
    timed = diagnosis.broken_timer(fn, make_inputs, clock=FakeClock(log))
    # the clock stops before the output is waited for (drained only afterwards)
    assert log == ["clock", "make inputs", "clock", "call", "clock", "ready output"]
    assert (timed.seconds, timed.inputs_seconds, timed.call_seconds) == (3.0, 1.0, 2.0)
    assert timed.boundary == "start; create inputs; call; stop (no wait for the output)"
    assert "input creation" in timed.mixes
    assert "completion of the output (block_until_ready)" in timed.misses


def test_repaired_timer_prepares_and_warms_outside_the_clock() -> None:
    log: list[str] = []
    fn, make_inputs = recording(log)
    timed = diagnosis.repaired_timer(fn, make_inputs, 2, clock=FakeClock(log))
    before = ["make inputs", "ready input", "call", "ready output"]
    interval = ["clock", "call", "ready output", "clock"]
    assert log == before + interval * 2
    assert timed.samples == (1.0, 3.0)
    assert timed.median == 2.0
    assert "before the clock" in timed.boundary


@pytest.mark.parametrize("repeats", [0, -2])
def test_repaired_timer_needs_a_repeat(repeats: int) -> None:
    fn, make_inputs = recording([])
    with pytest.raises(ValueError, match="at least one repeat"):
        diagnosis.repaired_timer(fn, make_inputs, repeats)


def test_repaired_timer_refuses_recompiling_calls() -> None:
    jitted = jax.jit(lambda v: v + 1)
    sizes = iter(range(2, 100))

    def growing(_: Any) -> Any:
        return jitted(np.ones(next(sizes), np.float32))

    with pytest.raises(WorkloadError, match="recompiled"):
        diagnosis.repaired_timer(growing, lambda: (None,), 3)


def test_timings_are_frozen_records() -> None:
    fn, make_inputs = recording([])
    with pytest.raises(dataclasses.FrozenInstanceError):
        diagnosis.broken_timer(fn, make_inputs).seconds = 0.0  # type: ignore[misc]


def test_repaired_output_matches_the_reference() -> None:
    predict = workloads.get("predict")
    x, w = predict.host_inputs()
    timed = diagnosis.repaired_timer(
        jax.jit(predict.fn), lambda: (jax.device_put(x), jax.device_put(w)), 3
    )
    assert len(timed.samples) == 3
    assert all(s >= 0 for s in timed.samples)
    np.testing.assert_allclose(np.asarray(timed.output), np.tanh(x @ w), atol=2e-5, rtol=2e-5)


def test_broken_interval_misses_the_work_of_a_long_matmul() -> None:
    n = 1000
    host = np.full((n, n), 1.0 / n, dtype=np.float32)
    placed = jax.device_put(host)
    jax.block_until_ready(placed)
    fn = jax.jit(lambda m: m @ m @ m)
    jax.block_until_ready(fn(placed))  # warm: the broken interval must not hold a compile

    def make_inputs() -> tuple[Any, ...]:
        return (placed,)  # cheap: input creation cannot dominate the broken interval

    repaired = diagnosis.repaired_timer(fn, make_inputs, 5)
    if repaired.median < MIN_WORK_SECONDS:
        pytest.skip(f"the matmul took {repaired.median:.4f} s < {MIN_WORK_SECONDS} s")
    broken = [diagnosis.broken_timer(fn, make_inputs) for _ in range(5)]
    broken_median = statistics.median(b.seconds for b in broken)
    assert broken_median < 0.5 * repaired.median, (broken, repaired.samples)
    # the split shows the interval is short because it misses the work, not the inputs
    assert statistics.median(b.call_seconds for b in broken) < 0.5 * repaired.median
    np.testing.assert_allclose(np.asarray(repaired.output), host @ host @ host, rtol=1e-4)
