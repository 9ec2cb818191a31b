"""``jaxbench compare BASE HEAD``: what changed between two commits' asv results.

BASE and HEAD are commit hashes (or unique prefixes) found in the results
directory, or paths to two asv result JSON files. Exit status: 1 when a
regression of a kind named by ``--fail-on`` is found, 0 otherwise, 2 for bad
input. Never imports jax.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from jaxbench.analyse.compare import (
    DEFAULT_FAIL_ON,
    FAIL_CATEGORIES,
    CompareReport,
    Settings,
    compare_points,
    parse_fail_on,
)
from jaxbench.commands import positive_int
from jaxbench.errors import ResultsError, UsageError
from jaxbench.render.markdown import format_markdown, format_ratio, format_sides, summary_line
from jaxbench.store.benchmarks_json import read_benchmarks_json_or_warn
from jaxbench.store.fsio import write_text_atomic
from jaxbench.store.results import Point, find_commit, load_history, load_result_file

__all__ = [
    "HELP",
    "JSON_FORMAT",
    "add_arguments",
    "format_json",
    "format_text",
    "load_sides",
    "run",
]

HELP = "compare two commits' asv results: statistical verdicts, markdown for a pull request"

#: Version of the ``--format json`` document.
JSON_FORMAT = 1
_MAX_WARNINGS = 5


def _factor(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (math.isfinite(value) and value >= 1.0):
        raise argparse.ArgumentTypeError(f"must be a number >= 1 (e.g. 1.05), got {text}")
    return value


def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1 (e.g. 0.01), got {text}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("base", metavar="BASE", help="base commit (hash or prefix) or result file")
    parser.add_argument("head", metavar="HEAD", help="head commit (hash or prefix) or result file")
    parser.add_argument(
        "--results", type=Path, default=Path("results"), help="asv results dir (default: results)"
    )
    parser.add_argument("--machine", help="machine to compare on (needed if there are several)")
    parser.add_argument("--env", help="one environment name (default: every environment)")
    parser.add_argument(
        "--format", choices=("text", "markdown", "json"), default="text", help="output format"
    )
    parser.add_argument(
        "--fail-on",
        default=",".join(sorted(DEFAULT_FAIL_ON)),
        help="comma-separated kinds whose regressions give exit status 1: "
        f"{', '.join(FAIL_CATEGORIES)}, or 'none' or 'all' (default: %(default)s)",
    )
    parser.add_argument("--html-url", help="base URL of 'asv publish' HTML, to link graphs")
    parser.add_argument(
        "--factor",
        type=_factor,
        default=Settings.factor,
        help="warm-time ratio that counts as a change (default: %(default)s)",
    )
    parser.add_argument(
        "--compile-factor",
        type=_factor,
        default=Settings.compile_factor,
        help="first-call/compile-time ratio that counts (default: %(default)s)",
    )
    parser.add_argument(
        "--memory-factor",
        type=_factor,
        default=Settings.memory_factor,
        help="peak-memory ratio that counts (default: %(default)s)",
    )
    parser.add_argument(
        "--alpha",
        type=_alpha,
        default=Settings.alpha,
        help="significance level of the warm-time test (default: %(default)s)",
    )
    parser.add_argument(
        "--paired",
        type=positive_int,
        metavar="N",
        help="warm times were measured side by side by 'jaxbench ab', N samples per round "
        "(its --per-round): test them pair by pair",
    )
    parser.add_argument(
        "--paired-factor",
        type=_factor,
        default=Settings.paired_factor,
        help="warm-time ratio that counts as a change with --paired (default: %(default)s)",
    )
    parser.add_argument("--output", type=Path, help="write here (atomically) instead of stdout")


def _benchmarks_json(args: argparse.Namespace) -> Path:
    if _looks_like_file(args.head):
        return Path(args.head).parent.parent / "benchmarks.json"
    return Path(args.results) / "benchmarks.json"


def _looks_like_file(arg: str) -> bool:
    return arg.endswith(".json") or Path(arg).is_file()


def _load_file(arg: str) -> list[Point]:
    path = Path(arg)
    benchmarks_json = path.parent.parent / "benchmarks.json"
    points = load_result_file(path, benchmarks_json if benchmarks_json.is_file() else None)
    if not points:
        raise ResultsError(f"{path}: holds no benchmark results; re-run 'asv run' for that commit")
    return points


def load_sides(
    base: str, head: str, results: Path, *, machine: str | None, env_name: str | None
) -> tuple[list[Point], list[Point], tuple[str, ...]]:
    """Base points, head points and warnings, from two result files or two commits."""
    base_file, head_file = _looks_like_file(base), _looks_like_file(head)
    if base_file != head_file:
        raise UsageError(
            f"BASE and HEAD must both be commits or both be result files; got {base!r} and {head!r}"
        )
    if base_file:
        sides = [_load_file(base), _load_file(head)]
        if env_name is not None:
            sides = [[p for p in side if p.key.env_name == env_name] for side in sides]
            if not all(sides):
                raise ResultsError(
                    f"no results for environment {env_name!r} in {base} or {head}; "
                    "pick an environment those files hold"
                )
        return sides[0], sides[1], ()

    history = load_history(results, machine=machine, env_name=env_name)
    machines = history.machines()
    if len(machines) > 1:
        raise ResultsError(
            f"{results} holds results from several machines ({', '.join(machines)}); "
            "pick one with --machine"
        )
    base_commit = find_commit(history, base)
    head_commit = find_commit(history, head)
    base_points = [p for p in history.points if p.commit == base_commit]
    head_points = [p for p in history.points if p.commit == head_commit]
    return base_points, head_points, history.warnings


def format_text(report: CompareReport) -> str:
    """A terminal table of every row, most serious first, under the summary line."""
    order = {"failed": 0, "regression": 1, "improvement": 2}
    rows = sorted(
        report.rows,
        key=lambda r: (order.get(r.verdict.value, 3), r.benchmark, r.params, r.env_name),
    )
    several_envs = len(report.env_names) > 1
    table = [["verdict", "benchmark", "base", "head", "ratio", "why"]]
    for row in rows:
        name = row.benchmark + (f"({', '.join(row.params)})" if row.params else "")
        if several_envs:
            name += f" [{row.env_name}]"
        c = row.comparison
        verdict = row.verdict.value
        if row.category is not None and row.category != "failed":
            verdict = f"{row.category} {verdict}"
        table.append([verdict, name, *format_sides(row), format_ratio(c.ratio), c.reason])
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]) - 1)]
    lines = [
        f"base {report.base_commit[:12]}  head {report.head_commit[:12]}  machine {report.machine}",
        f"environments: {', '.join(report.env_names)}",
        summary_line(report, bold=False),
        "",
    ]
    for line in table:
        cells = [cell.ljust(width) for cell, width in zip(line, widths, strict=False)]
        lines.append("  ".join([*cells, line[-1]]).rstrip())
    return "\n".join(lines) + "\n"


def _number(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def format_json(report: CompareReport, fail_on: frozenset[str]) -> str:
    """The report as a versioned JSON document (non-finite numbers become null)."""
    rows: list[dict[str, Any]] = []
    for row in report.rows:
        c = row.comparison
        rows.append(
            {
                "benchmark": row.benchmark,
                "params": list(row.params),
                "env_name": row.env_name,
                "kind": row.kind.value,
                "unit": row.unit,
                "verdict": row.verdict.value,
                "category": row.category,
                "base": _number(c.base),
                "head": _number(c.head),
                "ratio": _number(c.ratio),
                "p_value": _number(c.p_value),
                "shift": _number(c.shift),
                "n_base": c.n_base,
                "n_head": c.n_head,
                "reason": c.reason,
            }
        )
    s = report.settings
    document = {
        "jaxbench_compare_format": JSON_FORMAT,
        "machine": report.machine,
        "env_names": list(report.env_names),
        "base_commit": report.base_commit,
        "head_commit": report.head_commit,
        "settings": {
            "factor": s.factor,
            "compile_factor": s.compile_factor,
            "memory_factor": s.memory_factor,
            "alpha": s.alpha,
        },
        "fail_on": sorted(fail_on),
        "summary": summary_line(report, bold=False),
        "counts": dict(sorted((v.value, n) for v, n in report.counts().items())),
        "failing": len(report.failing(fail_on)),
        "rows": rows,
    }
    return json.dumps(document, indent=2, allow_nan=False) + "\n"


def run(args: argparse.Namespace) -> int:
    fail_on = parse_fail_on(args.fail_on)
    settings = Settings(
        factor=args.factor,
        compile_factor=args.compile_factor,
        memory_factor=args.memory_factor,
        alpha=args.alpha,
        paired=args.paired,
        paired_factor=args.paired_factor,
        round_sizes=read_benchmarks_json_or_warn(_benchmarks_json(args))[0].round_sizes(),
    )
    base, head, warnings = load_sides(
        args.base, args.head, args.results, machine=args.machine, env_name=args.env
    )
    for warning in warnings[:_MAX_WARNINGS]:
        print(f"jaxbench: warning: {warning}", file=sys.stderr)
    if len(warnings) > _MAX_WARNINGS:
        print(f"jaxbench: warning: ... and {len(warnings) - _MAX_WARNINGS} more", file=sys.stderr)
    report = compare_points(base, head, settings)

    if args.format == "markdown":
        results = args.results
        if _looks_like_file(args.head):
            results = Path(args.head).parent.parent
        benchmarks, _warned = read_benchmarks_json_or_warn(results / "benchmarks.json")
        text = format_markdown(report, html_url=args.html_url, param_names=benchmarks.param_names())
    elif args.format == "json":
        text = format_json(report, fail_on)
    else:
        text = format_text(report)
    if args.output is not None:
        write_text_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    return 1 if report.failing(fail_on) else 0
