"""The whole benchmark protocol for one workload, in order.

place inputs and wait -> first call of a fresh specialization (AOT stages) ->
check the answer against the NumPy reference -> warm synchronized samples ->
check again. Nothing is reported unless the answer is right.
"""

from __future__ import annotations

import platform
import time
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

from jaxbench.measure import reference
from jaxbench.measure.timing import (
    Clock,
    FirstCall,
    first_call,
    handle_only_seconds,
    place,
    synchronized_samples,
)
from jaxbench.measure.workloads import Workload

__all__ = ["Measurement", "host_result", "measure"]


@dataclass(frozen=True)
class Measurement:
    """A checked measurement of one workload."""

    workload: Workload
    backend: str
    platform: str
    device_count: int
    versions: dict[str, str]
    first_call: FirstCall
    warm_samples: tuple[float, ...]
    handle_only_diagnostic: float
    accuracy: reference.Accuracy
    output_shapes: dict[str, list[int]]


def host_result(output: Any) -> Any:
    """The output pytree as host NumPy arrays (after the clock has stopped)."""
    return jax.tree_util.tree_map(np.asarray, output)


def versions() -> dict[str, str]:
    return {
        "jax": jax.__version__,
        "jaxlib": getattr(jax.lib, "__version__", "") or _jaxlib_version(),
        "numpy": np.__version__,
        "python": platform.python_version(),
    }


def _jaxlib_version() -> str:
    import jaxlib

    return str(getattr(jaxlib, "__version__", "unknown"))


def measure(
    workload: Workload, *, repeats: int = 7, clock: Clock = time.perf_counter
) -> Measurement:
    """Run the protocol; raise :class:`~jaxbench.errors.ReferenceMismatch` on a wrong answer."""
    if repeats < 1:
        raise ValueError(f"at least one repeat is required, got repeats={repeats}")
    placed = place(workload)
    expected = workload.reference(*placed.host_args)
    stages, jitted, _compiled, output = first_call(workload.fn, placed.args, clock=clock)

    def gate(result: Any) -> reference.Accuracy:
        return reference.check(
            workload.label,
            host_result(result),
            expected,
            atol=workload.atol,
            rtol=workload.rtol,
            dtype=workload.dtype,
        )

    gate(output)
    jax.block_until_ready(jitted(*placed.args))  # warm-up: the jit's own dispatch path
    result, samples = synchronized_samples(jitted, placed.args, repeats, clock=clock)
    accuracy = gate(result)
    handle = handle_only_seconds(jitted, placed.args, clock=clock)
    shapes = {path: list(np.shape(leaf)) for path, leaf in reference.leaves(host_result(result))}
    return Measurement(
        workload=workload,
        backend=placed.backend,
        platform=placed.platform,
        device_count=placed.device_count,
        versions=versions(),
        first_call=stages,
        warm_samples=tuple(samples),
        handle_only_diagnostic=handle,
        accuracy=accuracy,
        output_shapes=shapes,
    )
