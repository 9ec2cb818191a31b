"""``--quick`` against asv's penalty search: same listings? how fast? on what data?

1. On a results directory (default: pvlib's real history beside the repository):
   every regression, undone ones included, from ``scan`` with and without
   ``quick``: the two listings compared, and the time of each fit.
2. On 400 random series (seeded): planted steps of 5 % to 2x at a random
   point (half the series), noise of 1 to 10 %, 1 % outliers x3: how many
   are listed identically, how many planted steps of 10 % or more each
   misses, and in how many series each lists a step where none of 10 % or
   more was planted.

Usage: ``python bench/bench_quick_fit.py [RESULTS_DIR] [--series 400]``.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from jaxbench.analyse.detect import _found_jumps, scan
from jaxbench.analyse.steps import detect_steps
from jaxbench.store.series_table import load_series_table

PVLIB = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "real-asv-results"
    / "pvlib-benchmarks"
    / "results"
)


def on_history(results: Path) -> None:
    table = load_series_table(results, use_cache=False)
    listings = {}
    for quick in (False, True):
        start = time.perf_counter()
        found, _fits = scan(table, include_fixed=True, quick=quick)
        elapsed = time.perf_counter() - start
        listings[quick] = [
            (r.key, r.bad_commit, r.fixed_commit, round(r.ratio, 6)) for r in found.regressions
        ]
        print(f"{results}: quick={quick}: {len(found.regressions)} regressions, {elapsed:.2f} s")
    print(f"identical listings: {listings[False] == listings[True]}")


def on_random(n_series: int) -> None:
    rng = random.Random(7)
    same = listed_e = listed_q = missed_e = missed_q = 0
    for _ in range(n_series):
        n = rng.choice([20, 50, 100, 300, 600])
        noise = rng.choice([0.01, 0.03, 0.1])
        step_at = rng.randrange(n // 4, n) if rng.random() < 0.5 else None
        size = rng.choice([1.05, 1.1, 1.3, 2.0])
        y: list[float | None] = []
        w: list[float | None] = []
        for i in range(n):
            level = 1e-4 * (size if step_at is not None and i >= step_at else 1)
            value = level * (1 + rng.gauss(0, noise))
            if rng.random() < 0.01:
                value *= 3
            y.append(value)
            w.append(2 / (level * noise * 4))
        got = {}
        for quick in (False, True):
            jumps = _found_jumps(detect_steps(y, w, quick=quick), 0.05, 2, False)
            got[quick] = [jump[1] for jump, _after, _fixed in jumps]
        same += got[False] == got[True]
        truth = [step_at] if step_at is not None and size >= 1.1 else []
        listed_e += any(b not in truth for b in got[False])
        listed_q += any(b not in truth for b in got[True])
        missed_e += bool(truth) and truth[0] not in got[False]
        missed_q += bool(truth) and truth[0] not in got[True]
    print(
        f"{n_series} random series: identical listings {same}; planted steps >= 10 % missed: "
        f"search {missed_e}, quick {missed_q}; series with a step listed where none >= 10 % "
        f"was planted: search {listed_e}, quick {listed_q}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, nargs="?", default=PVLIB)
    parser.add_argument("--series", type=int, default=400)
    opts = parser.parse_args()
    on_history(opts.results)
    on_random(opts.series)


if __name__ == "__main__":
    main()
