"""First calls of identical sides over many rounds: is the review's paired test of them sound?

``jaxbench review`` (and ``jaxbench first-call``) measures each first call
(trace, lower, compile, first execute) once per fresh process, base and head
in turn, the side that goes first alternating from round to round, and tests
the log ratios of 10 rounds with a paired t-test, one Holm family per review.
That test holds its false alarms to 1 % only if the rounds' ratios are
independent and centred on 1 between identical sides. This script measures
that directly: a scratch copy of this project (``bench_review.py``'s, one
asv environment), a head that changes only the README, ``jaxbench
first-call`` over ``--rounds`` rounds, and from the two result files:

* per stage, the mean head/base ratio over all rows and rounds, and the
  p-value of the per-round means (a bias between identical sides);
* the same split by which side went first (an order effect: it only widens
  the spread when the order alternates);
* the lag-1 autocorrelation of each row's log ratios (near 0 for
  independent rounds, about ``+-2/sqrt(rounds)``): a positive one would make
  the t-test too eager;
* how slow each process was (its mean log value over the rows) against the
  next process, within a round and across a round boundary (the machine's
  drift);
* every window of ``--window`` rounds that starts on an even round (as a
  review's rounds do), tested as ``compare`` tests them: the paired p-value
  of each row, Holm over the rows; the windows a review at 1 % would flag.

    .venv/bin/python bench/bench_first_call_aa.py --rounds 40

``--repo`` reuses a scratch repository of an earlier run (its asv
environment built) instead of making one. Never imports jax (the first-call
processes do, in the asv environment).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

from asv.results import Results
from scipy import stats

from jaxbench.analyse.stats import holm_adjust, paired_p_value
from jaxbench.kinds import COMPILE_STAGES
from jaxbench.lockstep.coordinator import schedule

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_review import JAXBENCH, environ, git, make_head, make_project, sh

MACHINE = "first-call-aa"
ALPHA = 0.01

#: (benchmark, parameter index) -> one log(head / base) a round
Rows = dict[tuple[str, int], list[float]]
#: (benchmark, parameter index) -> (base's values, head's values), one a round
Sides = dict[tuple[str, int], tuple[list[float], list[float]]]


def measure(root: Path, base: str, head: str, rounds: int) -> Path:
    """``jaxbench first-call`` of every round; the results folder."""
    results = root / "results-aa"
    asv = [sys.executable, "-m", "asv"]
    sh([*asv, "machine", "--yes", "--machine", MACHINE], root, env=environ())
    # asv's own Setup: ``asv setup`` (asv 0.6.6) exits with its list of environments, 1
    setup = "from asv.commands.setup import Setup\nfrom asv.config import Config\n"
    sh([sys.executable, "-c", setup + "Setup.run(Config.load('asv.conf.json'))"], root,
       env=environ())  # fmt: skip
    command = [*JAXBENCH, "first-call", "--base-commit", base, "--head-commit", head,
               "--rounds", str(rounds), "--min-rounds", str(rounds),
               "--machine", MACHINE, "--results", str(results)]  # fmt: skip
    clock = time.perf_counter()
    sh(command, root, env=environ())
    print(f"first-call: {rounds} rounds a side in {time.perf_counter() - clock:.0f} s", flush=True)
    return results


def _load(results: Path, commit: str) -> Results:
    found = [
        p for p in (results / MACHINE).glob(f"{commit[:8]}-*.json") if p.name != "machine.json"
    ]
    if len(found) != 1:
        raise SystemExit(f"{results / MACHINE}: {len(found)} result files of {commit[:8]}")
    return Results.load(str(found[0]))


def values(results: Path, base: str, head: str) -> tuple[Rows, Sides]:
    """Per first-call row: the per-round log ratios, and both sides' values."""
    b, h = _load(results, base), _load(results, head)
    ratios: Rows = {}
    sides: Sides = {}
    for key in sorted(b.get_all_result_keys()):
        stage = key.rsplit(".", 1)[-1]
        if stage not in COMPILE_STAGES:
            continue
        params = b.get_result_params(key)
        for index, (bs, hs) in enumerate(
            zip(
                b.get_result_samples(key, params) or [],
                h.get_result_samples(key, params) or [],
                strict=True,
            )
        ):
            if bs and hs and len(bs) == len(hs) and min(bs) > 0 and min(hs) > 0:
                ratios[(key, index)] = [math.log(y / x) for x, y in zip(bs, hs, strict=True)]
                sides[(key, index)] = (list(bs), list(hs))
    if not ratios:
        raise SystemExit(f"{results}: no first-call samples of both sides")
    return ratios, sides


def _order(round_index: int) -> tuple[int, int]:
    """Which side ran first in a round (0 = base), as ``jaxbench first-call`` runs them."""
    first, second = schedule(1, round_index)[0]
    return first, second


def _lag1(xs: list[float]) -> float:
    return float(stats.pearsonr(xs[:-1], xs[1:]).statistic)


def report(ratios: Rows, sides: Sides, window: int) -> None:
    rounds = min(len(v) for v in ratios.values())
    print(f"{len(ratios)} first-call rows, {rounds} rounds of identical sides")
    print(f"{'stage':28} head/base  p (per-round means)  lag-1  base first  head first")
    for stage in sorted({key.rsplit(".", 1)[-1] for key, _ in ratios}):
        rows = [v[:rounds] for (key, _), v in ratios.items() if key.endswith("." + stage)]
        means = [statistics.fmean(r[i] for r in rows) for i in range(rounds)]
        base_first = [m for i, m in enumerate(means) if _order(i) == (0, 1)]
        head_first = [m for i, m in enumerate(means) if _order(i) == (1, 0)]
        print(f"{stage:28} {math.exp(statistics.fmean(means)):8.3f}x  "
              f"{paired_p_value(means):19.2g}  {_lag1(means):+.2f}  "
              f"{math.exp(statistics.fmean(base_first)):9.3f}x  "
              f"{math.exp(statistics.fmean(head_first)):9.3f}x")  # fmt: skip
    lags = [_lag1(v[:rounds]) for v in ratios.values()]
    band = 2 / math.sqrt(rounds)
    print(f"lag-1 autocorrelation of each row's log ratios: median {statistics.median(lags):+.3f} "
          f"(independent rounds: within 0 +- {band:.2f}, two standard errors)")  # fmt: skip
    slowness = []  # each process in the order it ran: its mean log value over the rows
    for r in range(rounds):
        for side in _order(r):
            logs = []
            for bs, hs in sides.values():
                centre = statistics.median(bs[:rounds] + hs[:rounds])
                logs.append(math.log((bs, hs)[side][r] / centre))
            slowness.append(statistics.fmean(logs))
    within = float(stats.pearsonr(slowness[0::2], slowness[1::2]).statistic)
    across = float(stats.pearsonr(slowness[1:-1:2], slowness[2::2]).statistic)
    spread = statistics.pstdev(slowness)
    print(f"how slow a process was against the next one: correlation {within:+.2f} within "
          f"a round, {across:+.2f} across rounds (spread {spread:.1%})")  # fmt: skip
    flagged, smallest = 0, []
    starts = range(0, rounds - window + 1, 2)  # a review's rounds start with round 0's order
    for start in starts:
        adjusted = holm_adjust([paired_p_value(v[start : start + window]) for v in ratios.values()])
        smallest.append(min(adjusted))
        flagged += min(adjusted) < ALPHA
    middle = statistics.median(smallest)
    print(f"windows of {window} rounds (a review's), starting on even rounds: {len(starts)}, "
          f"Holm-flagged at {ALPHA:g}: {flagged}; smallest Holm p per window "
          f"{min(smallest):.2g} to {max(smallest):.2g}, median {middle:.2g}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument("--rounds", type=int, default=40, help="rounds a side (default: 40)")
    parser.add_argument("--window", type=int, default=10, help="a review's rounds (default: 10)")
    parser.add_argument("--workdir", type=Path, help="scratch folder (default: a temporary one)")
    parser.add_argument("--repo", type=Path, help="an earlier run's scratch repository, reused")
    args = parser.parse_args()
    if args.rounds < args.window + 2:
        raise SystemExit(f"--rounds {args.rounds}: give at least --window + 2 ({args.window + 2})")
    if args.repo:
        root = args.repo
        base = git(root, "rev-parse", "main")
    else:
        root = (args.workdir or Path(tempfile.mkdtemp(prefix="bench-first-call-aa-"))) / "repo"
        if root.exists():
            raise SystemExit(f"--workdir: {root} exists; give a new folder or --repo {root}")
        base = make_project(root)
    head = make_head(root, base, "project", "aa", int(time.time()), {})
    ratios, sides = values(measure(root, base, head, args.rounds), base, head)
    report(ratios, sides, args.window)


if __name__ == "__main__":
    main()
