"""The benchmarks failing at the newest commit as text, grouped, fitted to a line budget (pure).

One line per group (:class:`jaxbench.analyse.failures.FailureGroup`: one
machine, environment, commit and cause), most important first, e.g.
``newly failing since c3a1e2f0 (last value at 0ac7fd2b)  2026-01-03  2 of 6
series  m1 / env: RuntimeError: ...`` (a partial failure, its series below
it: ``bench.Suite.time_step(1)  failed at 1 of 3 commits: RuntimeError:
...``) or ``... 2525 of 2525 series  m-b / py3.11: every benchmark failed;
asv could not build or install it: ERROR: ...`` (a whole result).

A whole-result failure is that one line, never a list of its series; a
partial one shows its worst :data:`TOP_FAILURES` series, then ``... and K
more series``. Under a budget (:func:`failures_text`) the most important
groups keep their series first; groups that do not fit are counted in one
line. ``every=True`` (``--failing``) lists every failing series.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jaxbench.analyse.failures import Failure, FailureGroup

__all__ = [
    "EVERY_HINT",
    "TOP_FAILURES",
    "failure_cause",
    "failure_counts",
    "failure_group_line",
    "failure_group_title",
    "failures_summary",
    "failures_text",
    "no_error_text",
    "publish_lines",
    "retired_note",
]

#: Series shown per partial group in the budgeted listing; the rest are counted.
TOP_FAILURES = 3
#: How to see every failing series.
EVERY_HINT = "--failing lists each"


def _day(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC).strftime("%Y-%m-%d")


def failure_counts(groups: Sequence[FailureGroup]) -> tuple[int, int, int, int]:
    """(failing, newly failing, failing at every commit measured, on retired environments)."""
    every = [f for g in groups for f in g.failures]
    retired = sum(f.retired for f in every)
    newly = sum(f.newly for f in every)
    return len(every), newly, len(every) - newly - retired, retired


def failures_summary(groups: Sequence[FailureGroup], *, hint: bool = False) -> str:
    """One line: how many benchmarks fail at the newest commit ("" when none)."""
    total, newly, always, retired = failure_counts(groups)
    if not total:
        return ""
    noun = "benchmark fails" if total == 1 else "benchmarks fail"
    on_retired = f", {retired} on retired environments" if retired else ""
    return (
        f"{total} {noun} at the newest commit ({newly} newly failing, "
        f"{always} failing at every commit measured{on_retired}), worst first"
        + (f"; {EVERY_HINT}:" if hint else ":")
    )


def failure_group_title(group: FailureGroup) -> str:
    """``newly failing since <commit> (last value at <commit>)`` or ``failing since ...``."""
    since = group.since_commit[:8]
    if group.last_good_commit is not None:
        verb = "newly failing" if group.newly else "failing"
        return f"{verb} since {since} (last value at {group.last_good_commit[:8]})"
    return f"failing since {since}, the first commit measured (never had a value)"


def failure_cause(group: FailureGroup) -> str:
    """Why the group fails, as its line ends ("" for a partial group with no error text)."""
    if not group.whole_result:
        return group.error or ""
    if group.build_error:
        said = f": {group.error}" if group.error else ""
        return f"every benchmark failed; asv could not build or install it{said}"
    if group.error:
        return f"every benchmark failed: {group.error}"
    return "every benchmark failed (a build, install or suite import that failed; no error text)"


def failure_group_line(group: FailureGroup) -> str:
    """The group's one line: start, date, count, machine and environment, cause."""
    retired = " (retired)" if group.retired else ""
    cause = failure_cause(group)
    return (
        f"{failure_group_title(group)}  {_day(group.date)}  {len(group.failures)} of "
        f"{group.series_measured} series  {group.machine} / {group.env_name}{retired}"
        + (f": {cause}" if cause else "")
    )


def _failure_line(failure: Failure) -> str:
    error = failure.error if failure.error is not None else "no error text"
    return (
        f"   {failure.key.entry_name}  failed at {failure.failed_commits} of "
        f"{failure.measured_commits} commits: {error}"
    )


def _more(n: int) -> str:
    return f"   ... and {n} more series (--failing, --format json)"


def no_error_text(groups: Sequence[FailureGroup], asv_logs: Sequence[Path]) -> str:
    """Why some listed failures have no error text ("" when each has one, or its group's
    build error stands for it)."""
    every = [f for g in groups for f in g.failures]
    missing = sum(
        f.error is None and not (g.build_error and g.error) for g in groups for f in g.failures
    )
    if not missing:
        return ""
    if not asv_logs:
        return (
            "No error text: asv keeps none in its result files; pass --asv-log FILE "
            "(the saved output of 'asv run --show-stderr') to show the last line of each error."
        )
    logs = ", ".join(str(p) for p in asv_logs)
    return (
        f"No error text for {missing} of {len(every)}: {logs} holds none for them "
        "(an older run, or asv run without --show-stderr)."
    )


def retired_note(groups: Sequence[FailureGroup]) -> str:
    """One line naming the retired environments listed ("" when none)."""
    retired = {(g.machine, g.env_name): g for g in groups if g.retired}
    if not retired:
        return ""
    named = "; ".join(
        f"{machine} / {env} after {g.failures[0].newest_commit[:8]} ({g.later_commits} newer "
        "commits)"
        for (machine, env), g in retired.items()
    )
    pronoun = "its" if len(retired) == 1 else "their"
    return (
        f"Retired (newer commits measured only on other machines or environments): {named}; "
        f"{pronoun} failures are not newly failing and --fail-on ignores them."
    )


def _details(group: FailureGroup, *, every: bool, room: int | None = None) -> tuple[list[str], int]:
    """(the series lines under a group's line, how many series they show): its worst
    :data:`TOP_FAILURES` then ``... and K more`` in at most ``room`` lines; none for a
    whole result; every series with ``every``."""
    members = group.failures
    if every:
        return [_failure_line(f) for f in members], len(members)
    if group.whole_result:
        return [], 0
    k = len(members) if len(members) <= TOP_FAILURES + 1 else TOP_FAILURES
    if room is not None and k + (k < len(members)) > room:
        k = room - 1 if room >= 2 else 0
    if not k:
        return [], 0
    more = [_more(len(members) - k)] if k < len(members) else []
    return [_failure_line(f) for f in members[:k]] + more, k


def failures_text(
    groups: Sequence[FailureGroup],
    asv_logs: Sequence[Path] = (),
    *,
    budget: int | None = None,
    every: bool = False,
) -> list[str]:
    """The failing benchmarks by group, most important first, in at most ``budget`` lines.

    ``budget`` None: every group with its top series; ``every``: every series
    of every group (no budget). Under a budget each group keeps its line while
    they fit (the rest counted in one), the most important group keeping room
    for its worst series, and the lines left go to the series of the most
    important groups first.
    """
    if not groups:
        return []
    notes = [n for n in (retired_note(groups), no_error_text(groups, asv_logs)) if n]
    if every or budget is None:
        body: list[str] = []
        for group in groups:
            body.append(failure_group_line(group))
            body.extend(_details(group, every=every)[0])
        hint = not every and any(
            g.whole_result or len(g.failures) > TOP_FAILURES + 1 for g in groups
        )
        return [failures_summary(groups, hint=hint), *body, *notes]
    room = max(budget - 1 - len(notes), 2)
    # when not every group's line fits, the first group keeps room for its worst series
    first = len(_details(groups[0], every=False)[0])
    reserve = first if len(groups) + first > room and room >= 2 * first + 2 else 0
    shown = len(groups) if len(groups) <= room - reserve else max(room - reserve - 1, 1)
    spare = room - shown - (shown < len(groups))
    body = []
    hidden = shown < len(groups)
    for group in groups[:shown]:
        body.append(failure_group_line(group))
        details, listed = _details(group, every=False, room=spare)
        body.extend(details)
        spare -= len(details)
        hidden = hidden or listed < len(group.failures)
    if shown < len(groups):
        rest = groups[shown:]
        n = sum(len(g.failures) for g in rest)
        noun = "group" if len(rest) == 1 else "groups"
        body.append(f"... and {len(rest)} more {noun} of failing benchmarks ({n} series)")
    return [failures_summary(groups, hint=hidden), *body, *notes]


def publish_lines(
    html_dir: Path,
    page: Path,
    regressions: int,
    groups: Sequence[FailureGroup],
    asv_logs: Sequence[Path] = (),
    *,
    budget: int,
) -> list[str]:
    """``jaxbench publish``'s one line (the failing benchmarks are on the page and in
    ``jaxbench regressions``, which ``make bench`` runs next: said once there).

    ``budget`` is kept for callers that print the groups too (0: none)."""
    total, newly, _always, retired = failure_counts(groups)
    wholes = sum(g.whole_result for g in groups)
    detail = f"{newly} newly failing"
    if wholes:
        detail += f", {wholes} whole result(s) failed"
    if retired:
        detail += f", {retired} on retired environments"
    grouped = f" in {len(groups)} group(s)" if groups else ""
    first = (
        f"jaxbench: published {html_dir}: {regressions} regression(s) and {total} failing "
        f"benchmark(s){grouped} ({detail}) listed in {page}"
    )
    if not budget:
        return [first]
    return [first, *failures_text(groups, asv_logs, budget=budget)]
