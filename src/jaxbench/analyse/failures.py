"""Benchmarks that fail at the newest commit: since when, how often, and why.

asv records a benchmark that raised (or crashed, or timed out) as a ``null``
result: no number, so no step fit and no event can ever name it. This module
finds every series whose value at the newest commit of its machine and
environment is such a failure (:class:`Failure`), and groups them as events
are grouped: one :class:`FailureGroup` per machine, environment, commit and
cause.

* **whole result**: every benchmark of the newest result file of a machine
  and environment failed (at least :data:`WHOLE_MIN` of them, or any number
  where asv's log says the build failed). asv writes each benchmark as failed
  when it cannot build or install the project there, or when the suite (or
  the project it imports) fails to import: the cause is the environment, not
  the code measured. All its series form one group, since the first of the
  run of such files that reaches the newest one; its cause is the build or
  install error asv's log gives, else the error most of its benchmarks gave.
* **partial**: the other failing series are grouped by the commit their run
  of failures began at and by their error (the last line of it; None: no log
  holds one), most failed commits first.

A group is **newly failing** when it had a value at an earlier commit (in any
benchmark version: editing a benchmark changes its asv version, not its
name), except on a **retired** environment (:func:`retired_of`):
one that stopped being measured while newer commits were measured elsewhere;
its last failures are history, not news, and ``--fail-on`` ignores them.
A group that never had a value is *always failing*: listed, never news.

Groups are ordered live before retired, newly failing first, then by how many
series fail, then newest first. A skipped point (asv's NaN) is neither a
value nor a failure and is passed over. The error text is not in asv's
result files (asv keeps ``stderr`` in memory only);
:mod:`jaxbench.store.asv_log` reads it from the output of ``asv run
--show-stderr`` where that is kept.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from jaxbench.store.results import SeriesKey
from jaxbench.store.series_table import FileEntry, IntArray, SeriesTable

__all__ = [
    "RETIRED_GAPS",
    "RETIRED_MIN_COMMITS",
    "WHOLE_MIN",
    "Failure",
    "FailureGroup",
    "Retired",
    "WholeRun",
    "failing_groups",
    "find_failures",
    "group_failures",
    "retired_environments",
    "retired_of",
    "whole_runs",
    "with_errors",
]

#: Fewest benchmarks in a result file for "every benchmark failed" without a build error.
WHOLE_MIN = 2
#: Retired: its newest commit is more than this many of its usual gaps before the newest.
RETIRED_GAPS = 10
#: Retired: at least this many newer commits were measured on other machines or environments.
RETIRED_MIN_COMMITS = 3

#: error_of(key, commit): the last line of a series' error at a commit, or None
ErrorOf = Callable[[SeriesKey, str], str | None]
#: build_error_of(env_name, commit): why asv built nothing there ("" unsaid), or None
BuildErrorOf = Callable[[str, str], str | None]


@dataclass(frozen=True)
class Failure:
    """One series that fails at the newest commit of its machine and environment."""

    #: the series at the newest commit (its benchmark version there)
    key: SeriesKey
    #: first commit of the run of failures that reaches the newest commit
    since_commit: str
    #: date (ms) of ``since_commit``
    date: int
    #: the last commit with a value before ``since_commit`` (None: never had one)
    last_good_commit: str | None
    #: commits measured from ``since_commit`` to the newest, all failed
    failed_commits: int
    #: commits at which the series was measured (failed or not)
    measured_commits: int
    #: the newest commit (where it fails)
    newest_commit: str
    #: series measured at the newest commit on this machine and environment
    series_measured: int = 0
    #: commits failed, newest first (where an error text is looked up)
    failed_at: tuple[str, ...] = ()
    #: the last line of its error, where the output of asv run kept it
    error: str | None = None
    #: its machine and environment are retired (see :func:`retired_of`)
    retired: bool = False
    #: the commit whose error ``error`` is
    error_commit: str | None = None

    @property
    def had_value(self) -> bool:
        """It had a value at an earlier commit."""
        return self.last_good_commit is not None

    @property
    def newly(self) -> bool:
        """It had a value at an earlier commit, on a live environment: a figure now gone."""
        return self.had_value and not self.retired


@dataclass(frozen=True)
class Retired:
    """A machine and environment no longer measured: newer commits were, elsewhere."""

    machine: str
    env_name: str
    #: its newest commit and that commit's date (ms)
    last_commit: str
    date: int
    #: distinct commits with a later commit date measured on other machines or environments
    later_commits: int


@dataclass(frozen=True)
class WholeRun:
    """The newest result files of a machine and environment in which every benchmark failed."""

    #: the first of those files' commit, and its date (ms)
    since_commit: str
    date: int
    #: the newest earlier commit with a value there (None: none ever had one)
    last_good_commit: str | None
    #: the commits of the run, newest first
    commits: tuple[str, ...]
    #: per commit of ``commits``: the build or install error asv's log gives there
    #: ("": asv skipped the environment without saying why; None: the log does not say)
    build_errors: tuple[str | None, ...] = ()


@dataclass(frozen=True)
class FailureGroup:
    """The failing series of one machine and environment with one start and one cause."""

    machine: str
    env_name: str
    since_commit: str
    date: int
    #: the most common last good commit of its series (None: they never worked)
    last_good_commit: str | None
    newly: bool
    #: worst first (most failed commits, then by name)
    failures: tuple[Failure, ...]
    #: series measured at the newest commit on this machine and environment
    series_measured: int = 0
    #: every benchmark of the newest result file failed (:class:`WholeRun`)
    whole_result: bool = False
    #: its machine and environment are retired: not news, ignored by --fail-on
    retired: bool = False
    #: the cause: the build or install error, else the series' (most common) error line
    error: str | None = None
    #: ``error`` is asv's build or install error (the project was never run)
    build_error: bool = False
    #: commits failed in a row up to the newest (the whole run's, else the most of a series')
    failed_commits: int = 0
    #: retired: newer commits measured on other machines or environments (:class:`Retired`)
    later_commits: int = 0

    @property
    def had_value(self) -> bool:
        """Some of its series had a value before it began failing."""
        return self.last_good_commit is not None


def find_failures(table: SeriesTable) -> list[Failure]:
    """Every series of ``table`` that fails at its machine and environment's newest commit."""
    files = table.files
    newest = _newest_files(files)
    keys, offsets, file_idx, values = table.keys, table.offsets, table.file_idx, table.values
    if not len(values):
        return []
    at_file = np.bincount(file_idx, minlength=len(files))
    # one history per (machine, env, benchmark, params), across benchmark versions
    merged: dict[tuple[str, str, str, tuple[str, ...]], list[int]] = {}
    for i, key in enumerate(keys):
        merged.setdefault((key.machine, key.env_name, key.benchmark, key.params), []).append(i)
    # at a glance, per series: its last point is at its environment's newest file, and failed
    nonempty = np.diff(offsets) > 0
    last = np.maximum(offsets[1:] - 1, 0)
    env_newest = np.asarray([newest.get((k.machine, k.env_name), -1) for k in keys], np.int64)
    ends_failed = nonempty & (file_idx[last] == env_newest) & np.isnan(values[last])
    if not ends_failed.any():
        return []
    # the last point with a value of each series (below its start: none)
    good_at = np.where(np.isnan(values), -1, np.arange(len(values), dtype=np.int64))
    last_good = np.full(len(keys), -1, dtype=np.int64)
    last_good[nonempty] = np.maximum.reduceat(good_at, offsets[:-1][nonempty])
    found: list[Failure] = []
    for series in merged.values():
        ending = [i for i in series if ends_failed[i]]
        if not ending:
            continue
        if len(series) == 1:  # one benchmark version: the columns answer directly
            start, end = int(offsets[series[0]]), int(offsets[series[0] + 1])
            good = int(last_good[series[0]])
            good_file = int(file_idx[good]) if good >= start else None
            run = file_idx[max(good + 1, start) : end]
            measured = end - start
        else:
            run, good_file, measured = _merged_run(table, series)
        since, newest_file = files[int(run[0])], int(run[-1])
        found.append(
            Failure(
                key=keys[ending[0]],
                since_commit=since.commit,
                date=since.date,
                last_good_commit=files[good_file].commit if good_file is not None else None,
                failed_commits=len(run),
                measured_commits=measured,
                newest_commit=files[newest_file].commit,
                series_measured=int(at_file[newest_file]),
                failed_at=tuple(files[int(j)].commit for j in run[::-1]),
            )
        )
    found.sort(key=lambda f: f.key)
    return found


def _merged_run(table: SeriesTable, series: Sequence[int]) -> tuple[IntArray, int | None, int]:
    """(file indices of the trailing run of failures, file of the last value or None, points)
    of one benchmark and parameters across its benchmark versions."""
    parts = [table.points(i) for i in series]
    file_idx = np.concatenate([p[0] for p in parts])
    values = np.concatenate([p[1] for p in parts])
    order = np.argsort(file_idx, kind="stable")
    file_idx, values = file_idx[order], values[order]
    good = np.flatnonzero(~np.isnan(values))
    first_bad = int(good[-1]) + 1 if len(good) else 0
    good_file = int(file_idx[good[-1]]) if len(good) else None
    return file_idx[first_bad:], good_file, len(file_idx)


def _newest_files(files: Sequence[FileEntry]) -> dict[tuple[str, str], int]:
    """(machine, env) -> index of its newest result file (files are sorted by date, commit)."""
    newest: dict[tuple[str, str], int] = {}
    for i, f in enumerate(files):  # the last one wins
        newest[(f.machine, f.env_name)] = i
    return newest


def retired_environments(
    table: SeriesTable, *, machine: str | None = None, env_name: str | None = None
) -> list[Retired]:
    """The retired machines and environments of ``table``'s results directory (only
    ``machine`` and ``env_name`` where given; see :func:`retired_of`)."""
    return [
        r
        for r in retired_of((table.whole or table).files).values()
        if machine in (None, r.machine) and env_name in (None, r.env_name)
    ]


def retired_of(files: Sequence[FileEntry]) -> dict[tuple[str, str], Retired]:
    """The machines and environments no longer measured, by (machine, env).

    Dates are commit dates (the ``date`` of asv's result files), so the rule
    holds however late a run was made. One is *retired* when both hold:

    * at least :data:`RETIRED_MIN_COMMITS` distinct commits with a later
      commit date than its newest were measured on other machines or
      environments (a machine that measures every other commit lags by one);
    * the newest commit measured anywhere is more than :data:`RETIRED_GAPS`
      of its usual gaps later than its own newest (the median commit-date gap
      between its consecutive results; with a single result, the median of
      the others' gaps): a weekly machine next to a nightly one is not
      retired between its runs, an environment renamed months ago is.

    The newest commit measured anywhere is never on a retired environment, so
    a history with one environment, or whose environments all stopped
    together, has none.
    """
    dates: dict[tuple[str, str], list[int]] = {}
    last: dict[tuple[str, str], FileEntry] = {}
    for f in files:
        dates.setdefault((f.machine, f.env_name), []).append(f.date)
        last[(f.machine, f.env_name)] = f
    if len(last) < 2:
        return {}
    gaps = {}
    for ident, ds in dates.items():
        steps = np.diff(np.unique(np.asarray(ds, dtype=np.int64)))
        if len(steps):
            gaps[ident] = float(np.median(steps))
    usual = statistics.median(gaps.values()) if gaps else 0.0
    frontier = max(f.date for f in files)
    commit_dates = sorted({(f.date, f.commit, f.machine, f.env_name) for f in files})
    out: dict[tuple[str, str], Retired] = {}
    for ident, newest in last.items():
        if frontier - newest.date <= RETIRED_GAPS * gaps.get(ident, usual):
            continue
        later = {c for d, c, m, e in commit_dates if d > newest.date and (m, e) != ident}
        if len(later) >= RETIRED_MIN_COMMITS:
            out[ident] = Retired(ident[0], ident[1], newest.commit, newest.date, len(later))
    return out


def whole_runs(
    table: SeriesTable, build_error_of: BuildErrorOf | None = None
) -> dict[tuple[str, str], WholeRun]:
    """(machine, env) -> the run of newest result files there in which every benchmark failed.

    A file is such a failure when each of its points failed and it holds at
    least :data:`WHOLE_MIN` of them, or at least one where ``build_error_of``
    says asv built nothing there.
    """
    files = table.files
    at_file = np.bincount(table.file_idx, minlength=len(files))
    failed = np.bincount(table.file_idx[np.isnan(table.values)], minlength=len(files))
    by_env: dict[tuple[str, str], list[int]] = {}
    for i, f in enumerate(files):
        if at_file[i]:
            by_env.setdefault((f.machine, f.env_name), []).append(i)

    def build_error(i: int) -> str | None:
        f = files[i]
        return build_error_of(f.env_name, f.commit) if build_error_of is not None else None

    def whole(i: int) -> bool:
        n = int(at_file[i])
        if n == 0 or int(failed[i]) != n:
            return False
        return n >= WHOLE_MIN or build_error(i) is not None

    out: dict[tuple[str, str], WholeRun] = {}
    for ident, indices in by_env.items():
        run = 0
        while run < len(indices) and whole(indices[-1 - run]):
            run += 1
        if not run:
            continue
        newest_first = indices[: len(indices) - run - 1 : -1]
        first = files[indices[-run]]
        before = indices[: len(indices) - run]
        good = next((files[i].commit for i in reversed(before) if failed[i] < at_file[i]), None)
        out[ident] = WholeRun(
            first.commit,
            first.date,
            good,
            tuple(files[i].commit for i in newest_first),
            tuple(build_error(i) for i in newest_first),
        )
    return out


def with_errors(failures: Sequence[Failure], error_of: ErrorOf) -> list[Failure]:
    """``failures`` with the error text of each: at the newest failed commit that has one.

    ``error_of(key, commit)`` answers the last line of that series' error at
    that commit, or None (e.g. :meth:`jaxbench.store.asv_log.AsvLog.error`).
    """
    out: list[Failure] = []
    for failure in failures:
        found = next(
            ((e, c) for c in failure.failed_at if (e := error_of(failure.key, c)) is not None),
            (None, None),
        )
        out.append(replace(failure, error=found[0], error_commit=found[1]))
    return out


def _whole_cause(whole: WholeRun, members: Sequence[Failure]) -> tuple[str | None, bool]:
    """(cause, is a build error) of a whole result: at the newest commit of the run that
    says, the build or install error, else the error most of its benchmarks gave."""
    for commit, build in zip(whole.commits, whole.build_errors, strict=False):
        said = _most_common([f.error for f in members if f.error_commit == commit])
        if said is not None:
            return said, False
        if build is not None:
            return build or None, True
    return _most_common([f.error for f in members]), False


def _most_common(items: Sequence[str | None]) -> str | None:
    """The most common item (ties: the first in sorted order), None for none."""
    counts = Counter(i for i in items if i is not None)
    if not counts:
        return None
    return max(sorted(counts), key=lambda i: counts[i])


def _group(
    ident: tuple[str, str],
    members: list[Failure],
    *,
    since: str,
    date: int,
    whole: WholeRun | None = None,
    retired_as: Retired | None = None,
) -> FailureGroup:
    members.sort(key=lambda f: (-f.failed_commits, f.key))
    retired = retired_as is not None
    if whole is not None:
        good = whole.last_good_commit
        error, build = _whole_cause(whole, members)
        failed = len(whole.commits)
    else:
        good = _most_common([f.last_good_commit for f in members])
        error, build, failed = members[0].error, False, members[0].failed_commits
    return FailureGroup(
        machine=ident[0],
        env_name=ident[1],
        since_commit=since,
        date=date,
        last_good_commit=good,
        newly=good is not None and not retired,
        failures=tuple(members),
        series_measured=members[0].series_measured,
        whole_result=whole is not None,
        retired=retired,
        error=error,
        build_error=build,
        failed_commits=failed,
        later_commits=retired_as.later_commits if retired_as is not None else 0,
    )


def group_failures(
    failures: Sequence[Failure],
    whole: Mapping[tuple[str, str], WholeRun] | None = None,
    retired: Mapping[tuple[str, str], Retired] | None = None,
) -> list[FailureGroup]:
    """Groups of ``failures`` (see module doc), live and newly failing first.

    ``whole``: the runs of whole-result failures (:func:`whole_runs`);
    ``retired``: the retired machines and environments (:func:`retired_of`).
    """
    whole = whole or {}
    retired = retired or {}
    wholes: dict[tuple[str, str], list[Failure]] = {}
    parts: dict[tuple[str, str, str, bool, str | None], list[Failure]] = {}
    for f in failures:
        ident = (f.key.machine, f.key.env_name)
        f = replace(f, retired=ident in retired) if (ident in retired) != f.retired else f
        if ident in whole:
            wholes.setdefault(ident, []).append(f)
        else:
            parts.setdefault((*ident, f.since_commit, f.had_value, f.error), []).append(f)
    out = [
        _group(
            ident,
            members,
            since=whole[ident].since_commit,
            date=whole[ident].date,
            whole=whole[ident],
            retired_as=retired.get(ident),
        )
        for ident, members in wholes.items()
    ]
    out += [
        _group(
            (machine, env),
            members,
            since=since,
            date=members[0].date,
            retired_as=retired.get((machine, env)),
        )
        for (machine, env, since, _had, _error), members in parts.items()
    ]
    out.sort(
        key=lambda g: (
            g.retired,
            not g.newly,
            not g.had_value,
            -len(g.failures),
            -g.date,
            g.machine,
            g.env_name,
            g.error or "",
        )
    )
    return out


def failing_groups(
    table: SeriesTable,
    error_of: ErrorOf,
    pattern: re.Pattern[str] | None = None,
    build_error_of: BuildErrorOf | None = None,
) -> list[FailureGroup]:
    """The groups failing at the newest commit (only names ``pattern`` finds), with errors.

    Retirement is judged on every result file of the directory, also when
    ``table`` is a selection of one machine or environment.
    """
    failures = find_failures(table)
    if pattern is not None:
        failures = [f for f in failures if pattern.search(f.key.entry_name)]
    retired = retired_of((table.whole or table).files)
    return group_failures(
        with_errors(failures, error_of), whole_runs(table, build_error_of), retired
    )
