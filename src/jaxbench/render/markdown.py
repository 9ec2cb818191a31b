"""A :class:`~jaxbench.analyse.compare.CompareReport` as a pull-request comment (pure).

Layout: a summary line first (it stays true when the tables are cut), a table
of the rows that changed, a collapsed ``<details>`` table of every row, then
the machine, environments and thresholds. Every string that comes from the
benchmarked code (benchmark names, parameters, environment names, units) goes
through :func:`escape`, which makes it inert text: no HTML, no table breaks,
no links, no @mentions, no issue references.

The comment stays under GitHub's limit (65,536 characters): when it would not,
the ``<details>`` table is cut first, then the table of changes, and a line
says how many rows were left out.

With ``html_url`` each benchmark links to its graph in ``asv publish``'s HTML,
in the hash format of asv's ``asv.js`` (``format_hash_string``):
``{url}/#{benchmark}?machine=...&p-{param_name}={value}&commits={base}-{head}``,
every key and value percent-encoded as ``encodeURIComponent`` would.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from urllib.parse import quote

from jaxbench.analyse.compare import CompareReport, Row
from jaxbench.analyse.kinds import Kind
from jaxbench.analyse.stats import Verdict

__all__ = [
    "GITHUB_COMMENT_LIMIT",
    "KIND_LABELS",
    "escape",
    "format_markdown",
    "format_ratio",
    "format_sides",
    "format_value",
    "graph_url",
    "summary_line",
]

GITHUB_COMMENT_LIMIT = 65_536

#: How each kind is named in the summary line.
KIND_LABELS: dict[Kind, str] = {
    Kind.TIME: "warm time",
    Kind.COMPILE: "compile time",
    Kind.ACCURACY: "correctness",
    Kind.WORK: "work",
    Kind.MEMORY: "memory",
    Kind.OTHER: "other",
}

# Characters kept as they are; any other ASCII punctuation becomes an entity.
_SAFE = re.compile(r"[A-Za-z0-9 .,=/'\"():?+%-]")
_ZWSP = "&#8203;"
# Rows of the "changes" table, most serious first.
_CHANGE_ORDER = (
    Verdict.FAILED,
    Verdict.REGRESSION,
    Verdict.IMPROVEMENT,
    Verdict.FIXED,
    Verdict.CHANGED,
    Verdict.NEW,
    Verdict.REMOVED,
    Verdict.STILL_FAILING,
)
_KIND_ORDER = (Kind.ACCURACY, Kind.TIME, Kind.COMPILE, Kind.WORK, Kind.MEMORY, Kind.OTHER)


def escape(text: str) -> str:
    """``text`` as inert markdown/HTML: safe in a table cell and in running text."""
    out: list[str] = []
    for char in text:
        code = ord(char)
        if char in "\r\n\t":
            out.append(" ")
        elif code < 0x20 or code == 0x7F or 0x80 <= code < 0xA0:
            out.append("")  # control characters
        elif 0x202A <= code <= 0x202E or 0x2066 <= code <= 0x2069 or code in (0x200E, 0x200F):
            out.append("")  # bidirectional overrides that can disguise text
        elif code < 0x80 and not _SAFE.fullmatch(char):
            out.append(f"&#{code};")
            if char in "@#":  # break @mentions and #123 / owner/repo#123 references
                out.append(_ZWSP)
        else:
            out.append(char)
    # Break autolinks (https://..., www.example) without changing the visible text.
    return "".join(out).replace("://", f":{_ZWSP}//").replace("www.", f"www{_ZWSP}.")


def format_value(value: float | None, unit: str) -> str:
    """A value with a readable unit: ``12.3 µs``, ``14 KiB``, ``65536``."""
    if value is None:
        return "failed"
    if not math.isfinite(value):
        return str(value)
    if unit == "seconds":
        for scale, suffix in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
            if abs(value) >= scale or suffix == "ns":
                return f"{value / scale:.3g} {suffix}"
    if unit == "bytes":
        for scale, suffix in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
            if abs(value) >= scale:
                return f"{value / scale:.3g} {suffix}"
        return f"{value:.0f} B"
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value)}"
    return f"{value:.4g}"


def format_sides(row: Row) -> tuple[str, str]:
    """Base and head values of a row; ``-`` for a side the benchmark is absent from."""
    c = row.comparison
    base = "-" if row.verdict is Verdict.NEW else format_value(c.base, row.unit)
    head = "-" if row.verdict is Verdict.REMOVED else format_value(c.head, row.unit)
    return base, head


def format_ratio(ratio: float | None) -> str:
    """``1.23x``, or an empty string when there is no ratio."""
    if ratio is None:
        return ""
    if not math.isfinite(ratio):
        return "inf" if ratio > 0 else "n/a"
    short = f"{ratio:.3g}"
    if short == "1" and ratio != 1.0:  # a small exact change (work counts) must not read as 1x
        return f"{ratio:.7g}x"
    return f"{short}x"


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def _by_kind(counts: Mapping[Kind, int]) -> str:
    parts = [f"{counts[k]} {KIND_LABELS[k]}" for k in _KIND_ORDER if counts.get(k)]
    return f" ({', '.join(parts)})" if parts else ""


def summary_line(report: CompareReport, *, bold: bool = True) -> str:
    """``**1 now failing**, **2 regressions** (1 warm time, 1 correctness), 14 unchanged``."""
    counts = report.counts()

    def strong(text: str) -> str:
        return f"**{text}**" if bold else text

    parts: list[str] = []
    if counts[Verdict.FAILED]:
        parts.append(strong(f"{counts[Verdict.FAILED]} now failing"))
    if counts[Verdict.REGRESSION]:
        parts.append(
            strong(_plural(counts[Verdict.REGRESSION], "regression"))
            + _by_kind(report.regressions_by_kind())
        )
    if counts[Verdict.IMPROVEMENT]:
        parts.append(
            _plural(counts[Verdict.IMPROVEMENT], "improvement")
            + _by_kind(report.improvements_by_kind())
        )
    for verdict, label in (
        (Verdict.FIXED, "fixed"),
        (Verdict.CHANGED, "changed"),
        (Verdict.NEW, "new"),
        (Verdict.REMOVED, "removed"),
        (Verdict.STILL_FAILING, "still failing"),
        (Verdict.INCONCLUSIVE, "inconclusive"),
        (Verdict.SKIPPED, "skipped"),
    ):
        if counts[verdict]:
            parts.append(f"{counts[verdict]} {label}")
    same = counts[Verdict.UNCHANGED] + counts[Verdict.NOT_SIGNIFICANT]
    parts.append(f"{same} unchanged")
    return ", ".join(parts)


def graph_url(
    html_url: str,
    row: Row,
    *,
    machine: str,
    param_names: Sequence[str] = (),
    commits: tuple[str, str] | None = None,
) -> str:
    """The URL of a row's graph in ``asv publish``'s HTML (asv.js hash format)."""
    query = [("machine", machine)]
    query += [(f"p-{name}", value) for name, value in zip(param_names, row.params, strict=False)]
    if commits is not None:
        query.append(("commits", f"{commits[0][:8]}-{commits[1][:8]}".lower()))
    encoded = "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in query)
    # The base URL comes from the user; keep it from closing the markdown link.
    base = quote(html_url.strip().rstrip("/"), safe=":/?&=%~@+,;!$*'")
    return f"{base}/#{quote(row.benchmark, safe='')}?{encoded}"


def _verdict_cell(row: Row) -> str:
    if row.verdict is Verdict.REGRESSION:
        return f"**{KIND_LABELS[row.kind]} regression**"
    if row.verdict is Verdict.FAILED:
        return "**now failing**"
    return str(row.verdict.value)


def _table(
    rows: Sequence[Row],
    report: CompareReport,
    *,
    html_url: str | None,
    param_names: Mapping[str, Sequence[str]],
) -> list[str]:
    several_envs = len(report.env_names) > 1
    head = ["Verdict", "Benchmark", "Params"]
    head += ["Environment"] if several_envs else []
    head += ["Base", "Head", "Ratio", "Why"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        name = escape(row.benchmark)
        if html_url:
            url = graph_url(
                html_url,
                row,
                machine=report.machine,
                param_names=param_names.get(row.benchmark, ()),
                commits=(report.base_commit, report.head_commit),
            )
            name = f"[{name}]({url})"
        cells = [_verdict_cell(row), name, escape(", ".join(row.params))]
        cells += [escape(row.env_name)] if several_envs else []
        base_cell, head_cell = format_sides(row)
        cells += [
            escape(base_cell),
            escape(head_cell),
            escape(format_ratio(row.comparison.ratio)),
            escape(row.comparison.reason),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _sort_changes(rows: Sequence[Row]) -> list[Row]:
    changed = [r for r in rows if r.verdict in _CHANGE_ORDER]
    return sorted(
        changed,
        key=lambda r: (
            _CHANGE_ORDER.index(r.verdict),
            _KIND_ORDER.index(r.kind),
            r.benchmark,
            r.params,
            r.env_name,
        ),
    )


def _render(
    report: CompareReport,
    changes: Sequence[Row],
    n_changes: int,
    everything: Sequence[Row] | None,
    *,
    html_url: str | None,
    param_names: Mapping[str, Sequence[str]],
) -> str:
    base, head = escape(report.base_commit[:12]), escape(report.head_commit[:12])
    lines = [f"### jaxbench: {base} (base) vs {head} (head)", "", summary_line(report), ""]
    if changes:
        lines += ["#### Changes", ""]
        lines += _table(changes, report, html_url=html_url, param_names=param_names)
        lines.append("")
    if len(changes) < n_changes:
        lines += [
            f"_{len(changes)} of {n_changes} changed rows shown; {n_changes - len(changes)} "
            "cut to fit the comment size limit. Run `jaxbench compare` locally for all._",
            "",
        ]
    total = len(report.rows)
    if everything is None:
        lines += [f"_Table of all {total} rows cut to fit the comment size limit._", ""]
    else:
        lines += [f"<details><summary>All {total} rows</summary>", ""]
        lines += _table(everything, report, html_url=html_url, param_names=param_names)
        if len(everything) < total:
            lines += [
                "",
                f"_{total - len(everything)} of {total} rows cut to fit the comment size limit._",
            ]
        lines += ["", "</details>", ""]
    settings = report.settings
    if settings.paired is not None:
        warm = (
            f"warm time measured side by side ({settings.paired} samples a round), "
            f"two-sided paired Wilcoxon over rounds p < {settings.alpha:g} and paired ratio "
            f"beyond {settings.paired_factor:g}"
        )
    else:
        warm = (
            f"warm time two-sided test p < {settings.alpha:g} (Welch t on log per-round "
            "medians; pooled Mann-Whitney when samples do not split into rounds) and "
            f"ratio beyond {settings.factor:g}"
        )
    lines += [
        f"Machine: {escape(report.machine)}  ",
        "Environments: " + ", ".join(escape(e) for e in report.env_names) + "  ",
        f"Thresholds: {warm}; compile time {settings.compile_factor:g}; "
        f"memory {settings.memory_factor:g}; work exact.",
    ]
    return "\n".join(lines) + "\n"


def _fits(text: str, limit: int) -> bool:
    return len(text.encode("utf-8")) <= limit


def _largest(n: int, fits: Callable[[int], bool]) -> int:
    """The largest k in [0, n] with fits(k), assuming fits is monotone and fits(0)."""
    low, high = 0, n
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low


def format_markdown(
    report: CompareReport,
    *,
    html_url: str | None = None,
    param_names: Mapping[str, Sequence[str]] | None = None,
    limit: int = GITHUB_COMMENT_LIMIT,
) -> str:
    """The pull-request comment; at most ``limit`` bytes of UTF-8 (so that many characters)."""
    names = param_names or {}
    changes = _sort_changes(report.rows)
    everything = list(report.rows)

    def render(n_changes: int, n_all: int | None) -> str:
        return _render(
            report,
            changes[:n_changes],
            len(changes),
            None if n_all is None else everything[:n_all],
            html_url=html_url,
            param_names=names,
        )

    text = render(len(changes), len(everything))
    if _fits(text, limit):
        return text
    if _fits(render(len(changes), 0), limit):
        keep = _largest(len(everything), lambda k: _fits(render(len(changes), k), limit))
        return render(len(changes), keep)
    keep = _largest(len(changes), lambda k: _fits(render(k, None), limit))
    text = render(keep, None)
    if not _fits(text, limit):
        raise ValueError(f"a comment limit of {limit} bytes cannot hold even the summary")
    return text
