"""``jaxbench compare`` of commits from separate runs: A/A false alarms and a planted slowdown.

Reads results only (no asv run): the committed history in ``results/``
(this project's own, 12 commits x 2 jax environments; none of the 12
commits touches ``benchmarks/`` or ``src/jaxbench/measure/``, which the
script checks with git, so every pair is an A/A pair of identical measured
code, each commit in its own measuring window).

* A/A: every pair of the 12 commits (66 per environment), compared with
  :func:`jaxbench.analyse.compare.compare_points` and the history around
  them, as ``jaxbench compare BASE HEAD`` does. Printed: warm-time rows
  tested, flagged (regression or improvement after Holm) and untested, and
  why; and the same pairs judged as if base and head were one run (the
  within-run Welch test on round medians, the rule before issue 29).
* Planted: for each commit after the first, a copy of the results directory
  whose result files of that commit (both environments) have every warm
  time (``time_*``: its value, samples, interval and quartiles) multiplied
  by ``--factor``; compared with the commit before it, with the history
  limited to the ``k`` other commits nearest to them, for ``k`` from 2 to
  10. Printed: how many planted rows were found, per ``k``.

Usage: ``python bench/bench_cross_run.py [--results results] [--factor 1.2]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from jaxbench.analyse.compare import (  # noqa: E402
    CompareReport,
    Settings,
    WarmTest,
    compare_points,
)
from jaxbench.analyse.kinds import Kind  # noqa: E402
from jaxbench.analyse.stats import Verdict  # noqa: E402
from jaxbench.store.results import Point, load_history  # noqa: E402

MEASURED = ("benchmarks", "src/jaxbench/measure")
_FLAGGED = (Verdict.REGRESSION, Verdict.IMPROVEMENT)
_TIME_COLUMNS = ("result", "samples", "stats_ci_99_a", "stats_ci_99_b", "stats_q_25", "stats_q_75")


def _same_measured_code(commits: Sequence[str]) -> bool:
    for a, b in itertools.pairwise(commits):
        done = subprocess.run(
            ["git", "diff", "--quiet", a, b, "--", *MEASURED], cwd=ROOT, check=False
        )
        if done.returncode != 0:
            return False
    return True


def _side(points: Sequence[Point], commit: str) -> list[Point]:
    return [p for p in points if p.commit == commit]


def _warm(report: CompareReport) -> list[tuple[WarmTest | None, Verdict, str]]:
    return [
        (r.warm_test, r.verdict, r.comparison.reason)
        for r in report.rows
        if r.kind is Kind.TIME and r.warm_test is not None
    ]


def aa(results: Path) -> None:
    history = load_history(results)
    commits = history.commits()
    print(f"{results}: {len(commits)} commits, environments: {len(history.env_names())}")
    same = _same_measured_code(commits)
    print(f"identical {' and '.join(MEASURED)} at every commit (git diff): {same}")
    tally: Counter[str] = Counter()
    before: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    pairs = list(itertools.combinations(commits, 2))
    for base_commit, head_commit in pairs:
        base, head = _side(history.points, base_commit), _side(history.points, head_commit)
        report = compare_points(base, head, history=history.points)
        for how, verdict, reason in _warm(report):
            tally[how.value if how else "-"] += 1
            if verdict in _FLAGGED:
                tally["flagged"] += 1
            if how is WarmTest.NOT_TESTED:
                reasons[reason.split(":")[0]] += 1
        # the rule before issue 29: the within-run test, as if one run
        one = [dataclasses.replace(p, started_at=0, duration=1.0) for p in (*base, *head)]
        old = compare_points(_side(one, base_commit), _side(one, head_commit))
        for _how, verdict, _reason in _warm(old):
            before["tested"] += 1
            before["flagged"] += verdict in _FLAGGED
        before["pairs flagged"] += any(v in _FLAGGED for _h, v, _r in _warm(old))
    tested = tally[WarmTest.ACROSS_RUNS.value]
    print(f"A/A: {len(pairs)} pairs")
    print(
        f"  across runs (history spread): {tested} warm rows tested, {tally['flagged']} flagged "
        f"({tally['flagged'] / max(1, tested):.2%}); {tally[WarmTest.NOT_TESTED.value]} untested; "
        f"{tally[WarmTest.ONE_RUN.value]} judged as one run"
    )
    for reason, n in reasons.most_common():
        print(f"    untested: {n} x {reason}")
    print(
        f"  as one run (Welch on round medians, before): {before['tested']} tested, "
        f"{before['flagged']} flagged ({before['flagged'] / max(1, before['tested']):.2%}), "
        f"in {before['pairs flagged']} of {len(pairs)} pairs"
    )


def _plant(results: Path, copy: Path, commit: str, factor: float) -> None:
    shutil.copytree(results, copy)
    for path in copy.glob(f"*/{commit[:8]}-*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        columns = data["result_columns"]
        for name, row in data["results"].items():
            if not name.rsplit(".", 1)[-1].startswith("time_"):
                continue
            for column in _TIME_COLUMNS:
                if column not in columns:
                    continue
                i = columns.index(column)
                row[i] = _times(row[i], factor)
        path.write_text(json.dumps(data), encoding="utf-8")


def _times(value: object, factor: float) -> object:
    if isinstance(value, list):
        return [_times(v, factor) for v in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value * factor
    return value


def _nearest(points: Sequence[Point], commits: Sequence[str], base: str, k: int) -> list[Point]:
    """The points of base, head (the commit after base) and the k other commits nearest them."""
    i = commits.index(base)
    others = [c for c in commits if c not in (base, commits[i + 1])]
    others.sort(key=lambda c: abs(commits.index(c) - (i + 0.5)))
    keep = {base, commits[i + 1], *others[:k]}
    return [p for p in points if p.commit in keep]


def planted(results: Path, factor: float) -> None:
    commits = load_history(results).commits()
    found: Counter[int] = Counter()
    rows: Counter[int] = Counter()
    untested: Counter[int] = Counter()
    ks = range(2, len(commits) - 1)
    with tempfile.TemporaryDirectory(prefix="bench-cross-run-") as tmp:
        for n, (base_commit, head_commit) in enumerate(itertools.pairwise(commits)):
            copy = Path(tmp) / f"r{n}"
            _plant(results, copy, head_commit, factor)
            history = load_history(copy)
            for k in ks:
                points = _nearest(history.points, commits, base_commit, k)
                report = compare_points(
                    _side(points, base_commit),
                    _side(points, head_commit),
                    Settings(),
                    history=points,
                )
                for how, verdict, _reason in _warm(report):
                    rows[k] += 1
                    found[k] += verdict is Verdict.REGRESSION
                    untested[k] += how is WarmTest.NOT_TESTED
    print(f"planted x{factor:g} warm times at head, {len(commits) - 1} adjacent pairs:")
    for k in ks:
        print(
            f"  {k:2d} other commits of history: {found[k]:3d} of {rows[k]} rows found "
            f"({found[k] / max(1, rows[k]):.0%}), {untested[k]} untested"
        )


def spreads(results: Path, family: int = 20, alpha: float = 0.01) -> None:
    """Each warm series' spread between runs, and the smallest change it lets through."""
    import math

    import numpy as np
    from scipy.stats import t as student

    from jaxbench.analyse.stats import successive_variance

    history = load_history(results)
    print(f"spread between runs (all commits) and the smallest ratio found (Holm over {family}):")
    found = []
    for key, points in history.series().items():
        values = [
            p.value for p in points if p.value and key.benchmark.split(".")[-1][:5] == "time_"
        ]
        if len(values) < 3:
            continue
        variance, n_diffs = successive_variance([np.log(values)])
        sigma = math.sqrt(variance)
        critical = float(student.isf(alpha / family / 2, n_diffs - 2))
        found.append(
            (sigma, math.exp(critical * sigma * math.sqrt(2)), key.entry_name, key.env_name)
        )
    for sigma, ratio, name, env in sorted(found):
        print(f"  sigma {sigma:6.1%}  smallest {ratio:5.2f}x  {name} [{env.split('-')[3]}]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=ROOT / "results")
    parser.add_argument("--factor", type=float, action="append")
    args = parser.parse_args()
    aa(args.results)
    spreads(args.results)
    for factor in args.factor or [1.2]:
        planted(args.results, factor)


if __name__ == "__main__":
    main()
