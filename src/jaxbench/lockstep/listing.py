"""What a lockstep command samples: asv's listing of time benchmarks, selected and expanded.

``jaxbench ab`` and ``jaxbench pair-history`` both take the benchmarks a
worker lists (:func:`jaxbench.lockstep.coordinator.list_benchmarks`), keep
those an ``asv run -b`` regex would (:func:`selected`), and sample each
parameter set as one :class:`~jaxbench.lockstep.coordinator.Item` with the
benchmark's own asv ``timeout`` (:func:`items_of`).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from jaxbench.errors import UsageError
from jaxbench.lockstep.coordinator import DEFAULT_TIMEOUT, Item

__all__ = ["combos", "items_of", "param_values", "selected", "timeout_of"]


def selected(
    benchmarks: Sequence[Mapping[str, Any]], patterns: Sequence[str] | None
) -> list[Mapping[str, Any]]:
    """The benchmarks whose name one of ``patterns`` finds (``re.search``, as ``asv run -b``)."""
    if not patterns:
        return list(benchmarks)
    try:
        compiled = [re.compile(p) for p in patterns]
    except re.error as exc:
        raise UsageError(f"--bench: bad regular expression: {exc}") from None
    return [b for b in benchmarks if any(c.search(str(b.get("name", ""))) for c in compiled)]


def combos(bench: Mapping[str, Any]) -> list[int | None]:
    """asv's parameter indices of ``bench`` (``[None]`` for an unparametrised one)."""
    params = bench.get("params") or []
    if not params or not isinstance(params, list):
        return [None]
    return list(range(len(list(itertools.product(*params)))))


def param_values(bench: Mapping[str, Any], idx: int | None) -> tuple[str, ...]:
    """The parameter values (asv's reprs) of index ``idx``; ``()`` for none."""
    params = bench.get("params") or []
    if idx is None or not isinstance(params, list):
        return ()
    return tuple(str(p) for p in list(itertools.product(*params))[idx])


def timeout_of(bench: Mapping[str, Any]) -> float:
    """The benchmark's asv ``timeout`` (seconds), asv's default when unset or odd."""
    value = bench.get("timeout")
    if (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    ):
        return float(value)
    return DEFAULT_TIMEOUT


def items_of(benchmarks: Sequence[Mapping[str, Any]]) -> list[tuple[Mapping[str, Any], Item]]:
    """Each benchmark's parameter sets as lockstep items, with the benchmark they come from."""
    return [(b, Item(str(b["name"]), idx, timeout_of(b))) for b in benchmarks for idx in combos(b)]
