"""A :class:`~jaxbench.analyse.compare.CompareReport` as a pull-request comment (pure).

Layout: a summary line first (it stays true when the tables are cut), a line
on what could not be tested and the command that tests it
(:func:`not_tested_line`), a table of the rows that changed, one of the rows
that moved but could not be tested, a collapsed ``<details>`` table of every
row, then the machine, environments and thresholds. Each thing is said once:
how the warm times were tested is in :func:`warm_test_lines` alone. Every string that comes from the
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

from jaxbench.analyse.compare import CompareReport, Row, Settings, WarmTest, ab_command
from jaxbench.analyse.floors import FLOORS, floor_of, ratio_is_meaningful
from jaxbench.analyse.stats import Verdict
from jaxbench.kinds import WORKLOAD_MEMORY_TRACKS, Kind, method_of
from jaxbench.render import links
from jaxbench.render.env_names import envs_compared
from jaxbench.render.units import format_difference, format_ratio, format_value

__all__ = [
    "GITHUB_COMMENT_LIMIT",
    "KIND_LABELS",
    "escape",
    "floors_line",
    "footer",
    "format_markdown",
    "format_ratio",
    "format_sides",
    "format_value",
    "gate_of",
    "graph_url",
    "not_tested_line",
    "ratio_cell",
    "summary_line",
    "warm_test_lines",
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
    Verdict.UNTESTED,
    Verdict.CHANGED,
    Verdict.NEW,
    Verdict.REMOVED,
    Verdict.STILL_FAILING,
)
_KIND_ORDER = (Kind.ACCURACY, Kind.TIME, Kind.COMPILE, Kind.WORK, Kind.MEMORY, Kind.OTHER)


def _kept(text: str, i: int) -> bool:
    """Punctuation that markdown reads as text where it stands, so it stays readable.

    ``_`` between two letters or digits (GitHub never emphasises inside a
    word: ``track_compile_seconds``), ``<`` before a space or ``=`` (no tag
    can start there: ``p < 0.01``), ``>`` and ``;`` anywhere but a line start.
    """
    char = text[i]
    before = text[i - 1] if i > 0 else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    if char == "_":
        return before.isalnum() and after.isalnum()
    if char == "<":
        return after in (" ", "=")
    if char in ">;":
        return i > 0
    return False


def escape(text: str) -> str:
    """``text`` as inert markdown/HTML: safe in a table cell and in running text."""
    out: list[str] = []
    for i, char in enumerate(text):
        code = ord(char)
        if char in "\r\n\t":
            out.append(" ")
        elif code < 0x20 or code == 0x7F or 0x80 <= code < 0xA0:
            out.append("")  # control characters
        elif 0x202A <= code <= 0x202E or 0x2066 <= code <= 0x2069 or code in (0x200E, 0x200F):
            out.append("")  # bidirectional overrides that can disguise text
        elif code < 0x80 and not _SAFE.fullmatch(char) and not _kept(text, i):
            out.append(f"&#{code};")
            if char in "@#":  # break @mentions and #123 / owner/repo#123 references
                out.append(_ZWSP)
        else:
            out.append(char)
    # Break autolinks (https://..., www.example) without changing the visible text.
    return "".join(out).replace("://", f":{_ZWSP}//").replace("www.", f"www{_ZWSP}.")


def format_sides(row: Row) -> tuple[str, str]:
    """Base and head values of a row; ``-`` for a side the benchmark is absent from,
    ``skipped`` for a side asv skipped."""
    c = row.comparison
    base = "-" if row.verdict is Verdict.NEW else format_value(c.base, row.unit)
    head = "-" if row.verdict is Verdict.REMOVED else format_value(c.head, row.unit)
    if row.verdict is Verdict.UNCHECKED:  # a figure an unchecked workload does not have
        base = "unchecked" if c.base is None else base
        head = "unchecked" if c.head is None else head
    if c.base_skipped:
        base = "skipped"
    if c.head_skipped:
        head = "skipped"
    return base, head


def gate_of(row: Row, settings: Settings) -> float | None:
    """The ratio that decided a row's verdict, for :func:`format_ratio`'s precision."""
    if row.gate is not None:
        return row.gate
    if row.kind is Kind.TIME:
        return settings.paired_factor if settings.paired is not None else settings.factor
    if row.kind is Kind.COMPILE:
        tested = row.comparison.p_value is not None
        return settings.first_call_factor if tested else settings.compile_factor
    if row.kind is Kind.MEMORY:
        return settings.memory_factor
    if row.kind is Kind.OTHER:
        return settings.factor
    return None


def ratio_cell(row: Row, settings: Settings) -> str:
    """The ratio of a row, or its difference where a ratio would mean nothing.

    ``1.20x`` (:func:`format_ratio`); ``+52.0 KiB`` (:func:`format_difference`)
    where a side is zero or both are below the figure's measured floor
    (:func:`jaxbench.analyse.floors.ratio_is_meaningful`), never ``inf`` or ``0.00x``.
    """
    c = row.comparison
    if c.ratio is None:
        return ""
    floor = floor_of(row.benchmark)
    if (
        c.base is not None
        and c.head is not None
        and math.isfinite(c.base)
        and math.isfinite(c.head)
        and not ratio_is_meaningful(c.base, c.head, floor)
    ):
        return format_difference(c.base, c.head, row.unit)
    return format_ratio(c.ratio, gate=gate_of(row, settings), exact=row.kind.exact)


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def _by_kind(counts: Mapping[Kind, int]) -> str:
    parts = [f"{counts[k]} {KIND_LABELS[k]}" for k in _KIND_ORDER if counts.get(k)]
    return f" ({', '.join(parts)})" if parts else ""


def summary_line(report: CompareReport, *, bold: bool = True) -> str:
    """``**1 now failing**, **2 regressions** (1 warm time, 1 correctness), 14 unchanged``.

    Rows that moved but could not be tested are no change: they are counted
    by :func:`not_tested_line`, never here.
    """
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
        (Verdict.UNCHECKED, "unchecked"),
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
    # The base URL comes from the user; keep it from closing the markdown link.
    base = quote(html_url.strip().rstrip("/"), safe=":/?&=%~@+,;!$*'")
    return links.graph_url(
        f"{base}/",
        row.benchmark,
        env_params=[("machine", machine)],
        param_names=param_names,
        params=row.params,
        commits=commits,
    )


def _verdict_cell(row: Row) -> str:
    if row.verdict is Verdict.REGRESSION:
        return f"**{KIND_LABELS[row.kind]} regression**"
    if row.verdict is Verdict.FAILED:
        return "**now failing**"
    if row.verdict is Verdict.UNTESTED:
        return f"{KIND_LABELS[row.kind]} {Verdict.UNTESTED.value}"
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
            escape(ratio_cell(row, report.settings)),
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
    lines = [f"### jaxbench: {_title(report)}", "", summary_line(report), ""]
    untested = not_tested_line(report)
    if untested:
        lines += [escape(untested), ""]
    moved = [r for r in changes if r.verdict is Verdict.UNTESTED]
    for title, rows in (
        ("Changes", [r for r in changes if r.verdict is not Verdict.UNTESTED]),
        (Verdict.UNTESTED.value.capitalize(), moved),
    ):
        if rows:
            lines += [f"#### {title}", ""]
            lines += _table(rows, report, html_url=html_url, param_names=param_names)
            lines.append("")
    if len(changes) < n_changes:
        lines += [
            f"_{len(changes)} of {n_changes} rows shown; {n_changes - len(changes)} "
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
    envs = ", ".join(escape(e) for e in report.env_names)
    if report.head_env:
        envs = f"{envs} (base), {escape(report.head_env)} (head)"
    lines += [
        f"Machine: {escape(report.machine)}  ",
        f"Environments: {envs}  ",
        *footer(report),
    ]
    return "\n".join(lines) + "\n"


def _title(report: CompareReport) -> str:
    """``9a04e3f0 (base) vs 1b2c3d4e (head)``, or for one commit in two environments
    ``<base env> (base) vs <head env> (head) at 9a04e3f0``."""
    if report.head_env:
        base_env, head_env = envs_compared(", ".join(report.env_names), report.head_env)
        return (
            f"{escape(base_env)} (base) vs {escape(head_env)} (head) at "
            f"{escape(report.base_commit[:12])}"
        )
    base, head = escape(report.base_commit[:12]), escape(report.head_commit[:12])
    return f"{base} (base) vs {head} (head)"


def footer(report: CompareReport) -> list[str]:
    """The thresholds and the review's false-alarm rule, as lines of markdown."""
    settings = report.settings
    tested = sum(
        1
        for row in report.rows
        if row.comparison.p_value is not None and row.warm_test is not WarmTest.PAIRED_HISTORY
    )
    from_pairs = report.warm_tests()[WarmTest.PAIRED_HISTORY]
    untested = "shown, and fail the check" if settings.fail_untested else "shown, never failing"
    pairs = (
        f" The {_plural(from_pairs, 'warm time')} from the paired history keep the family of "
        "their pair (Holm over its series, as jaxbench regressions lists them)."
        if from_pairs
        else ""
    )
    lines = [
        "Thresholds: first call and its stages measured in fresh processes side by side: "
        f"paired t-test and ratio beyond {settings.first_call_factor:g}; work and correctness "
        "exact.  ",
        f"False alarms: the {tested} tested rows are one family (Holm-Bonferroni): a row "
        f"fails only when its adjusted p < {settings.alpha:g}, so a review of unchanged "
        f"code fails at most {settings.alpha:.0%} of the time.{pairs} Figures with one value "
        "a side are moved, not tested, only beyond the spread measured between commits "
        f"with identical code ({floors_line()}): {untested}.",
    ]
    for line in warm_test_lines(report):
        lines[-1] += "  "
        lines.append(escape(line))
    return lines


def warm_test_lines(report: CompareReport) -> list[str]:
    """How the tested warm times were tested, with their gates (those not
    tested are in :func:`not_tested_line`)."""
    counts = report.warm_tests()
    s = report.settings
    pair_gates = sorted({r.gate for r in report.rows if r.gate is not None})
    pair_gate = "/".join(f"{g:g}" for g in pair_gates) or f"{s.paired_factor:g}"
    what = {
        WarmTest.SIDE_BY_SIDE: f"side by side (jaxbench ab, {s.paired} samples a round): "
        f"paired t over rounds, ratio beyond {s.paired_factor:g}",
        WarmTest.PAIRED_HISTORY: "from the paired history (jaxbench pair-history timed these "
        f"two commits side by side): paired t over rounds, ratio beyond {pair_gate}",
        WarmTest.ONE_RUN: "in one run: Welch t on log round medians (or Mann-Whitney), "
        f"ratio beyond {s.factor:g}",
        WarmTest.ACROSS_RUNS: "in separate runs: t on the log ratio with the spread between "
        f"runs of the series' other commits, ratio beyond {s.factor:g}",
    }
    parts = [f"{counts[how]} {text}" for how, text in what.items() if counts[how]]
    return ["Warm times: " + "; ".join(parts) + "."] if parts else []


def _ratios(rows: Sequence[Row]) -> str:
    """``1.30x`` or ``1.21x to 1.35x``: the ratios of some rows."""
    ratios = sorted(r.comparison.ratio for r in rows if r.comparison.ratio is not None)
    if not ratios:
        return ""
    low, high = format_ratio(ratios[0]), format_ratio(ratios[-1])
    return f" ({low})" if low == high else f" ({low} to {high})"


def _figures(rows: Sequence[Row]) -> str:
    """``2 first-call figures``, ``3 figures (first-call, memory)``."""
    kinds = sorted({"first-call" if r.kind is Kind.COMPILE else KIND_LABELS[r.kind] for r in rows})
    if len(kinds) == 1:
        return _plural(len(rows), f"{kinds[0]} figure")
    return f"{_plural(len(rows), 'figure')} ({', '.join(kinds)})"


def _them(rows: Sequence[Row]) -> str:
    return "it" if len(rows) == 1 else "them"


def _untested_between_environments(warm: list[Row], single: list[Row]) -> str | None:
    """What one commit's comparison in two environments, read from the history, leaves
    untested, and the command that times both side by side."""
    parts: list[str] = []
    moved = [r for r in warm if r.verdict is Verdict.UNTESTED]
    if warm:
        parts.append(
            f"{_plural(len(warm), 'warm time')} measured in separate runs"
            + (f", {len(moved)} moved{_ratios(moved)}" if moved else "")
        )
    if single:
        parts.append(f"{_figures(single)} moved beyond the measured spread, one value a side"
                     f"{_ratios(single)}")  # fmt: skip
    if not parts:
        return None
    return (
        "Not tested: " + "; ".join(parts) + " (`jaxbench upgrade` without --from-history "
        "times both environments side by side)."
    )


def not_tested_line(report: CompareReport) -> str | None:
    """What could not be tested, how many of those moved, and the command that tests them.

    Warm times from separate runs with too little history (:class:`WarmTest`
    ``NOT_TESTED`` and ``CHAINED``), and figures with one value a side that
    moved beyond their measured spread: never counted as changes
    (:func:`summary_line`). None when everything was tested.
    """
    warm = [r for r in report.rows if r.warm_test is not None and not r.warm_test.tested]
    single = [r for r in report.rows if r.verdict is Verdict.UNTESTED and r.warm_test is None]
    envs = sorted({r.env_name for r in (*warm, *single)})
    where = f"--machine {report.machine} --env {envs[0] if len(envs) == 1 else 'ENV'}"
    commits = (report.base_commit, report.head_commit)
    parts: list[str] = []
    if report.head_env:  # one commit, two environments (upgrade)
        return _untested_between_environments(warm, single)
    if warm:
        s = report.settings
        text = (
            f"{_plural(len(warm), 'warm time')} in separate runs with fewer than "
            f"{s.min_history} other commits of history"
        )
        chained = sum(r.warm_test is WarmTest.CHAINED for r in warm)
        if chained:
            text += f" ({chained} with the paired history's chained ratio, evidence only)"
        moved = [r for r in warm if r.verdict is Verdict.UNTESTED]
        if moved:
            some = "it" if len(warm) == 1 else "all" if moved == warm else f"{len(moved)} of them"
            text += f", {some} moved{_ratios(moved)}"
        parts.append(f"{text}: {ab_command(*commits)} {where} times {_them(warm)} side by side")
    first_call = [
        r
        for r in single
        if r.kind is Kind.COMPILE or method_of(r.benchmark) in WORKLOAD_MEMORY_TRACKS
    ]
    if first_call:
        parts.append(
            f"{_figures(first_call)} moved beyond the measured "
            f"spread, one value a side{_ratios(first_call)}: "
            f"{ab_command(*commits, 'first-call')} {where} "
            f"times {_them(first_call)} in fresh processes side by side"
        )
    other = [r for r in single if r not in first_call]
    if other:
        parts.append(
            f"{_figures(other)} moved beyond the measured spread, "
            f"one value a side{_ratios(other)}: no side-by-side measurement exists for "
            f"{_them(other)}"
        )
    return "Not tested: " + "; ".join(parts) + "." if parts else None


def floors_line() -> str:
    """The floors of one value a side, for the footer: memory ones in full, then the
    first-call stages' range of ratios (all of them: docs/measured.md)."""
    memory = [f for f in FLOORS.values() if f.unit == "bytes"]
    stages = [f.relative for f in FLOORS.values() if f.unit != "bytes"]
    parts = [f"{f.label} {format_value(f.absolute, f.unit)} and {f.relative:g}x" for f in memory]
    if stages:
        parts.append(f"first call and its stages {min(stages):g}x to {max(stages):g}x")
    return ", ".join(parts)


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
