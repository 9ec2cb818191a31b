"""Synchronized timing: where the clock is read, freshness, recompiles, handle-only.

Clocks are injected: a fake clock whose readings are the triangular numbers
0, 1, 3, 6, 10, ... (the k-th reading is k more than the one before), so every
interval is the exact number of clock reads it spans and no test times
anything. The only comparison of real intervals is handle-only versus
synchronized on a matmul of tens of milliseconds, inside one run.
"""

from __future__ import annotations

import gc
import statistics
from collections.abc import Callable
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from fakes import FakeClock, RecordingLeaf
from jaxbench.errors import WorkloadError
from jaxbench.measure import timing, workloads

#: a synchronized interval must be at least this long for handle-only to be
#: told apart from it on a noisy shared machine.
MIN_WORK_SECONDS = 0.010


def recording_fn(log: list[str]) -> Callable[..., dict[str, RecordingLeaf]]:
    def fn(*args: Any) -> dict[str, RecordingLeaf]:
        log.append("call")
        return {"a": RecordingLeaf(log, "a"), "b": RecordingLeaf(log, "b")}

    return fn


@pytest.fixture
def predict_inputs() -> timing.Placed:
    return timing.place(workloads.get("predict"))


def test_samples_read_the_clock_around_call_and_wait_for_every_leaf() -> None:
    log: list[str] = []
    _, samples = timing.synchronized_samples(recording_fn(log), (), 3, clock=FakeClock(log))
    assert log == ["clock", "call", "ready a", "ready b", "clock"] * 3
    # reads 0-1, 2-3, 4-5 of the fake clock
    assert samples == [1.0, 3.0, 5.0]


def test_samples_of_a_real_jitted_call_are_exact_clock_differences(
    predict_inputs: timing.Placed,
) -> None:
    jitted = jax.jit(workloads.predict)
    jax.block_until_ready(jitted(*predict_inputs.args))
    result, samples = timing.synchronized_samples(jitted, predict_inputs.args, 4, clock=FakeClock())
    assert samples == [1.0, 3.0, 5.0, 7.0]
    np.testing.assert_allclose(
        np.asarray(result), np.tanh(np.matmul(*predict_inputs.host.args)), atol=2e-5, rtol=2e-5
    )


@pytest.mark.parametrize("repeats", [0, -1])
def test_no_repeats_is_a_value_error(repeats: int, predict_inputs: timing.Placed) -> None:
    with pytest.raises(ValueError, match="at least one repeat"):
        timing.synchronized_samples(jax.jit(workloads.predict), predict_inputs.args, repeats)


def test_first_call_reads_the_clock_between_aot_stages(predict_inputs: timing.Placed) -> None:
    stages, jitted, _compiled, output = timing.first_call(
        workloads.predict, predict_inputs.args, clock=FakeClock()
    )
    assert (stages.trace, stages.lower, stages.compile, stages.first_execute) == (1, 2, 3, 4)
    assert stages.total == 10
    assert stages.backend_compiles >= 1
    assert "clear_caches" in stages.freshness
    np.testing.assert_allclose(
        np.asarray(output), np.tanh(np.matmul(*predict_inputs.host.args)), atol=2e-5, rtol=2e-5
    )
    # warm calls of the returned jit run the executable compiled above
    with timing.compile_events() as compiles:
        jax.block_until_ready(jitted(*predict_inputs.args))
    assert compiles.count == 0


def test_first_call_is_fresh_even_after_the_function_ran(predict_inputs: timing.Placed) -> None:
    jax.block_until_ready(jax.jit(workloads.predict)(*predict_inputs.args))
    stages, *_ = timing.first_call(workloads.predict, predict_inputs.args)
    assert stages.backend_compiles >= 1
    assert stages.trace is not None
    assert stages.lower is not None
    assert stages.compile is not None
    assert min(stages.trace, stages.lower, stages.compile, stages.first_execute) >= 0


class GcWatch:
    """Clock readings that note whether the collector was on, and collections that start."""

    def __init__(self) -> None:
        self.readings: list[bool] = []
        self.started: list[int] = []  # the number of readings when each collection started

    def clock(self) -> float:
        self.readings.append(gc.isenabled())
        return float(len(self.readings))

    def callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self.started.append(len(self.readings))


@pytest.mark.parametrize("jit", [True, False])
def test_first_call_stages_are_timed_with_the_collector_off_after_a_collection(
    predict_inputs: timing.Placed, jit: bool
) -> None:
    # a collection's cost grows with what the process holds; timed with the
    # collector on, a first call paid for earlier workloads' garbage
    watch = GcWatch()
    gc.callbacks.append(watch.callback)
    try:
        timing.first_call(
            workloads.predict,
            predict_inputs.args,
            options=timing.JitOptions(jit=jit),
            clock=watch.clock,
        )
    finally:
        gc.callbacks.remove(watch.callback)
    assert watch.readings == [False] * (5 if jit else 2)
    assert watch.started, "no full collection before the clock started"
    # none between the first reading and the last (one may start once the collector is back on)
    assert all(n in (0, len(watch.readings)) for n in watch.started), watch.started
    assert gc.isenabled()


def test_the_collector_stays_off_where_it_was_off() -> None:
    gc.disable()
    try:
        with timing.collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(RuntimeError), timing.collector_paused():
        raise RuntimeError("a first call that raised")
    assert gc.isenabled()


def test_a_shape_changing_call_is_caught_as_recompilation() -> None:
    jitted = jax.jit(lambda v: v * 2)
    calls = [0]

    def growing(v: Any) -> Any:
        calls[0] += 1
        return jitted(jnp.ones((calls[0] + 1,)))

    with pytest.raises(WorkloadError, match=r"recompiled [1-9]\d* time\(s\) during warm samples"):
        timing.synchronized_samples(growing, (None,), 3)


def test_a_changing_static_argument_is_caught_as_recompilation(
    predict_inputs: timing.Placed,
) -> None:
    @partial(jax.jit, static_argnums=2)
    def scaled(x: Any, w: Any, k: int) -> Any:
        return jnp.tanh(x @ w) * k

    counter = iter(range(1000))

    def retracing(x: Any, w: Any) -> Any:
        return scaled(x, w, next(counter))

    with pytest.raises(WorkloadError, match="keep shapes, dtypes and static arguments fixed"):
        timing.synchronized_samples(retracing, predict_inputs.args, 3)


def test_an_unchanged_call_is_not_a_recompilation(predict_inputs: timing.Placed) -> None:
    jitted = jax.jit(workloads.predict)
    jax.block_until_ready(jitted(*predict_inputs.args))
    _, samples = timing.synchronized_samples(jitted, predict_inputs.args, 3)
    assert len(samples) == 3
    assert all(s >= 0 for s in samples)


def test_handle_only_stops_the_clock_before_the_wait() -> None:
    log: list[str] = []
    seconds = timing.handle_only_seconds(recording_fn(log), (), clock=FakeClock(log))
    assert log == ["clock", "call", "clock", "ready a", "ready b"]
    assert seconds == 1.0


def test_place_waits_and_refuses_too_few_devices() -> None:
    placed = timing.place(workloads.get("predict", rows=96))
    assert [a.shape for a in placed.args] == [(96, 32), (32, 16)]
    np.testing.assert_array_equal(np.asarray(placed.args[0]), placed.host.args[0])
    assert placed.device_count == 1
    too_many = len(jax.devices()) + 1
    with pytest.raises(WorkloadError, match=f"xla_force_host_platform_device_count={too_many}"):
        timing.place(workloads.get("sharded", devices=too_many))


@pytest.fixture(scope="module")
def matmul() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """``a @ a @ a`` on 1000x1000 float32, jitted and warmed (tens of ms on a CPU)."""
    n = 1000
    a = jax.device_put(np.full((n, n), 1.0 / n, dtype=np.float32))
    fn = jax.jit(lambda m: m @ m @ m)
    jax.block_until_ready(fn(a))
    return fn, (a,)


def test_handle_only_misses_most_of_the_work(
    matmul: tuple[Callable[..., Any], tuple[Any, ...]],
) -> None:
    fn, args = matmul
    _, synchronized = timing.synchronized_samples(fn, args, 5)
    sync_median = statistics.median(synchronized)
    if sync_median < MIN_WORK_SECONDS:
        pytest.skip(f"the matmul took {sync_median:.4f} s < {MIN_WORK_SECONDS} s: machine too fast")
    handle_median = statistics.median(timing.handle_only_seconds(fn, args) for _ in range(5))
    assert handle_median < 0.5 * sync_median, (handle_median, sync_median)
