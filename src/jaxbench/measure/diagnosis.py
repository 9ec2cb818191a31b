"""A broken JAX timer and its repair, as code (the diagnosis of the seed lesson).

The broken timer is the one that lesson asks us to diagnose::

    start; create inputs; call fn(inputs); stop

Its interval *mixes* stages that are not the computation (creating the
inputs, placing them on the device, and tracing and compiling when ``fn`` is
not warm yet) and *misses* the one that is: the call returns a handle before
the work is done, so the clock stops before the result exists.

The repaired timer draws the boundary the rest of jaxbench uses::

    prepare inputs, place, wait | warm up | start; call; block_until_ready(output); stop

Both return frozen records that name their boundary. The broken timer also
reports its split (input creation versus call) so a comparison can show that
the missing work, not the input creation, is what makes it short. It exists
to demonstrate the mistake; never report its number as a measurement.

See ``docs/timing.md``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import jax

from jaxbench.measure.timing import Clock, synchronized_samples

__all__ = [
    "BROKEN_BOUNDARY",
    "BROKEN_MISSES",
    "BROKEN_MIXES",
    "REPAIRED_BOUNDARY",
    "BrokenTiming",
    "RepairedTiming",
    "broken_timer",
    "repaired_timer",
]

BROKEN_BOUNDARY = "start; create inputs; call; stop (no wait for the output)"
#: What the broken interval includes that is not the computation.
BROKEN_MIXES: tuple[str, ...] = (
    "input creation",
    "host-to-device placement of the inputs",
    "tracing, lowering and compiling when fn is not warm",
)
#: What the broken interval leaves out although it is the computation.
BROKEN_MISSES: tuple[str, ...] = (
    "execution of the work after dispatch returns",
    "completion of the output (block_until_ready)",
)
REPAIRED_BOUNDARY = (
    "inputs created, placed and waited for, fn warmed, all before the clock; "
    "each interval is the call plus block_until_ready on the whole output"
)

InputMaker = Callable[[], Sequence[Any]]

#: ``jax.block_until_ready`` (untyped in jax) bound to a typed name.
_wait: Callable[[Any], Any] = jax.block_until_ready


@dataclass(frozen=True)
class BrokenTiming:
    """One interval of the broken timer, with its split. Not a measurement."""

    seconds: float
    #: from start to the end of ``make_inputs()``: work that is not the call.
    inputs_seconds: float
    #: from the end of ``make_inputs()`` until ``fn`` returned a handle.
    call_seconds: float
    boundary: str = BROKEN_BOUNDARY
    mixes: tuple[str, ...] = BROKEN_MIXES
    misses: tuple[str, ...] = BROKEN_MISSES


@dataclass(frozen=True)
class RepairedTiming:
    """Synchronized warm samples of ``fn`` on inputs prepared outside the clock."""

    samples: tuple[float, ...]
    boundary: str = REPAIRED_BOUNDARY
    #: the output of the last timed call (device arrays), for a reference check.
    output: Any = field(default=None, compare=False, repr=False)

    @property
    def median(self) -> float:
        return float(statistics.median(self.samples))


def broken_timer(
    fn: Callable[..., Any], make_inputs: InputMaker, *, clock: Clock = time.perf_counter
) -> BrokenTiming:
    """Time ``fn`` the broken way: input creation inside, completion outside.

    The output is drained *after* the clock stops, so whatever is timed next
    starts with an idle device; that wait is not part of the interval.
    """
    start = clock()
    inputs = make_inputs()
    created = clock()
    handle = fn(*inputs)
    stop = clock()
    _wait(handle)
    return BrokenTiming(
        seconds=stop - start, inputs_seconds=created - start, call_seconds=stop - created
    )


def repaired_timer(
    fn: Callable[..., Any],
    make_inputs: InputMaker,
    repeats: int = 7,
    *,
    clock: Clock = time.perf_counter,
) -> RepairedTiming:
    """Time ``fn`` with the lesson's boundary.

    Inputs are created and waited for, and ``fn`` is called once and waited
    for (warm-up), before any clock starts; each of the ``repeats`` intervals
    is the call plus ``block_until_ready`` on the whole output pytree.
    Raises ``ValueError`` when ``repeats < 1`` and
    :class:`~jaxbench.errors.WorkloadError` when ``fn`` recompiles while timed.
    """
    if repeats < 1:
        raise ValueError(f"at least one repeat is required, got repeats={repeats}")
    inputs = tuple(make_inputs())
    _wait(inputs)
    _wait(fn(*inputs))
    output, samples = synchronized_samples(fn, inputs, repeats, clock=clock)
    return RepairedTiming(samples=tuple(samples), output=output)
