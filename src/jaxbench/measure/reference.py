"""Correctness before speed: compare a result with its NumPy reference.

Pure NumPy, no jax: the measuring half converts device arrays to host arrays
(after the clock has stopped) and calls :func:`check`. The criterion is
NumPy's ``allclose``: ``|result - reference| <= atol + rtol * |reference|``
for every element of every leaf.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from jaxbench.errors import ReferenceMismatch

__all__ = ["Accuracy", "check", "leaves", "measure"]


@dataclass(frozen=True)
class Accuracy:
    """How close a result is to its reference, over every leaf and element."""

    max_abs_error: float
    #: max over elements of |err| / (atol + rtol*|ref|); at most 1 passes.
    tolerance_used: float
    atol: float
    rtol: float
    leaves: int


def leaves(tree: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Yield ``(path, leaf)`` for a pytree of dicts, lists and tuples, keys sorted."""
    if isinstance(tree, Mapping):
        for key in sorted(tree, key=str):
            yield from leaves(tree[key], f"{path}/{key}")
    elif isinstance(tree, Sequence) and not isinstance(tree, str | bytes):
        for index, item in enumerate(tree):
            yield from leaves(item, f"{path}/{index}")
    else:
        yield path or "/", tree


def measure(
    workload: str,
    result: Any,
    reference: Any,
    *,
    atol: float,
    rtol: float,
    dtype: str,
) -> Accuracy:
    """Measure how far ``result`` is from ``reference``, leaf by leaf.

    Raises :class:`ReferenceMismatch` when the two cannot be compared: a
    different structure, shape or dtype, or a non-finite value. A value
    outside tolerance is measured, not raised: see :func:`check`.
    """
    got = dict(leaves(result))
    want = dict(leaves(reference))
    if got.keys() != want.keys():
        raise ReferenceMismatch(
            f"{workload}: output structure {sorted(got)} differs from the reference's "
            f"{sorted(want)}; return the same pytree as the reference"
        )
    worst_abs = 0.0
    worst_used = 0.0
    for path in sorted(want):
        actual = np.asarray(got[path])
        expected = np.asarray(want[path], dtype=np.float64)
        where = f"{workload} output {path}"
        if actual.shape != expected.shape:
            raise ReferenceMismatch(
                f"{where}: shape {actual.shape} differs from the reference's {expected.shape}; "
                "the benchmark would time a different computation"
            )
        if str(actual.dtype) != dtype:
            raise ReferenceMismatch(
                f"{where}: dtype {actual.dtype} differs from the workload's {dtype}; "
                "a different precision answers a different question"
            )
        if not np.all(np.isfinite(actual)):
            bad = int(np.size(actual) - np.count_nonzero(np.isfinite(actual)))
            raise ReferenceMismatch(
                f"{where}: {bad} non-finite value(s) (NaN or inf); "
                "fix the function before timing it"
            )
        error = np.abs(actual.astype(np.float64) - expected)
        allowed = atol + rtol * np.abs(expected)
        max_abs = float(np.max(error)) if error.size else 0.0
        used = float(np.max(error / allowed)) if error.size else 0.0
        worst_abs = max(worst_abs, max_abs)
        worst_used = max(worst_used, used)
    return Accuracy(
        max_abs_error=worst_abs, tolerance_used=worst_used, atol=atol, rtol=rtol, leaves=len(want)
    )


def check(
    workload: str,
    result: Any,
    reference: Any,
    *,
    atol: float,
    rtol: float,
    dtype: str,
) -> Accuracy:
    """Like :func:`measure`, and raise :class:`ReferenceMismatch` outside tolerance.

    The message names the workload, the maximum absolute error and the tolerance.
    """
    accuracy = measure(workload, result, reference, atol=atol, rtol=rtol, dtype=dtype)
    if accuracy.tolerance_used > 1.0:
        raise ReferenceMismatch(
            f"{workload}: max abs error {accuracy.max_abs_error:.3g} exceeds the tolerance "
            f"(atol={atol:g}, rtol={rtol:g}: {accuracy.tolerance_used:.3g}x the allowed error); "
            "the function no longer computes the reference's answer"
        )
    return accuracy
