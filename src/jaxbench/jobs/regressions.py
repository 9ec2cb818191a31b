"""The regressions listing's job: scan a results history, find its failures and steps.

Reads an asv results directory (no git repository needed) through the scan
cache (:mod:`jaxbench.store.series_table`, files parsed in worker processes on
a large history: :mod:`jaxbench.jobs.parallel`), names every benchmark that
fails at the newest commit of its machine and environment
(:mod:`jaxbench.analyse.failures`, with the errors of asv's saved output:
:mod:`jaxbench.store.asv_log`), fits steps to every series
(:mod:`jaxbench.analyse.detect`), keeps those the values confirm
(:mod:`jaxbench.analyse.evidence`), groups them into events
(:mod:`jaxbench.analyse.events`) and reads the paired history beside them
(:mod:`jaxbench.analyse.paired_history`). The fits are saved to the cache.
:func:`make_listing` returns it all as one :class:`Listing`; the command
(:mod:`jaxbench.commands.regressions`) renders it
(:mod:`jaxbench.render.regressions`). Never imports jax.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from jaxbench.analyse.detect import DEFAULT_DETECTOR, DEFAULT_THRESHOLD, MachineChange, Scan, scan
from jaxbench.analyse.events import Event, group_events
from jaxbench.analyse.failures import (
    FailureGroup,
    Retired,
    failing_groups,
    retired_environments,
)
from jaxbench.analyse.findings import Regression
from jaxbench.analyse.paired_history import PairedSeries, paired_series
from jaxbench.errors import UsageError
from jaxbench.jobs.parallel import forked_batches
from jaxbench.store.asv_log import read_asv_log
from jaxbench.store.paired import PairedRun, load_paired
from jaxbench.store.series_table import SeriesTable, load_series_table, save_fits

__all__ = ["Listing", "ListingOptions", "make_listing", "since_date"]


@dataclass(frozen=True)
class ListingOptions:
    """What to scan and what to keep (``jaxbench regressions``'s options)."""

    results_dir: Path
    machine: str | None = None
    env_name: str | None = None
    use_cache: bool = True
    threshold: float = DEFAULT_THRESHOLD
    thresholds: Mapping[str, float] = field(default_factory=dict)
    #: also the steps a later commit undid
    include_fixed: bool = False
    quick: bool = False
    detector: str = DEFAULT_DETECTOR
    #: only what happened at or after this commit (prefix) or date (YYYY-MM-DD)
    since: str | None = None
    #: only series whose name(params) it finds
    pattern: re.Pattern[str] | None = None
    min_ratio: float | None = None
    asv_logs: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Listing:
    """Everything the listing shows, before it is rendered."""

    table: SeriesTable
    found: Scan
    failing: tuple[FailureGroup, ...]
    retired: tuple[Retired, ...]
    regressions: tuple[Regression, ...]
    unconfirmed: tuple[Regression, ...]
    events: tuple[Event, ...]
    machine_changes: tuple[MachineChange, ...]
    paired_runs: tuple[PairedRun, ...]
    paired_series: tuple[PairedSeries, ...]


def since_date(since: str, commit_dates: Mapping[str, int]) -> int:
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


def make_listing(options: ListingOptions) -> Listing:
    """Scan ``options.results_dir`` (see the module doc); bad files stop before any write."""
    parallel = forked_batches()
    table = load_series_table(
        options.results_dir,
        machine=options.machine,
        env_name=options.env_name,
        use_cache=options.use_cache,
        parallel=parallel,
    )
    runs = load_paired(options.results_dir, machine=options.machine, env_name=options.env_name)
    series = paired_series(runs, table.commits(), options.results_dir) if runs else []
    log = read_asv_log(options.asv_logs)
    failing = failing_groups(table, log.error, options.pattern, log.build_error)
    found, fits = scan(
        table,
        threshold=options.threshold,
        thresholds=options.thresholds,
        include_fixed=options.include_fixed,
        quick=options.quick,
        detector=options.detector,
        parallel=parallel,
    )
    save_fits(table, fits)
    steps: Sequence[Regression] = found.steps
    changes: Sequence[MachineChange] = found.machine_changes
    if options.since is not None:
        start = since_date(options.since, {f.commit: f.date for f in table.files})
        steps = [r for r in steps if r.date >= start]
        changes = [c for c in changes if c.date >= start]
        failing = [g for g in failing if g.date >= start]
    if options.pattern is not None:
        pattern = options.pattern
        steps = [r for r in steps if pattern.search(r.key.entry_name)]
    if options.min_ratio is not None:
        least = options.min_ratio
        steps = [r for r in steps if r.ratio >= least]
    regressions = [r for r in steps if r.evidence.listed]
    return Listing(
        table=table,
        found=found,
        failing=tuple(failing),
        retired=tuple(
            retired_environments(table, machine=options.machine, env_name=options.env_name)
        ),
        regressions=tuple(regressions),
        unconfirmed=tuple(r for r in steps if not r.evidence.listed),
        events=tuple(group_events(regressions, found.series_at)),
        machine_changes=tuple(changes),
        paired_runs=tuple(runs),
        paired_series=tuple(series),
    )
