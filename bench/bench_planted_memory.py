"""Planted extra allocations against the memory floors, measured in fresh processes.

Runs ``--processes`` fresh Python processes per variant, each measuring one
workload with :func:`jaxbench.measure.protocol.workload_memory` (the figure
behind ``track_workload_peak_rss_bytes``) and then the process's peak RSS
(``VmHWM``, what asv's ``peakmem_*`` reads). The workload is ``x @ x.T`` of a
1024 x 1024 float32 input, plus an input array of K MiB that the call keeps
alive (it returns ``keep + 1``):

* ``small`` (K = 0) and ``small+32``: K chosen so that the rise grows by
  32 MiB (the kept input is held several times: host, device, output; the
  rise per MiB kept is measured from ``small`` and ``big``);
* ``big`` (K = 128) and ``big*1.25``: K chosen so that the rise of ``big``
  grows by a quarter.

Each base process is judged against every other base process of its
variant (A/A) and against every planted one with
:func:`jaxbench.analyse.compare.compare_single_value`, the rule ``compare``
uses for one value a side; the count called changed is printed.

Usage: ``python bench/bench_planted_memory.py [--processes 4]`` (a few s a process).
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import subprocess
import sys
from collections.abc import Sequence

from jaxbench.analyse.compare import Settings, compare_single_value
from jaxbench.analyse.stats import Verdict
from jaxbench.kinds import Kind
from jaxbench.render.units import format_value

_CHILD = r"""
import json, sys
import numpy as np
from jaxbench.measure import Unchecked, Workload, protocol
keep = int(float(sys.argv[1]) * 2**20) // 4 or 1
def inputs(rng):
    return (rng.random((1024, 1024)).astype(np.float32), np.ones((keep,), np.float32))
def fn(x, kept):
    return x @ x.T, kept + 1
work = Workload(name="planted", fn=fn, inputs=inputs, reference=Unchecked("memory bench"))
memory = protocol.workload_memory(work, calls=2)
print(json.dumps({"rise": memory.peak_rss_rise_bytes, "peak": protocol._status_bytes("VmHWM")}))
"""
MiB = float(1 << 20)
RISE = "bench.PlantedFigures.track_workload_peak_rss_bytes"
PEAK = "bench.Planted.peakmem_call"


def measure(keep_mib: float, n: int) -> list[dict[str, float]]:
    out = []
    for _ in range(n):
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, str(keep_mib)],
            capture_output=True,
            text=True,
            check=True,
        )
        out.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return out


def changed(pairs: Sequence[tuple[float, float]], benchmark: str) -> int:
    return sum(
        compare_single_value(benchmark, a, b, Kind.MEMORY, Settings()).verdict
        is not Verdict.UNCHANGED
        for a, b in pairs
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=4)
    args = parser.parse_args(argv)
    n = args.processes
    runs = {"small": measure(0, n), "big": measure(128, n)}
    rise = {k: statistics.median(v["rise"] for v in runs[k]) / MiB for k in runs}
    # the kept input is held more than once (host, device, output): MiB of rise per MiB kept
    slope = (rise["big"] - rise["small"]) / 128
    runs["small+32"] = measure(32 / slope, n)
    runs["big*1.25"] = measure(128 + 0.25 * rise["big"] / slope, n)
    print(f"{slope:.2f} MiB of rise per MiB kept alive")
    for variant, values in runs.items():
        rises = ", ".join(format_value(v["rise"], "bytes") for v in values)
        peaks = ", ".join(format_value(v["peak"], "bytes") for v in values)
        print(f"{variant:9s} workload rise: {rises}; process peak: {peaks}")
    for base, planted in (("small", "small+32"), ("big", "big*1.25")):
        for key, name in (("rise", RISE), ("peak", PEAK)):
            aa = [(a[key], b[key]) for a, b in itertools.permutations(runs[base], 2)]
            ab = [(a[key], b[key]) for a in runs[base] for b in runs[planted]]
            print(
                f"{base:5s} {key:4s}: A/A {changed(aa, name)} of {len(aa)} pairs changed; "
                f"{planted} {changed(ab, name)} of {len(ab)}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
