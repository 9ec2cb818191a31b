"""What a benchmark measures, read from its name.

This is the contract between the measuring half (``jaxbench.measure.asvsuite``, which
names the benchmarks) and the analysing half (compare, regressions, HTML),
which never imports jax. The last dotted component of an asv benchmark name
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
``track_work_*``                    WORK       XLA cost/memory analysis and HLO
                                               op counts: exact, deterministic
``peakmem_*`` / ``mem_*``           MEMORY     process peak memory (bytes)
anything else                       OTHER
==================================  =========  ====================================

Lower is better for every kind here.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["COMPILE_TRACKS", "TOLERANCE_TRACK", "Kind", "kind_of"]


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


COMPILE_TRACKS = frozenset(
    {
        "track_first_call_seconds",
        "track_trace_seconds",
        "track_lower_seconds",
        "track_compile_seconds",
        "track_first_execute_seconds",
    }
)
TOLERANCE_TRACK = "track_tolerance_used"


def kind_of(benchmark: str) -> Kind:
    """The kind of an asv benchmark, from its full dotted name."""
    method = benchmark.rsplit(".", 1)[-1]
    if method.startswith("time_"):
        return Kind.TIME
    if method in COMPILE_TRACKS:
        return Kind.COMPILE
    if method in ("track_max_abs_error", TOLERANCE_TRACK):
        return Kind.ACCURACY
    if method.startswith("track_work_"):
        return Kind.WORK
    if method.startswith(("peakmem_", "mem_")):
        return Kind.MEMORY
    return Kind.OTHER
