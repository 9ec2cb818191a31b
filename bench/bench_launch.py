"""What asv's launch method costs a benchmark: ``spawn`` against ``forkserver``, side by side.

``jaxbench init`` writes ``forkserver`` where importing the project starts no
jax backend (:mod:`jaxbench.scaffold.launch`), else ``spawn``. This script
runs the same ``asv run`` of this repository's figures benchmarks (the review's
``asv run`` step selects every benchmark but the warm times), once with each
launch method, alternating which goes first, ``--repeats`` times, in this
checkout's virtualenv (``--python=same``: no environment is built, only the
launch differs), in a scratch clone of HEAD (what the figures write stays there).
Prints each run's wall time, asv's count of the benchmarks it ran (over the
matrix's environments), the time per benchmark, and the ratio spawn /
forkserver of each repeat::

    .venv/bin/python bench/bench_launch.py --repeats 2

``--quick`` runs each benchmark once and saves nothing; ``setup_cache`` (one
fresh process per benchmark module, the same under both methods) is in both
figures.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
#: asv's count, e.g. ``Running 38 total benchmarks (1 commits * 2 environments * 19 benchmarks)``.
TOTAL = re.compile(r"Running (\d+) total benchmarks")


def run_once(clone: Path, method: str, bench: str) -> tuple[float, int, str]:
    """(wall seconds, benchmarks run, output) of one ``asv run`` with ``method``."""
    command = [
        sys.executable, "-m", "asv", "run", "--python=same", "--quick",
        "--launch-method", method, "--machine", "launch-bench", "-b", bench,
    ]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(
        command,
        cwd=clone,
        capture_output=True,
        text=True,
        check=False,
        env=dict(os.environ, JAXBENCH_MACHINE="launch-bench"),
    )
    seconds = time.perf_counter() - started
    output = done.stdout + done.stderr
    if done.returncode not in (0, 2):
        raise SystemExit(f"asv run --launch-method {method} exited {done.returncode}:\n{output}")
    found = TOTAL.search(output)
    return seconds, int(found.group(1)) if found else 0, output


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument(
        "-b",
        "--bench",
        default=r"^workloads\.(Predict|Energy|Structured)Figures\.",
        help="asv's -b regex (default: three suites' figures benchmarks)",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-launch-") as scratch:
        clone = Path(scratch) / "jaxbench"
        subprocess.run(["git", "clone", "-q", str(PROJECT), str(clone)], check=True)
        subprocess.run(
            [sys.executable, "-m", "asv", "machine", "--yes", "--machine", "launch-bench"],
            cwd=clone,
            check=True,
            capture_output=True,
        )
        return _compare(clone, args.bench, args.repeats)


def _compare(clone: Path, bench: str, repeats: int) -> int:
    ratios = []
    for repeat in range(repeats):
        order = ("spawn", "forkserver") if repeat % 2 == 0 else ("forkserver", "spawn")
        walls: dict[str, float] = {}
        for method in order:
            seconds, count, _ = run_once(clone, method, bench)
            walls[method] = seconds
            per = seconds / count if count else float("nan")
            print(f"repeat {repeat + 1} {method:>10}: {seconds:6.1f} s, {count} benchmarks, "
                  f"{per:.2f} s a benchmark", flush=True)  # fmt: skip
        ratios.append(walls["spawn"] / walls["forkserver"])
        print(f"repeat {repeat + 1}: spawn / forkserver = {ratios[-1]:.2f}x", flush=True)
    print(f"median spawn / forkserver over {len(ratios)} repeats: {statistics.median(ratios):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
