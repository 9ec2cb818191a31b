"""Scan time and peak memory of ``jaxbench regressions`` on a large history, cold and cached.

On a history written by ``bench/gen_history.py`` (generated into DIR when
DIR/results is missing), each run is a fresh ``python -m jaxbench regressions
--results DIR/results --format json`` subprocess; wall time from
``time.perf_counter``, peak memory from ``getrusage(RUSAGE_CHILDREN)`` (the
largest resident set of any process of the run, the fitting workers included):

1. cold: no cache;
2. cached: nothing changed since (every file's digest found in the cache);
3. one file appended: one new commit's result file in one environment
   (a copy of the newest one with a new commit and date, values x1.01);
4. one commit on every environment: the same for each machine and environment.

Each line also says whether the answer (the JSON listing) equals a cold
scan's of the same files. ``--detector asv`` (and ``--quick``) times asv's
step fit instead of the default binseg.

``--failing`` generates (and reads) ``gen_history.py --failing``'s history
instead: a retired environment whose last build failed, a whole-result
failure at a live environment's newest commit, three partial failures and
asv's logs of them (passed as ``--asv-log``); after the cold and cached runs
it times the default text listing (cached) and prints its line count, and
``--show`` prints that listing.

Usage: ``python bench/bench_scan.py DIR [--scale 1.0] [--commits 900] [--failing [--show]]
[--detector asv [--quick]] [--cold-only]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

CACHE = ".jaxbench-scan-cache.npz"


def run(
    results: Path, fit: list[str], no_cache: bool = False, text: bool = False
) -> tuple[float, float, str]:
    """(seconds, peak MiB of the largest process, stdout) of one regressions run (JSON, or
    the default text listing)."""
    argv = [sys.executable, "-m", "jaxbench", "regressions", "--results", str(results)]
    argv += [*fit] if text else ["--format", "json", *fit]
    argv += ["--no-cache"] if no_cache else []
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    # ru_maxrss only grows: a run below the earlier peak reads as that peak
    return elapsed, max(peak, before) / 1024, proc.stdout


def cpu_seconds() -> float:
    """User and system CPU time of the finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def append_commit(results: Path, machine: str, env: str, k: int) -> None:
    """One more commit's result file for (machine, env): the newest, moved a day on."""
    newest = max(
        (json.loads(p.read_text()) for p in (results / machine).glob(f"*-{env}.json")),
        key=lambda d: d["date"],
    )
    commit = f"{0xFEED0000 + k:08x}" + "cd" * 16
    newest["commit_hash"] = commit
    newest["date"] += 86_400_000
    for row in newest["results"].values():
        row[0] = [v * 1.01 if isinstance(v, float) else v for v in row[0]]
    (results / machine / f"{commit[:8]}-{env}.json").write_text(json.dumps(newest))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--detector", choices=("binseg", "asv"), default="binseg")
    parser.add_argument("--quick", action="store_true", help="with --detector asv")
    parser.add_argument("--cold-only", action="store_true", help="only the cold scan")
    parser.add_argument("--commits", type=int, default=900, help="of a history to generate")
    parser.add_argument(
        "--failing", action="store_true", help="gen_history.py --failing's history and logs"
    )
    parser.add_argument("--show", action="store_true", help="with --failing: print the listing")
    opts = parser.parse_args()
    results = opts.dir / "results"
    logs = [opts.dir / f"asv-run-{machine}.log" for machine in ("m-a", "m-b")]
    if not results.is_dir():
        subprocess.run(
            [
                sys.executable,
                str(Path(__file__).parent / "gen_history.py"),
                str(opts.dir),
                *("--scale", str(opts.scale), "--commits", str(opts.commits)),
                *(["--failing"] if opts.failing else []),
            ],
            check=True,
        )
    if opts.failing and not all(log.is_file() for log in logs):
        raise SystemExit(f"{opts.dir}: not written with gen_history.py --failing; use a new DIR")
    for extra in results.glob("*/feed*.json"):
        extra.unlink()  # appended by an earlier run of this script
    (results / CACHE).unlink(missing_ok=True)
    n_files = sum(1 for _ in results.glob("*/*-*.json"))
    fit = ["--detector", opts.detector] + (["--quick"] if opts.quick else [])
    print(f"history: {results} ({n_files} result files), fit: {' '.join(fit)}")
    if opts.failing:
        fit += [arg for log in logs for arg in ("--asv-log", str(log))]

    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    spent = cpu_seconds()
    cold, cold_mem, cold_out = run(results, fit)
    spent = cpu_seconds() - spent
    n_series = json.loads(cold_out)["series"]
    print(
        f"cold:                        {cold:7.2f} s  peak {cold_mem:6.0f} MiB  "
        f"({n_series} series; CPU {spent:.2f} s, its processes together)"
    )
    if opts.cold_only:
        (results / CACHE).unlink(missing_ok=True)
        return
    warm, _mem, warm_out = run(results, fit)
    print(
        f"cached, nothing changed:     {warm:7.2f} s  ({warm / cold:.1%} of cold)  "
        f"same answer: {warm_out == cold_out}"
    )
    if opts.failing:
        shown, _mem, listing = run(results, fit, text=True)
        doc = json.loads(cold_out)
        groups = doc["failing"]
        print(
            f"default text listing:        {shown:7.2f} s  {listing.count(chr(10))} lines; "
            f"{sum(len(g['failures']) for g in groups)} failing series in {len(groups)} groups, "
            f"{len(doc['events'])} events"
        )
        if opts.show:
            print(listing, end="")

    append_commit(results, "m-a", "py3.10-numpy1", 1)
    inc, _mem, inc_out = run(results, fit)
    ref, _m, ref_out = run(results, fit, no_cache=True)
    print(
        f"one file appended:           {inc:7.2f} s  ({inc / ref:.1%} of cold {ref:.2f} s)  "
        f"same answer: {inc_out == ref_out}"
    )

    for k, (machine, env) in enumerate(
        [("m-a", "py3.10-numpy1"), ("m-a", "py3.11-numpy2"), ("m-b", "py3.11-numpy2")], 2
    ):
        append_commit(results, machine, env, k)
    inc, _mem, inc_out = run(results, fit)
    ref, _m, ref_out = run(results, fit, no_cache=True)
    print(
        f"one commit, every env:       {inc:7.2f} s  ({inc / ref:.1%} of cold {ref:.2f} s)  "
        f"same answer: {inc_out == ref_out}"
    )
    for extra in results.glob("*/feed*.json"):
        extra.unlink()
    (results / CACHE).unlink(missing_ok=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
