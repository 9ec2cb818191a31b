"""``jaxbench compare``'s terminal table and JSON document (pure).

The table shows each value as ``asv compare`` does, with its spread where
there are samples (``37.0±0.4µs``: the median and half the interquartile
range), ratios with two decimals (:func:`jaxbench.render.units.format_ratio`),
most serious rows first.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

from jaxbench.analyse.compare import CompareReport, Row
from jaxbench.analyse.stats import Verdict
from jaxbench.render.markdown import format_sides, gate_of, summary_line
from jaxbench.render.units import format_ratio, format_spread

__all__ = ["JSON_FORMAT", "format_json", "format_listing", "format_text"]

#: Version of the ``--format json`` document.
JSON_FORMAT = 1


def _sides(row: Row) -> tuple[str, str]:
    """Base and head cells: with their spread where the row has samples."""
    base, head = format_sides(row)
    c = row.comparison
    if row.base_samples and base not in ("-", "skipped", "failed", "unchecked"):
        base = format_spread(c.base, row.base_samples, row.unit)
    if row.head_samples and head not in ("-", "skipped", "failed", "unchecked"):
        head = format_spread(c.head, row.head_samples, row.unit)
    return base, head


def _skipped_both(row: Row) -> bool:
    """asv skipped the row at base and head: a parameter combination it never runs."""
    return row.comparison.base_skipped and row.comparison.head_skipped


def format_text(report: CompareReport) -> str:
    """A terminal table of every row, most serious first, under the summary line.

    Rows that asv skipped at base and head (combinations a parametrized
    benchmark never runs: 47 of jumanji-benchmarks' 60) are counted in one
    line under the table, not listed; ``--format json`` has every row.
    """
    order = {"failed": 0, "regression": 1, "improvement": 2, "changed (not tested)": 3}
    rows = sorted(
        (r for r in report.rows if not _skipped_both(r)),
        key=lambda r: (order.get(r.verdict.value, 4), r.benchmark, r.params, r.env_name),
    )
    n_skipped_both = len(report.rows) - len(rows)
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
        if row.verdict is Verdict.UNTESTED:
            verdict = f"{row.kind.value} changed (not tested)"
        ratio = format_ratio(c.ratio, gate=gate_of(row, report.settings), exact=row.kind.exact)
        table.append([verdict, name, *_sides(row), ratio, c.reason])
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
    if n_skipped_both:
        lines += [
            "",
            f"not listed: {n_skipped_both} skipped at base and head "
            "('--format json' lists every row)",
        ]
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
                "p_family": _number(c.p_family),
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
            "first_call_factor": s.first_call_factor,
            "fail_untested": s.fail_untested,
        },
        "fail_on": sorted(fail_on),
        "summary": summary_line(report, bold=False),
        "counts": dict(sorted((v.value, n) for v, n in report.counts().items())),
        "failing": len(report.failing(fail_on)),
        "rows": rows,
    }
    return json.dumps(document, indent=2, allow_nan=False) + "\n"


def format_listing(rows: Iterable[tuple[str, str]]) -> str:
    """Names and descriptions, one pair a line, the names in a column of 12
    (``jaxbench report --list``)."""
    return "".join(f"{name:12} {description}\n" for name, description in rows)
