"""Work figures of a compiled JAX program, from XLA itself (measuring half).

``jax.jit(f).trace(*args).lower().compile()`` gives a ``jax.stages.Compiled``
whose ``cost_analysis()``, ``memory_analysis()`` and ``as_text()`` (optimized
HLO) describe the work the program does. They come from the compiler, not a
clock, so they are identical run to run on a noisy machine, and they change
when the program does: a lost fusion, an extra transpose, float64 by mistake.

A figure the backend or jax version does not report is ``None``, never 0; the
asv helper turns ``None`` into a skipped benchmark. Op counts follow the rules
in :mod:`jaxbench.analyse.hlo`.

jax is imported only inside :func:`work_figures` (for the version and
backend names); the module itself imports no jax.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jaxbench.analyse.hlo import counted_ops, fusion_count, op_histogram
from jaxbench.errors import WorkloadError

if TYPE_CHECKING:
    import jax

__all__ = ["PEAK_FROM_PARTS", "PEAK_REPORTED", "WorkFigures", "hlo_text", "work_figures"]

#: ``WorkFigures.peak_memory_source`` when XLA reported ``peak_memory_in_bytes``.
PEAK_REPORTED = "peak_memory_in_bytes"
#: ``WorkFigures.peak_memory_source`` when it was summed from the parts.
PEAK_FROM_PARTS = "argument+output+temp-alias"


@dataclass(frozen=True)
class WorkFigures:
    """What XLA says one compiled program costs.

    ``flops``, ``transcendentals`` and ``bytes_accessed`` come from
    ``cost_analysis()``. The byte sizes come from ``memory_analysis()``;
    ``peak_memory_bytes`` is its ``peak_memory_in_bytes`` when present, else
    argument + output + temp - alias sizes, and ``peak_memory_source`` says
    which (:data:`PEAK_REPORTED`, :data:`PEAK_FROM_PARTS`, or ``None`` when
    there is no figure). ``hlo_ops`` counts the optimized HLO's instructions
    in every computation except parameter/constant/tuple/get-tuple-element;
    ``hlo_fusions`` counts its ``fusion`` instructions; ``op_histogram`` maps
    every opcode (bookkeeping ones included) to its count (a plain dict, so
    that ``dataclasses.asdict`` and ``json`` take it; do not mutate it).
    """

    flops: float | None
    transcendentals: float | None
    bytes_accessed: float | None
    peak_memory_bytes: float | None
    temp_bytes: float | None
    argument_bytes: float | None
    output_bytes: float | None
    hlo_ops: int
    hlo_fusions: int
    op_histogram: Mapping[str, int]
    peak_memory_source: str | None
    backend: str
    jax_version: str


def _cost(compiled: jax.stages.Compiled) -> Mapping[str, Any]:
    """``cost_analysis()`` as one mapping: a dict, or the first of a list of dicts."""
    try:
        cost: Any = compiled.cost_analysis()
    except (NotImplementedError, RuntimeError):  # XlaRuntimeError is a RuntimeError
        return {}
    if isinstance(cost, list | tuple):
        cost = cost[0] if cost else {}
    return cost if isinstance(cost, Mapping) else {}


def _figure(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


def _backend(compiled: jax.stages.Compiled) -> str:
    import jax

    try:
        shardings = jax.tree.leaves(compiled.input_shardings)
        platforms = {d.platform for s in shardings for d in s.device_set}
    except (AttributeError, TypeError):
        platforms = set()
    return platforms.pop() if len(platforms) == 1 else jax.default_backend()


def hlo_text(compiled: jax.stages.Compiled) -> str:
    """The optimized HLO of ``compiled`` (``as_text()``)."""
    text = compiled.as_text()
    if not text:
        raise WorkloadError(
            "the compiled program gave no optimized HLO text (as_text() is empty); "
            "use a backend and jax version that provide it"
        )
    return text


def work_figures(compiled: jax.stages.Compiled) -> WorkFigures:
    """XLA's cost and memory analysis and HLO op counts of ``compiled``."""
    import jax

    cost = _cost(compiled)
    try:
        memory: Any = compiled.memory_analysis()
    except (NotImplementedError, RuntimeError):
        memory = None

    def mem(attribute: str) -> float | None:
        return None if memory is None else _figure(getattr(memory, attribute, None))

    argument, output, temp = (
        mem("argument_size_in_bytes"),
        mem("output_size_in_bytes"),
        mem("temp_size_in_bytes"),
    )
    alias = mem("alias_size_in_bytes") or 0.0
    peak = mem("peak_memory_in_bytes")
    source: str | None = PEAK_REPORTED
    if peak is None:
        if argument is not None and output is not None and temp is not None:
            peak, source = argument + output + temp - alias, PEAK_FROM_PARTS
        else:
            source = None
    histogram = op_histogram(hlo_text(compiled))
    return WorkFigures(
        flops=_figure(cost.get("flops")),
        transcendentals=_figure(cost.get("transcendentals")),
        bytes_accessed=_figure(cost.get("bytes accessed")),
        peak_memory_bytes=peak,
        temp_bytes=temp,
        argument_bytes=argument,
        output_bytes=output,
        hlo_ops=counted_ops(histogram),
        hlo_fusions=fusion_count(histogram),
        op_histogram=histogram,
        peak_memory_source=source,
        backend=_backend(compiled),
        jax_version=jax.__version__,
    )
