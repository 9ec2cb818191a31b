"""``jaxbench regressions``'s listing as text and as its versioned JSON document (pure).

The text lists the benchmarks that fail at the newest commit
(:mod:`jaxbench.analyse.failures`, grouped: :mod:`jaxbench.render.failures`),
then the events (:mod:`jaxbench.analyse.events`) or, with ``--series``, every
step. By default the whole listing fits one screen, :data:`SCREEN_LINES`
lines (:func:`listing_text`): the failures take what the events leave, and
at least :data:`FAILURE_LINES` lines when both need more, so that failures
never push the events off the screen; each part shows its most important
first and counts the rest. ``--failing``, ``--limit N`` / ``--limit 0`` and
``--series`` lift the budget of their part. The JSON document's version is
:data:`JSON_FORMAT`; it is always complete.

JSON output (``--format json``) is versioned::

    {"format": 5, "detector": "binseg", "series": N, "longest_series": N,
     "failing": [...], "newly_failing": N, "retired": [...], "asv_logs": ["..."],
     "events": [...], "regressions": [...], "unconfirmed": [...],
     "machine_changes": [...], "notes": ["...", ...], "warnings": ["...", ...]}

``detector`` names the step fit that found the steps (``--detector``).
``longest_series`` is the most commits measured in any one series, and
``notes`` the lines the text ends with that no other field carries (a
history too short for any step to be tested: :func:`short_history_note`).
``failing`` holds the groups of benchmarks failing at the newest commit of
their machine and environment, one per machine, environment, commit and
cause, most important first: ``machine``, ``env_name``, ``since_commit``,
``date`` (ms, of ``since_commit``), ``last_good_commit`` (null: never had a
value), ``newly`` (it had a value, on a live environment), ``retired`` (its
machine and environment are no longer measured: never newly failing,
ignored by ``--fail-on``), ``series_measured`` (series measured at the newest
commit there), ``whole_result`` (every benchmark of the newest result file
failed: a build, install or suite import), ``error`` (the cause: asv's build
or install error, else the error line of its series, the most common one
for a whole result; null: no log holds one), ``build_error`` (``error`` is
asv's build or install error), ``failed_commits`` (commits failed in a row
up to the newest: the whole result's, else the most of its series') and
``failures``, each with ``benchmark``, ``params``, ``machine``,
``env_name``, ``version``, ``since_commit``, ``date``, ``last_good_commit``,
``newly``, ``retired``, ``failed_commits`` (commits failed in a row up to the
newest), ``measured_commits``, ``newest_commit`` and ``error`` (the last line
of its error from ``--asv-log``; null when no log holds it).
``newly_failing`` counts the newly failing series (none on a retired
environment); ``retired`` lists the retired machines and environments
(``machine``, ``env_name``, ``last_commit``, ``date``, ``later_commits``:
newer commits measured elsewhere; see
:func:`jaxbench.analyse.failures.retired_of`); ``asv_logs`` lists the
logs read.

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
a regression; format 3 had no ``failing``, ``newly_failing`` or ``asv_logs``;
format 4 grouped failures by commit only, with ``whole_environment`` (every
series there fails) where format 5 has ``whole_result``, and had no
``retired``, group ``error``, ``build_error`` or ``failed_commits``. Where
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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jaxbench.render.failures import failures_text
from jaxbench.render.units import format_ratio, format_value

if TYPE_CHECKING:
    from jaxbench.analyse.detect import MachineChange, Regression
    from jaxbench.analyse.events import Event
    from jaxbench.analyse.failures import Failure, FailureGroup, Retired

__all__ = [
    "DEFAULT_LIMIT",
    "FAILURE_LINES",
    "JSON_FORMAT",
    "MAX_CHANGES",
    "SCREEN_LINES",
    "TOP_SERIES",
    "changes_text",
    "format_events",
    "format_json",
    "format_text",
    "listing_text",
    "short_history_note",
    "unconfirmed_summary",
]

#: Version of the ``--format json`` document (5: failures grouped by cause, ``retired``).
JSON_FORMAT = 5
#: Events shown by default (within one screen); --limit N shows N, --limit 0 all.
DEFAULT_LIMIT = 8
#: Series shown per event in the text listing; the rest are counted.
TOP_SERIES = 3
#: Lines of the default text listing (one screen), failures and events together.
SCREEN_LINES = 60
#: Lines the failures may take when the events need the rest of the screen.
FAILURE_LINES = 20
#: Machine changes listed one per line under a budget; the rest are counted.
MAX_CHANGES = 3


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
        "retired": failure.retired,
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
        "retired": group.retired,
        "series_measured": group.series_measured,
        "whole_result": group.whole_result,
        "error": group.error,
        "build_error": group.build_error,
        "failed_commits": group.failed_commits,
        "failures": [_failure_entry(f) for f in group.failures],
    }


def _retired_entry(retired: Retired) -> dict[str, Any]:
    return {
        "machine": retired.machine,
        "env_name": retired.env_name,
        "last_commit": retired.last_commit,
        "date": retired.date,
        "later_commits": retired.later_commits,
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
    retired: Sequence[Retired] = (),
    asv_logs: Sequence[Path] = (),
    paired_history: dict[str, object] | None = None,
    longest_series: int = 0,
    notes: Sequence[str] = (),
) -> str:
    """The versioned JSON listing (every event and failure: the budget is the text's only)."""
    document: dict[str, Any] = {
        "format": JSON_FORMAT,
        "detector": detector,
        "series": n_series,
        "longest_series": longest_series,
        "failing": [_failure_group_entry(g) for g in failing],
        "newly_failing": sum(f.newly for g in failing for f in g.failures),
        "retired": [_retired_entry(r) for r in retired],
        "asv_logs": [str(p) for p in asv_logs],
        "events": [_event_entry(e) for e in events],
        "regressions": [_entry(r) for r in regressions],
        "unconfirmed": [_entry(r) for r in unconfirmed],
        "machine_changes": [_change_entry(c) for c in machine_changes],
        "notes": [n for n in notes if n],
        "warnings": list(warnings),
    }
    if paired_history is not None:
        document["paired_history"] = paired_history
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _commits(reg: Regression) -> str:
    bad = reg.bad_commit[:8]
    span = bad if reg.good_commit is None else f"{reg.good_commit[:8]}..{bad}"
    if reg.fixed_commit is not None:
        span += f" (undone at {reg.fixed_commit[:8]})"
    return span


def _day(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC).strftime("%Y-%m-%d")


def changes_text(changes: Sequence[MachineChange], *, most: int | None = None) -> list[str]:
    """One line per machine change (commit and machine), its series summed; under ``most``
    the first ``most`` and one line counting the rest."""
    merged: dict[tuple[str, str], int] = {}
    for c in changes:
        merged[(c.machine, c.commit)] = merged.get((c.machine, c.commit), 0) + c.series
    lines = [
        f"machine changed at {commit[:8]} ({machine}): {n} series restarted"
        for (machine, commit), n in merged.items()
    ]
    if most is not None and len(lines) > most:
        rest = len(lines) - most
        lines = [*lines[:most], f"... and {rest} more machine changes (--format json)"]
    return lines


def _event_block(
    number: int, event: Event, bisect: Callable[[Event], str | None] | None = None
) -> list[str]:
    from jaxbench.analyse.events import BROAD_LABEL

    span = event.bad_commit[:8]
    if event.good_commit:
        span = f"{event.good_commit[:8]}..{span}"
    kinds = ", ".join(k.value for k in event.kinds)
    lines = [
        f"{number}. {span}  {_day(event.date)}  {len(event.regressions)} of "
        f"{event.series_measured} series, up to {format_ratio(event.worst_ratio)} "
        f"({kinds})  {event.machine} / {event.env_name}"
    ]
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
    command = bisect(event) if bisect is not None else None
    if command:
        lines.append(f"   which commit: {command}")
    return lines


def unconfirmed_summary(unconfirmed: Sequence[Regression]) -> str:
    """One line counting the steps not listed, by why ("" when there are none).

    The largest step not yet tested (too few commits after it: a step at the
    newest commits) is named, so that a large one is seen before it is listed.
    """
    from jaxbench.analyse.evidence import MIN_SIDE
    from jaxbench.analyse.findings import Evidence

    if not unconfirmed:
        return ""
    why = {
        Evidence.UNTESTED: f"with fewer than {MIN_SIDE} commits on a side",
        Evidence.NOISE: "within the noise of the commits either side",
        Evidence.BELOW_FLOOR: "within the measured floor of their family (analyse/floors.py)",
    }
    counts = {e: sum(r.evidence is e for r in unconfirmed) for e in why}
    parts = ", ".join(f"{n} {why[e]}" for e, n in counts.items() if n)
    untested = [r for r in unconfirmed if r.evidence is Evidence.UNTESTED]
    if untested:
        top = max(untested, key=lambda r: (r.ratio, r.date))
        parts += (
            f"; the largest not yet tested: {format_ratio(top.ratio)} "
            f"{top.key.entry_name} at {top.bad_commit[:8]}"
        )
    noun = "step" if len(unconfirmed) == 1 else "steps"
    return (
        f"Not listed: {len(unconfirmed)} fitted {noun} that the values do not confirm "
        f"({parts}); 'jaxbench regressions --unconfirmed' lists them."
    )


def short_history_note(n_commits: int, *, paired: bool) -> str:
    """One line when the history is too short for any step to be tested ("" otherwise).

    ``n_commits``: the most commits measured of any one series. A step is
    listed with :data:`~jaxbench.analyse.evidence.MIN_SIDE` commits measured
    on each side, so a series of fewer than twice that many lists none,
    however large: say so, and what judges new commits instead.
    """
    from jaxbench.analyse.evidence import MIN_SIDE

    if n_commits >= 2 * MIN_SIDE:
        return ""
    judge_now = (
        "the paired history below times each new commit beside its parent"
        if paired
        else "'jaxbench review BASE HEAD' times two commits side by side"
    )
    noun = "commit" if n_commits == 1 else "commits"
    return (
        f"Too few commits to test a step: {n_commits} {noun} measured at most, and a step "
        f"is listed with {MIN_SIDE} on each side; {judge_now}."
    )


def format_events(
    events: Sequence[Event],
    n_series: int,
    *,
    limit: int = DEFAULT_LIMIT,
    machine_changes: Sequence[MachineChange] = (),
    unconfirmed: Sequence[Regression] = (),
    budget: int | None = None,
    bisect: Callable[[Event], str | None] | None = None,
    notes: Sequence[str] = (),
) -> str:
    """Events, most severe first: the top series of each, the rest counted.

    ``limit``: events shown at most (0: all). ``budget``: lines at most; the
    events that do not fit are counted in the first line (at least one is shown).
    ``bisect``: an event's ``jaxbench bisect`` command, shown under it, where its
    range holds several commits (:func:`jaxbench.jobs.first_parent.bisect_hint`).
    ``notes``: lines after the rest (those that are empty are left out).
    """
    tail = changes_text(machine_changes, most=None if budget is None else MAX_CHANGES)
    if unconfirmed:
        tail.append(unconfirmed_summary(unconfirmed))
    tail.extend(note for note in notes if note)
    if not events:
        return "\n".join([f"No regressions in {n_series} series.", *tail]) + "\n"
    chosen = events if limit <= 0 else events[:limit]
    blocks = [_event_block(number, event, bisect) for number, event in enumerate(chosen, 1)]
    if budget is not None:
        room = budget - 1 - len(tail)
        while len(blocks) > 1 and sum(len(b) for b in blocks) > room:
            blocks.pop()
    n_regs = sum(len(e.regressions) for e in events)
    noun = "event" if len(events) == 1 else "events"
    more = "" if len(blocks) == len(events) else f"; showing {len(blocks)} (--limit 0: all)"
    head = f"{len(events)} {noun} ({n_regs} regressed series of {n_series}), worst first{more}:"
    return "\n".join([head, *(line for b in blocks for line in b), *tail]) + "\n"


def listing_text(
    failing: Sequence[FailureGroup],
    events_text: Callable[[int | None], str],
    *,
    asv_logs: Sequence[Path] = (),
    every_failing: bool = False,
    budgeted: bool = True,
    screen: int = SCREEN_LINES,
) -> str:
    """The text listing: the failures, then the events, in one screen (see module doc).

    ``events_text(budget)`` renders the events part in at most ``budget`` lines
    (None: unbounded); ``budgeted`` False when the user asked for all of it
    (``--limit``, ``--series``). ``every_failing`` (``--failing``) lists every
    failing series, outside the budget. ``screen``: the lines for both (less
    than :data:`SCREEN_LINES` where another section follows them).
    """
    events_budget = screen if budgeted else None
    if every_failing:
        failures = failures_text(failing, asv_logs, every=True)
        return "".join(line + "\n" for line in failures) + events_text(events_budget)
    failures = failures_text(failing, asv_logs)
    full = events_text(events_budget)
    events_need = full.count("\n")
    if len(failures) + events_need > screen:
        allowed = min(len(failures), max(screen - events_need, FAILURE_LINES))
        failures = failures_text(failing, asv_logs, budget=allowed)
        if budgeted:
            full = events_text(screen - len(failures))
    return "".join(line + "\n" for line in failures) + full


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
