"""What changed between two commits' asv results: the report, and its text in a format.

Reads both sides from a results directory (two commits, by hash or prefix)
or from two result files (:func:`jaxbench.store.sides.load_sides`), the
round sizes and parameter names from asv's ``benchmarks.json``, the notes of
unchecked workloads, and compares them with the pure core
(:func:`jaxbench.analyse.compare.compare_points`). ``jaxbench compare`` and
``jaxbench review`` call :func:`compare_commits`, then render the report
(:func:`render`). Never imports jax.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from jaxbench.analyse.compare import CompareReport, Settings, compare_points
from jaxbench.render.markdown import format_markdown
from jaxbench.render.text import format_json, format_text
from jaxbench.store.checks import read_unchecked
from jaxbench.store.sides import load_sides, read_param_names, read_round_sizes, results_dir_of

__all__ = ["Compared", "compare_commits", "render"]

Say = Callable[[str], None]

#: Warnings of the result files said one by one; the rest are counted.
WARNINGS_SAID = 5


@dataclass(frozen=True)
class Compared:
    """A comparison, and what its markdown needs from the results directory."""

    report: CompareReport
    param_names: dict[str, tuple[str, ...]]


def compare_commits(
    base: str,
    head: str,
    *,
    results: Path,
    machine: str | None,
    env: str | None,
    settings: Settings,
    say: Say,
) -> Compared:
    """Compare ``base`` with ``head`` (commits of ``results``, or two result files)."""
    where = results_dir_of(head, results)
    settings = replace(settings, round_sizes=read_round_sizes(where / "benchmarks.json"))
    sides = load_sides(base, head, results, machine=machine, env_name=env)
    for warning in sides.warnings[:WARNINGS_SAID]:
        say(f"jaxbench: warning: {warning}")
    if len(sides.warnings) > WARNINGS_SAID:
        say(f"jaxbench: warning: ... and {len(sides.warnings) - WARNINGS_SAID} more")
    report = compare_points(
        sides.base,
        sides.head,
        settings,
        notes=read_unchecked(where),
        history=sides.history,
        paired=sides.paired,
    )
    return Compared(report, read_param_names(where))


def render(
    compared: Compared, form: str, *, fail_on: frozenset[str], html_url: str | None = None
) -> str:
    """The report as ``text``, ``markdown`` (the pull-request comment) or ``json``."""
    if form == "markdown":
        return format_markdown(compared.report, html_url=html_url, param_names=compared.param_names)
    if form == "json":
        return format_json(compared.report, fail_on)
    return format_text(compared.report)
