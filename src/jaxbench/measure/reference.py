"""Correctness before speed: compare a result with its reference, leaf by leaf.

The measuring half converts device arrays to host arrays (after the clock has
stopped) and calls :func:`check`. Any pytree jax knows is walked with
``jax.tree_util``; a leaf is named by its path (``/``, ``/prediction``,
``/0/w1``). Floating leaves pass when NumPy's ``allclose`` criterion holds,
``|result - reference| <= atol + rtol * |reference|`` for every element, with
the leaf's own tolerances; integer and bool leaves must be equal.

PRNG keys of any kind are compared exactly, through their key data: a raw
``jax.random.PRNGKey`` is a ``uint32`` array (an integer leaf), and a typed
key (``jax.random.key``) reaches the host as a :class:`HostKey`, its
``jax.random.key_data`` and the name of its implementation. A golden file
stores both, so it reloads as the same :class:`HostKey`. A leaf of another
extended dtype has no host value to compare or store: :func:`host_leaf`
refuses it with the leaf's path and the fix.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import numpy as np

from jaxbench.errors import ReferenceMismatch, UsageError, WorkloadError
from jaxbench.measure.pytrees import is_array, path_text

__all__ = [
    "Accuracy",
    "HostKey",
    "check",
    "flat",
    "golden_bytes",
    "host_leaf",
    "host_tree",
    "leaves",
    "load_golden",
    "measure",
]

#: A golden file's entry for a typed key leaf's implementation is named this
#: prefix and the leaf's path (leaf paths start with "/": no leaf is named so).
KEY_IMPL_PREFIX = "key_impl:"


@dataclass(frozen=True)
class Accuracy:
    """How close a result is to its reference, over every leaf and element."""

    max_abs_error: float
    #: max over elements of |err| / (atol + rtol*|ref|); at most 1 passes.
    tolerance_used: float
    atol: float | Mapping[str, float]
    rtol: float | Mapping[str, float]
    leaves: int


@dataclass(frozen=True, eq=False)
class HostKey:
    """A typed PRNG key leaf (``jax.random.key``) on the host.

    ``data`` is ``jax.random.key_data(key)`` (unsigned integers, the key's
    shape followed by the implementation's), ``impl`` the implementation's
    name (``threefry2x32``, ``rbg``): what :func:`jax.random.wrap_key_data`
    needs to make the key again.
    """

    data: np.ndarray
    impl: str

    @classmethod
    def of(cls, key: Any) -> HostKey:
        """The host copy of a typed key array."""
        return cls(np.asarray(jax.random.key_data(key)), str(jax.random.key_impl(key)))

    @property
    def shape(self) -> tuple[int, ...]:
        """The key array's shape (its data's, less the implementation's key shape)."""
        return tuple(self.data.shape[: max(self.data.ndim - 1, 0)])

    @property
    def dtype(self) -> str:
        return f"key<{self.impl}>"

    def wrap(self) -> Any:
        """The key again, as a jax array (``jax.random.wrap_key_data``)."""
        return jax.random.wrap_key_data(jax.numpy.asarray(self.data), impl=self.impl)


def _extended(dtype: Any) -> bool:
    try:
        return bool(jax.numpy.issubdtype(dtype, jax.dtypes.extended))
    except TypeError:  # not a dtype jax knows (a static leaf's attribute)
        return False


def host_tree(tree: Any, where: str) -> Any:
    """``tree`` with every leaf on the host (:func:`host_leaf`); ``where``: ``label output``."""
    return jax.tree_util.tree_map_with_path(
        lambda path, leaf: host_leaf(leaf, f"{where} {path_text(path)}"), tree
    )


def host_leaf(leaf: Any, where: str) -> Any:
    """One output leaf on the host: NumPy for an array, :class:`HostKey` for a typed key.

    Leaves that are not arrays (a string, a function: static outputs) stay
    as they are. A leaf of an extended dtype other than a PRNG key has no host
    value: :class:`WorkloadError` naming ``where`` (the workload and the leaf's
    path) and the fix.
    """
    dtype = getattr(leaf, "dtype", None)
    if dtype is not None and _extended(dtype):
        if jax.numpy.issubdtype(dtype, jax.dtypes.prng_key):
            return HostKey.of(leaf)
        raise WorkloadError(
            f"{where}: dtype {dtype} is an extended dtype with no host value to check or "
            "record; return its underlying data as an ordinary array (as "
            "jax.random.key_data does for a key), or leave it out of the output"
        )
    return np.asarray(leaf) if is_array(leaf) else leaf


def _key(entry: Any) -> str:
    for attr in ("key", "idx", "name"):
        if hasattr(entry, attr):
            return str(getattr(entry, attr))
    return str(entry)


def leaves(tree: Any) -> list[tuple[str, Any]]:
    """``(path, leaf)`` of every leaf of a pytree, in jax's order (dict keys sorted)."""
    flat_tree, _ = jax.tree_util.tree_flatten_with_path(tree)
    return [("/" + "/".join(_key(k) for k in path), leaf) for path, leaf in flat_tree]


def flat(tree: Any) -> dict[str, Any]:
    """The leaves of ``tree`` by path; a :class:`FlatTree` stays as it is."""
    if isinstance(tree, FlatTree):
        return dict(tree.leaves)
    return dict(leaves(tree))


@dataclass(frozen=True)
class FlatTree:
    """Leaves already keyed by path (a golden file)."""

    leaves: Mapping[str, Any]


def _tolerance(value: float | Mapping[str, float], path: str, name: str) -> float:
    if not isinstance(value, Mapping):
        return float(value)
    if path in value:
        return float(value[path])
    if "*" in value:
        return float(value["*"])
    raise UsageError(
        f"{name} has no entry for output leaf {path}; add {path!r} or '*' (the rest) to it"
    )


def _numeric(leaf: Any) -> bool:
    """An array or number (compared with tolerances), not a static leaf (a string, a function)."""
    return isinstance(leaf, np.ndarray | np.generic | jax.Array | bool | int | float | complex)


def _same_static(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # an == that does not give one truth value
        return a is b


def _exact(dtype: np.dtype[Any]) -> bool:
    return bool(np.issubdtype(dtype, np.integer) or np.issubdtype(dtype, np.bool_))


def measure(
    workload: str,
    result: Any,
    reference: Any,
    *,
    atol: float | Mapping[str, float],
    rtol: float | Mapping[str, float],
    dtype: str | None = None,
    same_dtype: bool = True,
) -> Accuracy:
    """Measure how far ``result`` is from ``reference``, leaf by leaf.

    ``dtype`` (the lesson's one dtype) requires every leaf to have it;
    ``same_dtype`` requires each leaf to have its reference leaf's dtype (off
    for a float64 reference). Raises :class:`ReferenceMismatch` when the two
    cannot be compared: a different structure, shape, dtype or kind, a
    non-finite value, or an integer/bool leaf that differs. A floating value
    outside tolerance is measured, not raised: see :func:`check`.
    """
    got = flat(result)
    want = flat(reference)
    if isinstance(reference, FlatTree):  # a golden file holds the array leaves only
        got = {path: leaf for path, leaf in got.items() if _numeric(leaf) or path in want}
    if got.keys() != want.keys():
        raise ReferenceMismatch(
            f"{workload}: output leaves {sorted(got)} differ from the reference's "
            f"{sorted(want)}; return the same pytree as the reference"
        )
    worst_abs = 0.0
    worst_used = 0.0
    for path in sorted(want):
        where = f"{workload} output {path}"
        if isinstance(got[path], HostKey) or isinstance(want[path], HostKey):
            _same_key(where, got[path], want[path])
            continue
        if not (_numeric(got[path]) and _numeric(want[path])):
            if not _same_static(got[path], want[path]):
                raise ReferenceMismatch(
                    f"{where}: {got[path]!r} differs from the reference's {want[path]!r} "
                    "(a leaf that is not an array is compared with ==)"
                )
            continue
        actual = np.asarray(got[path])
        expected = np.asarray(want[path])
        if actual.shape != expected.shape:
            raise ReferenceMismatch(
                f"{where}: shape {actual.shape} differs from the reference's {expected.shape}; "
                "the benchmark would time a different computation"
            )
        if dtype is not None and str(actual.dtype) != dtype:
            raise ReferenceMismatch(
                f"{where}: dtype {actual.dtype} differs from the workload's {dtype}; "
                "a different precision answers a different question"
            )
        if _exact(actual.dtype) != _exact(expected.dtype) or (
            same_dtype and dtype is None and actual.dtype != expected.dtype
        ):
            raise ReferenceMismatch(
                f"{where}: dtype {actual.dtype} differs from the reference's {expected.dtype}; "
                "cast the reference's leaf to the function's dtype"
            )
        if _exact(actual.dtype):
            wrong = int(np.count_nonzero(actual != expected))
            if wrong:
                raise ReferenceMismatch(
                    f"{where}: {wrong} of {actual.size} {actual.dtype} value(s) differ from "
                    "the reference (integer and bool leaves are compared exactly)"
                )
            continue
        if not np.all(np.isfinite(actual)):
            bad = int(np.size(actual) - np.count_nonzero(np.isfinite(actual)))
            raise ReferenceMismatch(
                f"{where}: {bad} non-finite value(s) (NaN or inf); "
                "fix the function before timing it"
            )
        leaf_atol = _tolerance(atol, path, "atol")
        leaf_rtol = _tolerance(rtol, path, "rtol")
        reference64 = expected.astype(np.float64)
        error = np.abs(actual.astype(np.float64) - reference64)
        allowed = leaf_atol + leaf_rtol * np.abs(reference64)
        max_abs = float(np.max(error)) if error.size else 0.0
        used = float(np.max(error / allowed)) if error.size else 0.0
        worst_abs = max(worst_abs, max_abs)
        worst_used = max(worst_used, used)
    return Accuracy(
        max_abs_error=worst_abs, tolerance_used=worst_used, atol=atol, rtol=rtol, leaves=len(want)
    )


def _key_data(leaf: Any) -> np.ndarray | None:
    """A key's data: a :class:`HostKey`'s, or an unsigned integer array (raw key data)."""
    if isinstance(leaf, HostKey):
        return leaf.data
    if _numeric(leaf) and np.issubdtype(np.asarray(leaf).dtype, np.unsignedinteger):
        return np.asarray(leaf)
    return None


def _key_text(leaf: Any) -> str:
    if isinstance(leaf, HostKey):
        return f"a PRNG key ({leaf.dtype}{list(leaf.shape)})"
    dtype = getattr(leaf, "dtype", None)
    return f"{dtype}{list(np.shape(leaf))}" if dtype is not None else repr(leaf)


def _same_key(where: str, got: Any, want: Any) -> None:
    """A key leaf equals its reference's when their key data (and impls, if known) are equal."""
    got_data, want_data = _key_data(got), _key_data(want)
    if got_data is None or want_data is None or got_data.shape != want_data.shape:
        raise ReferenceMismatch(
            f"{where}: {_key_text(got)} where the reference has {_key_text(want)}; a key is "
            "compared through jax.random.key_data: return a key of the same shape in both "
            "(or its key data, jax.random.key_data(key))"
        )
    impls = {leaf.impl for leaf in (got, want) if isinstance(leaf, HostKey)}
    if len(impls) > 1:
        raise ReferenceMismatch(
            f"{where}: PRNG key implementation {got.impl} differs from the reference's "
            f"{want.impl}; make both keys with the same impl"
        )
    wrong = int(np.count_nonzero(got_data != want_data))
    if wrong:
        raise ReferenceMismatch(
            f"{where}: {wrong} of {got_data.size} key data word(s) differ from the reference "
            "(PRNG keys are compared exactly, through jax.random.key_data)"
        )


def _worst_leaf(workload: str, result: Any, reference: Any, **kw: Any) -> str:
    """The path of the leaf furthest outside its tolerance."""
    got, want = flat(result), flat(reference)
    worst, worst_path = -1.0, "/"
    for path in sorted(want):
        used = measure(workload, {"": got[path]}, {"": want[path]}, **_leaf_kw(kw, path))
        if used.tolerance_used > worst:
            worst, worst_path = used.tolerance_used, path
    return worst_path


def _leaf_kw(kw: dict[str, Any], path: str) -> dict[str, Any]:
    out = dict(kw)
    for name in ("atol", "rtol"):
        out[name] = _tolerance(kw[name], path, name)
    return out


def check(
    workload: str,
    result: Any,
    reference: Any,
    *,
    atol: float | Mapping[str, float],
    rtol: float | Mapping[str, float],
    dtype: str | None = None,
    same_dtype: bool = True,
) -> Accuracy:
    """Like :func:`measure`, and raise :class:`ReferenceMismatch` outside tolerance.

    The message names the workload, the worst leaf, the maximum absolute
    error and the tolerance.
    """
    kw: dict[str, Any] = {"atol": atol, "rtol": rtol, "dtype": dtype, "same_dtype": same_dtype}
    accuracy = measure(workload, result, reference, **kw)
    if accuracy.tolerance_used > 1.0:
        path = _worst_leaf(workload, result, reference, **kw)
        leaf_atol, leaf_rtol = _tolerance(atol, path, "atol"), _tolerance(rtol, path, "rtol")
        raise ReferenceMismatch(
            f"{workload} output {path}: max abs error {accuracy.max_abs_error:.3g} exceeds the "
            f"tolerance (atol={leaf_atol:g}, rtol={leaf_rtol:g}: "
            f"{accuracy.tolerance_used:.3g}x the allowed error); "
            "the function no longer computes the reference's answer"
        )
    return accuracy


# --- golden files -------------------------------------------------------------------


def golden_bytes(output: Any) -> bytes:
    """An ``.npz`` of ``output``'s leaves (host values), one array per leaf path.

    A typed key (:class:`HostKey`) is stored as its key data under its path,
    and its implementation's name under ``key_impl:`` and the path.
    """
    buffer = io.BytesIO()
    arrays: dict[str, Any] = {}
    for path, leaf in leaves(output):
        if isinstance(leaf, HostKey):
            arrays[path] = leaf.data
            arrays[f"{KEY_IMPL_PREFIX}{path}"] = np.array(leaf.impl)
        elif _numeric(leaf):
            arrays[path] = np.asarray(leaf)
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def _golden_leaves(data: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """A golden file's entries as leaves: key data with its impl entry is a :class:`HostKey`."""
    out: dict[str, Any] = {}
    for name, value in data.items():
        if name.startswith(KEY_IMPL_PREFIX):
            continue
        impl = data.get(f"{KEY_IMPL_PREFIX}{name}")
        out[name] = value if impl is None else HostKey(value, str(impl))
    return out


def load_golden(path: Path, workload: str) -> FlatTree:
    """The leaves recorded in ``path``; a missing or unreadable file is a one-line error."""
    if not path.is_file():
        raise UsageError(
            f"{workload}: golden file {path} does not exist; record it once with "
            f"jaxbench report --workload MODULE:FACTORY --record-golden"
        )
    try:
        with np.load(path, allow_pickle=False) as data:
            return FlatTree(_golden_leaves({key: np.asarray(data[key]) for key in data.files}))
    except (OSError, ValueError) as exc:
        raise UsageError(
            f"{workload}: golden file {path} cannot be read ({exc}); record it again with "
            "jaxbench report --workload MODULE:FACTORY --record-golden"
        ) from None
