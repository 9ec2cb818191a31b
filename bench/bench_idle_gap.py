"""Why the asv suite times 50 calls per sample: a warm call after an idle gap.

Times the lesson's warm predict call (one process, each call followed by
``jax.block_until_ready``) with a busy-wait gap of 0, 5, 20, 100 and 1000 µs
before each call, and prints each median and its ratio to back-to-back calls.
Run: ``.venv/bin/python bench/bench_idle_gap.py``.
"""

from __future__ import annotations

import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np


def main() -> None:
    rng = np.random.default_rng(4)
    x = jax.device_put(rng.normal(size=(64, 32)).astype(np.float32))
    w = jax.device_put(rng.normal(size=(32, 16)).astype(np.float32))
    f = jax.jit(lambda x, w: jnp.tanh(x @ w))
    jax.block_until_ready(f(x, w))

    def median_us(gap_us: float, calls: int = 400) -> float:
        samples = []
        for _ in range(calls):
            start = time.perf_counter()
            while time.perf_counter() - start < gap_us * 1e-6:
                pass
            start = time.perf_counter()
            jax.block_until_ready(f(x, w))
            samples.append(time.perf_counter() - start)
        return statistics.median(samples) * 1e6

    median_us(0)  # warm-up
    base = median_us(0)
    print(f"gap    0 us: {base:6.1f} us  (1.00)")
    for gap in (5, 20, 100, 1000):
        value = median_us(gap)
        print(f"gap {gap:4d} us: {value:6.1f} us  ({value / base:.2f} x back-to-back)")


if __name__ == "__main__":
    main()
