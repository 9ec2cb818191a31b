"""``jaxbench regressions``: which commits made things worse, worst first.

Reads an asv results directory (no git repository needed) through the scan
cache beside it (:mod:`jaxbench.store.series_table`), keys every series by
machine, environment, benchmark, parameters and benchmark version, cuts it at
machine fingerprint changes, fits steps to each piece (``--detector``: binseg,
:mod:`jaxbench.analyse.binseg`, or asv's own fit), keeps the upward steps by
asv publish's rule (see :mod:`jaxbench.analyse.detect`) and groups them into events, one per
machine, environment and commit (:mod:`jaxbench.analyse.events`). Exit status
0 whether or not something is found (it is a listing); 2 on bad input.

A fitted step is listed only when the values confirm it
(:mod:`jaxbench.analyse.evidence`: exact figures at once; the others by a
t-test of the commits on either side, Holm at 1 % over the scan, with at least
3 commits a side; memory steps beyond their measured floor). The rest are counted in
one line and listed with ``--unconfirmed``.

JSON output (``--format json``) is versioned::

    {"format": 3, "detector": "binseg", "events": [...], "regressions": [...],
     "unconfirmed": [...], "machine_changes": [...], "series": N,
     "warnings": ["...", ...]}

``detector`` names the step fit that found the steps (``--detector``).

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
a regression. Where
``jaxbench pair-history`` wrote pairs, ``paired_history`` holds ``pairs``,
``series`` and ``flagged``: each commit whose own pair says regression
(``benchmark``, ``params``, ``machine``, ``env_name``, ``commit``, ``ratio``,
``low``, ``high``, ``p_value`` (Holm-adjusted over the pair's series),
``raw_p_value``, ``rounds``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jaxbench.analyse.detect import DEFAULT_DETECTOR, DETECTORS
from jaxbench.errors import UsageError
from jaxbench.render.units import format_ratio, format_value

__all__ = [
    "HELP",
    "JSON_FORMAT",
    "add_arguments",
    "format_json",
    "format_text",
    "format_value",
    "run",
]

HELP = "list the commits that made an asv results history worse (asv's step detection)"
JSON_FORMAT = 3
_CONF_NAME = "asv.conf.json"
#: Events shown by default (one screen); --limit 0 shows all.
DEFAULT_LIMIT = 8
#: Series shown per event in the text listing; the rest are counted.
TOP_SERIES = 3

if TYPE_CHECKING:
    from jaxbench.analyse.detect import MachineChange, Regression
    from jaxbench.analyse.events import Event
    from jaxbench.store.series_table import SeriesTable


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``jaxbench regressions``."""
    parser.add_argument(
        "--results",
        type=Path,
        default=None,
        help="asv results directory (default: results_dir of asv.conf.json, else 'results')",
    )
    parser.add_argument("--machine", default=None, help="only this machine")
    parser.add_argument("--env", default=None, help="only this environment name")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format")
    parser.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="relative threshold where regressions_thresholds does not match (default 0.05)",
    )
    parser.add_argument(
        "--config",
        type=Path,
        default=None,
        help="asv.conf.json for results_dir and regressions_thresholds "
        "(default: ./asv.conf.json if present)",
    )
    parser.add_argument(
        "--all",
        action="store_true",
        help="also list regressions that a later commit undid (with the commit that did)",
    )
    parser.add_argument(
        "--since",
        default=None,
        metavar="COMMIT|DATE",
        help="only steps at or after this commit (hash or prefix) or date (YYYY-MM-DD, UTC)",
    )
    parser.add_argument(
        "--benchmark", default=None, metavar="REGEX", help="only series whose name(params) matches"
    )
    parser.add_argument(
        "--min-ratio",
        type=float,
        default=None,
        help="only steps at least this large (after / before), e.g. 1.2",
    )
    parser.add_argument(
        "--limit",
        type=int,
        default=DEFAULT_LIMIT,
        help=f"events shown in the text listing (default {DEFAULT_LIMIT}; 0: all)",
    )
    parser.add_argument(
        "--series",
        action="store_true",
        help="list every series' step, newest first, instead of events",
    )
    parser.add_argument(
        "--unconfirmed",
        action="store_true",
        help="list the steps that the step fit finds but the values do not confirm "
        "(too few commits on a side, within noise, below the memory floor)",
    )
    parser.add_argument(
        "--detector",
        choices=DETECTORS,
        default=DEFAULT_DETECTOR,
        help="step fit: binseg (default; binary segmentation with the step test, seconds on "
        "a large history) or asv (asv publish's L1 fit, minutes); see docs/measured.md",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="with --detector asv: asv's default penalty instead of asv publish's penalty "
        "search (see docs/measured.md, 'Regression scan time')",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor write the scan cache beside the results",
    )


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


def format_json(
    regressions: Sequence[Regression],
    warnings: Sequence[str],
    *,
    events: Sequence[Event] = (),
    machine_changes: Sequence[MachineChange] = (),
    n_series: int = 0,
    unconfirmed: Sequence[Regression] = (),
    detector: str = "binseg",
) -> str:
    """The versioned JSON listing (every event: --limit applies to text only)."""
    document = {
        "format": JSON_FORMAT,
        "detector": detector,
        "series": n_series,
        "events": [_event_entry(e) for e in events],
        "regressions": [_entry(r) for r in regressions],
        "unconfirmed": [_entry(r) for r in unconfirmed],
        "machine_changes": [_change_entry(c) for c in machine_changes],
        "warnings": list(warnings),
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _commits(reg: Regression) -> str:
    bad = reg.bad_commit[:8]
    span = bad if reg.good_commit is None else f"{reg.good_commit[:8]}..{bad}"
    if reg.fixed_commit is not None:
        span += f" (undone at {reg.fixed_commit[:8]})"
    return span


def _ratio_text(ratio: float) -> str:
    return format_ratio(ratio)


def _day(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC).strftime("%Y-%m-%d")


def _changes_text(changes: Sequence[MachineChange]) -> list[str]:
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
                f"{event.series_measured} series, up to {_ratio_text(event.worst_ratio)} "
                f"({kinds})  {event.machine} / {event.env_name}"
            )
            if event.broad:
                lines.append(f"   broad: {BROAD_LABEL}")
            for reg in event.regressions[:TOP_SERIES]:
                lines.append(
                    f"   {reg.key.entry_name}  {format_value(reg.before, reg.unit)} -> "
                    f"{format_value(reg.after, reg.unit)}  {_ratio_text(reg.ratio)}"
                    + (f" (undone at {reg.fixed_commit[:8]})" if reg.fixed_commit else "")
                )
            rest = len(event.regressions) - TOP_SERIES
            if rest > 0:
                lines.append(f"   ... and {rest} more series (--series, --format json)")
    lines.extend(_changes_text(machine_changes))
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


def _settings(args: argparse.Namespace, cwd: Path) -> tuple[Path, dict[str, float]]:
    """Results directory and per-benchmark thresholds from the options and asv.conf.json."""
    from jaxbench.analyse.detect import read_asv_conf, thresholds_from_asv_conf

    conf_path: Path | None = args.config
    if conf_path is None and (cwd / _CONF_NAME).is_file():
        conf_path = cwd / _CONF_NAME
    results: Path | None = args.results
    thresholds: dict[str, float] = {}
    if conf_path is not None:
        conf = read_asv_conf(conf_path)
        thresholds = thresholds_from_asv_conf(conf_path)
        if results is None:
            raw = conf.get("results_dir", "results")
            if not isinstance(raw, str):
                raise UsageError(f"{conf_path}: 'results_dir' must be a path; fix the file")
            results = conf_path.parent / raw
    return (results if results is not None else cwd / "results"), thresholds


def _since_date(since: str, commit_dates: dict[str, int]) -> int:
    """Milliseconds since the epoch from ``--since COMMIT|DATE``."""
    text = since.strip()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        try:
            day = datetime.datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=datetime.UTC)
        except ValueError:
            raise UsageError(f"--since {since!r} is not a date; use YYYY-MM-DD") from None
        return int(day.timestamp() * 1000)
    wanted = text.lower()
    matches = sorted(c for c in commit_dates if wanted and c.lower().startswith(wanted))
    if len(matches) != 1:
        why = "matches no commit" if not matches else "is ambiguous"
        raise UsageError(
            f"--since {since!r} {why} in the results; give a commit hash (prefix) or YYYY-MM-DD"
        )
    return commit_dates[matches[0]]


def _check_options(args: argparse.Namespace) -> re.Pattern[str] | None:
    if args.min_ratio is not None and (not math.isfinite(args.min_ratio) or args.min_ratio < 1):
        raise UsageError(f"--min-ratio {args.min_ratio} must be a number >= 1, e.g. 1.2")
    if args.limit < 0:
        raise UsageError(f"--limit {args.limit} must be >= 0 (0: all events)")
    if args.benchmark is None:
        return None
    try:
        return re.compile(args.benchmark)
    except re.error as exc:
        raise UsageError(
            f"--benchmark {args.benchmark!r} is not a regular expression ({exc})"
        ) from None


def run(args: argparse.Namespace) -> int:
    """List the regressions; exit 0 whether or not there are any."""
    from jaxbench.analyse.detect import DEFAULT_THRESHOLD, scan
    from jaxbench.analyse.events import group_events
    from jaxbench.store.series_table import load_series_table, save_fits

    if args.quick and args.detector != "asv":
        raise UsageError("--quick is a setting of asv's fit; add --detector asv")
    threshold = DEFAULT_THRESHOLD if args.threshold is None else args.threshold
    if not math.isfinite(threshold) or threshold < 0:
        raise UsageError(f"--threshold {args.threshold} must be a number >= 0, e.g. 0.05")
    pattern = _check_options(args)
    results_dir, thresholds = _settings(args, Path.cwd())
    table = load_series_table(
        results_dir, machine=args.machine, env_name=args.env, use_cache=not args.no_cache
    )
    paired, paired_doc = _paired(results_dir, table, args)  # bad files stop before any write
    found, fits = scan(
        table,
        threshold=threshold,
        thresholds=thresholds,
        include_fixed=args.all,
        quick=args.quick,
        detector=args.detector,
    )
    save_fits(table, fits)
    steps = list(found.steps)
    changes = list(found.machine_changes)
    if args.since is not None:
        start = _since_date(args.since, {f.commit: f.date for f in table.files})
        steps = [r for r in steps if r.date >= start]
        changes = [c for c in changes if c.date >= start]
    if pattern is not None:
        steps = [r for r in steps if pattern.search(r.key.entry_name)]
    if args.min_ratio is not None:
        steps = [r for r in steps if r.ratio >= args.min_ratio]
    regressions = [r for r in steps if r.evidence.listed]
    unconfirmed = [r for r in steps if not r.evidence.listed]
    events = group_events(regressions, found.series_at)
    if args.format == "json":
        text = format_json(
            regressions,
            table.warnings,
            events=events,
            machine_changes=changes,
            n_series=found.n_series,
            unconfirmed=unconfirmed,
            detector=args.detector,
        )
        if paired_doc is not None:
            document = json.loads(text)
            document["paired_history"] = paired_doc
            text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
        sys.stdout.write(text)
        return 0
    for warning in table.warnings:
        print(f"jaxbench: warning: {warning}", file=sys.stderr)
    from jaxbench.analyse.evidence import unconfirmed_summary

    if args.unconfirmed:
        text = format_text(unconfirmed, found.n_series, what="unconfirmed step")
    elif args.series:
        text = format_text(regressions, found.n_series)
        text += "".join(line + "\n" for line in _changes_text(changes))
        if unconfirmed:
            text += unconfirmed_summary(unconfirmed) + "\n"
    else:
        text = format_events(
            events,
            found.n_series,
            limit=args.limit,
            machine_changes=changes,
            unconfirmed=unconfirmed,
        )
    sys.stdout.write(text)
    if paired:
        sys.stdout.write("\n" + paired)
    return 0


def _paired(
    results_dir: Path, table: SeriesTable, args: argparse.Namespace
) -> tuple[str, dict[str, object] | None]:
    """The "paired history" section and its JSON (jaxbench pair-history's files), if any."""
    from jaxbench.analyse.paired_history import paired_series
    from jaxbench.render.paired import format_paired_text, paired_json
    from jaxbench.store.paired import load_paired

    runs = load_paired(results_dir, machine=args.machine, env_name=args.env)
    if not runs:
        return "", None
    series = paired_series(runs, table.commits(), results_dir)
    return format_paired_text(series, len(runs)), paired_json(series, len(runs))
