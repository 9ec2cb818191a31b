"""False alarms and power of the history's step listing: asv's fit alone versus confirmed steps.

A history of single values per commit (one process each: first-call and
compile times, memory, unpaired warm times) is noisy from process to process.
This writes synthetic asv histories (real format-2 files, asv's own
``Results`` class) of ``--series`` track benchmarks over N commits, each value
``level * noise``, and scans each with :func:`jaxbench.analyse.detect.scan`:

* null histories (no change anywhere): the share of histories in which asv's
  step fit finds a regression (what ``asv publish`` lists) and the share in
  which jaxbench lists one (confirmed steps only: :mod:`jaxbench.analyse.evidence`);
* planted histories: one series steps up by ``--step`` at a random commit with
  at least three commits on each side: the share listed at the right commit.

Noise models: ``lognormal:S`` (log-normal with sigma S) and ``bimodal:P:F``
(a share P of the processes at F times the level, as warm times that switch
between two states from process to process). Prints one table.
Usage: ``python bench/bench_step_evidence.py [--trials 20] [--lengths 3,5,10,20,40]``.
"""

from __future__ import annotations

import argparse
import math
import random
import tempfile
import time
from pathlib import Path


def _noise(model: str, rng: random.Random) -> float:
    name, *args = model.split(":")
    if name == "lognormal":
        return math.exp(rng.gauss(0.0, float(args[0])))
    if name == "bimodal":
        share, factor = float(args[0]), float(args[1])
        return (factor if rng.random() < share else 1.0) * math.exp(rng.gauss(0.0, 0.03))
    raise SystemExit(f"unknown noise model {model!r}: lognormal:S or bimodal:P:F")


def write_history(
    root: Path,
    n_commits: int,
    n_series: int,
    model: str,
    rng: random.Random,
    step: tuple[int, float] | None,
) -> list[str]:
    """asv results of ``n_series`` benchmarks over ``n_commits``; returns the commits."""
    from asv import util
    from asv.results import Results
    from asv.runner import BenchmarkResult

    names = [f"w.W{j:03d}.track_compile_seconds" for j in range(n_series)]
    benchmarks = {
        name: {
            "name": name,
            "params": [],
            "param_names": [],
            "type": "track",
            "unit": "seconds",
            "version": "1",
        }
        for name in names
    }
    util.write_json(str(root / "benchmarks.json"), benchmarks, api_version=2)
    util.write_json(str(root / "m" / "machine.json"), {"machine": "m"}, api_version=1)
    commits = [f"{rng.getrandbits(160):040x}" for _ in range(n_commits)]
    for i, commit in enumerate(commits):
        res = Results(
            {"machine": "m", "python": "3.11"},
            {},
            commit,
            (1_600_000_000 + i * 86_400) * 1000,
            "3.11",
            "virtualenv-py3.11",
            {},
        )
        for j, name in enumerate(names):
            level = 0.05 * (1 + j / 50)
            if step is not None and j == 0 and i >= step[0]:
                level *= step[1]
            value = level * _noise(model, rng)
            res.add_result(benchmarks[name], BenchmarkResult([value], [None], [None], 0, "", None))
        res.save(str(root))
    return commits


def one(
    n_commits: int, n_series: int, model: str, seed: int, step: float | None
) -> tuple[bool, bool, bool, bool, bool, bool]:
    """(asv fit flags anything false, asv fit + evidence lists anything false, binseg +
    evidence lists anything false, then each one's planted step found at its commit)."""
    from jaxbench.analyse.detect import scan
    from jaxbench.store.series_table import load_series_table

    rng = random.Random(seed)
    planted = None if step is None else (rng.randint(3, n_commits - 3), step)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "results"
        commits = write_history(root, n_commits, n_series, model, rng, planted)
        table = load_series_table(root, use_cache=False)
        found, _fits = scan(table, detector="asv")
        fast, _fits = scan(table, detector="binseg")
    bad = None if planted is None else commits[planted[0]]

    def right(r: object) -> bool:
        return bad is not None and r.key.benchmark.startswith("w.W000.") and r.bad_commit == bad  # type: ignore[attr-defined]

    asv_false = any(not right(r) for r in found.steps)
    ours_false = any(not right(r) for r in found.regressions)
    fast_false = any(not right(r) for r in fast.regressions)
    return (
        asv_false,
        ours_false,
        fast_false,
        any(map(right, found.steps)),
        any(map(right, found.regressions)),
        any(map(right, fast.regressions)),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20, help="histories per cell")
    parser.add_argument("--series", type=int, default=100, help="series per history")
    parser.add_argument("--lengths", default="3,5,10,20,40", help="commits per history")
    parser.add_argument("--models", default="lognormal:0.1,lognormal:0.3,bimodal:0.2:1.8")
    parser.add_argument("--step", type=float, default=1.5, help="planted step (after / before)")
    args = parser.parse_args()
    start = time.perf_counter()
    print(
        f"{args.trials} histories per cell, {args.series} series each; "
        f"planted: one series x{args.step}"
    )
    print(
        "| noise | commits | histories with a false step: asv fit | asv fit + evidence "
        "| binseg + evidence | planted found: asv fit | asv fit + evidence "
        "| binseg + evidence |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for model in args.models.split(","):
        for n in (int(x) for x in args.lengths.split(",")):
            null = [one(n, args.series, model, 1000 * n + t, None) for t in range(args.trials)]
            cells = [f"{sum(r[i] for r in null)}/{args.trials}" for i in range(3)]
            if n >= 6:
                plant = [
                    one(n, args.series, model, 5000 + 1000 * n + t, args.step)
                    for t in range(args.trials)
                ]
                cells += [f"{sum(p[i] for p in plant)}/{args.trials}" for i in range(3, 6)]
            else:
                cells += ["-", "-", "-"]
            print(f"| {model} | {n} | " + " | ".join(cells) + " |", flush=True)
    print(f"({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
