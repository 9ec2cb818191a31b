"""History detection power: the paired history against asv's step detection, same runs.

Each history is ``--commits`` commits of a small library (``toylib``: a pure
Python loop, real host-side work). In a history *with* a slowdown, one commit
drawn at random (never the first) makes the loop ``1 + --slowdown`` times
longer, and every later commit keeps it; a history *without* changes nothing.
The suite (one ``time_`` benchmark calling ``toylib.work``) is the same for
every commit, as asv runs the working tree's suite.

Every pair (commit k-1, commit k) is timed in lockstep exactly as ``jaxbench
pair-history`` does (:func:`jaxbench.lockstep.coordinator.run_lockstep_suite`,
this Python, each side's ``toylib`` in front of ``PYTHONPATH``; ``--rounds``
rounds, then ``--second-look`` more where
:func:`jaxbench.analyse.paired_history.wants_more_rounds` asks for them, as
``pair-history``'s defaults) and estimated with
:func:`jaxbench.analyse.paired_history.estimate_pair`. ``--second-look 0``
measures one look of ``--rounds``. From the same
samples, each commit's unpaired value (the median of its samples where it was
the head; commit 1's where it was the base) goes through asv's own step
detection (``asv.step_detect.detect_steps`` + ``detect_regressions``, threshold
``--asv-threshold``), as ``asv publish`` / ``jaxbench regressions`` would.

Prints, per method: share of slowed histories flagged at the right commit
(goal >= 95 %), share of unchanged commit pairs flagged (goal <= 1 %), and the
wall time. The issue's full size is the default
(``--with 20 --without 20 --commits 10``); ``--with 6 --without 6`` fits in a
few minutes on a 2-core machine.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from jaxbench.analyse.paired_history import estimate_pair, wants_more_rounds
from jaxbench.lockstep.coordinator import Item, Side, SideResult, run_lockstep_suite

WORK = """\
def work():
    total = 0
    for i in range({n}):
        total += i * i
    return total
"""
SUITE = """\
import toylib


class Work:
    number = {number}

    def time_work(self):
        toylib.work()
"""
ITEM = Item("bench.Work.time_work")


def _library(root: Path, n: int) -> Path:
    (root / "toylib").mkdir(parents=True)
    (root / "toylib" / "__init__.py").write_text(WORK.format(n=n))
    return root


def _asv_flags(values: list[float], threshold: float) -> set[int]:
    """Indices asv's step detection calls the first bad commit of a regression."""
    from asv import step_detect

    steps = step_detect.detect_steps(values, None)
    _last, _best, jumps = step_detect.detect_regressions(steps, threshold, min_size=2)
    return {int(bad) for _good, bad, _a, _b in jumps or ()}


def one_history(
    tmp: Path, planted: int | None, args: argparse.Namespace
) -> tuple[set[int], set[int], int]:
    """(commits the paired history flags, commits asv's flags, pairs given a second look)."""
    bench = tmp / "benchmarks"
    bench.mkdir(parents=True)
    (bench / "__init__.py").write_text("")
    (bench / "bench.py").write_text(SUITE.format(number=args.number))
    libs = []
    for k in range(args.commits):
        slow = planted is not None and k >= planted
        n = round(args.loop * (1 + args.slowdown)) if slow else args.loop
        libs.append(_library(tmp / f"c{k}", n))
    paired: set[int] = set()
    head_samples: dict[int, tuple[float, ...]] = {}
    looked_again = 0

    def more(_i: int, b: SideResult, h: SideResult) -> bool:
        nonlocal looked_again
        first = len(b.samples) <= args.rounds * args.per_round
        wanted = wants_more_rounds(
            b.samples, h.samples, per_round=args.per_round, first_look=args.rounds, family=1
        )
        looked_again += wanted and first
        return wanted

    first_look = args.rounds if args.second_look else None
    for k in range(1, args.commits):
        sides = [
            Side(label, sys.executable, bench, environ=(("PYTHONPATH", str(libs[j])),))
            for label, j in (("base", k - 1), ("head", k))
        ]
        ((b, h),) = run_lockstep_suite(
            sides[0],
            sides[1],
            [ITEM],
            rounds=args.rounds,
            per_round=args.per_round,
            more_rounds=args.second_look,
            more=more,
        )
        if b.failure or h.failure:
            raise SystemExit(f"pair {k}: {b.failure or h.failure}")
        estimate = estimate_pair(
            ITEM.name, (), b.samples, h.samples, per_round=args.per_round, first_look=first_look
        )
        if estimate is not None and estimate.regression:
            paired.add(k)
        first = args.rounds * args.per_round  # asv's view: the same count for every commit
        head_samples[k] = h.samples[:first]
        if k == 1:
            head_samples[0] = b.samples[:first]
    values = [statistics.median(head_samples[k]) for k in range(args.commits)]
    return paired, _asv_flags(values, args.asv_threshold), looked_again


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--with", dest="n_with", type=int, default=20)
    parser.add_argument("--without", dest="n_without", type=int, default=20)
    parser.add_argument("--commits", type=int, default=10)
    parser.add_argument("--slowdown", type=float, default=0.05)
    parser.add_argument("--rounds", type=int, default=10, help="rounds of the first look")
    parser.add_argument("--second-look", type=int, default=10, help="0: one look")
    parser.add_argument("--per-round", type=int, default=20)
    parser.add_argument("--loop", type=int, default=5_000, help="loop length of toylib.work")
    parser.add_argument("--number", type=int, default=4, help="calls per sample")
    parser.add_argument("--asv-threshold", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    plan = [rng.randrange(1, args.commits) for _ in range(args.n_with)] + [None] * args.n_without
    counts = {
        m: {"right": 0, "wrong_commit": 0, "missed": 0, "false": 0, "unchanged": 0}
        for m in ("paired", "asv")
    }
    start = time.perf_counter()
    looked_again = 0
    with tempfile.TemporaryDirectory(prefix="history-power-") as tmp:
        for i, planted in enumerate(plan):
            *flags, again = one_history(Path(tmp) / f"h{i}", planted, args)
            looked_again += again
            for method, found in zip(("paired", "asv"), flags, strict=True):
                c = counts[method]
                unchanged = [k for k in range(1, args.commits) if k != planted]
                c["unchanged"] += len(unchanged)
                c["false"] += sum(1 for k in unchanged if k in found)
                if planted is not None:
                    if planted in found:
                        c["right"] += 1
                    elif found:
                        c["wrong_commit"] += 1
                    else:
                        c["missed"] += 1
            print(
                f"history {i + 1}/{len(plan)}: planted {planted}, paired flags "
                f"{sorted(flags[0])}, asv flags {sorted(flags[1])}",
                file=sys.stderr,
                flush=True,
            )
    wall = time.perf_counter() - start
    pairs = len(plan) * (args.commits - 1)
    looks = (
        f", +{args.second_look} for {looked_again} of {pairs} pairs (second look)"
        if args.second_look
        else ""
    )
    print(
        f"{args.n_with} histories with a +{args.slowdown:.0%} slowdown, {args.n_without} without; "
        f"{args.commits} commits each; lockstep {args.rounds} rounds x {args.per_round} samples "
        f"a pair{looks}; {wall:.0f} s in all"
    )
    print(f"{'method':<28} {'flagged at the right commit':>28} {'unchanged pairs flagged':>24}")
    for method, label in (
        ("paired", "paired history"),
        ("asv", f"asv step detection ({args.asv_threshold:g})"),
    ):
        c = counts[method]
        right = f"{c['right']}/{args.n_with} ({c['right'] / max(1, args.n_with):.0%})"
        false = f"{c['false']}/{c['unchanged']} ({c['false'] / max(1, c['unchanged']):.1%})"
        print(f"{label:<28} {right:>28} {false:>24}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
