"""One side of a lockstep comparison: an asv time benchmark, sampled on request.

``jaxbench ab`` starts this file as a script with the benchmarked
environment's Python (``PYTHON worker.py [--serve] BENCHMARK_DIR [CPUS]``),
one process per side, and asks the two processes for samples in turn. It needs
only the standard library and ``asv_runner`` (which asv installs in every
environment), never jaxbench itself: the base commit of a pull request may
predate this file.

It loads the benchmark with ``asv_runner``'s own discovery and takes each
sample with ``asv_runner``'s own timer (``timeit`` of ``number`` calls, setup
hooks honoured as ``asv run`` does), so a sample is exactly what ``asv run``
would record, only taken when the coordinator asks.

Protocol: one JSON object per line on stdin, one answer per line on the
original stdout (benchmark output is sent to stderr)::

    {"op": "list"}                        -> {"benchmarks": [{name, params, ...}]}
    {"op": "load", "name": N, "param_idx": I or null}
                                          -> {"number": n} or {"skip": reason}
    {"op": "sample", "count": k}          -> {"samples": [seconds per call, ...]}
    {"op": "release"}                     -> {"ok": true}   (runs teardown; the process
                                             stays, for the next "load")
    {"op": "close"}                       -> {"ok": true}   (runs teardown, exits)

One process may serve every benchmark of a suite in turn (load, sample,
release, load the next...): the coordinator starts one worker pair per round,
not one per benchmark.

``CPUS`` (e.g. ``1`` or ``0,1``) pins the process to those CPUs before it
imports anything: jax then sizes its thread pools for the CPUs it really
has. (Pinning only once set up, so that the two sides compile in parallel,
left a backend started by a ``setup`` with two pool threads on one CPU: the
bare predict loop measured 50.9 µs pinned late against 27.9 µs for the
suite, whose backend started after pinning.)

Any failure answers ``{"error": "Type: message"}`` and the process exits.

asv_runner versions: discovery, setup, ``setup_cache`` and teardown go through
asv_runner's public API (``list_benchmarks``, ``get_benchmark_from_name``,
``do_setup_cache``, ``set_cache``, ``do_setup``, ``redo_setup``,
``do_teardown``). Taking one sample at a time has none: ``TimeBenchmark.run``
takes all of them in one call. So the few private names that asv_runner's own
``run`` uses are read in one place (:class:`_Private`), and the worker supports
the range of asv_runner versions it is tested with, oldest and newest
(:data:`OLDEST_ASV_RUNNER`, :data:`NEWEST_ASV_RUNNER`;
``tests/test_worker_asv_runner.py`` runs it with each in a real virtualenv).
An older asv_runner is refused with the fix; a newer one is tried, and a
missing private name is reported with the tested range.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
import time
import traceback
from importlib import metadata
from typing import Any, TextIO

WARMUP_SECONDS = 0.1  # asv_runner's default warm-up on CPython

#: The asv_runner versions the worker is tested with (pyproject.toml pins this range).
OLDEST_ASV_RUNNER = "0.2.5"
NEWEST_ASV_RUNNER = "0.3.2"
SUPPORTED = f"asv_runner>={OLDEST_ASV_RUNNER},<={NEWEST_ASV_RUNNER}"


def _version_tuple(version: str) -> tuple[int, ...]:
    """``"0.3.2"`` -> ``(0, 3, 2)``; a suffix (``rc1``, ``.dev0``) is ignored."""
    return tuple(int(part) for part in re.findall(r"\d+", version.split("+")[0])[:3])


def check_asv_runner() -> str:
    """The installed asv_runner's version; raises when it is older than the oldest supported."""
    try:
        version = metadata.version("asv_runner")
    except metadata.PackageNotFoundError:  # a source tree (asv's ASV_RUNNER_PATH): try it
        return "(version unknown)"
    if _version_tuple(version) < _version_tuple(OLDEST_ASV_RUNNER):
        raise RuntimeError(
            f"asv_runner {version} is older than the oldest the lockstep worker supports "
            f"({OLDEST_ASV_RUNNER}); pip install '{SUPPORTED}' in this environment"
        )
    return version


def _answer(out: TextIO, payload: dict[str, Any]) -> None:
    out.write(json.dumps(payload) + "\n")
    out.flush()


def _one_line(exc: BaseException) -> str:
    message = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {message}"


def _list(root: str) -> list[dict[str, Any]]:
    """The time benchmarks, as ``asv run`` lists them (asv_runner's ``list_benchmarks``)."""
    from asv_runner.discovery import list_benchmarks

    check_asv_runner()
    listing = io.StringIO()
    list_benchmarks(root, listing)
    found = json.loads(listing.getvalue())
    return [b for b in found if isinstance(b, dict) and b.get("type") == "time"]


class _Private:
    """The private names of asv_runner's ``TimeBenchmark`` that the worker reads.

    asv_runner's own ``TimeBenchmark.run`` uses them; there is no public API to
    take one sample at a time. Each is read here and nowhere else, so that a
    version that renamed one fails with the version and the tested range.
    """

    def __init__(self, bench: Any, version: str) -> None:
        self.bench = bench
        self.version = version

    def _missing(self, name: str) -> RuntimeError:
        return RuntimeError(
            f"asv_runner {self.version} has no TimeBenchmark.{name}: the lockstep worker is "
            f"tested with asv_runner {OLDEST_ASV_RUNNER} to {NEWEST_ASV_RUNNER}; "
            f"pip install '{SUPPORTED}' in this environment"
        )

    def _get(self, name: str) -> Any:
        try:
            return getattr(self.bench, name)
        except AttributeError:
            raise self._missing(name) from None

    def call_args(self) -> tuple[Any, ...]:
        """The arguments of the timed call: the ``setup_cache`` value, then the parameters."""
        return tuple(self._get("_build_params")())

    def setup_isolates_calls(self) -> bool:
        """asv_runner >= 0.3 re-runs setup hooks before every timed call (asv#966)."""
        has_setup = bool(self._get("_setups"))
        return has_setup and bool(getattr(self.bench, "_setup_isolates_timed_calls", False))

    def timer(self, interleaved: bool) -> Any:
        """asv_runner's own timer: ``timeit.Timer`` with ``redo_setup``, or its per-call
        batch timer when setup hooks must run between the calls of a sample."""
        method = "_get_interleaved_timer" if interleaved else "_get_timer"
        return self._get(method)(*self.call_args())

    def skip_setup_before_next_sample(self) -> None:
        """What asv_runner's warm-up does without isolation: no setup before the next sample."""
        self._get("_redo_setup_next")
        self.bench._redo_setup_next = False


def pin_threads(cpus: set[int]) -> None:
    """Pin every thread of this process to ``cpus``; threads started later inherit it."""
    try:
        tids = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:  # no procfs: this thread only; threads started later inherit it
        tids = [0]
    for tid in tids:
        with contextlib.suppress(ProcessLookupError):  # the thread has ended meanwhile
            os.sched_setaffinity(tid, cpus)


class _Side:
    """One loaded benchmark and its timer."""

    def __init__(self, root: str, name: str, param_idx: int | None) -> None:
        from asv_runner.discovery import get_benchmark_from_name

        self.version = check_asv_runner()
        full = name if param_idx is None else f"{name}-{param_idx}"
        self.bench = get_benchmark_from_name(root, full)
        if getattr(self.bench, "type", "") != "time":
            raise ValueError(f"{name} is not an asv time benchmark")
        self.skipped = False
        self.skip_reason = "asv: skipped (setup raised NotImplementedError)"
        if self.bench.setup_cache_key is not None:
            self.bench.set_cache(self.bench.do_setup_cache())
        if self.bench.do_setup():
            self.skipped = True
            return
        private = _Private(self.bench, self.version)
        number = int(self.bench.number)
        isolate = private.setup_isolates_calls()
        self.timer = private.timer(interleaved=isolate and number > 1)
        if number == 0:  # asv's choice: 1 with setup hooks, else calibrated
            number = 1 if isolate else self._calibrate()
        self.number = number
        warmup = float(self.bench.warmup_time)
        if warmup < 0:
            warmup = WARMUP_SECONDS
        self.skip_reason = ""
        start = time.perf_counter()
        while True:  # asv's warm-up: never a sample
            if not isolate:
                private.skip_setup_before_next_sample()
            try:
                self.timer.timeit(number)
            except NotImplementedError as exc:  # asv_runner's SkipNotImplemented too
                self.skipped = True
                self.skip_reason = f"asv: skipped: {exc}"
                return
            if time.perf_counter() >= start + warmup:
                break

    def _calibrate(self) -> int:
        """asv_runner's rule for ``number = 0``: grow until a sample lasts ``sample_time``."""
        sample_time = float(getattr(self.bench, "sample_time", 0.01))
        number = 1
        while True:
            start = time.perf_counter()
            timing = self.timer.timeit(number)
            took = max(time.perf_counter() - start, timing)
            if took >= sample_time:
                return number
            grow = min(10.0, max(1.1, sample_time / took)) if took > 0 else 10.0
            number = max(number + 1, int(grow * number))

    def sample(self, count: int) -> list[float]:
        return [self.timer.timeit(self.number) / self.number for _ in range(count)]

    def close(self) -> None:
        if not self.skipped:
            self.bench.do_teardown()


def main(argv: list[str]) -> int:
    serve = len(argv) > 1 and argv[1] == "--serve"
    args = argv[2:] if serve else argv[1:]
    if len(args) not in (1, 2):
        print("usage: worker.py [--serve] BENCHMARK_DIR [CPU,...]", file=sys.stderr)
        return 2
    root = os.path.abspath(args[0])
    if len(args) == 2:
        pin_threads({int(c) for c in args[1].split(",")})
    # The protocol keeps the real stdout; anything the benchmark prints goes to stderr.
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    if serve:
        return _serve(root, out)
    return _work(root, out)


def _serve(root: str, out: TextIO) -> int:
    """A fork server, as asv's ``forkserver`` launch method: import the suite once,
    then fork one fresh worker per ``{"op": "fork", "cpus": "0"}``.

    The child pins itself to ``cpus`` (before jax starts its backend, which
    the suite's import must not do, as under asv's forkserver), answers
    ``{"forked": pid}`` and serves the worker protocol on the same pipes until
    it ends; the server then answers ``{"exited": status}`` (negative: the
    signal that ended it) and waits for the next request. ``{"op": "close"}``
    or the end of stdin ends the server.
    """
    try:
        _list(root)  # asv_runner's discovery imports every module of the suite
    except BaseException as exc:
        traceback.print_exc(file=sys.stderr)
        _answer(out, {"error": _one_line(exc)})
        return 1
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("op") == "close":
            _answer(out, {"ok": True})
            return 0
        if request.get("op") != "fork":
            _answer(out, {"error": f"ValueError: the server forks workers; got {request!r}"})
            return 1
        cpus = str(request.get("cpus") or "")
        pid = os.fork()
        if pid == 0:  # the worker: its own process from here on
            code = 1
            try:
                if cpus:
                    pin_threads({int(c) for c in cpus.split(",")})
                _answer(out, {"forked": os.getpid()})
                code = _work(root, out)
            finally:
                with contextlib.suppress(BaseException):
                    out.flush()
                    sys.stderr.flush()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        _answer(out, {"exited": code})
    return 0


def _work(root: str, out: TextIO) -> int:
    side: _Side | None = None
    for line in sys.stdin:
        try:
            request = json.loads(line)
            op = request.get("op")
            if op == "list":
                _answer(out, {"benchmarks": _list(root)})
            elif op == "load":
                if side is not None:
                    raise RuntimeError("release the loaded benchmark first")
                side = _Side(root, str(request["name"]), request.get("param_idx"))
                if side.skipped:
                    _answer(out, {"skip": side.skip_reason})
                else:
                    _answer(out, {"number": side.number})
            elif op == "sample":
                if side is None or side.skipped:
                    raise RuntimeError("no benchmark loaded")
                _answer(out, {"samples": side.sample(int(request["count"]))})
            elif op == "release":
                if side is not None:
                    loaded, side = side, None
                    loaded.close()
                _answer(out, {"ok": True})
            elif op == "close":
                if side is not None:
                    side.close()
                _answer(out, {"ok": True})
                return 0
            else:
                raise ValueError(f"unknown op {op!r}")
        except BaseException as exc:  # report, then stop: the coordinator decides
            traceback.print_exc(file=sys.stderr)
            _answer(out, {"error": _one_line(exc)})
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
