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
* Planted: for each adjacent pair (``--pairs`` spread evenly), the head's
  warm times (``time_*``: value, samples, interval and quartiles) multiplied
  by ``--factor`` in memory, compared with the commit before it, the history
  limited to the ``k`` other commits nearest to them (``--ks``, default every
  k from 2). Printed: how many planted rows were found, per ``k``.

A history whose code changes (pvlib's, ``tests/data/pvlib/results``) has no
A/A pairs, but its planted counts say how many commits the rule needs where
the runs themselves are quiet (a dedicated benchmark machine)::

    python bench/bench_cross_run.py --results tests/data/pvlib/results --no-aa \
        --env ENV --ks 6,10,20,40 --pairs 40

Usage: ``python bench/bench_cross_run.py [--results results] [--factor 1.2]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import subprocess
import sys
from collections import Counter, defaultdict
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
from jaxbench.analyse.stats import Verdict  # noqa: E402
from jaxbench.kinds import Kind  # noqa: E402
from jaxbench.store.results import Point, load_history  # noqa: E402

MEASURED = ("benchmarks", "src/jaxbench/measure")
_FLAGGED = (Verdict.REGRESSION, Verdict.IMPROVEMENT)


def _same_measured_code(commits: Sequence[str], repo: Path = ROOT) -> bool:
    for a, b in itertools.pairwise(commits):
        done = subprocess.run(
            ["git", "diff", "--quiet", a, b, "--", *MEASURED], cwd=repo, check=False
        )
        if done.returncode != 0:
            return False
    return True


def _side(points: Sequence[Point], commit: str) -> list[Point]:
    return [p for p in points if p.commit == commit]


def _params(params: Sequence[str]) -> str:
    return f"({', '.join(params)})" if params else ""


def _warm(report: CompareReport) -> list[tuple[WarmTest | None, Verdict, str]]:
    return [
        (r.warm_test, r.verdict, r.comparison.reason)
        for r in report.rows
        if r.kind is Kind.TIME and r.warm_test is not None
    ]


def aa(results: Path, repo: Path = ROOT) -> None:
    history = load_history(results)
    commits = history.commits()
    print(f"{results}: {len(commits)} commits, environments: {len(history.env_names())}")
    same = _same_measured_code(commits, repo)
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


def _scaled(point: Point, factor: float) -> Point:
    """A warm time (``time_*``) as if the code were ``factor`` times slower: value,
    samples, interval and quartiles multiplied; any other point unchanged."""
    if point.value is None or not point.key.benchmark.rsplit(".", 1)[-1].startswith("time_"):
        return point

    def pair(values: tuple[float, float] | None) -> tuple[float, float] | None:
        return None if values is None else (values[0] * factor, values[1] * factor)

    return dataclasses.replace(
        point,
        value=point.value * factor,
        samples=tuple(s * factor for s in point.samples),
        ci_99=pair(point.ci_99),
        q_25_75=pair(point.q_25_75),
    )


def _nearest(points: Sequence[Point], commits: Sequence[str], base: str, k: int) -> list[Point]:
    """The points of base, head (the commit after base) and the k other commits nearest them."""
    i = commits.index(base)
    others = [c for c in commits if c not in (base, commits[i + 1])]
    others.sort(key=lambda c: abs(commits.index(c) - (i + 0.5)))
    keep = {base, commits[i + 1], *others[:k]}
    return [p for p in points if p.commit in keep]


def planted(
    results: Path,
    factor: float,
    *,
    ks: Sequence[int] | None = None,
    pairs: int | None = None,
    env: str | None = None,
    per_series_table: bool = False,
) -> None:
    """The head of each adjacent pair (at most ``pairs`` of them, spread evenly) planted
    ``factor`` times slower and compared with its base, the history cut to ``k`` others."""
    history = load_history(results, env_name=env)
    commits = history.commits()
    adjacent = list(itertools.pairwise(commits))
    if pairs is not None and len(adjacent) > pairs:
        step = len(adjacent) / pairs
        adjacent = [adjacent[int(i * step)] for i in range(pairs)]
    ks = list(ks) if ks else list(range(2, len(commits) - 1))
    found: Counter[int] = Counter()
    rows: Counter[int] = Counter()
    untested: Counter[int] = Counter()
    per_series: defaultdict[str, Counter[int]] = defaultdict(Counter)
    per_series_rows: defaultdict[str, Counter[int]] = defaultdict(Counter)
    for base_commit, head_commit in adjacent:
        points = [_scaled(p, factor) if p.commit == head_commit else p for p in history.points]
        for k in ks:
            near = _nearest(points, commits, base_commit, k)
            report = compare_points(
                _side(near, base_commit), _side(near, head_commit), Settings(), history=near
            )
            for row in report.rows:
                if row.kind is not Kind.TIME or row.warm_test is None:
                    continue
                hit = row.verdict is Verdict.REGRESSION
                rows[k] += 1
                found[k] += hit
                untested[k] += row.warm_test is WarmTest.NOT_TESTED
                name = f"{row.benchmark}{_params(row.params)}"
                per_series[name][k] += hit
                per_series_rows[name][k] += 1
    print(f"planted x{factor:g} warm times at head, {len(adjacent)} adjacent pairs:")
    for k in ks:
        print(
            f"  {k:3d} other commits of history: {found[k]:4d} of {rows[k]} rows found "
            f"({found[k] / max(1, rows[k]):.0%}), {untested[k]} untested"
        )
    if per_series_table:
        print("  found per series, at " + ", ".join(f"k={k}" for k in ks) + ":")
        for name, hits in sorted(per_series.items()):
            cells = "  ".join(f"{hits[k]:3d}/{per_series_rows[name][k]:<3d}" for k in ks)
            print(f"    {cells}  {name}")


def spreads(results: Path, family: int = 20, alpha: float = 0.01, env: str | None = None) -> None:
    """Each warm series' spread between runs, and the smallest change it lets through."""
    import math

    import numpy as np
    from scipy.stats import t as student

    from jaxbench.analyse.stats import successive_variance

    history = load_history(results, env_name=env)
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
    parser.add_argument("--env", help="one environment name (default: all)")
    parser.add_argument("--ks", help="other commits of history to try, e.g. 6,10,20 (default: all)")
    parser.add_argument("--pairs", type=int, help="planted pairs, spread evenly (default: all)")
    parser.add_argument(
        "--no-aa", action="store_true", help="planted only (a history whose code changes)"
    )
    args = parser.parse_args()
    if not args.no_aa:
        aa(args.results)
    spreads(args.results, env=args.env)
    ks = [int(k) for k in args.ks.split(",")] if args.ks else None
    for factor in args.factor or [1.2]:
        planted(
            args.results, factor, ks=ks, pairs=args.pairs, env=args.env, per_series_table=bool(ks)
        )


if __name__ == "__main__":
    main()
