"""Where a cold scan's time goes: reading, hashing, JSON parsing, columns, step fits.

On one results directory, in this process, one core, each part timed on its own:

1. read every result file's bytes and hash them (SHA-256, the cache key);
2. ``json.loads`` of each, and ``fastjson.loads`` (orjson; what the scan uses);
3. ``scan_result_file`` of each (the checks and the columns of one file);
4. asv's step fit (``jaxbench.analyse.steps.detect_steps``) of every ``--every``-th
   step-fitted series, with asv's penalty search and with ``--quick``'s single
   penalty; the number of penalties the search tries (calls of asv's
   ``solve_potts_approx``) is counted, and the fit time is extrapolated to every
   segment;
5. binseg's fit (``jaxbench.analyse.binseg``, the default) of every step-fitted series.

Usage: ``python bench/bench_scan_parts.py RESULTS [--every 50]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from jaxbench.analyse import binseg
from jaxbench.analyse.steps import detect_steps
from jaxbench.kinds import kind_of
from jaxbench.store import fastjson
from jaxbench.store.results import _machine_name, scan_result_file
from jaxbench.store.series_table import load_series_table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--every", type=int, default=50)
    opts = parser.parse_args()
    paths = sorted(p for p in opts.results.glob("*/*.json") if p.name != "machine.json")

    # one file at a time, as the scan streams them (holding every parsed file slows the GC)
    t_read = t_json = t_fast = t_scan = 0.0
    size = 0
    for path in paths:
        start = time.perf_counter()
        raw = path.read_bytes()
        hashlib.sha256(raw).hexdigest()  # as store/series_table._digest
        t_read += time.perf_counter() - start
        size += len(raw)
        start = time.perf_counter()
        json.loads(raw)
        t_json += time.perf_counter() - start
        start = time.perf_counter()
        doc = fastjson.loads(raw)
        t_fast += time.perf_counter() - start
        start = time.perf_counter()
        scan_result_file(path, _machine_name(path.parent), doc)
        t_scan += time.perf_counter() - start
        del raw, doc
    mib = size / 2**20
    print(f"{len(paths)} files, {mib:.0f} MiB")
    print(f"  read + hash:        {t_read:7.2f} s")
    print(f"  json.loads:         {t_json:7.2f} s")
    print(f"  fastjson.loads:     {t_fast:7.2f} s  (orjson, asv's NaN kept: what the scan uses)")
    print(f"  scan_result_file:   {t_scan:7.2f} s")

    table = load_series_table(opts.results, use_cache=False)
    fitted = [i for i, k in enumerate(table.keys) if not kind_of(k.benchmark).exact]
    sample = fitted[:: opts.every]
    series = [(table.points(i)[1].tolist(), table.points(i)[2].tolist()) for i in sample]
    n_points = sum(len(y) for y, _w in series)
    all_points = sum(len(table.points(i)[1]) for i in fitted)

    from asv import step_detect

    original = step_detect.solve_potts_approx
    solves: list[int] = [0]

    def counted(*args: Any, **kwargs: Any) -> Any:
        solves[0] += 1
        return original(*args, **kwargs)

    per_series: Counter[int] = Counter()
    step_detect.solve_potts_approx = counted
    try:
        start = time.perf_counter()
        for y, w in series:
            solves[0] = 0
            detect_steps(y, w)
            per_series[solves[0]] += 1
        t_fit = time.perf_counter() - start
        start = time.perf_counter()
        for y, w in series:
            detect_steps(y, w, quick=True)
        t_quick = time.perf_counter() - start
    finally:
        step_detect.solve_potts_approx = original
    scale = all_points / n_points
    n_solves = sum(k * v for k, v in per_series.items())
    print(
        f"step fits of {len(series)} of {len(fitted)} step-fitted series "
        f"({n_points / len(series):.0f} points on average):"
    )
    print(
        f"  penalty search: {t_fit:6.2f} s, penalties tried per series {dict(per_series)}, "
        f"{1000 * t_fit / n_solves:.2f} ms per penalty; "
        f"all series, one core: ~{t_fit * scale:.0f} s"
    )
    print(
        f"  --quick:        {t_quick:6.2f} s, one penalty, "
        f"{1000 * t_quick / len(series):.2f} ms per series; all series, one core: "
        f"~{t_quick * scale:.0f} s"
    )
    every = [(table.points(i)[1], table.points(i)[2]) for i in fitted]
    start = time.perf_counter()
    for y, w in every:
        binseg.detect_steps(y, w)
    t_binseg = time.perf_counter() - start
    print(
        f"  binseg (the default), every one of the {len(every)} series: {t_binseg:6.2f} s, "
        f"{1000 * t_binseg / len(every):.2f} ms per series, one core"
    )


if __name__ == "__main__":
    main()
