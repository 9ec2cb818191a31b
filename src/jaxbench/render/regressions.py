"""``jaxbench regressions``'s listing as text and as its versioned JSON document (pure).

The text lists, worst first, the benchmarks that fail at the newest commit
(:mod:`jaxbench.analyse.failures`: newly failing first, each with since which
commit, at how many commits and the last line of its error), then the events
(:mod:`jaxbench.analyse.events`) or, with ``--series``, every step. The JSON
document's version is :data:`JSON_FORMAT`.

JSON output (``--format json``) is versioned::

    {"format": 4, "detector": "binseg", "series": N, "failing": [...],
     "newly_failing": N, "asv_logs": ["..."], "events": [...],
     "regressions": [...], "unconfirmed": [...], "machine_changes": [...],
     "warnings": ["...", ...]}

``detector`` names the step fit that found the steps (``--detector``).
``failing`` holds the groups of benchmarks failing at the newest commit,
newly failing first: ``machine``, ``env_name``, ``since_commit``, ``date``
(ms, of ``since_commit``), ``last_good_commit`` (null: never had a value),
``newly``, ``series_measured`` (series measured at the newest commit there),
``whole_environment`` (every one of them fails) and ``failures``, each with
``benchmark``, ``params``, ``machine``,
``env_name``, ``version``, ``since_commit``, ``date``, ``last_good_commit``,
``newly``, ``failed_commits`` (commits failed in a row up to the newest),
``measured_commits``, ``newest_commit`` and ``error`` (the last line of its
error from ``--asv-log``; null when no log holds it). ``newly_failing``
counts the newly failing series; ``asv_logs`` lists the logs read.

Each regression has ``benchmark``, ``params`` (list of asv repr strings),
``machine``, ``env_name``, ``version``, ``kind``, ``good_commit``,
``bad_commit``, ``date`` (ms), ``before`` and ``after`` (the fitted levels on
either side of the step), ``ratio`` (after / before, null when not finite),
``best_after`` (asv's best value after the step), ``unit``, ``fingerprint``,
``fixed_commit`` (null unless ``--all`` found it undone), ``evidence``
(``exact``, ``confirmed``; in ``unconfirmed``: ``not tested``, ``within
noise``, ``below floor``), ``n_before`` and ``n_after`` (commits on each side)
and ``p_value`` (Holm-adjusted; null when not tested). Each event has
``machine``, ``env_name``, ``good_commit``, ``bad_commit``, ``date``,
``broad``, ``series_measured``, ``severity``, ``kinds``, ``worst_ratio`` and
its ``regressions`` (worst first). Format 1 had no events and gave asv's best
value after the step as ``after``; format 2 listed every step of asv's fit as
a regression; format 3 had no ``failing``, ``newly_failing`` or ``asv_logs``. Where
``jaxbench pair-history`` wrote pairs, ``paired_history`` holds ``pairs``,
``series`` and ``flagged``: each commit whose own pair says regression
(``benchmark``, ``params``, ``machine``, ``env_name``, ``commit``, ``ratio``,
``low``, ``high``, ``p_value`` (Holm-adjusted over the pair's series),
``raw_p_value``, ``rounds``).
"""

from __future__ import annotations

import datetime
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jaxbench.render.units import format_ratio, format_value

if TYPE_CHECKING:
    from jaxbench.analyse.detect import MachineChange, Regression
    from jaxbench.analyse.events import Event
    from jaxbench.analyse.failures import Failure, FailureGroup

__all__ = [
    "DEFAULT_LIMIT",
    "JSON_FORMAT",
    "TOP_SERIES",
    "WHOLE_ENVIRONMENT_LABEL",
    "changes_text",
    "failure_group_title",
    "failures_summary",
    "failures_text",
    "format_events",
    "format_json",
    "format_text",
    "no_error_text",
]

#: Version of the ``--format json`` document (4: ``failing``, ``newly_failing``, ``asv_logs``).
JSON_FORMAT = 4
#: Events shown by default (one screen); --limit 0 shows all.
DEFAULT_LIMIT = 8
#: Series shown per event in the text listing; the rest are counted.
TOP_SERIES = 3


def _entry(reg: Regression) -> dict[str, Any]:
    return {
        "benchmark": reg.key.benchmark,
        "params": list(reg.key.params),
        "machine": reg.key.machine,
        "env_name": reg.key.env_name,
        "version": reg.key.version,
        "kind": reg.kind.value,
        "good_commit": reg.good_commit,
        "bad_commit": reg.bad_commit,
        "date": reg.date,
        "before": reg.before,
        "after": reg.after,
        "ratio": reg.ratio if math.isfinite(reg.ratio) else None,
        "best_after": reg.best_after,
        "unit": reg.unit,
        "fingerprint": reg.fingerprint,
        "fixed_commit": reg.fixed_commit,
        "evidence": reg.evidence.value,
        "n_before": reg.n_before,
        "n_after": reg.n_after,
        "p_value": reg.p_value,
    }


def _event_entry(event: Event) -> dict[str, Any]:
    return {
        "machine": event.machine,
        "env_name": event.env_name,
        "good_commit": event.good_commit,
        "bad_commit": event.bad_commit,
        "date": event.date,
        "broad": event.broad,
        "series_measured": event.series_measured,
        "severity": round(event.severity, 6),
        "kinds": [k.value for k in event.kinds],
        "worst_ratio": event.worst_ratio if math.isfinite(event.worst_ratio) else None,
        "regressions": [_entry(r) for r in event.regressions],
    }


def _change_entry(change: MachineChange) -> dict[str, Any]:
    return {
        "machine": change.machine,
        "env_name": change.env_name,
        "commit": change.commit,
        "date": change.date,
        "before": change.before,
        "after": change.after,
        "series": change.series,
    }


def _failure_entry(failure: Failure) -> dict[str, Any]:
    return {
        "benchmark": failure.key.benchmark,
        "params": list(failure.key.params),
        "machine": failure.key.machine,
        "env_name": failure.key.env_name,
        "version": failure.key.version,
        "since_commit": failure.since_commit,
        "date": failure.date,
        "last_good_commit": failure.last_good_commit,
        "newly": failure.newly,
        "failed_commits": failure.failed_commits,
        "measured_commits": failure.measured_commits,
        "newest_commit": failure.newest_commit,
        "error": failure.error,
    }


def _failure_group_entry(group: FailureGroup) -> dict[str, Any]:
    return {
        "machine": group.machine,
        "env_name": group.env_name,
        "since_commit": group.since_commit,
        "date": group.date,
        "last_good_commit": group.last_good_commit,
        "newly": group.newly,
        "series_measured": group.series_measured,
        "whole_environment": group.whole_environment,
        "failures": [_failure_entry(f) for f in group.failures],
    }


def format_json(
    regressions: Sequence[Regression],
    warnings: Sequence[str],
    *,
    events: Sequence[Event] = (),
    machine_changes: Sequence[MachineChange] = (),
    n_series: int = 0,
    unconfirmed: Sequence[Regression] = (),
    detector: str = "binseg",
    failing: Sequence[FailureGroup] = (),
    asv_logs: Sequence[Path] = (),
    paired_history: dict[str, object] | None = None,
) -> str:
    """The versioned JSON listing (every event and failure: --limit applies to text only)."""
    document: dict[str, Any] = {
        "format": JSON_FORMAT,
        "detector": detector,
        "series": n_series,
        "failing": [_failure_group_entry(g) for g in failing],
        "newly_failing": sum(len(g.failures) for g in failing if g.newly),
        "asv_logs": [str(p) for p in asv_logs],
        "events": [_event_entry(e) for e in events],
        "regressions": [_entry(r) for r in regressions],
        "unconfirmed": [_entry(r) for r in unconfirmed],
        "machine_changes": [_change_entry(c) for c in machine_changes],
        "warnings": list(warnings),
    }
    if paired_history is not None:
        document["paired_history"] = paired_history
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------------------
# failing benchmarks


def no_error_text(failures: Sequence[Failure], asv_logs: Sequence[Path]) -> str:
    """Why some listed failures have no error text ("" when each has one)."""
    missing = sum(f.error is None for f in failures)
    if not missing:
        return ""
    if not asv_logs:
        return (
            "No error text: asv keeps none in its result files; pass --asv-log FILE "
            "(the saved output of 'asv run --show-stderr') to show the last line of each error."
        )
    logs = ", ".join(str(p) for p in asv_logs)
    return (
        f"No error text for {missing} of {len(failures)}: {logs} holds none for them "
        "(an older run, or asv run without --show-stderr)."
    )


def failures_summary(groups: Sequence[FailureGroup]) -> str:
    """One line: how many benchmarks fail at the newest commit ("" when none)."""
    total = sum(len(g.failures) for g in groups)
    if not total:
        return ""
    newly = sum(len(g.failures) for g in groups if g.newly)
    noun = "benchmark fails" if total == 1 else "benchmarks fail"
    return (
        f"{total} {noun} at the newest commit ({newly} newly failing, "
        f"{total - newly} failing at every commit measured), worst first:"
    )


def _failure_line(failure: Failure) -> str:
    error = failure.error if failure.error is not None else "no error text"
    return (
        f"   {failure.key.entry_name}  failed at {failure.failed_commits} of "
        f"{failure.measured_commits} commits: {error}"
    )


#: What a failing environment most likely is.
WHOLE_ENVIRONMENT_LABEL = (
    "every series measured there fails: likely a broken environment build, install "
    "or suite import, not the code measured"
)


def failure_group_title(group: FailureGroup) -> str:
    """``newly failing since <commit> (last value at <commit>)`` or ``failing since ...``."""
    since = group.since_commit[:8]
    if group.newly:
        good = group.last_good_commit[:8] if group.last_good_commit else "?"
        return f"newly failing since {since} (last value at {good})"
    return f"failing since {since}, the first commit measured (never had a value)"


def failures_text(groups: Sequence[FailureGroup], asv_logs: Sequence[Path] = ()) -> list[str]:
    """Every benchmark failing at the newest commit, by group, newly failing first."""
    if not groups:
        return []
    lines = [failures_summary(groups)]
    for group in groups:
        lines.append(
            f"{failure_group_title(group)}  {_day(group.date)}  {len(group.failures)} of "
            f"{group.series_measured} series  {group.machine} / {group.env_name}"
        )
        if group.whole_environment:
            lines.append(f"   {WHOLE_ENVIRONMENT_LABEL}")
        lines.extend(_failure_line(f) for f in group.failures)
    every = [f for g in groups for f in g.failures]
    note = no_error_text(every, asv_logs)
    if note:
        lines.append(note)
    return lines


def _commits(reg: Regression) -> str:
    bad = reg.bad_commit[:8]
    span = bad if reg.good_commit is None else f"{reg.good_commit[:8]}..{bad}"
    if reg.fixed_commit is not None:
        span += f" (undone at {reg.fixed_commit[:8]})"
    return span


def _day(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC).strftime("%Y-%m-%d")


def changes_text(changes: Sequence[MachineChange]) -> list[str]:
    """One line per machine change (commit and machine), its series summed."""
    merged: dict[tuple[str, str], int] = {}
    for c in changes:
        merged[(c.machine, c.commit)] = merged.get((c.machine, c.commit), 0) + c.series
    return [
        f"machine changed at {commit[:8]} ({machine}): {n} series restarted"
        for (machine, commit), n in merged.items()
    ]


def format_events(
    events: Sequence[Event],
    n_series: int,
    *,
    limit: int = DEFAULT_LIMIT,
    machine_changes: Sequence[MachineChange] = (),
    unconfirmed: Sequence[Regression] = (),
) -> str:
    """Events, most severe first: the top series of each, the rest counted."""
    from jaxbench.analyse.events import BROAD_LABEL
    from jaxbench.analyse.evidence import unconfirmed_summary

    lines: list[str] = []
    n_regs = sum(len(e.regressions) for e in events)
    if not events:
        lines.append(f"No regressions in {n_series} series.")
    else:
        shown = events if limit <= 0 else events[:limit]
        noun = "event" if len(events) == 1 else "events"
        more = "" if len(shown) == len(events) else f"; showing {len(shown)} (--limit 0: all)"
        lines.append(
            f"{len(events)} {noun} ({n_regs} regressed series of {n_series}), worst first{more}:"
        )
        for number, event in enumerate(shown, 1):
            span = event.bad_commit[:8]
            if event.good_commit:
                span = f"{event.good_commit[:8]}..{span}"
            kinds = ", ".join(k.value for k in event.kinds)
            lines.append(
                f"{number}. {span}  {_day(event.date)}  {len(event.regressions)} of "
                f"{event.series_measured} series, up to {format_ratio(event.worst_ratio)} "
                f"({kinds})  {event.machine} / {event.env_name}"
            )
            if event.broad:
                lines.append(f"   broad: {BROAD_LABEL}")
            for reg in event.regressions[:TOP_SERIES]:
                lines.append(
                    f"   {reg.key.entry_name}  {format_value(reg.before, reg.unit)} -> "
                    f"{format_value(reg.after, reg.unit)}  {format_ratio(reg.ratio)}"
                    + (f" (undone at {reg.fixed_commit[:8]})" if reg.fixed_commit else "")
                )
            rest = len(event.regressions) - TOP_SERIES
            if rest > 0:
                lines.append(f"   ... and {rest} more series (--series, --format json)")
    lines.extend(changes_text(machine_changes))
    if unconfirmed:
        lines.append(unconfirmed_summary(unconfirmed))
    return "\n".join(lines) + "\n"


def format_text(
    regressions: Sequence[Regression], n_series: int, *, what: str = "regression"
) -> str:
    """A table of regressions (or of unconfirmed steps), newest first (``--series``)."""
    if not regressions:
        return f"No {what}s in {n_series} series.\n"
    header = (
        "benchmark",
        "commits",
        "before",
        "after",
        "ratio",
        "kind",
        "evidence",
        "environment",
        "machine",
    )
    rows = [header]
    for reg in regressions:
        ratio = format_ratio(reg.ratio)
        rows.append(
            (
                reg.key.entry_name,
                _commits(reg),
                format_value(reg.before, reg.unit),
                format_value(reg.after, reg.unit),
                ratio,
                reg.kind.value,
                _evidence_text(reg),
                reg.key.env_name,
                reg.key.machine,
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    noun = what if len(regressions) == 1 else f"{what}s"
    return (
        f"{len(regressions)} {noun} in {n_series} series (newest first):\n"
        + "\n".join(lines)
        + "\n"
    )


def _evidence_text(reg: Regression) -> str:
    sides = f" ({reg.n_before}|{reg.n_after})" if reg.n_before or reg.n_after else ""
    p = "" if reg.p_value is None else f" p={reg.p_value:.2g}"
    return f"{reg.evidence.value}{sides}{p}"
