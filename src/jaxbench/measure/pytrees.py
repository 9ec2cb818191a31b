"""Pytrees as libraries build them: array leaves, everything else static.

An equinox module carries its activation (a ``custom_jvp``) and other
functions as leaves; a model's output may hold a string; a config object
may sit in a params tree. ``jax.jit`` refuses such leaves ("not a valid
JAX type"). ``eqx.filter_jit`` splits every pytree into its array leaves
(traced) and the rest (static: part of the specialization, hashed, never
placed). :class:`FilteredJit` does the same with ``jax.tree_util`` alone,
so the measuring half needs no equinox:

* array-like leaves (``jax.Array`` and PRNG keys, NumPy arrays and
  scalars, Python numbers, objects with ``__jax_array__``) are traced, as
  ``jax.jit`` traces them;
* every other leaf is static: it must be hashable (like ``jax.jit``'s
  ``static_argnums``), and a different one is a different program.

This module also keeps the user's inputs theirs: :func:`host_copy` gives the
reference private host copies, :func:`device_copies` gives each call
sequence private device buffers (``jax.device_put(..., may_alias=False)``:
an array already on the device is otherwise the very same buffer, which a
donating call would delete), and :func:`donated_twice` names the leaves a
donating call would get twice.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxbench.errors import WorkloadError

__all__ = [
    "FilteredJit",
    "combine",
    "device_copies",
    "donated_twice",
    "has_static_leaves",
    "host_copy",
    "is_array",
    "partition",
    "path_text",
    "to_xla_compiled",
]


def is_array(leaf: Any) -> bool:
    """Whether ``jax.jit`` traces ``leaf`` (an array-like value), not what is static."""
    return isinstance(leaf, jax.Array | np.ndarray | np.generic | bool | int | float | complex) or (
        hasattr(leaf, "__jax_array__")
    )


def _is_none(node: Any) -> bool:
    return node is None


def partition(tree: Any) -> tuple[Any, Any]:
    """``(arrays, static)``: two trees of ``tree``'s shape, ``None`` where the other has a leaf."""
    arrays = jax.tree_util.tree_map(lambda leaf: leaf if is_array(leaf) else None, tree)
    static = jax.tree_util.tree_map(lambda leaf: None if is_array(leaf) else leaf, tree)
    return arrays, static


def combine(arrays: Any, static: Any) -> Any:
    """The tree :func:`partition` split."""
    return jax.tree_util.tree_map(
        lambda a, s: s if a is None else a, arrays, static, is_leaf=_is_none
    )


def has_static_leaves(tree: Any) -> bool:
    """Whether any leaf of ``tree`` is not array-like."""
    return not all(is_array(leaf) for leaf in jax.tree_util.tree_leaves(tree))


def path_text(path: Sequence[Any]) -> str:
    """A ``jax.tree_util`` key path as ``/args/0/w``."""
    parts = []
    for entry in path:
        for attr in ("key", "idx", "name"):
            if hasattr(entry, attr):
                parts.append(str(getattr(entry, attr)))
                break
        else:
            parts.append(str(entry))
    return "/" + "/".join(parts)


# --- the user's buffers stay theirs ------------------------------------------


def _is_placeable(leaf: Any) -> bool:
    return isinstance(leaf, np.ndarray | np.generic | jax.Array)


def _is_key(leaf: Any) -> bool:
    return isinstance(leaf, jax.Array) and jnp.issubdtype(leaf.dtype, jax.dtypes.prng_key)


def host_copy(tree: Any) -> Any:
    """``tree`` with every array leaf a private host copy (NumPy; PRNG keys: a device copy).

    What the reference sees: a reference that writes into its inputs, or a
    donating call, cannot reach the user's arrays or the timed buffers. One
    array at two places stays one (copied once).
    """
    memo: dict[int, Any] = {}

    def copy(leaf: Any) -> Any:
        if not _is_placeable(leaf):
            return leaf
        if id(leaf) not in memo:
            if _is_key(leaf):
                memo[id(leaf)] = jax.device_put(leaf, may_alias=False)
            else:
                memo[id(leaf)] = np.array(leaf, copy=True)
        return memo[id(leaf)]

    return jax.tree_util.tree_map(copy, tree)


def device_copies(
    tree: Any, target: Any, memo: dict[int, Any], *, keep_placed: bool = False
) -> Any:
    """``tree`` with every array leaf on ``target`` in a buffer of its own.

    ``jax.device_put`` of an array already there returns the same buffer;
    ``may_alias=False`` makes it a copy, so nothing this call sequence
    donates is the user's. ``keep_placed``: a jax array is copied where it
    is (its own sharding: an array the user sharded stays sharded). ``memo``
    (shared over one placement) keeps one array at two places one buffer,
    as the user built it.
    """

    def put(leaf: Any) -> Any:
        if not _is_placeable(leaf):
            return leaf
        if id(leaf) not in memo:
            where = leaf.sharding if keep_placed and isinstance(leaf, jax.Array) else target
            memo[id(leaf)] = jax.device_put(leaf, where, may_alias=False)
        return memo[id(leaf)]

    return jax.tree_util.tree_map(put, tree)


def donated_twice(
    args: Sequence[Any], kwargs: Mapping[str, Any], donate_argnums: Sequence[int]
) -> tuple[str, str] | None:
    """The first two paths of one array that a donating call would get twice, if any.

    XLA cannot donate a buffer twice, nor donate one the same call also
    reads ("Attempt to donate the same buffer twice"); a user's real call
    fails the same way.
    """
    if not donate_argnums:
        return None
    seen: dict[int, str] = {}
    donated_ids: dict[int, str] = {}
    pairs: list[tuple[str, str]] = []
    tree = {"args": tuple(args), "kwargs": dict(kwargs)}
    for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]:
        if not _is_placeable(leaf) or isinstance(leaf, np.generic):
            continue
        text = path_text(path)
        donated = text.startswith("/args/") and int(text.split("/")[2]) in donate_argnums
        key = id(leaf)
        if key in seen and (donated or key in donated_ids):
            pairs.append((seen[key], text))
        seen.setdefault(key, text)
        if donated:
            donated_ids.setdefault(key, text)
    return pairs[0] if pairs else None


# --- jit, filtered ----------------------------------------------------------------


class _Static:
    """The static part of one call, hashed by value: part of the specialization."""

    __slots__ = ("_hash", "parts")

    def __init__(self, parts: tuple[Any, ...], where: Callable[[], str]) -> None:
        self.parts = parts
        try:
            self._hash = hash(parts)
        except TypeError as exc:
            raise WorkloadError(
                f"{where()}: {exc}; a leaf that is not an array is compiled into the program "
                "as a static value and must be hashable: make it hashable "
                "(@dataclass(frozen=True), a tuple) or pass it as an array"
            ) from None

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Static) and self.parts == other.parts


def _static_key(static_tree: Any) -> tuple[str, Any, tuple[Any, ...]]:
    leaves, treedef = jax.tree_util.tree_flatten(static_tree)
    return ("split", treedef, tuple(leaves))


def _static_tree(key: tuple[Any, ...]) -> Any:
    return jax.tree_util.tree_unflatten(key[1], key[2])


class FilteredJit:
    """``fn`` jitted as ``eqx.filter_jit`` jits it: array leaves traced, the rest static.

    Inputs and outputs alike: a static output leaf (a string, a function) is
    kept from the trace and put back into every output. ``static_argnums``/
    ``static_argnames`` arguments are static whole; ``donate_argnums``
    donates those arguments' array leaves. Called as ``fn`` is.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        static_argnums: Sequence[int] = (),
        static_argnames: Sequence[str] = (),
        donate_argnums: Sequence[int] = (),
        label: str = "fn",
    ) -> None:
        self.fn = fn
        self.static_argnums = tuple(static_argnums)
        self.static_argnames = tuple(static_argnames)
        self.donate_argnums = tuple(donate_argnums)
        self.label = label
        self._outputs: dict[_Static, Any] = {}
        #: The jitted inner function: ``(static, donated, kept)``, static at 0.
        self.jitted = jax.jit(self._inner, static_argnums=(0,), donate_argnums=(1,))

    def _inner(self, static: _Static, donated: tuple[Any, ...], kept: Any) -> Any:
        arg_keys, kwarg_keys = static.parts
        kept_args, kept_kwargs = kept
        args = [
            key[1]
            if key[0] == "whole"
            else combine(
                donated[i] if i in self.donate_argnums else kept_args[i], _static_tree(key)
            )
            for i, key in enumerate(arg_keys)
        ]
        kwargs = {
            name: key[1] if key[0] == "whole" else combine(kept_kwargs[name], _static_tree(key))
            for name, key in kwarg_keys
        }
        arrays, rest = partition(self.fn(*args, **kwargs))
        self._outputs[static] = rest
        return arrays

    def split(
        self, args: Sequence[Any], kwargs: Mapping[str, Any]
    ) -> tuple[_Static, tuple[Any, ...], Any]:
        """``(static, donated, kept)``: what :attr:`jitted` takes for this call."""
        arg_keys: list[tuple[Any, ...]] = []
        donated: list[Any] = []
        kept_args: list[Any] = []
        for i, value in enumerate(args):
            if i in self.static_argnums:
                arg_keys.append(("whole", value))
                donated.append(None)
                kept_args.append(None)
                continue
            arrays, static = partition(value)
            arg_keys.append(_static_key(static))
            donated.append(arrays if i in self.donate_argnums else None)
            kept_args.append(None if i in self.donate_argnums else arrays)
        kwarg_keys: list[tuple[str, tuple[Any, ...]]] = []
        kept_kwargs: dict[str, Any] = {}
        for name in sorted(kwargs):
            value = kwargs[name]
            if name in self.static_argnames:
                kwarg_keys.append((name, ("whole", value)))
                continue
            arrays, static = partition(value)
            kwarg_keys.append((name, _static_key(static)))
            kept_kwargs[name] = arrays
        static_part = _Static(
            (tuple(arg_keys), tuple(kwarg_keys)), lambda: self._unhashable(args, kwargs)
        )
        return static_part, tuple(donated), (tuple(kept_args), kept_kwargs)

    def _unhashable(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> str:
        tree = {"args": tuple(args), "kwargs": dict(kwargs)}
        for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]:
            if is_array(leaf):
                continue
            try:
                hash(leaf)
            except TypeError:
                return f"{self.label}: input {path_text(path)} ({type(leaf).__name__})"
        return f"{self.label}: a static argument"

    def finish(self, static: _Static, arrays: Any) -> Any:
        """The whole output from the compiled program's array output."""
        return combine(arrays, self._outputs[static])

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        static, donated, kept = self.split(args, kwargs)
        return self.finish(static, self.jitted(static, donated, kept))


def to_xla_compiled(compiled: Any) -> Any:
    """The ``jax.stages.Compiled`` of ``compiled``, or of the library's wrapper around it.

    ``eqx.filter_jit(f).lower(...).compile()`` and ``nnx.jit``'s stages keep
    jax's in a ``compiled`` attribute. ``None`` when there is none.
    """
    if isinstance(compiled, jax.stages.Compiled):
        return compiled
    inner = getattr(compiled, "compiled", None)
    return inner if isinstance(inner, jax.stages.Compiled) else None
