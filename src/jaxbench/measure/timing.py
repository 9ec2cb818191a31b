"""Synchronized timing of JAX calls.

The boundaries, as in the lesson:

* inputs are placed on their device(s) and waited for before any clock starts;
* the first call of a *fresh* specialization is kept apart from warm calls and
  broken down with jax's AOT API into trace, lower, compile and first execute;
* every warm interval is the call plus ``jax.block_until_ready`` on the whole
  output pytree;
* a handle-only interval (call, no wait) exists only as a labelled diagnostic.

"Fresh" is guaranteed, not assumed: :func:`first_call` clears jax's in-memory
caches (``jax.clear_caches()``), disables the persistent compilation cache,
and fails unless jax's monitoring reports a backend compile during the
compile stage. Warm samples fail when jax reports any compile while they run.
The first call's stages are timed as ``timeit`` (and so asv) times warm calls:
after a full collection, with Python's garbage collector off
(:func:`collector_paused`), so they do not pay for collecting what earlier
workloads in the process left behind.

Clocks are injectable (any ``() -> float`` in seconds) so tests can drive them.
"""

from __future__ import annotations

import functools
import gc
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import jax

from jaxbench.errors import JaxbenchError, TooFewDevices, WorkloadError
from jaxbench.measure import pytrees
from jaxbench.measure.workloads import Args, Workload, as_args

__all__ = [
    "BACKEND_COMPILE_EVENT",
    "RECOMPILE_FIX",
    "Caller",
    "Clock",
    "FirstCall",
    "JitOptions",
    "Placed",
    "collector_paused",
    "compile_count",
    "compile_events",
    "disable_persistent_cache",
    "dynamic",
    "first_call",
    "handle_only_seconds",
    "place",
    "synchronized_samples",
]

Clock = Callable[[], float]
BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
#: The fix a recompile during warm samples names (the report, asv's teardown).
RECOMPILE_FIX = (
    "keep shapes, dtypes and static arguments fixed between calls; or, for a library "
    "API that compiles at every call (a sampler's run), declare "
    "Workload(..., jit=False, compiles_every_call=True) to time it whole, compile included"
)


# --- compile monitoring -------------------------------------------------------

_lock = threading.Lock()
_compiles = 0
_listening = False


def _on_event(event: str, duration_secs: float, **kwargs: str | int) -> None:
    global _compiles
    if event == BACKEND_COMPILE_EVENT:
        with _lock:
            _compiles += 1


def _ensure_listener() -> None:
    global _listening
    with _lock:
        if not _listening:
            jax.monitoring.register_event_duration_secs_listener(_on_event)
            _listening = True


def compile_count() -> int:
    """Backend compiles jax has reported in this process since the listener started."""
    _ensure_listener()
    return _compiles


@dataclass
class CompileCount:
    """Backend compiles jax reported inside a :func:`compile_events` block."""

    count: int = 0


@contextmanager
def compile_events() -> Iterator[CompileCount]:
    """Count the backend compiles jax reports (``jax.monitoring``) in a block."""
    _ensure_listener()
    counter = CompileCount()
    start = _compiles
    try:
        yield counter
    finally:
        counter.count = _compiles - start


# --- placement ------------------------------------------------------------------


@dataclass(frozen=True)
class Placed:
    """Inputs on their device(s), ready; and where they are.

    ``args``/``kwargs`` are what the call gets (static arguments as given,
    arrays on their devices); ``host`` is the builder's host values.
    """

    args: tuple[Any, ...]
    kwargs: Mapping[str, Any]
    host: Args
    backend: str
    platform: str
    device_count: int

    @property
    def call_args(self) -> Args:
        return Args(self.args, self.kwargs)


def _spec_for(placement: Any, key: int | str) -> Any:
    """One argument's placement spec from the workload's ``placement``."""
    if isinstance(placement, Mapping):
        return placement.get(key)
    if isinstance(placement, list | tuple):
        return placement[key] if isinstance(key, int) and key < len(placement) else None
    return placement


def _target(spec: Any, devices: tuple[jax.Device, ...], label: str) -> Any:
    if spec is None:
        return devices[0]
    if callable(spec) and not isinstance(spec, jax.sharding.Sharding | jax.Device):
        spec = spec(devices)
    if not isinstance(spec, jax.sharding.Sharding | jax.Device):
        raise WorkloadError(
            f"{label}: placement gave {type(spec).__name__}; give a jax.Device, a "
            "jax.sharding.Sharding, or a function of the devices returning one"
        )
    return spec


def place(workload: Workload, device: Any | None = None) -> Placed:
    """Put the workload's seeded inputs on their devices and wait for them.

    Array leaves (NumPy arrays and scalars, jax arrays, PRNG keys) are copied
    with ``jax.device_put(..., may_alias=False)`` onto the argument's device
    or sharding: buffers of this call sequence's own, so that donating them
    never deletes an array the user's ``inputs`` returned (``jax.device_put``
    of an array already on that device is otherwise the same buffer). Static
    arguments and other leaves (Python scalars, functions, strings) are
    passed as they are. ``host`` is a private host copy (NumPy) for the
    reference. An array that a donated argument shares with another input is
    a :class:`WorkloadError` naming both leaves.
    """
    built = workload.host_args()
    available = tuple(jax.devices())
    if len(available) < workload.devices:
        raise TooFewDevices(
            f"{workload.label}: needs {workload.devices} devices, {len(available)} available; "
            "set XLA_FLAGS=--xla_force_host_platform_device_count="
            f"{workload.devices} before jax starts"
        )
    twice = pytrees.donated_twice(built.args, built.kwargs, workload.donate_argnums)
    if twice is not None:
        raise WorkloadError(
            f"{workload.label}: inputs {twice[0]} and {twice[1]} are the same array and "
            f"donate_argnums={workload.donate_argnums} donates it: XLA cannot donate a buffer "
            "that the same call gets twice; return a copy for one of them (x.copy())"
        )
    devices = available[: workload.devices]
    if device is not None:
        devices = (device, *devices[1:])
    static = set(workload.static_argnums) | set(workload.static_argnames)
    memo: dict[int, Any] = {}

    def put(key: int | str, value: Any) -> Any:
        if key in static:
            return value
        spec = _spec_for(workload.placement, key)
        target = _target(spec, devices, workload.label)
        # no placement asked for: a jax array the user placed (sharded) stays where it is
        keep = spec is None and device is None
        return pytrees.device_copies(value, target, memo, keep_placed=keep)

    args = tuple(put(i, value) for i, value in enumerate(built.args))
    kwargs = {name: put(name, value) for name, value in built.kwargs.items()}
    jax.block_until_ready(pytrees.partition((args, kwargs))[0])
    used = {
        d
        for leaf in jax.tree_util.tree_leaves((args, kwargs))
        if isinstance(leaf, jax.Array)
        for d in leaf.devices()
    }
    first = devices[0]
    return Placed(
        args=args,
        kwargs=kwargs,
        host=Args(*pytrees.host_copy((built.args, dict(built.kwargs)))),
        backend=str(first),
        platform=first.platform,
        device_count=max(len(used), 1),
    )


def dynamic(args: Args, static_argnums: Sequence[int], static_argnames: Sequence[str]) -> Args:
    """``args`` without the static ones (what an AOT-compiled executable takes)."""
    return Args(
        tuple(a for i, a in enumerate(args.args) if i not in static_argnums),
        {k: v for k, v in args.kwargs.items() if k not in static_argnames},
    )


# --- the first call -------------------------------------------------------------


@dataclass(frozen=True)
class FirstCall:
    """The first call of a fresh specialization, stage by stage (seconds).

    With ``jit=False`` the stages cannot be told apart: the whole first call
    is ``first_execute`` and the others are ``None``.
    """

    trace: float | None
    lower: float | None
    compile: float | None
    first_execute: float
    backend_compiles: int

    @property
    def total(self) -> float:
        return (
            (self.trace or 0.0) + (self.lower or 0.0) + (self.compile or 0.0) + (self.first_execute)
        )

    @property
    def freshness(self) -> str:
        return (
            "jax.clear_caches() and no persistent compilation cache before the call; "
            f"jax.monitoring reported {self.backend_compiles} backend compile(s) during it"
        )


def disable_persistent_cache() -> None:
    """Turn jax's persistent compilation cache off in this process: every compile is one."""
    jax.config.update("jax_enable_compilation_cache", False)


@dataclass(frozen=True)
class Lowerable:
    """What jax's AOT API is given for one call: ``target.trace(*args.args, **args.kwargs)``.

    ``static_argnums``/``static_argnames`` are those of ``target`` (dropped
    from the compiled executable's arguments); ``finish`` turns the
    executable's output into ``fn``'s (static output leaves put back).
    """

    target: Any
    args: Args
    static_argnums: tuple[int, ...]
    static_argnames: tuple[str, ...]
    finish: Callable[[Any], Any]


def _same(output: Any) -> Any:
    return output


@dataclass(frozen=True)
class JitOptions:
    """How the harness calls ``fn``: jitted with these options, or as it is."""

    jit: bool = True
    static_argnums: tuple[int, ...] = ()
    static_argnames: tuple[str, ...] = ()
    donate_argnums: tuple[int, ...] = ()
    label: str = "fn"

    @classmethod
    def of(cls, workload: Workload) -> JitOptions:
        return cls(
            workload.jit,
            workload.static_argnums,
            workload.static_argnames,
            workload.donate_argnums,
            workload.label,
        )

    def wrap(self, fn: Callable[..., Any], call: Args | None = None) -> Callable[..., Any]:
        """``fn`` as the harness calls it: ``jax.jit`` with the options, ``fn`` itself
        (``jit=False``), or a :class:`~jaxbench.measure.pytrees.FilteredJit` where
        ``call`` (the call's arguments) or the output has leaves that are not
        arrays (an equinox module's activation, a string): those are static.
        """
        if not self.jit:
            return fn
        jitted = jax.jit(
            fn,
            static_argnums=self.static_argnums,
            static_argnames=self.static_argnames,
            donate_argnums=self.donate_argnums,
        )
        if call is None:
            return jitted
        run = dynamic(call, self.static_argnums, self.static_argnames)
        if not pytrees.has_static_leaves((run.args, dict(run.kwargs))):
            try:  # a trace (jax caches it for the call): are the outputs all arrays?
                jitted.trace(*call.args, **call.kwargs)
                return jitted
            except Exception as exc:
                if not isinstance(exc, TypeError) or "not a valid JAX type" not in str(exc):
                    return jitted  # the call itself reports the real error
        return pytrees.FilteredJit(
            fn,
            static_argnums=self.static_argnums,
            static_argnames=self.static_argnames,
            donate_argnums=self.donate_argnums,
            label=self.label,
        )

    def lowerable(self, wrapped: Callable[..., Any], call: Args) -> Lowerable:
        """What jax's AOT API gets for ``wrapped`` (from :meth:`wrap`) called on ``call``."""
        if isinstance(wrapped, pytrees.FilteredJit):
            static, donated, kept = wrapped.split(call.args, call.kwargs)
            return Lowerable(
                wrapped.jitted,
                Args((static, donated, kept)),
                (0,),
                (),
                functools.partial(wrapped.finish, static),
            )
        return Lowerable(wrapped, call, self.static_argnums, self.static_argnames, _same)


def first_call(
    fn: Callable[..., Any],
    args: Sequence[Any] | Args,
    *,
    options: JitOptions = JitOptions(),
    clock: Clock = time.perf_counter,
) -> tuple[FirstCall, Any, Any, Any]:
    """Trace, lower, compile and run ``jax.jit(fn)`` once, from cold.

    Returns ``(stages, callable, compiled, output)``: the jitted function shares
    the compiled executable (jax's in-memory cache), so later warm calls of
    it run the very program whose first call was timed. With ``jit=False``
    ``fn`` is called once as it is (``compiled`` is ``None``).
    """
    call = args if isinstance(args, Args) else Args(tuple(args))
    try:
        return _first_call(fn, call, options, clock)
    except JaxbenchError:
        raise
    except Exception as exc:
        raise WorkloadError(
            f"the first call raised {type(exc).__name__}: {_first_line(exc)}; "
            "fix fn, its inputs or their placement"
        ) from exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


@contextmanager
def collector_paused() -> Iterator[None]:
    """A full collection, then Python's garbage collector off until the block ends.

    ``timeit`` (and so asv) times this way. A collection's cost grows with
    everything alive in the process, and when one starts depends on what ran
    before: the suites of one benchmark module are measured one after the
    other in one process, and with the collector on, the first workload's
    trace paid for a collection of what importing jax left (an MCMC sampler's
    trace: 66 to 72 ms first in the process, 36 to 43 ms with the collector
    paused; docs/measured.md). Collecting first also frees the cycles that
    ``jax.clear_caches()`` let go of.
    """
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _first_call(
    fn: Callable[..., Any], call: Args, options: JitOptions, clock: Clock
) -> tuple[FirstCall, Any, Any, Any]:
    disable_persistent_cache()
    jitted = options.wrap(fn, call)
    jax.clear_caches()
    with collector_paused():
        return _timed_first_call(fn, jitted, call, options, clock)


def _timed_first_call(
    fn: Callable[..., Any],
    jitted: Callable[..., Any],
    call: Args,
    options: JitOptions,
    clock: Clock,
) -> tuple[FirstCall, Any, Any, Any]:
    if not options.jit:
        with compile_events() as compiles:
            t0 = clock()
            output = fn(*call.args, **call.kwargs)
            jax.block_until_ready(output)
            t1 = clock()
        return FirstCall(None, None, None, t1 - t0, compiles.count), fn, None, output
    aot = options.lowerable(jitted, call)
    with compile_events() as compiles:
        t0 = clock()
        traced = aot.target.trace(*aot.args.args, **aot.args.kwargs)
        t1 = clock()
        lowered = traced.lower()
        t2 = clock()
        compiled = lowered.compile()
        t3 = clock()
        run = dynamic(aot.args, aot.static_argnums, aot.static_argnames)
        output = aot.finish(compiled(*run.args, **run.kwargs))
        jax.block_until_ready(output)
        t4 = clock()
    if compiles.count < 1:
        raise WorkloadError(
            "the first call did not compile (jax reported no backend compile); "
            "a cached executable would make first-call times meaningless: "
            "unset JAX_COMPILATION_CACHE_DIR and run in a fresh process"
        )
    stages = FirstCall(
        trace=t1 - t0,
        lower=t2 - t1,
        compile=t3 - t2,
        first_execute=t4 - t3,
        backend_compiles=compiles.count,
    )
    return stages, jitted, compiled, output


# --- warm calls -----------------------------------------------------------------


class Caller:
    """``fn`` with its current arguments, called with no arguments.

    With ``carry``, each call's output gives the next call's arguments
    (``carry(args, output)``): a training step's state is threaded, and a
    donated buffer is never passed twice.
    """

    __slots__ = ("args", "carry", "fn", "last")

    def __init__(
        self,
        fn: Callable[..., Any],
        args: Sequence[Any] | Args = (),
        carry: Callable[[Args, Any], Any] | None = None,
    ) -> None:
        self.fn = fn
        self.args = args if isinstance(args, Args) else Args(tuple(args))
        self.carry = carry
        self.last: Any = None

    def __call__(self) -> Any:
        # The hot path of every timed call: no more Python than a user's own
        # loop (bench/bench_carry_path.py measures it against one, in-process).
        args = self.args
        output = self.fn(*args.args, **args.kwargs)
        # As in a user's loop (``params, state, loss = step(...)``), the
        # previous output is released only once the next call has returned.
        self.last = output
        carry = self.carry
        if carry is not None:
            after = carry(args, output)
            if type(after) is tuple:
                self.args = Args(after, {})
            elif type(after) is Args:
                self.args = after
            else:
                self.args = as_args(after, "carry")
        return output


def synchronized_samples(
    fn: Callable[..., Any] | Caller,
    args: Sequence[Any] | Args = (),
    repeats: int = 7,
    *,
    clock: Clock = time.perf_counter,
    compiles_allowed: bool = False,
) -> tuple[Any, list[float]]:
    """Time ``repeats`` warm calls, each up to ``block_until_ready`` on the whole output.

    ``fn`` is a function called with ``args``, or a :class:`Caller` (then
    ``args`` is ignored and its state advances). Raises ``ValueError`` when
    ``repeats < 1`` and :class:`WorkloadError` when jax compiled anything
    while the samples ran (they would not be warm), unless ``compiles_allowed``
    (a workload declared ``compiles_every_call``: its compiles are its work).
    """
    if repeats < 1:
        raise ValueError(f"at least one repeat is required, got repeats={repeats}")
    call = fn if isinstance(fn, Caller) else Caller(fn, args)
    samples: list[float] = []
    result: Any = None
    with compile_events() as compiles:
        for _ in range(repeats):
            start = clock()
            result = call()
            jax.block_until_ready(result)
            samples.append(clock() - start)
    if compiles.count and not compiles_allowed:
        raise WorkloadError(
            f"the function recompiled {compiles.count} time(s) during warm samples; {RECOMPILE_FIX}"
        )
    return result, samples


def handle_only_seconds(
    fn: Callable[..., Any] | Caller,
    args: Sequence[Any] | Args = (),
    *,
    clock: Clock = time.perf_counter,
) -> float:
    """DIAGNOSTIC ONLY: the interval until the call returns a handle, without waiting.

    It is not a measurement of the work; the call is drained afterwards so the
    next interval starts idle.
    """
    call = fn if isinstance(fn, Caller) else Caller(fn, args)
    start = clock()
    handle = call()
    elapsed = clock() - start
    jax.block_until_ready(handle)
    return elapsed
