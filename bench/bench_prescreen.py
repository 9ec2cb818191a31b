"""How many segments the exact pre-screen skips, and how noisy the series are.

For each results directory (pvlib's real history, a ``bench/gen_history.py``
one), side by side:

* the scan with and without the pre-screen (``jaxbench.analyse.detect.cannot_regress``):
  segments fitted, segments skipped, fitting time, and whether the listings
  (undone regressions included) are identical;
* the spread of the step-fitted series, to judge whether the generated noise
  is realistic: a robust relative noise per series (median of
  ``|diff| / median``, divided by 0.954 = that statistic for Gaussian noise of
  sigma 1) and ``max / min`` over the whole series and over its first 30
  points (pvlib's median length, so that short and long series compare).

Usage: ``python bench/bench_prescreen.py DIR [DIR ...] [--quick]`` (``DIR`` holds
the result files; ``--quick`` fits with ``--quick``'s single penalty).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from jaxbench.analyse.detect import scan
from jaxbench.kinds import kind_of
from jaxbench.store.series_table import SeriesTable, load_series_table


def spreads(table: SeriesTable) -> str:
    noise: list[float] = []
    whole: list[float] = []
    first30: list[float] = []
    lengths: list[int] = []
    for i, key in enumerate(table.keys):
        if kind_of(key.benchmark).exact:
            continue
        _f, values, _w = table.points(i)
        v = values[np.isfinite(values)]
        if len(v) < 2 or v.min() <= 0:
            continue
        lengths.append(len(v))
        noise.append(float(np.median(np.abs(np.diff(v))) / np.median(v) / 0.954))
        whole.append(float(v.max() / v.min()))
        first30.append(float(v[:30].max() / v[:30].min()))

    def q(xs: list[float]) -> str:
        return " / ".join(f"{x:.3f}" for x in np.quantile(xs, [0.1, 0.5, 0.9]))

    return (
        f"  {len(lengths)} step-fitted series, median length {np.median(lengths):.0f}\n"
        f"  robust relative noise, 10/50/90 %:  {q(noise)}\n"
        f"  max/min, whole series, 10/50/90 %:  {q(whole)}  "
        f"(<= 1.05: {np.mean(np.asarray(whole) <= 1.05):.1%})\n"
        f"  max/min, first 30 points, 10/50/90 %: {q(first30)}  "
        f"(<= 1.05: {np.mean(np.asarray(first30) <= 1.05):.1%})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", type=Path, nargs="+")
    parser.add_argument("--quick", action="store_true")
    opts = parser.parse_args()
    for results in opts.dirs:
        table = load_series_table(results, use_cache=False)
        print(f"{results} ({len(table.files)} files, {len(table.keys)} series)")
        print(spreads(table))
        start = time.perf_counter()
        screened, _fits = scan(table, include_fixed=True, quick=opts.quick)
        t_screened = time.perf_counter() - start
        start = time.perf_counter()
        full, _fits = scan(table, include_fixed=True, quick=opts.quick, prescreen=False)
        t_full = time.perf_counter() - start
        same = (screened.regressions, screened.machine_changes) == (
            full.regressions,
            full.machine_changes,
        )
        print(
            f"  pre-screen: {screened.screened} of {full.fitted} segments not fitted; "
            f"scan {t_screened:.2f} s against {t_full:.2f} s fitting all "
            f"({len(full.regressions)} regressions listed); identical: {same}"
        )


if __name__ == "__main__":
    main()
