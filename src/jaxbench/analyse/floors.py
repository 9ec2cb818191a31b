"""The measured spread of single-value figures: below it, nothing changed (pure).

A figure with one value per commit (asv's ``peakmem_*``, the workload's peak
RSS, the first call and its stages from one ``asv run``) moves between
processes, and more between ``asv run`` invocations, with no code change:
``bench/bench_single_value_spread.py`` measures how far on this project's
own results history (docs/measured.md, "Single values between identical
commits"). Each family of such figures has a :class:`Floor`: an absolute
difference *and* a ratio, both sized from that measurement. A change is
beyond the floor only when it exceeds both (:func:`beyond_floor`); within it,
the figure is "unchanged (within the measured spread)".

This is the one place every reader takes the rule from:

* ``jaxbench compare`` and the review comment: a figure with one value a side
  is "moved, not tested" only beyond its floor
  (:func:`jaxbench.analyse.compare.compare_single_value`); first-call figures
  measured in fresh-process pairs are tested instead;
* ``jaxbench regressions``, the HTML regressions page and ``publish``
  (:mod:`jaxbench.analyse.evidence`, :func:`history_floor`): a step of a
  family whose values *drift* between runs (:attr:`Floor.drifts`: process
  peak memory) is listed only beyond its floor, because a slow drift across
  the commits one ``make bench`` measures looks like a step to the step test
  as well. For the other families the step test over the commits either side
  decides, above :attr:`Floor.history_absolute`: with several commits a side
  it can confirm a step smaller than one value a side could show, so what
  the comment calls changed the history lists too, given commits;
* the paired history holds warm times only (tested pair by pair), which have
  no floor.

Ratios of values below the absolute floor mean nothing (``0 B -> 52.0 KiB``
is ``inf``): :func:`ratio_is_meaningful` tells the renderers to show the
difference instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from jaxbench.kinds import COMPILE_STAGES, method_of

__all__ = [
    "FLOORS",
    "Floor",
    "beyond_floor",
    "family_of",
    "floor_of",
    "history_floor",
    "ratio_is_meaningful",
]

_MiB = float(1 << 20)


@dataclass(frozen=True)
class Floor:
    """The smallest change of one family of figures that is not noise."""

    #: what the family measures, for people ("process peak memory")
    label: str
    #: smallest difference ``|head - base|`` that counts, in the figure's unit
    absolute: float
    #: smallest ratio ``max(head / base, base / head)`` that counts (> 1)
    relative: float
    #: the figures' asv unit (``bytes``, ``seconds``)
    unit: str
    #: the values drift between ``asv run`` invocations (a run of commits measured
    #: one after another climbs or falls together), so the history's step test
    #: cannot tell the drift from a step: the floor applies to history steps too
    drifts: bool = False
    #: for a family that does not drift, the smallest step the history lists
    #: (its step test decides the rest): the resolution of the figure
    history_absolute: float = 0.0


#: Per family (:func:`family_of`): sized from the spread between commits with
#: identical measured code in this project's results (12 commits x 2
#: environments, 2-core x86_64; docs/measured.md), rounded up above the largest
#: change seen between *any two* of those commits.
FLOORS: dict[str, Floor] = {
    "peakmem": Floor("process peak memory", 24 * _MiB, 1.15, "bytes", drifts=True),
    # Moves by pages and allocator arenas from process to process (0 B to 100 KiB
    # for a small workload), without a drift between runs.
    "workload_peak_rss": Floor(
        "workload peak RSS", 24 * _MiB, 1.20, "bytes", history_absolute=_MiB
    ),
    # Not measured here (the CPU reports no device memory): the history's earlier
    # 1 MiB floor, and compare's earlier factor.
    "workload_device_peak": Floor(
        "workload device peak", _MiB, 1.10, "bytes", history_absolute=_MiB
    ),
    "first_call": Floor("first call", 0.5, 2.0, "seconds"),
    "trace": Floor("trace", 0.1, 3.0, "seconds"),
    "lower": Floor("lower", 0.2, 2.5, "seconds"),
    "compile": Floor("compile", 0.5, 2.0, "seconds"),
    "first_execute": Floor("first execute", 0.02, 3.0, "seconds"),
}

_MEMORY_FAMILIES = {
    "track_workload_peak_rss_bytes": "workload_peak_rss",
    "track_workload_device_peak_bytes": "workload_device_peak",
}
_ACCURACY_FAMILIES = {
    "track_max_abs_error": "max_abs_error",
    "track_tolerance_used": "tolerance_used",
}


def family_of(benchmark: str) -> str | None:
    """The single-value family of a benchmark's figure, or None (warm times, work, other).

    ``peakmem``, ``workload_peak_rss``, ``workload_device_peak``, a first-call
    stage (``first_call``, ``trace``, ``lower``, ``compile``, ``first_execute``),
    or an accuracy figure (``max_abs_error``, ``tolerance_used``: measured, no floor).
    """
    method = method_of(benchmark)
    if method.startswith(("peakmem_", "mem_")):
        return "peakmem"
    if method in _MEMORY_FAMILIES:
        return _MEMORY_FAMILIES[method]
    if method in COMPILE_STAGES:
        return COMPILE_STAGES[method]
    return _ACCURACY_FAMILIES.get(method)


def floor_of(benchmark: str) -> Floor | None:
    """The floor of a benchmark's family, or None where the family has none."""
    family = family_of(benchmark)
    return FLOORS.get(family) if family else None


def beyond_floor(floor: Floor, base: float, head: float, *, relative: float = 1.0) -> bool:
    """Whether ``base -> head`` exceeds both parts of ``floor``.

    ``relative``: a larger ratio asked for (a user's factor); the floor's own
    ratio is never undercut. A zero or negative side has no ratio: the
    absolute part alone decides.
    """
    if not (math.isfinite(base) and math.isfinite(head)):
        return False
    if abs(head - base) <= floor.absolute:
        return False
    if base <= 0 or head <= 0:
        return True
    ratio = head / base if head >= base else base / head
    return ratio > max(floor.relative, relative)


def history_floor(benchmark: str, before: float, after: float) -> bool:
    """Whether a history step ``before -> after`` is within its family's floor (not listed).

    The whole floor for a family that drifts; :attr:`Floor.history_absolute`
    for the others; no floor for figures outside the families.
    """
    floor = floor_of(benchmark)
    if floor is None:
        return False
    if floor.drifts:
        return not beyond_floor(floor, before, after)
    return abs(after - before) < floor.history_absolute


def ratio_is_meaningful(base: float, head: float, floor: Floor | None) -> bool:
    """Whether ``head / base`` shows the change fairly.

    Not where a side is zero or negative (``0 B -> 52.0 KiB`` is ``inf``), nor
    where the ratio is beyond the floor's but the difference within it: tiny
    values make huge ratios of nothing (``28.0 KiB -> 4.00 KiB`` is 0.14x, with a
    24 MiB floor). Show the difference there instead.
    """
    if not (math.isfinite(base) and math.isfinite(head)) or base <= 0 or head <= 0:
        return False
    if floor is None:
        return True
    ratio = head / base if head >= base else base / head
    return ratio <= floor.relative or abs(head - base) > floor.absolute
