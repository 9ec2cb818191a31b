"""``jaxbench hlo-diff``'s report as text and as a markdown section (escaped)."""

from __future__ import annotations

import html
import re

from jaxbench.analyse.hlo import BenchmarkHloChange, HloDiff, HloDiffReport

__all__ = ["format_markdown", "format_text"]

_MD_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")


def _summary(report: HloDiffReport) -> str:
    changed = sum(c.changed for c in report.changes)
    return (
        f"HLO diff {report.base} -> {report.head} (machine {report.machine}, "
        f"env {report.env_name}): {changed} of {len(report.changes)} benchmarks changed"
    )


def _counts(diff: HloDiff) -> str:
    return (
        f"ops {diff.base_ops} -> {diff.head_ops}, fusions {diff.base_fusions} -> "
        f"{diff.head_fusions}"
    )


def _missing_side(change: BenchmarkHloChange) -> str:
    return "only at head (new)" if change.in_head else "only at base (gone)"


def format_text(report: HloDiffReport) -> str:
    """Plain text: a summary, then each changed benchmark, then the unchanged ones."""
    lines = [_summary(report)]
    for change in report.changes:
        if not change.changed:
            continue
        diff = change.diff
        if diff is None:
            lines.append(f"{change.label}: {_missing_side(change)}")
            continue
        lines.append(f"{change.label}: HLO changed; {_counts(diff)}")
        width = max((len(c.op) for c in diff.op_changes), default=0)
        lines += [f"  {c.op:<{width}}  {c.base} -> {c.head}" for c in diff.op_changes]
        lines += [f"  {line}" for line in diff.diff_lines]
        if diff.omitted_lines:
            lines.append(f"  ... {diff.omitted_lines} more diff lines not shown")
    lines += [f"{c.label}: no HLO change" for c in report.changes if not c.changed]
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    """``text`` as literal markdown: every ASCII punctuation mark backslash-escaped."""
    return _MD_PUNCTUATION.sub(r"\\\1", text).replace("\n", " ")


def _fence(body: str) -> str:
    """A backtick fence longer than any backtick run in ``body`` (at least 3)."""
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    return "`" * max(3, longest + 1)


def format_markdown(report: HloDiffReport) -> str:
    """A collapsed ``<details>`` section for a pull-request comment; all text escaped."""
    changed = [c for c in report.changes if c.changed]
    out = [
        "<details>",
        f"<summary>{html.escape(_summary(report))}</summary>",
        "",
    ]
    for change in changed:
        diff = change.diff
        if diff is None:
            out += [f"#### {_md(change.label)}", "", _md(_missing_side(change)), ""]
            continue
        out += [f"#### {_md(change.label)}", "", _md(_counts(diff)), ""]
        if diff.op_changes:
            out += ["| op | base | head |", "|---|---:|---:|"]
            out += [f"| {_md(c.op)} | {c.base} | {c.head} |" for c in diff.op_changes]
            out.append("")
        body = "\n".join(diff.diff_lines)
        fence = _fence(body)
        out += [f"{fence}diff", body, fence, ""]
        if diff.omitted_lines:
            out += [_md(f"{diff.omitted_lines} more diff lines not shown"), ""]
    unchanged = [c for c in report.changes if not c.changed]
    if unchanged:
        out += ["No HLO change:", ""]
        out += [f"- {_md(c.label)}" for c in unchanged]
        out.append("")
    out.append("</details>")
    return "\n".join(out) + "\n"
