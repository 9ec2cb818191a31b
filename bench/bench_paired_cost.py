"""Cost of pairing a commit against a plain ``asv run`` of it, on this project's suite.

Times, in this virtualenv (asv ``--python=same``, no environment to build):

1. ``asv run`` of one commit: the whole suite (every benchmark: time, memory,
   figures), asv's own rounds;
2. ``jaxbench pair-history`` of one pair (HEAD~1, HEAD): every ``time_*``
   benchmark and parameter set, ``--rounds`` x ``--per-round`` and the
   second look (``--second-look`` rounds where asked for), one worker
   pair per round serving the whole suite (each side's ``src/`` from
   ``git archive`` in front of ``PYTHONPATH``);
3. with ``--per-benchmark``, the same lockstep sampling with a process pair
   per benchmark and parameter set per round (the old ``jaxbench ab``), for
   the ratio the issue's "Cost" item asks about.

Prints the wall times and the ratios. Usage:
``python bench/bench_paired_cost.py [--rounds 10] [--per-round 20] [--second-look 10]
[--per-benchmark]``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from asv_existing import ROOT, write_conf

MACHINE = "cost"
ENV = "existing-same"


def _wall(cmd: list[str], *, echo: str = "") -> float:
    """Seconds ``cmd`` took; prints its stderr lines that contain ``echo``, if given."""
    start = time.perf_counter()
    done = subprocess.run(cmd, check=False, cwd=ROOT, capture_output=True, text=True)
    if done.returncode not in (0, 2):  # asv: 2 when a benchmark failed
        raise SystemExit(f"{' '.join(cmd[:5])}: exit {done.returncode}\n{done.stdout}{done.stderr}")
    took = time.perf_counter() - start
    for line in done.stderr.splitlines():
        if echo and echo in line:
            print(f"  {line}", flush=True)
    return took


def _rev(name: str) -> str:
    return subprocess.check_output(["git", "-C", str(ROOT), "rev-parse", name], text=True).strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--per-round", type=int, default=20)
    parser.add_argument("--second-look", type=int, default=10, help="as pair-history's")
    parser.add_argument("--per-benchmark", action="store_true")
    parser.add_argument("-b", "--bench", default=None, help="limit both runs (asv -b regex)")
    args = parser.parse_args()
    head, base = _rev("HEAD"), _rev("HEAD~1")
    only = ["-b", args.bench] if args.bench else []
    with tempfile.TemporaryDirectory(prefix="paired-cost-") as tmp_name:
        tmp = Path(tmp_name)
        conf = write_conf(
            tmp / "asv.conf.json",
            benchmark_dir=ROOT / "benchmarks",
            results_dir=tmp / "results",
            html_dir=tmp / "html",
        )
        # asv's machine entry (~/.asv-machine.json), as make bench writes it
        _wall([sys.executable, "-m", "jaxbench", "machine", "--machine", MACHINE,
               "--results", str(tmp / "results")])  # fmt: skip
        asv = _wall(
            [sys.executable, "-m", "asv", "run", "--config", str(conf), "--python=same",
             "--set-commit-hash", head, "--machine", MACHINE, "--record-samples", *only]
        )  # fmt: skip
        print(f"asv run, one commit, whole suite:            {asv:7.1f} s", flush=True)
        paired = _wall(
            [sys.executable, "-m", "jaxbench", "pair-history", base, head, "--no-previous",
             "--unmeasured",
             "--config", str(ROOT / "asv.conf.json"), "--python", sys.executable, "--env", ENV,
             "--machine", MACHINE, "--results", str(tmp / "results"),
             "--benchmarks", str(ROOT / "benchmarks"), "--rounds", str(args.rounds),
             "--per-round", str(args.per_round), "--second-look", str(args.second_look),
             *only],
            echo="rounds x",
        )  # fmt: skip
        print(
            f"pair-history, one pair, time_* ({args.rounds}x{args.per_round}, second look "
            f"{args.second_look}): {paired:7.1f} s"
            f"  = {paired / asv:.2f}x the asv run",
            flush=True,
        )
        if args.per_benchmark:
            old = _per_benchmark(args, base, head, tmp)
            print(
                f"same, a process pair per benchmark:          {old:7.1f} s"
                f"  = {old / asv:.2f}x the asv run, {old / paired:.2f}x one pair per round",
                flush=True,
            )
    return 0


def _per_benchmark(args: argparse.Namespace, base: str, head: str, tmp: Path) -> float:
    """The old schedule: run_lockstep per benchmark and parameter set."""
    import itertools
    import re

    from jaxbench.lockstep.coordinator import Side, list_benchmarks, run_lockstep

    sides = []
    for label, commit in (("base", base), ("head", head)):
        src = tmp / f"src-{label}"
        src.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", commit, "src"], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
        sides.append(
            Side(
                label,
                sys.executable,
                ROOT / "benchmarks",
                environ=(("PYTHONPATH", str(src / "src")),),
            )
        )
    start = time.perf_counter()
    listed = list_benchmarks(sides[1])
    if args.bench:
        listed = [b for b in listed if re.search(args.bench, str(b["name"]))]
    for bench in listed:
        params = bench.get("params") or []
        combos = [None] if not params else list(range(len(list(itertools.product(*params)))))
        for idx in combos:
            run_lockstep(
                sides[0], sides[1], str(bench["name"]), idx,
                rounds=args.rounds, per_round=args.per_round,
            )  # fmt: skip
    return time.perf_counter() - start


if __name__ == "__main__":
    sys.exit(main())
