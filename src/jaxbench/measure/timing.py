"""Synchronized timing of JAX calls.

The boundaries, as in the lesson:

* inputs are placed on their device(s) and waited for before any clock starts;
* the first call of a *fresh* specialization is kept apart from warm calls and
  broken down with jax's AOT API into trace, lower, compile and first execute;
* every warm interval is the call plus ``jax.block_until_ready`` on the whole
  output pytree;
* a handle-only interval (call, no wait) exists only as a labelled diagnostic.

"Fresh" is guaranteed, not assumed: :func:`first_call` clears jax's in-memory
caches (``jax.clear_caches()``), disables the persistent compilation cache,
and fails unless jax's monitoring reports a backend compile during the
compile stage. Warm samples fail when jax reports any compile while they run.

Clocks are injectable (any ``() -> float`` in seconds) so tests can drive them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from jaxbench.errors import WorkloadError
from jaxbench.measure.workloads import Workload

__all__ = [
    "BACKEND_COMPILE_EVENT",
    "Clock",
    "FirstCall",
    "Placed",
    "compile_events",
    "first_call",
    "handle_only_seconds",
    "place",
    "synchronized_samples",
]

Clock = Callable[[], float]
BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


# --- compile monitoring -------------------------------------------------------

_lock = threading.Lock()
_compiles = 0
_listening = False


def _on_event(event: str, duration_secs: float, **kwargs: str | int) -> None:
    global _compiles
    if event == BACKEND_COMPILE_EVENT:
        with _lock:
            _compiles += 1


def _ensure_listener() -> None:
    global _listening
    with _lock:
        if not _listening:
            jax.monitoring.register_event_duration_secs_listener(_on_event)
            _listening = True


@dataclass
class CompileCount:
    """Backend compiles jax reported inside a :func:`compile_events` block."""

    count: int = 0


@contextmanager
def compile_events() -> Iterator[CompileCount]:
    """Count the backend compiles jax reports (``jax.monitoring``) in a block."""
    _ensure_listener()
    counter = CompileCount()
    start = _compiles
    try:
        yield counter
    finally:
        counter.count = _compiles - start


# --- placement ------------------------------------------------------------------


@dataclass(frozen=True)
class Placed:
    """Inputs on their device(s), ready; and where they are."""

    args: tuple[Any, ...]
    host_args: tuple[np.ndarray, ...]
    backend: str
    platform: str
    device_count: int


def place(workload: Workload, device: Any | None = None) -> Placed:
    """Put the workload's seeded inputs on the device and wait for them.

    A sharded workload splits x's rows over the first ``workload.devices``
    devices (``Mesh`` + ``NamedSharding``); w is replicated.
    """
    x_host, w_host = workload.host_inputs()
    if workload.devices:
        available = jax.devices()
        if len(available) < workload.devices:
            raise WorkloadError(
                f"{workload.label}: needs {workload.devices} devices, {len(available)} available; "
                "set XLA_FLAGS=--xla_force_host_platform_device_count="
                f"{workload.devices} before jax starts"
            )
        mesh = Mesh(np.array(available[: workload.devices]), ("rows",))
        x = jax.device_put(x_host, NamedSharding(mesh, PartitionSpec("rows", None)))
        w = jax.device_put(w_host, NamedSharding(mesh, PartitionSpec()))
        first = available[0]
        count = workload.devices
    else:
        first = device if device is not None else jax.devices()[0]
        x = jax.device_put(x_host, first)
        w = jax.device_put(w_host, first)
        count = 1
    jax.block_until_ready((x, w))
    return Placed(
        args=(x, w),
        host_args=(x_host, w_host),
        backend=str(first),
        platform=first.platform,
        device_count=count,
    )


# --- the first call -------------------------------------------------------------


@dataclass(frozen=True)
class FirstCall:
    """The first call of a fresh specialization, stage by stage (seconds)."""

    trace: float
    lower: float
    compile: float
    first_execute: float
    backend_compiles: int

    @property
    def total(self) -> float:
        return self.trace + self.lower + self.compile + self.first_execute

    @property
    def freshness(self) -> str:
        return (
            "jax.clear_caches() and no persistent compilation cache before the call; "
            f"jax.monitoring reported {self.backend_compiles} backend compile(s) during it"
        )


def _disable_persistent_cache() -> None:
    jax.config.update("jax_enable_compilation_cache", False)


def first_call(
    fn: Callable[..., Any], args: Sequence[Any], *, clock: Clock = time.perf_counter
) -> tuple[FirstCall, Any, Any, Any]:
    """Trace, lower, compile and run ``jax.jit(fn)`` once, from cold.

    Returns ``(stages, jitted, compiled, output)``: the jitted function shares
    the compiled executable (jax's in-memory cache), so later warm calls of
    ``jitted`` run the very program whose first call was timed.
    """
    _disable_persistent_cache()
    jax.clear_caches()
    jitted = jax.jit(fn)
    with compile_events() as compiles:
        t0 = clock()
        traced = jitted.trace(*args)
        t1 = clock()
        lowered = traced.lower()
        t2 = clock()
        compiled = lowered.compile()
        t3 = clock()
        output = compiled(*args)
        jax.block_until_ready(output)
        t4 = clock()
    if compiles.count < 1:
        raise WorkloadError(
            "the first call did not compile (jax reported no backend compile); "
            "a cached executable would make first-call times meaningless: "
            "unset JAX_COMPILATION_CACHE_DIR and run in a fresh process"
        )
    stages = FirstCall(
        trace=t1 - t0,
        lower=t2 - t1,
        compile=t3 - t2,
        first_execute=t4 - t3,
        backend_compiles=compiles.count,
    )
    return stages, jitted, compiled, output


# --- warm calls -----------------------------------------------------------------


def synchronized_samples(
    fn: Callable[..., Any],
    args: Sequence[Any],
    repeats: int = 7,
    *,
    clock: Clock = time.perf_counter,
) -> tuple[Any, list[float]]:
    """Time ``repeats`` warm calls, each up to ``block_until_ready`` on the whole output.

    Raises ``ValueError`` when ``repeats < 1`` and :class:`WorkloadError` when
    jax compiled anything while the samples ran (they would not be warm).
    """
    if repeats < 1:
        raise ValueError(f"at least one repeat is required, got repeats={repeats}")
    samples: list[float] = []
    result: Any = None
    with compile_events() as compiles:
        for _ in range(repeats):
            start = clock()
            result = fn(*args)
            jax.block_until_ready(result)
            samples.append(clock() - start)
    if compiles.count:
        raise WorkloadError(
            f"the function recompiled {compiles.count} time(s) during warm samples; "
            "keep shapes, dtypes and static arguments fixed between calls"
        )
    return result, samples


def handle_only_seconds(
    fn: Callable[..., Any], args: Sequence[Any], *, clock: Clock = time.perf_counter
) -> float:
    """DIAGNOSTIC ONLY: the interval until the call returns a handle, without waiting.

    It is not a measurement of the work; the call is drained afterwards so the
    next interval starts idle.
    """
    start = clock()
    handle = fn(*args)
    elapsed = clock() - start
    jax.block_until_ready(handle)
    return elapsed
