"""``jaxbench hlo-diff``: how each benchmark's optimized HLO changed between two commits.

Reads the HLO files :mod:`jaxbench.store.hlo_store` keeps beside asv's results and
compares them with :func:`jaxbench.analyse.hlo.hlo_diff`. Never imports jax.
"""

from __future__ import annotations

import argparse
import html
import re
from dataclasses import dataclass
from pathlib import Path

from jaxbench.analyse.hlo import HloDiff, hlo_diff
from jaxbench.commands import positive_int
from jaxbench.errors import ResultsError, UsageError
from jaxbench.store.hlo_store import StoredHlo, find_run, list_hlo, read_stored

__all__ = [
    "HELP",
    "BenchmarkHloChange",
    "HloDiffReport",
    "add_arguments",
    "format_markdown",
    "format_text",
    "run",
]

HELP = "show how the optimized HLO of each benchmark changed between two commits"

_MD_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")


@dataclass(frozen=True)
class BenchmarkHloChange:
    """One benchmark's HLO at base and head; ``diff`` is None when one side is missing."""

    benchmark: str
    params: tuple[str, ...]
    diff: HloDiff | None
    in_base: bool
    in_head: bool

    @property
    def label(self) -> str:
        return f"{self.benchmark} [{', '.join(self.params)}]" if self.params else self.benchmark

    @property
    def changed(self) -> bool:
        return self.diff is None or not self.diff.identical


@dataclass(frozen=True)
class HloDiffReport:
    """Every benchmark with stored HLO at base or head, in name order."""

    base: str
    head: str
    machine: str
    env_name: str
    changes: tuple[BenchmarkHloChange, ...]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("base", metavar="BASE", help="base commit hash (or a unique prefix)")
    parser.add_argument("head", metavar="HEAD", help="head commit hash (or a unique prefix)")
    parser.add_argument(
        "--results", type=Path, default=Path("results"), help="asv results dir (default: results)"
    )
    parser.add_argument("--machine", help="machine name (default: the only one with HLO stored)")
    parser.add_argument("--env", help="asv environment name (default: the only one in both)")
    parser.add_argument("--benchmark", metavar="REGEX", help="only benchmarks matching REGEX")
    parser.add_argument("--format", choices=("text", "markdown"), default="text")
    parser.add_argument("--context", type=int, default=3, help="diff context lines (default: 3)")
    parser.add_argument(
        "--max-lines", type=positive_int, default=80, help="diff lines per benchmark (default: 80)"
    )


def _choose(what: str, option: str, given: str | None, choices: set[str], fix: str) -> str:
    if given is not None:
        return given
    if len(choices) == 1:
        return next(iter(choices))
    listed = ", ".join(sorted(choices)) or "none"
    raise UsageError(f"cannot tell which {what} to use (found: {listed}); {fix} or pass {option}")


def _runs_of(stored: list[StoredHlo], commit: str) -> list[StoredHlo]:
    prefix = commit[:8].lower()
    return [s for s in stored if prefix and s.commit.startswith(prefix)]


def collect(
    results: Path,
    base: str,
    head: str,
    *,
    machine: str | None = None,
    env_name: str | None = None,
    benchmark_regex: str | None = None,
    context: int = 3,
    max_lines: int = 80,
) -> HloDiffReport:
    """Read the stored HLO of ``base`` and ``head`` and compare it benchmark by benchmark."""
    try:
        pattern = re.compile(benchmark_regex or "")
    except re.error as exc:
        raise UsageError(
            f"--benchmark {benchmark_regex!r} is not a regular expression: {exc}"
        ) from None
    if context < 0:
        raise UsageError(f"--context must be 0 or more, got {context}")
    stored = list_hlo(results)
    machine = _choose(
        "machine",
        "--machine",
        machine,
        {s.machine for s in stored},
        f"run the benchmarks with asv so that {results}/<machine>/hlo exists",
    )
    stored = [s for s in stored if s.machine == machine]
    for commit in (base, head):
        if not _runs_of(stored, commit):
            have = ", ".join(sorted({s.commit for s in stored})) or "none"
            raise ResultsError(
                f"no HLO stored for commit {commit!r} under {results}/{machine}/hlo "
                f"(stored: {have}); run the benchmarks for it with asv"
            )
    env_name = _choose(
        "environment",
        "--env",
        env_name,
        {s.env_name for s in _runs_of(stored, base)} & {s.env_name for s in _runs_of(stored, head)},
        "benchmark both commits in one asv environment",
    )
    base_dir = find_run(results, machine, base, env_name)
    head_dir = find_run(results, machine, head, env_name)

    def texts(run_dir: Path) -> dict[tuple[str, tuple[str, ...]], str]:
        return {
            (s.benchmark, s.params): read_stored(s)
            for s in stored
            if s.path.parent == run_dir and pattern.search(s.benchmark)
        }

    base_texts, head_texts = texts(base_dir), texts(head_dir)
    if not base_texts and not head_texts:
        raise ResultsError(
            f"no stored HLO matches --benchmark {benchmark_regex!r} at {base} or {head}; "
            "check the regular expression"
        )
    changes = []
    for key in sorted(base_texts.keys() | head_texts.keys()):
        both = key in base_texts and key in head_texts
        diff = (
            hlo_diff(base_texts[key], head_texts[key], context=context, max_lines=max_lines)
            if both
            else None
        )
        changes.append(
            BenchmarkHloChange(key[0], key[1], diff, key in base_texts, key in head_texts)
        )
    return HloDiffReport(
        base_dir.name.partition("-")[0],
        head_dir.name.partition("-")[0],
        machine,
        env_name,
        tuple(changes),
    )


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


def run(args: argparse.Namespace) -> int:
    report = collect(
        args.results,
        args.base,
        args.head,
        machine=args.machine,
        env_name=args.env,
        benchmark_regex=args.benchmark,
        context=args.context,
        max_lines=args.max_lines,
    )
    print(format_markdown(report) if args.format == "markdown" else format_text(report), end="")
    return 0
