"""Why a workload's answer is not checked: one note per benchmark, beside asv's results.

asv's result files hold numbers only. A workload declared with
``Unchecked(reason)`` records ``track_answer_unchecked = 1`` there (a
per-commit figure, in asv's own results and graphs); its reason is kept
here, written by the figures process of the same asv run, so that
``jaxbench publish`` and ``jaxbench compare`` can show it without jax::

    <results_dir>/<machine>/checks/<commit8>-<env_name>/<slug>-<key>.unchecked

holding the JSON ``{"benchmark": ..., "params": [...], "reason": ...}``
(``benchmark`` is the figures class, e.g. ``programs.NoiseFigures``). The run
folder is named as the HLO store's (:mod:`jaxbench.store.hlo_store`). Not
``*.json``: asv walks the whole results directory and would try to load, and
warn about, every ``*.json`` file there.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from jaxbench.errors import ResultsError
from jaxbench.kinds import UNCHECKED_TRACK
from jaxbench.store.fsio import write_text_atomic
from jaxbench.store.hlo_store import (
    env_folder_part,
    run_dir_from_environ,
    run_files,
    stored_file_name,
)
from jaxbench.store.series_table import SeriesTable

__all__ = [
    "CHECKS_FOLDER",
    "UncheckedNote",
    "UncheckedWorkload",
    "find_note",
    "read_unchecked",
    "save_unchecked",
    "unchecked_workloads",
]

#: The folder under ``<results_dir>/<machine>/`` that holds the notes.
CHECKS_FOLDER = "checks"
_SUFFIX = ".unchecked"


@dataclass(frozen=True)
class UncheckedNote:
    """One workload of one run, declared unchecked, and why."""

    machine: str
    commit: str  # the run folder's first 8 characters of the commit hash
    env_name: str
    benchmark: str
    params: tuple[str, ...]
    reason: str


def save_unchecked(
    benchmark: str, params: tuple[str, ...], reason: str, *, environ: Mapping[str, str]
) -> Path | None:
    """Keep ``reason`` for this benchmark in the current asv run; the path, or
    ``None`` outside an asv run (nothing is written)."""
    run = run_dir_from_environ(CHECKS_FOLDER, environ)
    if run is None:
        return None
    path = run / stored_file_name(benchmark, params, _SUFFIX)
    note = {"benchmark": benchmark, "params": list(params), "reason": reason}
    write_text_atomic(path, json.dumps(note, sort_keys=True) + "\n")
    return path


def _read(path: Path) -> tuple[str, tuple[str, ...], str]:
    try:
        note = json.loads(path.read_text(encoding="utf-8"))
        benchmark, params, reason = note["benchmark"], note["params"], note["reason"]
        if not (
            isinstance(benchmark, str) and isinstance(params, list) and isinstance(reason, str)
        ):
            raise ValueError("benchmark, params or reason of the wrong type")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ResultsError(
            f"cannot read {path} ({exc}); delete it and rerun that benchmark with asv"
        ) from None
    return benchmark, tuple(str(p) for p in params), reason


def read_unchecked(results_dir: Path) -> tuple[UncheckedNote, ...]:
    """Every note under ``results_dir`` (none when there are none)."""
    root = Path(results_dir)
    found: list[UncheckedNote] = []
    if not root.is_dir():
        return ()
    machines = sorted(p for p in root.iterdir() if p.is_dir())
    for machine, commit, env_name, path in run_files(machines, CHECKS_FOLDER, _SUFFIX):
        benchmark, params, reason = _read(path)
        found.append(UncheckedNote(machine, commit, env_name, benchmark, params, reason))
    return tuple(found)


def find_note(
    notes: tuple[UncheckedNote, ...],
    *,
    machine: str,
    commit: str,
    env_name: str,
    benchmark: str,
    params: tuple[str, ...],
) -> UncheckedNote | None:
    """The note of one benchmark and parameter combination in one run, if any."""
    env = env_folder_part(env_name)
    for note in notes:
        if (
            note.machine == machine
            and commit.lower().startswith(note.commit)
            and note.env_name == env
            and note.benchmark == benchmark
            and note.params == params
        ):
            return note
    return None


@dataclass(frozen=True)
class UncheckedWorkload:
    """A workload whose newest result says unchecked (``track_answer_unchecked`` 1)."""

    machine: str
    env_name: str
    benchmark: str  # the figures class, e.g. ``programs.NoiseFigures``
    params: tuple[str, ...]
    commit: str  # the newest commit of that series
    date: int
    #: The declared reason, or None where the run kept none (older jaxbench).
    reason: str | None


def unchecked_workloads(
    table: SeriesTable, notes: tuple[UncheckedNote, ...]
) -> tuple[UncheckedWorkload, ...]:
    """Every workload unchecked at the newest commit of its ``track_answer_unchecked``
    series (one per machine, environment and parameters), sorted by name."""
    newest: dict[tuple[str, str, str, tuple[str, ...]], tuple[int, str, float]] = {}
    for i, key in enumerate(table.keys):
        cls, _, method = key.benchmark.rpartition(".")
        if method != UNCHECKED_TRACK:
            continue
        files, values, _ = table.points(i)
        if not len(files):
            continue
        entry = table.files[int(files[-1])]
        at = (entry.date, entry.commit, float(values[-1]))
        where = (key.machine, key.env_name, cls, key.params)
        if where not in newest or at[:2] > newest[where][:2]:
            newest[where] = at
    found = []
    for (machine, env_name, cls, params), (date, commit, value) in sorted(newest.items()):
        if value != 1.0:
            continue
        note = find_note(
            notes, machine=machine, commit=commit, env_name=env_name, benchmark=cls, params=params
        )
        found.append(
            UncheckedWorkload(
                machine, env_name, cls, params, commit, date, note.reason if note else None
            )
        )
    return tuple(found)
