"""One fresh process of one side: the suite's first-call figures, once.

``jaxbench first-call`` runs this file as a script with a side's Python
(``PYTHON first_call_worker.py BENCHMARK_DIR METHOD [METHOD ...]``), once per
side per round, in fresh processes, base and head in turn. It does what
``asv run`` does for ``track_*`` benchmarks that share a ``setup_cache``:
discovers the suite with ``asv_runner``'s own discovery, runs the shared
``setup_cache`` once (this project's figures process: every workload's first
call in a fresh specialization, and its trace, lower, compile and first
execute stages), then each selected benchmark's ``setup``, body and
``teardown`` for every parameter set, as ``asv_runner.run`` does (the
workload-memory figures, when asked for, each from a fresh process forked
before jax's backend starts, as asv's ``setup_cache`` measures them). Like the
lockstep worker it needs only the standard library and ``asv_runner``.

It prints one JSON object as the last line of stdout (benchmark output goes
to stderr)::

    {"benchmarks": [{"name": N, "version": V, "params": [[...]],
                     "values": [float | null (failed) | "skip", ...],
                     "errors": [str, ...]}]}
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import traceback
from typing import Any


def _discover(root: str, methods: set[str]) -> list[Any]:
    from asv_runner.discovery import disc_benchmarks

    try:
        from asv_runner._aux import update_sys_path
    except ImportError:  # asv_runner < 0.1: the discovery module has it
        from asv_runner.discovery import update_sys_path
    update_sys_path(root)
    return [
        bench
        for bench in disc_benchmarks(root)
        if getattr(bench, "type", "") == "track" and bench.name.rsplit(".", 1)[-1] in methods
    ]


def _combos(bench: Any) -> list[int | None]:
    n = 1
    for values in bench.params or []:
        n *= len(values)
    return list(range(n)) if bench.params else [None]


def _run_one(bench: Any, idx: int | None, cache: Any) -> tuple[float | str | None, str]:
    if idx is not None:
        bench.set_param_idx(idx)
    if bench.setup_cache_key is not None:
        if hasattr(bench, "set_cache"):
            bench.set_cache(cache)
        elif cache is not None:  # asv_runner < 0.3
            bench.insert_param(cache)
    try:
        if bench.do_setup():
            return "skip", ""
        try:
            value = bench.do_run()
        except NotImplementedError:  # asv_runner's SkipNotImplemented is one
            return "skip", ""
        finally:
            bench.do_teardown()
    except Exception as exc:  # the benchmark failed, as asv records it
        return None, f"{bench.name}: {type(exc).__name__}: {exc}"
    if value is None or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None, f"{bench.name}: returned {value!r}"
    return float(value), ""


#: The workload-memory figures (jaxbench.kinds.WORKLOAD_MEMORY_TRACKS):
#: asked for, the suite's setup_cache measures them in fresh processes forked
#: from this one, as in asv's own setup_cache process, never after the first
#: calls here (a workload traced once adds nothing when prepared again).
MEMORY_METHODS = frozenset({"track_workload_peak_rss_bytes", "track_workload_device_peak_bytes"})
#: jaxbench.measure.asvsuite.FIGURES_PROCESS
FIGURES_PROCESS = "JAXBENCH_FIGURES_PROCESS"


def main(argv: list[str]) -> int:
    root, methods = argv[1], set(argv[2:])
    if methods & MEMORY_METHODS:
        os.environ[FIGURES_PROCESS] = root
    out = sys.stdout
    sys.stdout = sys.stderr  # benchmark output must not mix with the answer
    answer: list[dict[str, Any]] = []
    try:
        caches: dict[str, Any] = {}
        for bench in _discover(root, methods):
            key = bench.setup_cache_key
            if key is not None and key not in caches:
                caches[key] = bench.do_setup_cache()
            values: list[float | str | None] = []
            errors: list[str] = []
            for idx in _combos(bench):
                # A fresh object per parameter set, as asv's one process per benchmark.
                from asv_runner.discovery import get_benchmark_from_name

                name = bench.name if idx is None else f"{bench.name}-{idx}"
                one = get_benchmark_from_name(root, name)
                value, error = _run_one(one, None, caches.get(key) if key else None)
                values.append(value)
                if error:
                    errors.append(error)
            answer.append(
                {
                    "name": bench.name,
                    "version": bench.version,
                    "params": bench.params,
                    "values": values,
                    "errors": errors,
                }
            )
    except Exception:
        traceback.print_exc()
        with contextlib.suppress(OSError):
            out.write(json.dumps({"error": traceback.format_exc(limit=3)}) + "\n")
        return 1
    out.write(json.dumps({"benchmarks": answer}) + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
