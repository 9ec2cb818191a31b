"""How far single-value figures move when the measured code does not change.

Reads an asv results directory (no measuring: ``results/`` of this project is
12 commits x 2 environments of real ``asv run`` results) and the git
repository it belongs to. Commits whose measured code (``--code`` paths, by
default ``benchmarks`` and ``src/jaxbench/measure``) is identical, by ``git
diff``, form A/A groups. For every family of single-value figures
(:func:`jaxbench.analyse.floors.family_of`: process peak memory, workload peak
RSS, each first-call stage, accuracy) it prints the spread over

* ``consecutive``: each commit against the one before it (date order) in its
  group, what a history's step fit sees;
* ``any pair``: every two commits of a group, what ``jaxbench compare`` of two
  identical-code commits sees;
* ``one run``: for process peak memory, the two parameter values of one
  benchmark in one result file (``workloads.Predict.peakmem_call(64)`` and
  ``(96)``: two processes of one ``asv run``, nearly the same workload).

as the 95th and 99th percentiles and the maximum of the ratio
``exp(|log(head / base)|)`` and of the difference ``|head - base|``, and the
largest change that is beyond *both* parts of the family's floor
(:data:`jaxbench.analyse.floors.FLOORS`): ``beyond floor`` counts the A/A pairs
the floor would show as changed (the floor is right when it is 0).

Usage: ``python bench/bench_single_value_spread.py [--results results] [--repo .]``.
"""

from __future__ import annotations

import argparse
import itertools
import math
import subprocess
from collections.abc import Sequence
from pathlib import Path

from jaxbench.analyse.floors import FLOORS, beyond_floor, family_of
from jaxbench.render.units import format_value
from jaxbench.store.results import Point, load_history

DEFAULT_CODE = ("benchmarks", "src/jaxbench/measure")


def same_code(repo: Path, a: str, b: str, code: Sequence[str]) -> bool:
    """Whether commits ``a`` and ``b`` hold the same files under ``code``."""
    proc = subprocess.run(
        ["git", "-C", str(repo), "diff", "--quiet", a, b, "--", *code],
        capture_output=True,
        check=False,
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"git diff {a[:8]} {b[:8]} failed: {proc.stderr.decode().strip()}")
    return proc.returncode == 0


def groups(repo: Path, commits: Sequence[str], code: Sequence[str]) -> list[list[str]]:
    """Runs of consecutive commits (date order) with identical measured code."""
    out: list[list[str]] = []
    for commit in commits:
        if out and same_code(repo, out[-1][-1], commit, code):
            out[-1].append(commit)
        else:
            out.append([commit])
    return out


def _quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return math.nan
    return ordered[min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)]


def _ratio(a: float, b: float) -> float | None:
    if a <= 0 or b <= 0:
        return None
    return math.exp(abs(math.log(b / a)))


def spread_rows(
    pairs_by_family: dict[str, list[tuple[float, float]]], unit_of: dict[str, str], label: str
) -> list[list[str]]:
    rows = []
    for family, pairs in sorted(pairs_by_family.items()):
        ratios = [r for a, b in pairs if (r := _ratio(a, b)) is not None]
        diffs = [abs(b - a) for a, b in pairs]
        unit = unit_of[family]
        floor = FLOORS.get(family)
        beyond = sum(beyond_floor(floor, a, b) for a, b in pairs) if floor else 0
        rows.append(
            [
                family,
                label,
                str(len(pairs)),
                *(f"{_quantile(ratios, q):.3f}x" if ratios else "-" for q in (0.95, 0.99, 1.0)),
                *(format_value(_quantile(diffs, q), unit) for q in (0.95, 0.99, 1.0)),
                f"{format_value(floor.absolute, unit)} & {floor.relative:g}x" if floor else "-",
                str(beyond) if floor else "-",
            ]
        )
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--repo", type=Path, default=Path("."))
    parser.add_argument(
        "--code",
        action="append",
        help=f"path of measured code (repeatable; default: {', '.join(DEFAULT_CODE)})",
    )
    args = parser.parse_args(argv)
    code = tuple(args.code or DEFAULT_CODE)
    history = load_history(args.results)
    commits = list(history.commits())
    runs = groups(args.repo, commits, code)
    print(
        f"{len(commits)} commits, {len(history.env_names())} environments; identical "
        f"measured code ({', '.join(code)}) in groups of {[len(g) for g in runs]}"
    )
    group_of = {c: i for i, g in enumerate(runs) for c in g}
    consecutive: dict[str, list[tuple[float, float]]] = {}
    any_pair: dict[str, list[tuple[float, float]]] = {}
    unit_of: dict[str, str] = {}
    for key, points in history.series().items():
        family = family_of(key.benchmark)
        if family is None:
            continue
        kept: list[Point] = [
            p for p in points if p.value is not None and math.isfinite(p.value) and not p.skipped
        ]
        if not kept:
            continue
        unit_of[family] = kept[0].unit
        for a, b in itertools.pairwise(kept):
            if group_of[a.commit] == group_of[b.commit]:
                consecutive.setdefault(family, []).append((a.value or 0.0, b.value or 0.0))
        for a, b in itertools.combinations(kept, 2):
            if group_of[a.commit] == group_of[b.commit]:
                any_pair.setdefault(family, []).append((a.value or 0.0, b.value or 0.0))
    one_run: dict[str, list[tuple[float, float]]] = {}
    by_point = {
        (p.key.env_name, p.commit, p.key.params): p.value
        for p in history.points
        if p.key.benchmark == "workloads.Predict.peakmem_call" and p.value is not None
    }
    for env_name in history.env_names():
        for commit in commits:
            small = by_point.get((env_name, commit, ("64",)))
            large = by_point.get((env_name, commit, ("96",)))
            if small is not None and large is not None:
                one_run.setdefault("peakmem", []).append((small, large))
    head = ["family", "between", "pairs", "ratio p95", "p99", "max", "diff p95", "p99", "max"]
    table = [[*head, "floor", "beyond floor"]]
    table += spread_rows(consecutive, unit_of, "consecutive")
    table += spread_rows(any_pair, unit_of, "any pair")
    table += spread_rows(one_run, unit_of, "one run")
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
