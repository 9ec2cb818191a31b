"""The one measuring pipeline: the report, the asv suite and the lockstep worker use it.

For one workload, in order:

place inputs and wait -> (first call of a fresh specialization, AOT stages)
-> check the answer against the reference -> warm up (threading ``carry``)
-> warm synchronized samples -> check again.

Nothing is reported unless the answer is right. :func:`prepare` does
everything up to the warm samples (the asv helper times its own loop on the
result); :func:`measure` is the whole protocol (``jaxbench report``);
:func:`figures` is the first call, the accuracy and XLA's work figures
(the asv figures class); :func:`workload_memory` is what the workload adds
to the process's memory.
"""

from __future__ import annotations

import functools
import operator
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxbench.errors import JaxbenchError, ReferenceMismatch, UsageError, WorkloadError
from jaxbench.measure import pytrees, reference
from jaxbench.measure.timing import (
    Caller,
    Clock,
    FirstCall,
    JitOptions,
    Placed,
    compile_count,
    compile_events,
    disable_persistent_cache,
    first_call,
    handle_only_seconds,
    place,
    synchronized_samples,
)
from jaxbench.measure.workloads import Args, Golden, Unchecked, Workload, as_args

__all__ = [
    "CAPTURED_WARN_BYTES",
    "Figures",
    "Measurement",
    "Prepared",
    "captured_constants",
    "expected_output",
    "figures",
    "host_result",
    "measure",
    "prepare",
    "workload_memory",
]

#: A captured constant of at least this many bytes is named in a warning.
CAPTURED_WARN_BYTES = 1024
#: Warm-up calls after the checked first call: the steady state, not the first calls.
WARMUP_CALLS = 3
#: ... for a workload declared ``compiles_every_call``: each of its calls
#: compiles (seconds, not microseconds), and one call after the first has paid
#: what the first left (the one-time helpers it compiled).
WARMUP_CALLS_COMPILING = 1
#: Warm calls whose compiles the figures process counts (``track_compiles_per_call``).
COUNTED_CALLS = 2


def host_result(output: Any, label: str = "fn") -> Any:
    """The output pytree as host NumPy arrays (after the clock has stopped).

    Leaves that are not arrays (a string, a function: static outputs) stay as
    they are; a typed PRNG key is a :class:`~jaxbench.measure.reference.HostKey`
    (its key data and impl); a leaf of another extended dtype is a
    :class:`WorkloadError` naming ``label`` and the leaf's path.
    """
    return reference.host_tree(output, f"{label} output")


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


# --- references ---------------------------------------------------------------------


def _enable_x64() -> Any:
    return jax.enable_x64(True)


def _widen(leaf: Any, *, ints: bool, cpu: Any) -> Any:
    """One host input leaf for the float64 run: floating leaves as float64; with
    ``ints``, int32 leaves (x32's default integer) as int64 (x64's); a typed key
    on the CPU; anything else as it is."""
    if isinstance(leaf, np.ndarray | np.generic):
        if jnp.issubdtype(leaf.dtype, jnp.floating):
            return np.asarray(leaf, dtype=np.float64)
        if ints and leaf.dtype == np.int32:
            return np.asarray(leaf, dtype=np.int64)
    elif isinstance(leaf, jax.Array):  # a typed PRNG key (host_copy keeps keys as keys)
        return jax.device_put(leaf, cpu)
    return leaf


def _float64_call(workload: Workload, host: Args, *, ints: bool) -> Any:
    """``fn`` on the host inputs widened (:func:`_widen`), with x64 enabled, on the CPU."""
    cpu = jax.devices("cpu")[0]
    static = set(workload.static_argnums) | set(workload.static_argnames)

    def widen(key: int | str, value: Any) -> Any:
        if key in static:
            return value
        return jax.tree_util.tree_map(functools.partial(_widen, ints=ints, cpu=cpu), value)

    args = tuple(widen(i, a) for i, a in enumerate(host.args))
    kwargs = {k: widen(k, v) for k, v in host.kwargs.items()}
    options = JitOptions(
        workload.jit, workload.static_argnums, workload.static_argnames, label=workload.label
    )
    with _enable_x64(), jax.default_device(cpu):
        fn = options.wrap(workload.fn, Args(args, kwargs))
        return host_result(fn(*args, **kwargs), workload.label)


def _has_int32(host: Args) -> bool:
    return any(
        isinstance(leaf, np.ndarray | np.generic) and leaf.dtype == np.int32
        for leaf in jax.tree_util.tree_leaves((host.args, dict(host.kwargs)))
    )


def _float64_output(workload: Workload, host: Args) -> Any:
    """The same ``fn`` with x64 enabled, on the CPU, its floating inputs widened to float64.

    x64 also widens jax's default integer (int32 to int64): a step whose int32
    state meets a freshly made integer in a ``lax.cond``, ``while_loop`` or
    ``scan`` (a sampler's step count) does not trace so ("cond branches must
    have equal output types"). It is then run again with its int32 inputs
    widened to int64 too, as a program written for x64 would have them; the
    integer outputs are compared by value. Where neither runs: a one-line
    :class:`WorkloadError` with the cause and the fix.
    """
    try:
        return _float64_call(workload, host, ints=False)
    except JaxbenchError:
        raise
    except Exception as exc:
        failure: Exception = exc
    if _has_int32(host):
        try:
            return _float64_call(workload, host, ints=True)
        except JaxbenchError:
            raise
        except Exception:  # the first failure names the cause
            pass
    raise WorkloadError(
        f"{workload.label}: the FLOAT64 reference (fn with x64 enabled, on the CPU) raised "
        f"{type(failure).__name__}: {_dtype_cause(failure)}; fn does not run in float64 as it "
        "is: give a NumPy reference function, or a Golden file recorded once with "
        "jaxbench report --workload MODULE:FACTORY --record-golden"
    ) from None


def _dtype_cause(exc: BaseException) -> str:
    """The error's first line, and its first later line about dtypes (jax's detail)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    if not lines:
        return ""
    detail = next((line for line in lines[1:] if "dtype" in line.lower()), "")
    first = lines[0].rstrip(".")
    return f"{first} ... {detail.rstrip('.')}" if detail else first


def expected_output(workload: Workload, host: Args) -> Any:
    """The reference's answer for ``host``; ``None`` for an unchecked workload.

    Raises :class:`WorkloadError` when a NumPy reference raises, and
    :class:`UsageError` for a golden file that is missing or unreadable.
    """
    kind = workload.reference_kind
    if kind == "unchecked":
        return None
    if kind == "golden":
        assert isinstance(workload.reference, Golden)
        return reference.load_golden(Path(workload.reference.path), workload.label)
    if kind == "float64":
        return _float64_output(workload, host)
    ref: Callable[..., Any] = workload.reference  # type: ignore[assignment]
    try:
        answer = ref(*host.args, **host.kwargs)
    except Exception as exc:
        raise WorkloadError(
            f"{workload.label}: the reference raised {type(exc).__name__}: {exc}; "
            "it takes the same host arguments as fn"
        ) from None
    # jax arrays and typed keys a reference may return (jax's own random bits)
    return host_result(answer, f"{workload.label}: the reference's")


def _compare(
    workload: Workload, output: Any, expected: Any, *, raising: bool
) -> reference.Accuracy | None:
    if expected is None:
        return None
    compare = reference.check if raising else reference.measure
    return compare(
        workload.label,
        host_result(output, workload.label),
        expected,
        atol=workload.atol,
        rtol=workload.rtol,
        same_dtype=workload.reference_kind != "float64",
    )


def reference_summary(workload: Workload) -> dict[str, str]:
    """What the output is checked against, for people (report, results)."""
    kind = workload.reference_kind
    if isinstance(workload.reference, Unchecked):
        return {"kind": kind, "detail": workload.reference.reason}
    if isinstance(workload.reference, Golden):
        return {"kind": kind, "detail": str(workload.reference.path)}
    if kind == "float64":
        return {"kind": kind, "detail": "the same function, x64 enabled, on the CPU"}
    ref = workload.reference
    return {"kind": kind, "detail": getattr(ref, "__qualname__", type(ref).__name__)}


# --- captured constants -------------------------------------------------------------


def captured_constants(workload: Workload, call: Args) -> list[str]:
    """A warning per large array ``fn`` closes over (a constant of the compiled program).

    XLA may fold such constants away or copy them on every call (jax issues
    #10596, #23479); a benchmark of that program is not one of the real call.
    Only for ``jit=True`` workloads (the harness traces ``fn`` itself).
    """
    if not workload.jit:
        return []
    options = JitOptions.of(workload)
    try:
        wrapped = options.wrap(workload.fn, call)
        if isinstance(wrapped, pytrees.FilteredJit):
            static, donated, kept = wrapped.split(call.args, call.kwargs)
            closed = jax.make_jaxpr(functools.partial(wrapped._inner, static))(donated, kept)
        else:
            statics = {k: v for k, v in call.kwargs.items() if k in workload.static_argnames}
            dyn_kwargs = {k: v for k, v in call.kwargs.items() if k not in statics}
            fn = functools.partial(workload.fn, **statics) if statics else workload.fn
            closed = jax.make_jaxpr(fn, static_argnums=workload.static_argnums)(
                *call.args, **dyn_kwargs
            )
    except Exception:  # the first call reports the real error
        return []
    found = []
    for const in closed.consts:
        nbytes = int(getattr(const, "nbytes", 0) or 0)
        if nbytes >= CAPTURED_WARN_BYTES:
            dtype = getattr(const, "dtype", "?")
            found.append(f"{dtype}{list(np.shape(const))} ({nbytes} bytes)")
    if not found:
        return []
    return [
        f"{workload.label}: fn closes over {len(found)} array(s): {', '.join(found)}; they "
        "become constants of the compiled program, which XLA may fold away or copy "
        "(jax issues #10596, #23479). Pass them as arguments instead: return them from "
        "inputs(rng) and take them as parameters of fn"
    ]


# --- jit=False: the work of a function that jits itself -------------------------------


def lower_as_given(workload: Workload, call: Args) -> tuple[Any, list[str]]:
    """A ``jit=False`` workload's compiled program, for XLA's work figures, and why not.

    ``fn.trace(...).lower().compile()`` (``jax.jit``, ``nnx.jit``) or
    ``fn.lower(...).compile()`` (``eqx.filter_jit``) on the call's arguments,
    run before the call (a function that donates its arguments deletes them).
    Returns ``(None, [])`` for a ``jit=True`` workload (the harness compiles
    it), and ``(None, [warning])`` when the work figures cannot be had.
    """
    if workload.jit:
        return None, []
    fn = workload.fn
    name = getattr(fn, "__qualname__", type(fn).__name__)
    skipped = "so XLA's work figures (track_work_*, the report's work) are skipped"
    try:
        if hasattr(fn, "trace"):
            lowered = fn.trace(*call.args, **call.kwargs).lower()
        elif hasattr(fn, "lower"):
            lowered = fn.lower(*call.args, **call.kwargs)
        else:
            return None, [
                f"{workload.label}: jit=False and fn ({name}) has no .trace or .lower (it "
                f"is not a jax.jit, eqx.filter_jit or nnx.jit function), {skipped}; "
                "the times still count"
            ]
        compiled = pytrees.to_xla_compiled(lowered.compile())
    except Exception as exc:
        return None, [
            f"{workload.label}: jit=False and lowering fn ({name}) on the inputs raised "
            f"{type(exc).__name__}: {_first_line(exc)}; {skipped}"
        ]
    if compiled is None:
        return None, [
            f"{workload.label}: jit=False and fn ({name}).lower(...).compile() gave no "
            f"jax.stages.Compiled, {skipped}"
        ]
    return compiled, []


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


def _not_donated_by_fn(workload: Workload, call: Args) -> None:
    """A ``jit=False`` function that donates its own arguments needs ``carry``."""
    tree = {"args": call.args, "kwargs": dict(call.kwargs)}
    for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]:
        if isinstance(leaf, jax.Array) and leaf.is_deleted():
            raise WorkloadError(
                f"{workload.label}: the first call deleted input {pytrees.path_text(path)} "
                "(fn donates it), so the next call would get a deleted array; give "
                "carry=(args, output) -> next args that threads the state"
            )


def _next_calls(workload: Workload, fn: Callable[..., Any], call_args: Args, output: Any) -> Caller:
    """The calls after the first: its arguments again, or ``carry``'s from its output."""
    if workload.carry is None:
        _not_donated_by_fn(workload, call_args)
        return Caller(fn, call_args)
    next_args = as_args(workload.carry(call_args, output), f"{workload.label}: carry")
    return Caller(fn, next_args, workload.carry)


def warmup_calls(workload: Workload) -> int:
    """Warm-up calls before the steady state (:data:`WARMUP_CALLS`, or
    :data:`WARMUP_CALLS_COMPILING` for a workload declared ``compiles_every_call``)."""
    return WARMUP_CALLS_COMPILING if workload.compiles_every_call else WARMUP_CALLS


def warm_compiles(workload: Workload, call: Caller, *, calls: int = COUNTED_CALLS) -> float:
    """Backend compiles per warm call: counted over ``calls`` calls after the warm-up.

    0 for a workload that is warm (a compile during its warm samples fails
    it), the kernels it builds per call for one declared ``compiles_every_call``.
    """
    for _ in range(warmup_calls(workload)):
        jax.block_until_ready(call())
    with compile_events() as compiles:
        for _ in range(calls):
            jax.block_until_ready(call())
    return compiles.count / calls


# --- preparation (shared by the report and the asv helper) --------------------------


@dataclass
class Prepared:
    """A workload placed, called once, checked and warmed up: ready to be timed."""

    workload: Workload
    placed: Placed
    #: The call to time; with ``carry`` its arguments advance on every call.
    call: Caller
    #: Waits for the whole output: ``jax.block_until_ready``, or a single
    #: array's own ``block_until_ready()`` (the same wait without jax's
    #: Python tree walk; ``bench/bench_fidelity.py``).
    block: Callable[[Any], Any]
    expected: Any
    accuracy: reference.Accuracy | None
    first: FirstCall | None
    compiled: Any
    warnings: list[str] = field(default_factory=list)
    compiles_at_ready: int = 0


def prepare(
    workload: Workload,
    *,
    fresh: bool = False,
    warmup: int | None = None,
    clock: Clock = time.perf_counter,
) -> Prepared:
    """Place, call once (``fresh``: a timed first call of a fresh specialization),
    check the answer, and warm up.

    Raises :class:`ReferenceMismatch` on a wrong answer and
    :class:`WorkloadError` when the workload cannot be run here.
    """
    if workload.compiles_every_call:  # each call's compile is timed, never a cache load
        disable_persistent_cache()
    placed = place(workload)
    expected = expected_output(workload, placed.host)
    call_args = placed.call_args
    warnings = captured_constants(workload, call_args)
    options = JitOptions.of(workload)
    if fresh:
        given, note = lower_as_given(workload, call_args)  # before the call: it may donate
        warnings.extend(note)
        stages, fn, compiled, output = first_call(
            workload.fn, call_args, options=options, clock=clock
        )
        compiled = compiled if compiled is not None else given
    else:
        stages, compiled = None, None
        fn = options.wrap(workload.fn, call_args)
        try:
            output = fn(*call_args.args, **call_args.kwargs)
            jax.block_until_ready(output)
        except Exception as exc:
            raise WorkloadError(
                f"{workload.label}: the first call raised {type(exc).__name__}: "
                f"{str(exc).strip().splitlines()[0] if str(exc).strip() else ''}; "
                "fix fn, its inputs or their placement"
            ) from exc
    accuracy = _compare(workload, output, expected, raising=True)
    call = _next_calls(workload, fn, call_args, output)
    block: Callable[[Any], Any] = jax.block_until_ready
    if isinstance(output, jax.Array):  # one array is the whole output
        block = operator.methodcaller("block_until_ready")
    for _ in range(warmup_calls(workload) if warmup is None else warmup):
        block(call())
    return Prepared(
        workload=workload,
        placed=placed,
        call=call,
        block=block,
        expected=expected,
        accuracy=accuracy,
        first=stages,
        compiled=compiled,
        warnings=warnings,
        compiles_at_ready=compile_count(),
    )


# --- the whole protocol (jaxbench report) -------------------------------------------


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
    accuracy: reference.Accuracy | None
    inputs: dict[str, dict[str, Any]]
    output_shapes: dict[str, list[int]]
    work: Any
    warnings: tuple[str, ...]
    #: Backend compiles per warm call (0 unless declared ``compiles_every_call``).
    compiles_per_call: float = 0.0


def leaf_summary(tree: Any) -> dict[str, dict[str, Any]]:
    """``{path: {"shape", "dtype"}}`` of every leaf (Python scalars: their type)."""
    out: dict[str, dict[str, Any]] = {}
    for path, leaf in reference.leaves(tree):
        dtype = getattr(leaf, "dtype", None)
        out[path] = {
            "shape": list(np.shape(leaf)) if dtype is not None else [],
            "dtype": str(dtype) if dtype is not None else type(leaf).__name__,
        }
    return out


def input_summary(host: Args) -> dict[str, dict[str, Any]]:
    """Every input leaf: ``/args/0/w1``, ``/kwargs/mask``."""
    return leaf_summary({"args": host.args, "kwargs": dict(host.kwargs)})


def _work(compiled: Any) -> Any:
    from jaxbench.measure import xla_analysis

    if compiled is None:
        return None
    try:
        return xla_analysis.work_figures(compiled)
    except WorkloadError:
        return None


def measure(
    workload: Workload, *, repeats: int = 7, clock: Clock = time.perf_counter
) -> Measurement:
    """Run the protocol; raise :class:`~jaxbench.errors.ReferenceMismatch` on a wrong answer."""
    if repeats < 1:
        raise ValueError(f"at least one repeat is required, got repeats={repeats}")
    prepared = prepare(workload, fresh=True, clock=clock)
    assert prepared.first is not None
    with compile_events() as compiles:
        result, samples = synchronized_samples(
            prepared.call,
            repeats=repeats,
            clock=clock,
            compiles_allowed=workload.compiles_every_call,
        )
    if workload.carry is None:  # the same inputs again: the same answer
        accuracy = _compare(workload, result, prepared.expected, raising=True)
    else:  # the state moved on: the checked answer is the first call's
        accuracy = prepared.accuracy
        _finite(workload, result)
    # before the next call: with carry it donates this output's buffers
    shapes = {
        path: list(np.shape(leaf))
        for path, leaf in reference.leaves(host_result(result, workload.label))
    }
    handle = handle_only_seconds(prepared.call, clock=clock)
    return Measurement(
        workload=workload,
        backend=prepared.placed.backend,
        platform=prepared.placed.platform,
        device_count=prepared.placed.device_count,
        versions=versions(),
        first_call=prepared.first,
        warm_samples=tuple(samples),
        handle_only_diagnostic=handle,
        accuracy=accuracy,
        inputs=input_summary(prepared.placed.host),
        output_shapes=shapes,
        work=_work(prepared.compiled),
        warnings=(*prepared.warnings, *_declared_but_warm(workload, compiles.count, repeats)),
        compiles_per_call=compiles.count / repeats,
    )


def _declared_but_warm(workload: Workload, compiles: int, calls: int) -> list[str]:
    if not workload.compiles_every_call or compiles:
        return []
    return [
        f"{workload.label}: declared compiles_every_call, but jax compiled nothing during "
        f"{calls} warm call(s); drop the declaration, so that a recompile fails the benchmark"
    ]


def _finite(workload: Workload, output: Any) -> None:
    for path, leaf in reference.leaves(host_result(output, workload.label)):
        if not pytrees.is_array(leaf):
            continue
        leaf = np.asarray(leaf)
        if jnp.issubdtype(leaf.dtype, jnp.inexact) and not np.all(np.isfinite(leaf)):
            raise ReferenceMismatch(
                f"{workload.label} output {path}: non-finite values after the warm calls; "
                "the threaded state diverged: fix the step or its inputs"
            )


def first_output(workload: Workload) -> Any:
    """The output of one call on the seeded inputs, as host arrays (to record a golden file)."""
    placed = place(workload)
    call_args = placed.call_args
    fn = JitOptions.of(workload).wrap(workload.fn, call_args)
    return host_result(fn(*call_args.args, **call_args.kwargs), workload.label)


# --- the figures (asv's track_* benchmarks) -----------------------------------------


@dataclass(frozen=True)
class Figures:
    """The first call, the accuracy and the compiled program of one workload."""

    first: FirstCall
    accuracy: reference.Accuracy | None
    #: Why the answer does not count (a wrong answer), or "".
    failure: str
    compiled: Any
    platform: str
    warnings: tuple[str, ...]
    #: Backend compiles per warm call (:func:`warm_compiles`), or None with
    #: ``compiles_failure`` saying why the warm calls could not be counted.
    compiles_per_call: float | None = None
    compiles_failure: str = ""


def figures(workload: Workload) -> Figures:
    """A fresh first call, XLA's compiled program and the accuracy (measured, not raised)."""
    placed = place(workload)
    call_args = placed.call_args
    warnings = captured_constants(workload, call_args)
    given, note = lower_as_given(workload, call_args)  # before the call: it may donate
    warnings.extend(note)
    stages, fn, compiled, output = first_call(
        workload.fn, call_args, options=JitOptions.of(workload)
    )
    compiled = compiled if compiled is not None else given
    failure = ""
    accuracy = None
    try:
        expected = expected_output(workload, placed.host)
        accuracy = _compare(workload, output, expected, raising=False)
    except (ReferenceMismatch, UsageError) as exc:
        failure = str(exc)
    if accuracy is not None and accuracy.tolerance_used > 1.0:
        try:
            _compare(workload, output, expected, raising=True)
        except ReferenceMismatch as exc:
            failure = f"{exc}; times of a wrong answer do not count"
    compiles, compiles_failure = _counted_compiles(workload, fn, call_args, output)
    for line in warnings:
        print(f"jaxbench: warning: {line}", file=sys.stderr)
    return Figures(
        first=stages,
        accuracy=accuracy,
        failure=failure,
        compiled=compiled,
        platform=placed.platform,
        warnings=tuple(warnings),
        compiles_per_call=compiles,
        compiles_failure=compiles_failure,
    )


def _counted_compiles(
    workload: Workload, fn: Callable[..., Any], call_args: Args, output: Any
) -> tuple[float | None, str]:
    """:func:`warm_compiles` after the first call, or why the warm calls failed (one line)."""
    try:
        return warm_compiles(workload, _next_calls(workload, fn, call_args, output)), ""
    except JaxbenchError as exc:
        return None, str(exc)
    except Exception as exc:
        return None, (
            f"{workload.label}: a warm call raised {type(exc).__name__}: {_first_line(exc)}; "
            "fix fn, its inputs or carry"
        )


# --- memory of the workload ---------------------------------------------------------


def _release_free_heap() -> None:
    """Hand the C heap's free pages back to the kernel (glibc's ``malloc_trim(0)``).

    A process forked to measure a workload inherits its parent's heap, free
    chunks included, already resident: what the workload allocates into them
    does not raise the RSS. How much is free depends on what the parent did
    before the fork, so the rise read 10.8 or 13.0 MiB for the same Predict
    workload; returned first, every allocation counts, and it read 15.0 to
    15.4 MiB (docs/measured.md, "Workload memory: the inherited free heap").
    A no-op where the C library has no ``malloc_trim`` (musl, macOS).
    """
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return
    trim.argtypes = [ctypes.c_size_t]
    trim(0)


def _reset_peak_rss() -> int | None:
    """Reset the kernel's peak-RSS mark to the current RSS; the RSS in bytes (Linux)."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
        return _status_bytes("VmHWM")
    except OSError:
        return None


def _status_bytes(field_name: str) -> int | None:
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith(f"{field_name}:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _device_bytes(key: str) -> int | None:
    stats = jax.devices()[0].memory_stats()
    if not stats or key not in stats:
        return None
    return int(stats[key])


def device_reports_memory() -> bool:
    """Whether the default device reports ``memory_stats()`` (GPU/TPU yes, CPU no)."""
    return _device_bytes("bytes_in_use") is not None


@dataclass(frozen=True)
class WorkloadMemory:
    """What placing, compiling and running the workload adds to the process.

    ``peak_rss_rise_bytes``: the kernel's peak-RSS mark after the workload
    minus the RSS before it (after jax's backend started and the C heap's free
    pages were handed back: :func:`_release_free_heap`); ``None`` where the
    mark cannot be reset (non-Linux). ``device_peak_bytes``: the device's
    ``peak_bytes_in_use`` minus ``bytes_in_use`` before; ``None`` where the
    backend reports no ``memory_stats()`` (the CPU).
    """

    peak_rss_rise_bytes: int | None
    device_peak_bytes: int | None


#: Calls :func:`workload_memory` makes after the first; a workload declared
#: ``compiles_every_call`` makes fewer: each call compiles (seconds), and the
#: compiler's own peak is there from the first compile on.
MEMORY_CALLS = 10
MEMORY_CALLS_COMPILING = 3


def workload_memory(workload: Workload, calls: int | None = None) -> WorkloadMemory:
    """Measure what the workload adds, in this (fresh) process."""
    if calls is None:
        calls = MEMORY_CALLS_COMPILING if workload.compiles_every_call else MEMORY_CALLS
    import jax.numpy as jnp

    jax.block_until_ready(jax.jit(lambda v: v + 1)(jnp.zeros((3,), jnp.int32)))  # backend up
    device_before = _device_bytes("bytes_in_use")
    _release_free_heap()
    rss_before = _reset_peak_rss()
    prepared = prepare(workload, warmup=calls)
    prepared.block(prepared.call())
    rss_peak = _status_bytes("VmHWM") if rss_before is not None else None
    device_peak = _device_bytes("peak_bytes_in_use")
    return WorkloadMemory(
        peak_rss_rise_bytes=None
        if rss_peak is None or rss_before is None
        else max(rss_peak - rss_before, 0),
        device_peak_bytes=None
        if device_peak is None or device_before is None
        else max(device_peak - device_before, 0),
    )
