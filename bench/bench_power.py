"""Detection power of ``jaxbench.stats.compare_samples`` on real timings.

For each condition (no change, +5 %, +10 %, +20 %) it makes ``--pairs``
base/head comparisons. Base is a small NumPy workload (matmul + tanh, the
lesson's predict); head is the same workload plus real extra work (more
host-side work per call: a pure-Python loop, whose cost is fine-grained
where one more pass of the array work would be a 40 % step), sized from a
measured unit cost. The true
slowdown is then calibrated with a bare alternating loop, as
``shared/ASV-NOTES.md`` asks. Each side of a pair is ``--samples`` samples of
``--number`` calls, taken in its own burst (as two asv runs would be).

It prints, per condition, the calibrated slowdown and how often jaxbench
(Mann-Whitney, alpha 0.01, factor 1.05) and asv's own rule
(``asv._stats.is_different`` at p 0.002, factor 1.1) flagged a regression.
All in one process: this measures the statistics, not the process-to-process
variance that dominates asv runs (see ASV-NOTES). Ratios only; no absolute
times are asserted anywhere.

    .venv/bin/python bench/bench_power.py --pairs 20
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
from asv._stats import is_different

from jaxbench.stats import Verdict, compare_samples

Work = Callable[[], object]


def _workload(extra_passes: int) -> Work:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 32)).astype(np.float32)
    w = rng.standard_normal((32, 16)).astype(np.float32)

    def run() -> object:
        total = 0
        for i in range(extra_passes):
            total += i
        return np.tanh(x @ w), total

    return run


def _sample(fn: Work, number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def _samples(fn: Work, n: int, number: int) -> list[float]:
    fn()  # warm
    return [_sample(fn, number) for _ in range(n)]


def _median_time(fn: Work, n: int = 200, number: int = 50) -> float:
    return statistics.median(_samples(fn, n, number))


def _calibrated_slowdown(base: Work, head: Work, rounds: int = 300, number: int = 50) -> float:
    """Median over alternating rounds of head/base: the true slowdown."""
    ratios = [_sample(head, number) / _sample(base, number) for _ in range(rounds)]
    return statistics.median(ratios)


def _asv_flags(base: list[float], head: list[float]) -> bool:
    def stats(samples: list[float]) -> dict[str, float]:
        q = np.percentile(samples, [0.5, 99.5])
        return {"ci_99_a": float(q[0]), "ci_99_b": float(q[1])}

    different = is_different(base, head, stats(base), stats(head))
    return bool(different and statistics.median(head) > 1.1 * statistics.median(base))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--samples", type=int, default=10, help="samples per side")
    parser.add_argument("--number", type=int, default=20, help="calls per sample")
    args = parser.parse_args()

    base = _workload(0)
    unit = _median_time(_workload(2000)) - _median_time(_workload(0))
    per_pass = unit / 2000
    base_time = _median_time(base)
    print(f"one extra loop iteration = {per_pass / base_time:.5f} of the base call")
    print("| planted | calibrated slowdown | jaxbench flagged | asv rule flagged | median ratio |")
    print("|---|---|---|---|---|")
    for target in (0.0, 0.05, 0.10, 0.20):
        passes = round(target * base_time / per_pass)
        head = _workload(passes)
        true = _calibrated_slowdown(base, head) if passes else 1.0
        ours = theirs = 0
        ratios = []
        for _ in range(args.pairs):
            b = _samples(base, args.samples, args.number)
            h = _samples(head, args.samples, args.number)
            result = compare_samples(b, h)
            ours += result.verdict is Verdict.REGRESSION
            theirs += _asv_flags(b, h)
            ratios.append(result.ratio or 1.0)
        print(
            f"| +{target:.0%} ({passes} iterations) | {true:.3f} | {ours}/{args.pairs} | "
            f"{theirs}/{args.pairs} | {statistics.median(ratios):.3f} "
            f"[{min(ratios):.2f}-{max(ratios):.2f}] |"
        )


if __name__ == "__main__":
    main()
