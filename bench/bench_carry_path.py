"""The training step's threading path, one state, call paths in turn (in-process, paired).

``bench/bench_fidelity.py`` compares the suite with a bare loop in two
processes; their rounds spread by several per cent. This script takes the
process out: one ``protocol.prepare``-d training step
(``benchmarks/programs.py``'s ``train_step_workload``), whose params and
optimizer state are threaded in turn by

* ``bare``: a user's loop (``out = f(*args)``; the next args from ``carry``;
  ``jax.block_until_ready(out)``), as ``bench/bare_worker.py`` writes it;
* ``old Caller``: the harness's call path before this change (``as_args`` on
  every call, the output dropped as soon as it was waited for);
* ``Caller``: ``jaxbench.measure.timing.Caller`` as it is, ``block(call())``
  as the suite's ``time_warm`` does;

each sample 50 calls, the order rotated every round, pinned to one CPU. The
same buffers go through every path, so the paired ratio (median over rounds
of each path's log ratio to ``bare`` in that round) is the call path's own
cost. Run: ``.venv/bin/python bench/bench_carry_path.py [--rounds 400] [--cpu 1]``.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

NUMBER = 50


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=400)
    parser.add_argument("--cpu", type=int, default=1)
    args = parser.parse_args()
    os.sched_setaffinity(0, {args.cpu})  # before jax starts its threads
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import jax

    import programs  # type: ignore[import-not-found]
    from jaxbench.measure import protocol
    from jaxbench.measure.workloads import Args, as_args

    prepared = protocol.prepare(programs.train_step_workload())
    caller, block = prepared.call, prepared.block
    f, carry = caller.fn, caller.carry
    assert carry is not None

    class Holder:  # what the bare loop hands to carry: .args and .kwargs
        def __init__(self, a: tuple[Any, ...], k: dict[str, Any]) -> None:
            self.args, self.kwargs = a, k

    def bare() -> float:
        a: Any = tuple(caller.args.args)
        kw: dict[str, Any] = {}
        start = time.perf_counter()
        for _ in range(NUMBER):
            out = f(*a, **kw)
            a = tuple(carry(Holder(a, kw), out))  # type: ignore[arg-type]
            jax.block_until_ready(out)
        elapsed = time.perf_counter() - start
        caller.args, caller.last = Args(a, {}), None
        return elapsed / NUMBER

    def old_caller() -> float:
        state = caller.args

        def call() -> Any:
            nonlocal state
            output = f(*state.args, **state.kwargs)
            state = as_args(carry(state, output), "carry")
            return output

        start = time.perf_counter()
        for _ in range(NUMBER):
            block(call())
        elapsed = time.perf_counter() - start
        caller.args, caller.last = state, None
        return elapsed / NUMBER

    def new_caller() -> float:
        start = time.perf_counter()
        for _ in range(NUMBER):
            block(caller())
        elapsed = time.perf_counter() - start
        caller.last = None
        return elapsed / NUMBER

    paths = {"bare": bare, "old Caller": old_caller, "Caller": new_caller}
    for path in paths.values():
        for _ in range(10):
            path()
    samples: dict[str, list[float]] = {name: [] for name in paths}
    items = list(paths.items())
    for r in range(args.rounds):
        k = r % len(items)
        for name, path in items[k:] + items[:k]:
            samples[name].append(path())
    print(f"{args.rounds} rounds x {NUMBER} calls a path, CPU {args.cpu}:")
    for name, values in samples.items():
        logs = [math.log(v / b) for v, b in zip(values, samples["bare"], strict=True)]
        print(
            f"  {name:10s}: {statistics.median(values) * 1e6:6.1f} µs; paired ratio to bare "
            f"{math.exp(statistics.median(logs)):.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
