"""What a workload adds to memory, with and without the inherited free heap handed back.

asv's figures process forks one process per parameter set to measure
``track_workload_peak_rss_bytes`` (:func:`jaxbench.measure.protocol.workload_memory`).
The child inherits its parent's C heap, free chunks included and already
resident; what the workload allocates into them does not raise the RSS. Here
a parent that has imported jax (backend not started) allocates and frees
``0``, ``8`` or ``32`` MiB of heap and Python objects before each fork, as a
figures process does different work before each; each child measures the
lesson's Predict workload:

* ``before``: as the figure was measured until 2026-12-04 (no trim);
* ``now``: the child first hands the free heap back (glibc ``malloc_trim(0)``,
  :func:`jaxbench.measure.protocol._release_free_heap`).

The two alternate child by child, so both see the same machine. Prints each
child's figure and, per way, the range and the standard deviation.

Usage: ``python bench/bench_free_heap.py [--repeats 4] [--rows 64]`` (about 1 s a child).
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
from collections.abc import Callable
from functools import partial

import numpy as np

from jaxbench.measure import protocol, workloads

_MiB = 1024 * 1024


def _measure(rows: int, trim: bool) -> float:
    if not trim:
        protocol._release_free_heap = lambda: None  # as before 2026-12-04
    memory = protocol.workload_memory(workloads.lesson("predict", rows=rows))
    assert memory.peak_rss_rise_bytes is not None, "needs Linux's /proc/self/clear_refs"
    return memory.peak_rss_rise_bytes / _MiB


def _in_child(work: Callable[[], float]) -> float:
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read_end)
        with os.fdopen(write_end, "wb") as out:
            out.write(pickle.dumps(work()))
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as source:
        value: float = pickle.loads(source.read())
    os.waitpid(pid, 0)
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--rows", type=int, default=64)
    args = parser.parse_args()
    found: dict[str, list[float]] = {"before": [], "now": []}
    for repeat in range(args.repeats):
        for junk in (0, 8, 32):
            # the parent's own history before the fork: heap chunks and arrays, freed
            chunks = [bytearray(64 * 1024) for _ in range(junk * 16)]
            arrays = [np.ones(128 * 1024) for _ in range(junk)]
            del chunks, arrays
            ways = ("before", "now") if repeat % 2 == 0 else ("now", "before")
            for way in ways:
                value = _in_child(partial(_measure, args.rows, way == "now"))
                found[way].append(value)
                print(
                    f"repeat {repeat + 1}  parent freed {junk:2d} MiB  {way:6s}  {value:6.2f} MiB"
                )
    print(
        f"Predict(rows={args.rows}), track_workload_peak_rss_bytes, "
        f"{args.repeats * 3} children a way:"
    )
    for way, values in found.items():
        print(
            f"  {way:6s}  {min(values):6.2f} to {max(values):6.2f} MiB, "
            f"median {statistics.median(values):6.2f} MiB, sd {statistics.stdev(values):5.2f} MiB"
        )


if __name__ == "__main__":
    main()
