"""One side of a lockstep comparison: an asv time benchmark, sampled on request.

``jaxbench ab`` starts this file as a script with the benchmarked
environment's Python (``PYTHON worker.py BENCHMARK_DIR [CPUS]``),
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
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import traceback
from typing import Any, TextIO

WARMUP_SECONDS = 0.1  # asv_runner's default warm-up on CPython


def _answer(out: TextIO, payload: dict[str, Any]) -> None:
    out.write(json.dumps(payload) + "\n")
    out.flush()


def _list(root: str) -> list[dict[str, Any]]:
    from asv_runner.discovery import disc_benchmarks

    try:
        from asv_runner._aux import update_sys_path
    except ImportError:  # asv_runner < 0.1: the discovery module has it
        from asv_runner.discovery import update_sys_path
    update_sys_path(root)
    found = []
    for bench in disc_benchmarks(root):
        if getattr(bench, "type", "") != "time":
            continue
        clean = {
            k: v
            for k, v in vars(bench).items()
            if isinstance(v, (str, int, float, list, dict, bool)) and not k.startswith("_")
        }
        found.append(clean)
    return found


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

        full = name if param_idx is None else f"{name}-{param_idx}"
        self.bench = get_benchmark_from_name(root, full)
        if getattr(self.bench, "type", "") != "time":
            raise ValueError(f"{name} is not an asv time benchmark")
        self.skipped = False
        self.skip_reason = "asv: skipped (setup raised NotImplementedError)"
        if self.bench.setup_cache_key is not None:
            cache = self.bench.do_setup_cache()
            if hasattr(self.bench, "set_cache"):
                self.bench.set_cache(cache)
            else:  # asv_runner < 0.3
                self.bench.insert_param(cache)
        if self.bench.do_setup():
            self.skipped = True
            return
        params = self.bench._build_params() if hasattr(self.bench, "_build_params") else ()
        number = int(self.bench.number)
        isolate = bool(self.bench._setups) and bool(
            getattr(self.bench, "_setup_isolates_timed_calls", False)
        )
        if isolate and number > 1 and hasattr(self.bench, "_get_interleaved_timer"):
            self.timer = self.bench._get_interleaved_timer(*params)
        else:
            self.timer = self.bench._get_timer(*params)
        if number == 0:  # asv's choice: 1 with setup hooks, else calibrated
            number = 1 if isolate else self._calibrate()
        self.number = number
        warmup = float(self.bench.warmup_time)
        if warmup < 0:
            warmup = WARMUP_SECONDS
        self.skip_reason = ""
        start = time.perf_counter()
        while True:  # asv's warm-up: never a sample
            if not self.bench._setups:
                self.bench._redo_setup_next = False
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
    if len(argv) not in (2, 3):
        print("usage: worker.py BENCHMARK_DIR [CPU,...]", file=sys.stderr)
        return 2
    root = os.path.abspath(argv[1])
    if len(argv) == 3:
        pin_threads({int(c) for c in argv[2].split(",")})
    # The protocol keeps the real stdout; anything the benchmark prints goes to stderr.
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
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
            message = str(exc).splitlines()[0] if str(exc) else ""
            _answer(out, {"error": f"{type(exc).__name__}: {message}"})
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
