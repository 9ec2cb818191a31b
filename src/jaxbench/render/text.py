"""``jaxbench compare``'s terminal table and JSON document (pure).

The table shows each value as ``asv compare`` does, with its spread where
there are samples (``37.0±0.4µs``: the median and half the interquartile
range), ratios with two decimals (:func:`jaxbench.render.units.format_ratio`),
most serious rows first. It is at most :data:`WIDTH` characters wide: rows
are grouped by environment under one header that names it in full, with a
short alias (the parts of its name that the other environments' names do
not share); each row's reason follows it, wrapped, and a benchmark name too
long for its column gets a line of its own. Under the summary line, what
could not be tested and the command that tests it
(:func:`jaxbench.render.markdown.not_tested_line`); the footer says how the
tested warm times were tested (:class:`jaxbench.analyse.compare.WarmTest`).
``--format json`` holds the full names and every reason on one line.
"""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Iterable, Sequence
from typing import Any

from jaxbench.analyse.compare import CompareReport, Row
from jaxbench.analyse.stats import Verdict
from jaxbench.render.env_names import env_aliases, envs_compared
from jaxbench.render.markdown import (
    format_sides,
    not_tested_line,
    ratio_cell,
    summary_line,
    warm_test_lines,
)
from jaxbench.render.units import format_spread

__all__ = [
    "CHANGES",
    "JSON_FORMAT",
    "WIDTH",
    "env_aliases",
    "format_changes",
    "format_json",
    "format_listing",
    "format_text",
]

#: Version of the ``--format json`` document (2: "moved, not tested", warm
#: times from the paired history, ``not_tested``).
JSON_FORMAT = 2
#: Widest line of the text table.
WIDTH = 120
_GAP = "  "
#: Narrowest room for a reason beside the values; less, and it goes under them.
_MIN_REASON = 40
#: Widest base, head and ratio columns ("35.3±16.5µs" is 11).
_VALUE_MAX = 12
#: Widest ratio column ("0.951x", "1.00x", "inf").
_RATIO_MAX = 7


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


def _header(report: CompareReport) -> str:
    """``base 9a04e3f0  head 1b2c3d4e  machine m``; one commit in two environments:
    ``base jax0.9.2  head jax0.10.2  at 9a04e3f0  machine m``."""
    if report.head_env:
        base, head = envs_compared(", ".join(report.env_names), report.head_env)
        return f"base {base}  head {head}  at {report.base_commit[:12]}  machine {report.machine}"
    return (
        f"base {report.base_commit[:12]}  head {report.head_commit[:12]}  machine {report.machine}"
    )


def _wrap(text: str, width: int, indent: str = "", *, hyphens: bool = True) -> list[str]:
    """``text`` in lines of at most ``width``; ``hyphens=False`` keeps words whole
    (commands to copy: ``--env virtualenv-py3.11-...``)."""
    return textwrap.wrap(
        text,
        width=width,
        initial_indent=indent,
        subsequent_indent=indent,
        break_long_words=True,
        break_on_hyphens=hyphens,
    ) or [indent.rstrip()]


def _verdict(row: Row) -> str:
    verdict = row.verdict.value
    if row.category is not None and row.category != "failed":
        verdict = f"{row.category} {verdict}"
    if row.verdict is Verdict.UNTESTED:
        verdict = f"{row.kind.value} {Verdict.UNTESTED.value}"
    return verdict


def _cells(row: Row, report: CompareReport) -> list[str]:
    name = row.benchmark + (f"({', '.join(row.params)})" if row.params else "")
    return [_verdict(row), name, *_sides(row), ratio_cell(row, report.settings)]


def _table(rows: Sequence[Row], report: CompareReport, width: int) -> tuple[str, list[list[str]]]:
    """The header line, and each row's lines.

    Verdict, benchmark, base, head and ratio in columns, the reason beside
    them where there is room, else below. The value columns are at most
    :data:`_VALUE_MAX` wide and the benchmark column takes what is left: a
    name too long for it gets a line of its own, and values too long for
    theirs (a track's long unit) a line of their own, not aligned.
    """
    head = ["verdict", "benchmark", "base", "head", "ratio"]
    cells = [_cells(row, report) for row in rows]
    widths = [max(len(line[i]) for line in [head, *cells]) for i in range(len(head))]
    widths[2:] = [min(w, _VALUE_MAX) for w in widths[2:4]] + [min(widths[4], _RATIO_MAX)]
    gap = len(_GAP)
    fixed = widths[0] + sum(widths[2:]) + gap * 4
    widths[1] = max(len(head[1]), min(widths[1], width - fixed))
    name_at = widths[0] + gap
    values_at = name_at + widths[1] + gap
    reason_at = sum(widths) + gap * 5
    beside = width - reason_at >= _MIN_REASON

    def line(values: Sequence[str]) -> str:
        return _GAP.join(v.ljust(w) for v, w in zip(values, widths, strict=True)).rstrip()

    out: list[list[str]] = []
    for row, values in zip(rows, cells, strict=True):
        verdict, name, *numbers = values
        fits = all(len(v) <= w for v, w in zip(numbers, widths[2:], strict=True))
        lines: list[str] = []
        if len(name) > widths[1]:
            lines += _wrap(f"{verdict.ljust(widths[0])}{_GAP}{name}", width)
            verdict, name = "", ""
        if fits:
            lines.append(line([verdict, name, *numbers]))
        else:
            if name:
                lines.append(line([verdict, name, "", "", ""]))
            joined = _GAP.join(numbers).rstrip()
            lines.append(
                " " * (values_at if values_at + len(joined) <= width else name_at) + joined
            )
        reason = row.comparison.reason
        if beside and len(lines) == 1:
            wrapped = _wrap(reason, width - reason_at)
            lines[0] = f"{lines[0].ljust(reason_at)}{wrapped[0]}".rstrip()
            lines += [" " * reason_at + rest for rest in wrapped[1:]]
        else:
            lines += _wrap(reason, width, " " * name_at)
        out.append(lines)
    return (line(head) + (_GAP + "why" if beside else "")).rstrip(), out


#: The verdicts :func:`format_changes` lists: what a reader of a review acts on.
CHANGES = frozenset(
    {
        Verdict.FAILED,
        Verdict.REGRESSION,
        Verdict.IMPROVEMENT,
        Verdict.UNTESTED,
        Verdict.CHANGED,
        Verdict.FIXED,
        Verdict.NEW,
        Verdict.REMOVED,
    }
)


def format_changes(report: CompareReport, *, width: int = WIDTH) -> str:
    """:func:`format_text` of the rows that changed only (``jaxbench review``'s terminal
    summary; every row is in its comment), under the summary line of them all."""
    return format_text(report, width=width, changes_only=True)


def format_text(report: CompareReport, *, width: int = WIDTH, changes_only: bool = False) -> str:
    """A terminal table of every row, most serious first, under the summary line.

    Rows that asv skipped at base and head (combinations a parametrized
    benchmark never runs: 47 of jumanji-benchmarks' 60) are counted in one
    line under the table, not listed; ``--format json`` has every row. No
    line is wider than ``width`` (but a word longer than it). ``changes_only``:
    the rows whose verdict is one of :data:`CHANGES`, the others counted.
    """
    order = {"failed": 0, "regression": 1, "improvement": 2, Verdict.UNTESTED.value: 3}
    rows = sorted(
        (r for r in report.rows if not _skipped_both(r)),
        key=lambda r: (r.env_name, order.get(r.verdict.value, 4), r.benchmark, r.params),
    )
    n_skipped_both = len(report.rows) - len(rows)
    n_unchanged = 0
    if changes_only:
        n_unchanged = sum(r.verdict not in CHANGES for r in rows)
        rows = [r for r in rows if r.verdict in CHANGES]
    aliases = env_aliases(report.env_names)
    one_run = dict(report.one_run)
    lines = [
        _header(report),
        *_wrap(summary_line(report, bold=False), width),
        *_wrap(not_tested_line(report) or "", width, hyphens=False),
    ]
    lines = [line for line in lines if line]
    header, body = _table(rows, report, width)
    runs = {True: "base and head measured in one run", False: "base and head in separate runs"}
    for env_name in sorted({r.env_name for r in rows}):
        alias = aliases[env_name]
        title = f"== {alias} ==" if alias != env_name else "=="
        lines += ["", *_wrap(f"{title} {env_name}", width)]
        if env_name in one_run:
            lines.append(runs[one_run[env_name]])
        lines.append(header)
        for row, row_lines in zip(rows, body, strict=True):
            if row.env_name == env_name:
                lines += row_lines
    if n_unchanged:
        lines += ["", f"not listed: {n_unchanged} rows without a change (the comment lists them)"]
    if n_skipped_both:
        lines += [
            "",
            f"not listed: {n_skipped_both} skipped at base and head "
            "('--format json' lists every row)",
        ]
    footer = warm_test_lines(report)
    if footer:
        lines.append("")
        for text in footer:
            lines += _wrap(text, width)
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
                "warm_test": row.warm_test.value if row.warm_test else None,
            }
        )
    s = report.settings
    document = {
        "jaxbench_compare_format": JSON_FORMAT,
        "machine": report.machine,
        "env_names": list(report.env_names),
        "env_aliases": env_aliases(report.env_names) if report.env_names else {},
        "one_run": dict(report.one_run),
        "base_commit": report.base_commit,
        "head_commit": report.head_commit,
        "head_env_name": report.head_env or None,
        "settings": {
            "factor": s.factor,
            "compile_factor": s.compile_factor,
            "memory_factor": s.memory_factor,
            "alpha": s.alpha,
            "first_call_factor": s.first_call_factor,
            "fail_untested": s.fail_untested,
            "min_history": s.min_history,
        },
        "fail_on": sorted(fail_on),
        "summary": summary_line(report, bold=False),
        "not_tested": not_tested_line(report),
        "counts": dict(sorted((v.value, n) for v, n in report.counts().items())),
        "failing": len(report.failing(fail_on)),
        "warm_tests": dict(sorted((t.value, n) for t, n in report.warm_tests().items())),
        "rows": rows,
    }
    return json.dumps(document, indent=2, allow_nan=False) + "\n"


def format_listing(rows: Iterable[tuple[str, str]]) -> str:
    """Names and descriptions, one pair a line, the names in a column of 12
    (``jaxbench report --list``)."""
    return "".join(f"{name:12} {description}\n" for name, description in rows)
