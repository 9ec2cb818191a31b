"""What a benchmark measures, read from its name: the vocabulary every floor shares.

It sits at the bottom of the package, beside ``errors``: the measuring half
(which names the benchmarks), the store, the analysis and the rendering all
import it, and it imports nothing of jaxbench. This is the contract between
the measuring half (``jaxbench.measure.asvsuite``, which names the
benchmarks) and the analysing half (compare, regressions, HTML), which never
imports jax. The last dotted component of an asv benchmark name
decides its kind:

==================================  =========  ====================================
method name                         kind       meaning
==================================  =========  ====================================
``time_*``                          TIME       warm, synchronized call (seconds)
``track_first_call_seconds``,       COMPILE    first call of a fresh specialization
``track_trace_seconds``,                       and its AOT stages (seconds)
``track_lower_seconds``,
``track_compile_seconds``,
``track_first_execute_seconds``
``track_max_abs_error``             ACCURACY   max |result - NumPy reference|
``track_tolerance_used``            ACCURACY   max over elements of
                                               |err| / (atol + rtol*|ref|); > 1 fails
``track_answer_unchecked``          ACCURACY   1: declared ``Unchecked`` (no
                                               reference); 0: the answer was
                                               checked against the reference
``track_work_*``                    WORK       XLA cost/memory analysis and HLO
                                               op counts: exact, deterministic
``track_compiles_per_call``         WORK       backend compiles per warm call: 0
                                               for a warm workload, the kernels a
                                               ``compiles_every_call`` API builds
                                               at each call; exact
``peakmem_*`` / ``mem_*``           MEMORY     process peak memory (bytes)
``track_workload_peak_rss_bytes``   MEMORY     rise of peak RSS above the RSS after
                                               jax started, before the workload
``track_workload_device_peak_bytes``  MEMORY   device peak bytes in use above
                                               the bytes in use before the workload
anything else                       OTHER
==================================  =========  ====================================

Lower is better for every kind here: a workload that loses its check
(``track_answer_unchecked`` 0 -> 1) reads as a step up, in asv's graphs too.
"""

from __future__ import annotations

from enum import Enum

__all__ = [
    "ACCURACY_TRACKS",
    "COMPILES_TRACK",
    "COMPILE_STAGES",
    "COMPILE_TRACKS",
    "REPEAT",
    "TOLERANCE_TRACK",
    "UNCHECKED_TRACK",
    "WORKLOAD_MEMORY_TRACKS",
    "WORK_FIGURES",
    "WORK_PREFIX",
    "Kind",
    "exact_figure",
    "kind_of",
    "method_of",
]


class Kind(Enum):
    """What a benchmark measures."""

    TIME = "time"
    COMPILE = "compile"
    ACCURACY = "accuracy"
    WORK = "work"
    MEMORY = "memory"
    OTHER = "other"

    @property
    def exact(self) -> bool:
        """Deterministic figures: any change beyond a tiny tolerance is a change."""
        return self is Kind.WORK


#: asv method -> the first-call stage it reports (``jaxbench.measure.asvsuite``
#: makes one method per entry).
COMPILE_STAGES = {
    "track_first_call_seconds": "first_call",
    "track_trace_seconds": "trace",
    "track_lower_seconds": "lower",
    "track_compile_seconds": "compile",
    "track_first_execute_seconds": "first_execute",
}
COMPILE_TRACKS = frozenset(COMPILE_STAGES)
TOLERANCE_TRACK = "track_tolerance_used"
#: asv method -> the accuracy figure it reports.
ACCURACY_TRACKS = {"track_max_abs_error": "max_abs_error", TOLERANCE_TRACK: "tolerance_used"}
#: 1.0 when the workload is declared ``Unchecked`` (no reference: its accuracy
#: figures do not exist), 0.0 when its answer was checked against the reference.
UNCHECKED_TRACK = "track_answer_unchecked"
#: ``WORK_PREFIX + figure`` for each of XLA's work figures.
WORK_PREFIX = "track_work_"
WORK_FIGURES = (
    "flops",
    "transcendentals",
    "bytes_accessed",
    "peak_memory_bytes",
    "temp_bytes",
    "argument_bytes",
    "output_bytes",
    "hlo_ops",
    "hlo_fusions",
)
#: Backend compiles per warm call (jax.monitoring): a count of what the program
#: does, exact as XLA's work figures are; a commit that adds a compile per
#: call is a step.
COMPILES_TRACK = "track_compiles_per_call"
#: asv method -> the figure of what the workload itself adds to memory.
WORKLOAD_MEMORY_TRACKS = {
    "track_workload_peak_rss_bytes": "peak_rss_rise_bytes",
    "track_workload_device_peak_bytes": "device_peak_bytes",
}
#: Samples per asv round of a ``time_*`` benchmark: fixed, so that recorded
#: samples split back into rounds (asv's own results hold only the flat list).
REPEAT = 30


def method_of(benchmark: str) -> str:
    """The method of an asv benchmark's dotted name (``time_warm`` of ``m.Class.time_warm``)."""
    return benchmark.rsplit(".", 1)[-1]


def exact_figure(benchmark: str) -> bool:
    """Whether a benchmark's figure is deterministic: any lasting change is a change.

    XLA's work figures, and whether the answer was checked at all
    (``track_answer_unchecked``: 0 or 1).
    """
    return kind_of(benchmark).exact or method_of(benchmark) == UNCHECKED_TRACK


def kind_of(benchmark: str) -> Kind:
    """The kind of an asv benchmark, from its full dotted name."""
    method = method_of(benchmark)
    if method.startswith("time_"):
        return Kind.TIME
    if method in COMPILE_TRACKS:
        return Kind.COMPILE
    if method in ACCURACY_TRACKS or method == UNCHECKED_TRACK:
        return Kind.ACCURACY
    if method.startswith(WORK_PREFIX) or method == COMPILES_TRACK:
        return Kind.WORK
    if method.startswith(("peakmem_", "mem_")) or method in WORKLOAD_MEMORY_TRACKS:
        return Kind.MEMORY
    return Kind.OTHER
