"""Benchmarks that fail at the newest commit: since when, how often, and why.

asv records a benchmark that raised (or crashed, or timed out) as a ``null``
result: no number, so no step fit and no event can ever name it. This module
finds every series whose value at the newest commit of its machine and
environment is such a failure (:class:`Failure`), and groups them as events
are grouped, one machine, environment and first failing commit per
:class:`FailureGroup`:

* **newly failing**: the benchmark had a value at an earlier commit (in any
  benchmark version: editing a benchmark changes its asv version, not its
  name) and has failed at every measured commit since ``since_commit``.
  A regression of the strongest kind: the figure is gone.
* **always failing**: no value at any commit measured. Listed, never news.

Groups are ordered newly failing first, then by how many series fail there,
then newest first. Where every series measured at the newest commit of an
environment fails (at least :data:`WHOLE_MIN` of them), the group says so
(``whole_environment``): asv records each benchmark as failed when the
environment cannot be built, the project not installed or the suite not
imported. A skipped point (asv's NaN) is neither a value nor a
failure and is passed over. The error text is not in asv's result files
(asv keeps ``stderr`` in memory only); :mod:`jaxbench.store.asv_log` reads it
from the output of ``asv run --show-stderr`` where that is kept.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from jaxbench.store.results import SeriesKey
from jaxbench.store.series_table import SeriesTable

__all__ = [
    "WHOLE_MIN",
    "Failure",
    "FailureGroup",
    "failing_groups",
    "find_failures",
    "group_failures",
    "with_errors",
]

#: Fewest failing series for "every series of the environment fails".
WHOLE_MIN = 2


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

    @property
    def newly(self) -> bool:
        """It had a value at an earlier commit: a figure that is now gone."""
        return self.last_good_commit is not None


@dataclass(frozen=True)
class FailureGroup:
    """The series of one machine and environment that began failing at one commit."""

    machine: str
    env_name: str
    since_commit: str
    date: int
    #: the most common last good commit of its series (None: they never worked)
    last_good_commit: str | None
    newly: bool
    #: by name
    failures: tuple[Failure, ...]
    #: series measured at the newest commit on this machine and environment
    series_measured: int = 0
    #: every series measured there fails (this group or another): the environment
    #: build, the install or the suite's import, rather than the code measured
    whole_environment: bool = False


def find_failures(table: SeriesTable) -> list[Failure]:
    """Every series of ``table`` that fails at its machine and environment's newest commit."""
    files = table.files
    newest: dict[tuple[str, str], int] = {}
    for i, f in enumerate(files):  # files are sorted by (date, commit): the last one wins
        newest[(f.machine, f.env_name)] = i
    # one history per (machine, env, benchmark, params), across benchmark versions
    at_file = np.bincount(table.file_idx, minlength=len(files))
    merged: dict[tuple[str, str, str, tuple[str, ...]], list[int]] = {}
    for i, key in enumerate(table.keys):
        merged.setdefault((key.machine, key.env_name, key.benchmark, key.params), []).append(i)
    found: list[Failure] = []
    for (machine, env, _bench, _params), series in merged.items():
        last = newest.get((machine, env))
        if last is None:
            continue
        parts = [table.points(i) for i in series]
        file_idx = np.concatenate([p[0] for p in parts])
        values = np.concatenate([p[1] for p in parts])
        order = np.argsort(file_idx, kind="stable")
        file_idx, values = file_idx[order], values[order]
        if not len(file_idx) or int(file_idx[-1]) != last or not np.isnan(values[-1]):
            continue
        good = np.flatnonzero(~np.isnan(values))
        first_bad = int(good[-1]) + 1 if len(good) else 0
        at_newest = next(i for i in series if int(table.points(i)[0][-1]) == last)
        since = files[int(file_idx[first_bad])]
        found.append(
            Failure(
                key=table.keys[at_newest],
                since_commit=since.commit,
                date=since.date,
                last_good_commit=files[int(file_idx[good[-1]])].commit if len(good) else None,
                failed_commits=len(file_idx) - first_bad,
                measured_commits=len(file_idx),
                newest_commit=files[last].commit,
                series_measured=int(at_file[last]),
                failed_at=tuple(files[int(j)].commit for j in file_idx[first_bad:][::-1]),
            )
        )
    found.sort(key=lambda f: f.key)
    return found


def with_errors(
    failures: Sequence[Failure], error_of: Callable[[SeriesKey, str], str | None]
) -> list[Failure]:
    """``failures`` with the error text of each: at the newest failed commit that has one.

    ``error_of(key, commit)`` answers the last line of that series' error at
    that commit, or None (e.g. :meth:`jaxbench.store.asv_log.AsvLog.error`).
    """
    out: list[Failure] = []
    for failure in failures:
        error = next(
            (e for c in failure.failed_at if (e := error_of(failure.key, c)) is not None), None
        )
        out.append(replace(failure, error=error))
    return out


def group_failures(failures: Sequence[Failure]) -> list[FailureGroup]:
    """Groups of ``failures`` (see module doc), newly failing first."""
    groups: dict[tuple[str, str, str, bool], list[Failure]] = {}
    for f in failures:
        ident = (f.key.machine, f.key.env_name, f.since_commit, f.newly)
        groups.setdefault(ident, []).append(f)
    per_env: dict[tuple[str, str], int] = {}
    for f in failures:
        per_env[(f.key.machine, f.key.env_name)] = (
            per_env.get((f.key.machine, f.key.env_name), 0) + 1
        )
    out: list[FailureGroup] = []
    for (machine, env, since, newly), members in groups.items():
        members.sort(key=lambda f: f.key)
        goods = [f.last_good_commit for f in members if f.last_good_commit is not None]
        out.append(
            FailureGroup(
                machine=machine,
                env_name=env,
                since_commit=since,
                date=members[0].date,
                last_good_commit=max(sorted(set(goods)), key=goods.count) if goods else None,
                newly=newly,
                failures=tuple(members),
                series_measured=members[0].series_measured,
                whole_environment=per_env[(machine, env)]
                >= max(members[0].series_measured, WHOLE_MIN),
            )
        )
    out.sort(key=lambda g: (not g.newly, -len(g.failures), -g.date, g.machine, g.env_name))
    return out


def failing_groups(
    table: SeriesTable,
    error_of: Callable[[SeriesKey, str], str | None],
    pattern: re.Pattern[str] | None = None,
) -> list[FailureGroup]:
    """The groups failing at the newest commit (only names ``pattern`` finds), with errors."""
    failures = find_failures(table)
    if pattern is not None:
        failures = [f for f in failures if pattern.search(f.key.entry_name)]
    return group_failures(with_errors(failures, error_of))
