"""asv benchmarks for JAX workloads, written by one call.

A suite author writes only the workload::

    # benchmarks/my_suite.py
    from jaxbench.measure.asvsuite import jax_suite

    Predict, PredictFigures = jax_suite("Predict", "predict", params={"rows": [64, 96]})

or, for a workload of their own, ``jax_suite("Model", make_workload, params=...)``
where ``make_workload(**params)`` returns a :class:`jaxbench.measure.Workload`.

``Predict`` (timed) gets:

* ``time_warm``: the warm call, each timed call ending in a wait for the
  whole output (``jax.block_until_ready`` on the pytree; for a single array,
  that array's own ``block_until_ready()``, the same wait without jax's tree
  walk); 50 calls per sample, back to back, as in a real loop;
* ``peakmem_call``: the process's peak memory around the call (the whole
  process: interpreter, jax, XLA's compiler).

Its first call in a process places the inputs, waits for them, compiles,
checks the answer against the reference and warms up, **once per
process and parameter set** (a module-level cache), inside asv's warm-up
phase, which asv never records as a sample. It is deliberately not an asv
``setup``: asv_runner >= 0.3 re-runs a ``setup`` before every timed call,
and the idle gap that leaves between calls lets XLA's worker threads sleep,
which the next call then measures (``bench/bench_fidelity.py``,
``bench/bench_idle_gap.py``). Without setup hooks asv_runner 0.2 and 0.3 time
the same way. A wrong answer, a non-finite output or a wrong shape raises in
that first call: asv records a failure, never a time. ``teardown`` (run
between samples) fails the benchmark if jax compiled anything since the
warm-up: a recompilation during warm samples, unless the workload is declared
``compiles_every_call`` (a library API that builds its kernel at each call:
each sample is then the whole call, compile included). ``jax_suite(...,
number=1)`` makes each sample one call, for a workload whose calls take long.

``PredictFigures`` gets ``track_*`` benchmarks:
first call and its AOT stages, ``max_abs_error`` and ``tolerance_used``,
XLA's cost and memory analysis and HLO op counts (``track_work_*``), the
backend compiles per warm call (``track_compiles_per_call``), and what
the workload itself adds to memory (``track_workload_peak_rss_bytes``,
``track_workload_device_peak_bytes``, each measured in its own process). They are
computed once per asv run in ``setup_cache``, each from a fresh
specialization, and looked up by cheap processes that never start jax.

asv runs ``setup_cache`` in a fresh process that imports only the module of
one benchmark (``asv_runner/setup_cache.py``): the suites of that module are
measured there, one after the other, after jax's start-up was paid
(:func:`_prime_jax`). The suites of the suite's other modules are measured
as their track benchmarks always measured them: each parameter set in a
fresh process forked before jax's backend started (first call and its
stages, accuracy, work figures, in the one process), once per parameter set,
no longer once per ``track_*`` benchmark (:func:`_fresh_figures`). The
workload-memory figures of every suite are measured from there too, before
jax's backend starts: each parameter set in a fresh process of its own (both
figures from one; never in a process that already traced the workload, which
would add nothing the second time), two processes at a time (memory is not
timing). ``jaxbench first-call``'s worker asks for the same figures process
(``JAXBENCH_FIGURES_PROCESS``).

This module imports jax (not its backend) at import time, on purpose: with
asv's ``forkserver`` launch method the server imports the benchmark modules
once and forks a child per benchmark, so each child skips jax's import (about
a second) and starts the backend itself. Importing jax starts no thread and no
backend, so forking after it is safe.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import jax  # pre-imported by asv's forkserver; see the module docstring

from jaxbench.errors import JaxbenchError
from jaxbench.kinds import (
    ACCURACY_TRACKS,
    COMPILE_STAGES,
    COMPILES_TRACK,
    REPEAT,
    UNCHECKED_TRACK,
    WORK_FIGURES,
    WORK_PREFIX,
    WORKLOAD_MEMORY_TRACKS,
)
from jaxbench.measure.forks import (
    backend_started,
    in_fresh_processes,
    refuse_unsafe_fork,
)

__all__ = ["NUMBER", "REPEAT", "ROUNDS", "Figures", "jax_suite"]

WorkloadFactory = Callable[..., Any]

#: Classes made by :func:`jax_suite` in this process, keyed "<module>:<name>"
#: (two benchmark modules may both have a "Model"): key -> (factory, params).
_REGISTRY: dict[str, tuple[WorkloadFactory | str, dict[str, list[Any]]]] = {}

#: Suite key -> asv's name of its figures class, "<module>.<name>Figures",
#: the module relative to the benchmark directory (for the HLO store).
_REGISTRY_MODULES: dict[str, str] = {}

#: Prepared workloads of this process, by (suite, params).
_PREPARED: dict[tuple[str, tuple[Any, ...]], Any] = {}

#: Set to the benchmark directory by a process that runs ``setup_cache`` as
#: asv's own process does (``jaxbench first-call``'s worker): the workload-memory
#: figures are then measured in fresh processes forked from it.
FIGURES_PROCESS = "JAXBENCH_FIGURES_PROCESS"

#: Benchmark format version: bump when what a benchmark measures changes.
VERSION = "1"
#: The workload-memory tracks' own: 2 since each is measured in a process that
#: has not traced the workload (before, a suite of a module other than the one
#: asv's setup_cache imported was measured after its figures: about 0 B); 3
#: since the process hands its inherited free heap back first (every allocation
#: counts: Predict's rise 10.8 or 13.0 MiB -> 15.0 to 15.4 MiB).
MEMORY_VERSION = "3"

#: Calls per timed sample, back to back (no setup hook runs between them).
#: asv's median of 50-call means came closer to a bare synchronized loop's
#: median than one call per sample did (bench/bench_fidelity.py).
NUMBER = 50
#: Rounds = processes per benchmark: a warm call's speed varies between
#: processes more than within one, so several processes are measured.
ROUNDS = 4


@dataclass(frozen=True)
class MemoryFigure:
    """One workload-memory figure as its process measured it: a value, a skip or an error."""

    value: float | None = None
    #: Why asv records n/a (not reported on this backend, too few devices), or "".
    skip: str = ""
    #: What the benchmark fails with (one line, no user traceback), or None.
    error: BaseException | None = None

    def get(self) -> float:
        """The value; raises asv's skip or the error."""
        if self.error is not None:
            raise self.error
        if self.skip or self.value is None:
            raise _skip_now(self.skip)
        return self.value


@dataclass(frozen=True)
class Figures:
    """What the figures process measured for one suite and parameter set."""

    first_call: dict[str, float | None] = field(default_factory=dict)
    accuracy: dict[str, float] = field(default_factory=dict)
    work: dict[str, float | None] = field(default_factory=dict)
    work_backend: str = ""
    #: Why the time figures may not count (a wrong answer), or "" if they do.
    failure: str = ""
    #: Why nothing could be measured (e.g. too few devices), or "".
    skip: str = ""
    #: Why there is no accuracy figure (a workload declared Unchecked), or "".
    unchecked: str = ""
    #: Why there are no work figures (a jit=False function that cannot lower), or "".
    no_work: str = ""
    #: The workload-memory figures, by name, where ``setup_cache`` measured
    #: them in a fresh process (:func:`_all_figures`); empty: each memory
    #: track measures in its own process.
    memory: dict[str, MemoryFigure] = field(default_factory=dict)
    #: Backend compiles per warm call, or None with ``compiles_failure``: why not.
    compiles_per_call: float | None = None
    compiles_failure: str = ""


# --- workload resolution (imports jax only when called) -----------------------


def _make_workload(suite: str, params: Sequence[Any]) -> Any:
    from jaxbench.errors import WorkloadError
    from jaxbench.measure import workloads

    refuse_unsafe_fork()
    factory, param_map = _REGISTRY[suite]
    kwargs = dict(zip(param_map, params, strict=True))
    if isinstance(factory, str):
        return workloads.get(factory, **kwargs)
    made = factory(**kwargs)
    if not isinstance(made, workloads.Workload):
        raise WorkloadError(
            f"{suite}: the factory returned {type(made).__name__}, not a Workload; "
            "return jaxbench.measure.Workload(...)"
        )
    return made


def _skip(reason: str) -> NotImplementedError:
    return NotImplementedError(reason)


def _prepare(suite: str, params: tuple[Any, ...]) -> Any:
    """Place, compile, check and warm up once per process and parameter set."""
    key = (suite, params)
    cached = _PREPARED.get(key)
    if isinstance(cached, BaseException):
        raise cached
    if cached is not None:
        return cached
    try:
        prepared = _prepare_uncached(suite, params)
    except BaseException as exc:
        _PREPARED[key] = exc
        raise
    _PREPARED[key] = prepared
    return prepared


def _prepare_uncached(suite: str, params: tuple[Any, ...]) -> Any:
    from jaxbench.errors import TooFewDevices
    from jaxbench.measure import protocol

    try:
        workload = _make_workload(suite, params)
        prepared = protocol.prepare(workload)
    except TooFewDevices as exc:
        raise _skip(str(exc)) from None
    for line in prepared.warnings:
        print(f"jaxbench: warning: {line}", file=sys.stderr)
    return prepared


def _check_no_recompile(prepared: Any, suite: str) -> None:
    """Fail when jax compiled during the warm samples, unless the workload is
    declared ``compiles_every_call`` (then its compiles are its work, counted
    by ``track_compiles_per_call``)."""
    from jaxbench.measure.timing import RECOMPILE_FIX, compile_count

    compiled = compile_count() - prepared.compiles_at_ready
    if compiled and not prepared.workload.compiles_every_call:
        from jaxbench.errors import WorkloadError

        prepared.compiles_at_ready = compile_count()
        raise WorkloadError(
            f"{suite}: jax compiled {compiled} time(s) during warm samples; {RECOMPILE_FIX}"
        )


# --- the figures process --------------------------------------------------------


def _figures_for(suite: str, params: tuple[Any, ...]) -> Figures:
    from jaxbench.errors import TooFewDevices
    from jaxbench.measure import protocol, xla_analysis
    from jaxbench.measure.workloads import Unchecked
    from jaxbench.store import checks, hlo_store

    try:
        workload = _make_workload(suite, params)
        measured = protocol.figures(workload)
    except TooFewDevices as exc:
        return Figures(skip=str(exc))
    stages = measured.first
    first: dict[str, float | None] = {
        "first_call": stages.total,
        "trace": stages.trace,
        "lower": stages.lower,
        "compile": stages.compile,
        "first_execute": stages.first_execute,
    }
    work_values: dict[str, float | None] = {}
    if measured.compiled is not None:
        work = xla_analysis.work_figures(measured.compiled)
        work_values = {name: _float(getattr(work, name)) for name in WORK_FIGURES}
        benchmark_prefix = _REGISTRY_MODULES[suite]
        try:
            hlo_store.save_hlo(
                benchmark_prefix,
                tuple(str(p) for p in params),
                xla_analysis.hlo_text(measured.compiled),
                environ=os.environ,
            )
        except JaxbenchError as exc:  # the figures still count; only the HLO is not kept
            print(f"jaxbench: HLO not kept: {exc}", file=sys.stderr)
    accuracy = measured.accuracy
    unchecked = ""
    if isinstance(workload.reference, Unchecked):
        unchecked = f"{workload.label} is unchecked: {workload.reference.reason}"
        try:  # asv's results hold numbers only: the reason is kept beside them
            checks.save_unchecked(
                _REGISTRY_MODULES[suite],
                tuple(str(p) for p in params),
                workload.reference.reason,
                environ=os.environ,
            )
        except JaxbenchError as exc:  # the figures still count; only the reason is not kept
            print(f"jaxbench: reason of the unchecked workload not kept: {exc}", file=sys.stderr)
    return Figures(
        first_call=first,
        accuracy={}
        if accuracy is None
        else {"max_abs_error": accuracy.max_abs_error, "tolerance_used": accuracy.tolerance_used},
        work=work_values,
        work_backend=measured.platform,
        failure=measured.failure,
        unchecked=unchecked,
        no_work="" if measured.compiled is not None else _no_work_reason(measured.warnings),
        compiles_per_call=measured.compiles_per_call,
        compiles_failure=measured.compiles_failure,
    )


def _no_work_reason(warnings: Sequence[str]) -> str:
    found = [line for line in warnings if "work figures" in line]
    return found[0] if found else ""


def _float(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]


def _all_figures() -> dict[tuple[str, tuple[Any, ...]], Figures | str]:
    """Figures for every parameter set of every suite of the benchmark suite.

    The suites registered in this process are measured here, after
    :func:`_prime_jax`. In asv's ``setup_cache`` process, first, before jax's
    backend starts: the suites of the benchmark modules it had not imported,
    each parameter set in a fresh process (:func:`_fresh_figures`), one at a
    time; then the workload-memory figures of the suites measured here, each
    parameter set in a fresh process, two at a time (memory, not time).
    """
    in_process = [(suite, combo) for suite in _REGISTRY for combo in _combos(suite)]
    out: dict[tuple[str, tuple[Any, ...]], Figures | str] = {}
    memory: dict[tuple[str, tuple[Any, ...]], dict[str, MemoryFigure]] = {}
    others = _other_modules_suites()
    if others is not None:
        other_keys = [(suite, combo) for suite in others for combo in _combos(suite)]
        for key in other_keys:
            out[key] = in_fresh_processes([_bind_fresh(_fresh_figures, *key)], at_a_time=1)[0]
        # Memory in processes of its own, never after the figures: a process that
        # has traced and compiled the workload adds nothing when it prepares it
        # again (jax's caches), so what its trace keeps alive would go unseen.
        keys = in_process + [key for key in other_keys if _measured(out[key])]
        measured = in_fresh_processes(
            [_bind_fresh(_all_memory_figures, *key) for key in keys], at_a_time=2
        )
        memory = {key: _memory_or_error(found) for key, found in zip(keys, measured, strict=True)}
        for key in other_keys:
            found, figures = memory.get(key), out[key]
            if found is not None and isinstance(figures, Figures):
                out[key] = replace(figures, memory=found)
    _prime_jax()
    for suite, combo in in_process:
        try:
            figures = _figures_for(suite, combo)
        except (JaxbenchError, ValueError, TypeError, RuntimeError) as exc:
            out[(suite, combo)] = f"{type(exc).__name__}: {exc}"
            continue
        found = memory.get((suite, combo))
        out[(suite, combo)] = figures if found is None else replace(figures, memory=found)
    return out


def _bind_fresh(
    work: Callable[[str, tuple[Any, ...]], Any], suite: str, params: tuple[Any, ...]
) -> Callable[[], Any]:
    return lambda: work(suite, params)


def _all_memory_figures(suite: str, params: tuple[Any, ...]) -> dict[str, MemoryFigure]:
    return _memory_figures(suite, params, WORKLOAD_MEMORY_TRACKS.values())


def _memory_or_error(found: dict[str, MemoryFigure] | str) -> dict[str, MemoryFigure]:
    if isinstance(found, str):  # what the memory tracks fail with
        return {
            figure: MemoryFigure(error=RuntimeError(found))
            for figure in WORKLOAD_MEMORY_TRACKS.values()
        }
    return found


def _combos(suite: str) -> Iterator[tuple[Any, ...]]:
    import itertools

    param_map = _REGISTRY[suite][1]
    return itertools.product(*param_map.values()) if param_map else iter([()])


def _asv_setup_cache_dir() -> str | None:
    """The benchmark directory, in asv's ``setup_cache`` process; else None.

    asv runs ``python .../asv/benchmark.py setup_cache BENCHMARK_DIR BENCHMARK_ID ...``;
    ``jaxbench first-call``'s worker sets :data:`FIGURES_PROCESS` to the directory.
    """
    argv = sys.argv
    if len(argv) >= 3 and os.path.basename(argv[0]) == "benchmark.py" and argv[1] == "setup_cache":
        return argv[2]
    return os.environ.get(FIGURES_PROCESS) or None


def _other_modules_suites() -> list[str] | None:
    """In asv's ``setup_cache`` process: import the benchmark modules it had not
    imported (as asv's forkserver does before forking benchmarks) and name their
    suites. Elsewhere, or where this process cannot fork safely, None: nothing
    is measured in fresh processes from here; track benchmarks whose values
    the cache lacks measure in their own processes (:func:`_lookup`)."""
    root = _asv_setup_cache_dir()
    if root is None or not hasattr(os, "fork") or backend_started():
        return None
    from asv_runner.discovery import disc_benchmarks

    before = set(_REGISTRY)
    for _ in disc_benchmarks(root, ignore_import_errors=True):
        pass
    if backend_started():  # a module started jax's backend: forking is not safe
        return None
    return [suite for suite in _REGISTRY if suite not in before]


def _fresh_figures(suite: str, params: tuple[Any, ...]) -> Figures | str:
    """One parameter set's figures in this (fresh) process; its workload-memory
    figures are measured in another (:func:`_all_figures`)."""
    try:
        return _figures_for(suite, params)
    except Exception as exc:  # one line for every track; the traceback: here
        import traceback

        traceback.print_exc()
        return f"{type(exc).__name__}: {exc}"


def _measured(figures: Figures | str) -> bool:
    """Whether the figures process measured the parameter set (no error, no skip)."""
    return isinstance(figures, Figures) and not figures.skip


def _prime_jax() -> None:
    """Pay jax's once-per-process start-up (backend, MLIR context) before any
    first call is timed, so that every workload's first call is comparable."""
    import jax.numpy as jnp

    refuse_unsafe_fork()

    jax.block_until_ready(jax.jit(lambda v: v + 1)(jnp.zeros((3,), jnp.int32)))


def _lookup(cache: Mapping[Any, Figures | str], suite: str, params: tuple[Any, ...]) -> Figures:
    found = cache.get((suite, params))
    if found is None:  # a suite from another benchmark module: measure it here
        found = _figures_for(suite, params)
    if isinstance(found, str):  # one line: the traceback is in time_warm's output
        raise RuntimeError(found)
    if found.skip:
        raise _skip(found.skip)
    return found


def _brief(exc: JaxbenchError, suite: str) -> JaxbenchError:
    """``exc`` without the user's traceback: ``time_warm`` shows it, once per suite."""
    if exc.__cause__ is None:
        return exc
    name = suite.rsplit(":", 1)[-1]
    return type(exc)(f"{exc} (the traceback: {name}.time_warm's output)")


def _skip_now(reason: str) -> BaseException:
    """Skip from inside a benchmark body (asv records NaN, not a failure)."""
    try:
        from asv_runner.benchmarks.mark import SkipNotImplemented
    except ImportError:  # pragma: no cover - outside asv
        return NotImplementedError(reason)
    return SkipNotImplemented(reason)  # type: ignore[no-any-return]


def _workload_memory(suite: str, params: tuple[Any, ...], figure: str) -> float:
    """What the workload adds to this (fresh, forked) process's memory."""
    return _memory_figures(suite, params, [figure])[figure].get()


def _memory_figures(
    suite: str, params: tuple[Any, ...], figures: Iterable[str]
) -> dict[str, MemoryFigure]:
    """The named workload-memory figures, from one measurement in this process."""
    from jaxbench.errors import TooFewDevices
    from jaxbench.measure import protocol

    out: dict[str, MemoryFigure] = {}
    wanted = list(figures)
    if "device_peak_bytes" in wanted and not protocol.device_reports_memory():
        # known before placing anything: skip without compiling the workload
        out["device_peak_bytes"] = MemoryFigure(skip=_not_reported("device_peak_bytes"))
    measure = [figure for figure in wanted if figure not in out]
    if not measure:
        return out
    try:
        memory = protocol.workload_memory(_make_workload(suite, params))
    except TooFewDevices as exc:
        return out | {figure: MemoryFigure(skip=str(exc)) for figure in measure}
    except JaxbenchError as exc:
        error = _brief(exc, suite)
        error.__suppress_context__ = True
        return out | {figure: MemoryFigure(error=error) for figure in measure}
    for figure in measure:
        value = getattr(memory, figure)
        out[figure] = (
            MemoryFigure(skip=_not_reported(figure))
            if value is None
            else MemoryFigure(value=float(value))
        )
    return out


def _not_reported(figure: str) -> str:
    return f"{figure} is not reported on {jax.default_backend()}"


# --- the factory ------------------------------------------------------------------


def jax_suite(
    name: str,
    workload: WorkloadFactory | str,
    *,
    params: Mapping[str, Sequence[Any]] | None = None,
    number: int = NUMBER,
) -> tuple[type, type]:
    """Make the timed class and the figures class of one workload.

    ``workload`` is a demo workload name (:func:`jaxbench.measure.workloads.get`)
    or a callable taking the parameters as keywords and returning a
    :class:`~jaxbench.measure.Workload`. ``number``: calls per timed sample
    (asv's ``number``; :data:`NUMBER` by default), 1 for a workload whose
    calls take long, such as one that compiles at every call: asv takes
    ``REPEAT`` samples in each of ``ROUNDS`` processes. Assign both classes at
    module level so asv discovers them.
    """
    if not name.isidentifier():
        raise ValueError(f"suite name must be a Python identifier, got {name!r}")
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise ValueError(f"number (calls per sample) must be a positive integer, got {number!r}")
    calls_per_sample = number
    param_map = {k: list(v) for k, v in (params or {}).items()}
    module = sys._getframe(1).f_globals.get("__name__", __name__)
    suite = f"{module}:{name}"
    _REGISTRY[suite] = (workload, param_map)
    # asv names benchmarks relative to the benchmark directory's package.
    _REGISTRY_MODULES[suite] = f"{module.split('.', 1)[-1]}.{name}Figures"
    asv_params = list(param_map.values())
    asv_names = list(param_map)

    class Timed:
        params = asv_params
        param_names = asv_names
        version = f"{VERSION}:{name}"
        number = calls_per_sample
        repeat = REPEAT
        rounds = ROUNDS
        warmup_time = 0.05
        timeout = 180.0
        # No ``setup``: asv_runner >= 0.3 re-runs a setup between every timed
        # call, and the idle gap that leaves is measured (bench_fidelity.py).
        # The first call in the process prepares instead, inside asv's
        # warm-up, which is never a sample.
        _bound: tuple[Any, ...] | None = None

        def _bind(self, p: tuple[Any, ...], *, traceback: bool = False) -> None:
            try:
                prepared = _prepare(suite, p)
            except NotImplementedError as exc:
                raise _skip_now(str(exc)) from None
            except JaxbenchError as exc:
                if traceback:
                    raise
                raise _brief(exc, suite) from None
            self._prepared = prepared
            self._call = prepared.call
            self._block = prepared.block
            self._bound = p

        def teardown(self, *p: Any) -> None:
            if self._bound is not None:
                _check_no_recompile(self._prepared, suite)

        def time_warm(self, *p: Any) -> None:
            if self._bound != p:
                self._bind(p, traceback=True)  # the user's traceback: here, once
            self._block(self._call())

        def peakmem_call(self, *p: Any) -> None:
            if self._bound != p:
                self._bind(p)
            self._block(self._call())

    class FiguresSuite:
        params = asv_params
        param_names = asv_names
        version = f"{VERSION}:{name}"
        timeout = 300.0

        def setup_cache(self) -> dict[tuple[str, tuple[Any, ...]], Figures | str]:
            return _all_figures()

        _found: Figures | None = None

        def setup(self, cache: Mapping[Any, Figures | str], *p: Any) -> None:
            self._cache, self._params = cache, tuple(p)
            # Not in the cache (a suite of another module, where setup_cache could
            # not fork): measured on first use, so that a memory track measures
            # the workload's memory first, in this fresh process, not after it
            # was traced here (jax's caches: the second preparation adds nothing).
            in_cache = (suite, self._params) in cache
            self._found = _lookup(cache, suite, self._params) if in_cache else None

        @property
        def _figures(self) -> Figures:
            if self._found is None:
                try:
                    self._found = _lookup(self._cache, suite, self._params)
                except NotImplementedError as exc:  # in a benchmark's body: asv's skip
                    raise _skip_now(str(exc)) from None
            return self._found

        def _first(self, stage: str) -> float:
            if self._figures.failure:
                raise _wrong_answer(self._figures.failure)
            value = self._figures.first_call[stage]
            if value is None:
                raise _skip_now(f"{stage}: a jit=False workload's first call has no AOT stages")
            return value

        def _accuracy(self, figure: str) -> float:
            if self._figures.unchecked:
                raise _skip_now(self._figures.unchecked)
            if not self._figures.accuracy:
                raise _wrong_answer(self._figures.failure)
            return self._figures.accuracy[figure]

        def _compiles(self) -> float:
            # a count of what the program does, as the work figures: a wrong
            # answer fails the times and the accuracy, not this
            found = self._figures
            if found.compiles_per_call is None:
                from jaxbench.errors import WorkloadError

                raise WorkloadError(found.compiles_failure or "the warm calls were not counted")
            return found.compiles_per_call

        def _unchecked(self) -> float:
            # 1: declared Unchecked (no reference); 0: checked, right or wrong
            return 1.0 if self._figures.unchecked else 0.0

        def _memory(self, figure: str, p: tuple[Any, ...]) -> float:
            found = None if self._found is None else self._found.memory.get(figure)
            if found is None:  # not measured with the figures: measure it here, first
                return _workload_memory(suite, p, figure)
            return found.get()

        def _work(self, figure: str) -> float:
            value = self._figures.work.get(figure)
            if value is None and self._figures.no_work:
                raise _skip_now(self._figures.no_work)
            if value is None:
                backend = self._figures.work_backend or "this backend"
                raise _skip_now(f"{figure} is not reported by XLA on {backend}")
            return value

    _track_methods(FiguresSuite)
    _units(FiguresSuite)
    for cls, cls_name in ((Timed, name), (FiguresSuite, f"{name}Figures")):
        cls.__name__ = cls_name
        cls.__qualname__ = cls_name
        cls.__module__ = module
    return Timed, FiguresSuite


def _track_methods(cls: type) -> None:
    """One ``track_*`` method per figure named in :mod:`jaxbench.kinds`."""

    def first(stage: str) -> Callable[..., float]:
        return lambda self, _c, *p: self._first(stage)

    def accuracy(figure: str) -> Callable[..., float]:
        return lambda self, _c, *p: self._accuracy(figure)

    def work(figure: str) -> Callable[..., float]:
        return lambda self, _c, *p: self._work(figure)

    def memory(figure: str) -> Callable[..., float]:
        return lambda self, _c, *p: self._memory(figure, tuple(p))

    methods: dict[str, Callable[..., float]] = {}
    methods.update({m: first(stage) for m, stage in COMPILE_STAGES.items()})
    methods.update({m: accuracy(figure) for m, figure in ACCURACY_TRACKS.items()})
    methods[UNCHECKED_TRACK] = lambda self, _c, *p: self._unchecked()
    methods[COMPILES_TRACK] = lambda self, _c, *p: self._compiles()
    methods.update({f"{WORK_PREFIX}{figure}": work(figure) for figure in WORK_FIGURES})
    methods.update({m: memory(figure) for m, figure in WORKLOAD_MEMORY_TRACKS.items()})
    for method_name, method in methods.items():
        method.__name__ = method_name
        method.__qualname__ = f"{cls.__name__}.{method_name}"
        if method_name in WORKLOAD_MEMORY_TRACKS:  # asv reads a method's own version first
            method.version = f"{cls.version}:memory{MEMORY_VERSION}"  # type: ignore[attr-defined]
        setattr(cls, method_name, method)


def _wrong_answer(message: str) -> BaseException:
    from jaxbench.errors import ReferenceMismatch

    return ReferenceMismatch(message or "no accuracy figures were measured")


_UNITS = {
    "seconds": "seconds",
    "max_abs_error": "abs error",
    "tolerance_used": "fraction of tolerance",
    "unchecked": "unchecked",
    "compiles_per_call": "compiles/call",
    "flops": "flops",
    "transcendentals": "ops",
    "bytes_accessed": "bytes",
    "bytes": "bytes",
    "hlo_ops": "ops",
    "hlo_fusions": "fusions",
}


def _units(cls: type) -> None:
    for attr, method in list(vars(cls).items()):
        if not attr.startswith("track_"):
            continue
        unit = next((u for key, u in _UNITS.items() if attr.endswith(key)), "unit")
        method.unit = unit
