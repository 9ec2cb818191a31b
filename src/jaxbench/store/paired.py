"""Where the paired history is kept: one JSON file per commit pair, beside asv's results.

Layout (``<results_dir>`` is asv.conf.json's ``results_dir``)::

    <results_dir>/<machine>/paired/<base8>-<head8>-<env_name>.paired

The files hold JSON, named ``.paired`` so that asv's results reader (which
loads every ``*.json`` under the results directory) and jaxbench's leave
them alone; ``asv publish`` only rebuilds ``html_dir``, so they survive it.
Format 2 (format 1, read as well, is format 2 with neither ``untimed`` nor ``error``)::

    {"jaxbench_paired_format": 2, "machine": ..., "env_name": ...,
     "base_commit": FULL, "head_commit": FULL, "per_round": N, "factor": F,
     "alpha": A, "date": MS, "fingerprint": "12hex" or null,
     "first_look": ROUNDS or null (absent in older files),
     "estimates": [{"benchmark", "params": [repr, ...], "ratio", "low", "high",
                    "p_value", "rounds", "samples", "verdict", "reason"}, ...],
     "untimed": [{"benchmark", "params": [repr, ...], "cause", "skipped": bool}, ...],
     "error": "why the pair timed nothing" or null,
     "took": SECONDS, "timed_seconds": SECONDS, "looked_again": ITEMS}

``untimed`` names each benchmark and parameter set the pair could not time,
with its cause (an exception on a side, a skip, samples short of whole
rounds); ``error`` is set when the pair could not time anything at all (a
commit that does not build, a suite that does not import), and then no item
was listed.

``first_look`` is set when the pair was measured in two looks (the first of
that many rounds; ``rounds`` of an estimate that had a second look is larger):
its estimates' p-values are the looks' combined ones.

Reading refuses (one line, :class:`~jaxbench.errors.ResultsError`) a file
that is not valid JSON, lacks a field, or has a newer format. Never imports jax.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jaxbench.errors import ResultsError
from jaxbench.store.fsio import write_text_atomic

__all__ = [
    "PAIRED_FORMAT",
    "PairedEstimate",
    "PairedRun",
    "Untimed",
    "check_commits",
    "load_paired",
    "paired_path",
    "read_paired",
    "write_paired",
]

PAIRED_FORMAT = 2
SUFFIX = ".paired"


@dataclass(frozen=True)
class PairedEstimate:
    """head / base of one benchmark and parameter set, measured side by side."""

    benchmark: str
    params: tuple[str, ...]
    ratio: float
    low: float
    high: float
    p_value: float | None
    rounds: int
    samples: int
    verdict: str
    reason: str = ""

    @property
    def regression(self) -> bool:
        return self.verdict == "regression"


@dataclass(frozen=True)
class Untimed:
    """One benchmark and parameter set that a pair could not time, and why."""

    benchmark: str
    params: tuple[str, ...]
    cause: str
    #: asv would skip it there (e.g. too few devices): not a fault of the run
    skipped: bool = False


@dataclass(frozen=True)
class PairedRun:
    """One commit timed beside the previous measured one, every time benchmark."""

    machine: str
    env_name: str
    base_commit: str
    head_commit: str
    per_round: int
    factor: float
    alpha: float
    date: int
    estimates: tuple[PairedEstimate, ...]
    fingerprint: str | None = None
    #: rounds of the first look when measured in two looks; None: one look
    first_look: int | None = None
    #: the items that could not be timed, with their causes
    untimed: tuple[Untimed, ...] = ()
    #: why the pair timed nothing at all (no item listed), or None
    error: str | None = None
    #: seconds the pair took, and of them inside the timed calls (both sides)
    took: float = 0.0
    timed_seconds: float = 0.0
    #: items given a second look
    looked_again: int = 0

    @property
    def items(self) -> int:
        """Items the pair set out to time (estimated or not)."""
        return len(self.estimates) + len(self.untimed)

    @property
    def timed_nothing(self) -> bool:
        """No estimate, for a cause other than asv skipping every item."""
        if self.estimates:
            return False
        return self.error is not None or any(not u.skipped for u in self.untimed)

    def names(self) -> set[tuple[str, tuple[str, ...]]]:
        """The (benchmark, params) the pair holds, estimated or untimed."""
        return {(e.benchmark, e.params) for e in self.estimates} | {
            (u.benchmark, u.params) for u in self.untimed
        }


def paired_path(results_dir: Path, machine: str, base: str, head: str, env_name: str) -> Path:
    return results_dir / machine / "paired" / f"{base[:8]}-{head[:8]}-{env_name}{SUFFIX}"


def _number(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def to_json(run: PairedRun) -> str:
    document = {
        "jaxbench_paired_format": PAIRED_FORMAT,
        "machine": run.machine,
        "env_name": run.env_name,
        "base_commit": run.base_commit,
        "head_commit": run.head_commit,
        "per_round": run.per_round,
        "factor": run.factor,
        "alpha": run.alpha,
        "date": run.date,
        "fingerprint": run.fingerprint,
        "first_look": run.first_look,
        "estimates": [
            {
                "benchmark": e.benchmark,
                "params": list(e.params),
                "ratio": e.ratio,
                "low": _number(e.low),
                "high": _number(e.high),
                "p_value": _number(e.p_value),
                "rounds": e.rounds,
                "samples": e.samples,
                "verdict": e.verdict,
                "reason": e.reason,
            }
            for e in run.estimates
        ],
        "untimed": [
            {
                "benchmark": u.benchmark,
                "params": list(u.params),
                "cause": u.cause,
                "skipped": u.skipped,
            }
            for u in run.untimed
        ],
        "error": run.error,
        "took": round(run.took, 3),
        "timed_seconds": round(run.timed_seconds, 3),
        "looked_again": run.looked_again,
    }
    return json.dumps(document, indent=1, allow_nan=False) + "\n"


def write_paired(results_dir: Path, run: PairedRun) -> Path:
    """Write ``run`` atomically; return its path."""
    path = paired_path(results_dir, run.machine, run.base_commit, run.head_commit, run.env_name)
    write_text_atomic(path, to_json(run))
    return path


def _fix(path: Path) -> str:
    return f"move {path} away and run 'jaxbench pair-history' for that pair again"


def _get(data: dict[str, Any], key: str, kind: type | tuple[type, ...], path: Path) -> Any:
    value = data.get(key)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ResultsError(f"{path}: field {key!r} missing or of the wrong type; {_fix(path)}")
    return value


def _opt_float(data: dict[str, Any], key: str, path: Path) -> float | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise ResultsError(f"{path}: field {key!r} is not a number; {_fix(path)}")
    return float(value)


def read_paired(path: Path) -> PairedRun:
    """One paired file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        raise ResultsError(f"{path}: not valid JSON (truncated?); {_fix(path)}") from None
    if not isinstance(data, dict):
        raise ResultsError(f"{path}: not a paired-history file; {_fix(path)}")
    version = data.get("jaxbench_paired_format")
    if isinstance(version, int) and not isinstance(version, bool) and version > PAIRED_FORMAT:
        raise ResultsError(
            f"{path}: paired-history format {version}, newer than this jaxbench reads "
            f"({PAIRED_FORMAT}); upgrade jaxbench"
        )
    if version not in (1, PAIRED_FORMAT):
        raise ResultsError(f"{path}: not a paired-history file (format {version!r}); {_fix(path)}")
    estimates = []
    for raw in _get(data, "estimates", list, path):
        if not isinstance(raw, dict):
            raise ResultsError(f"{path}: an estimate is not an object; {_fix(path)}")
        params = _get(raw, "params", list, path)
        low, high = _opt_float(raw, "low", path), _opt_float(raw, "high", path)
        estimates.append(
            PairedEstimate(
                benchmark=_get(raw, "benchmark", str, path),
                params=tuple(str(p) for p in params),
                ratio=float(_get(raw, "ratio", (int, float), path)),
                low=0.0 if low is None else low,
                high=math.inf if high is None else high,
                p_value=_opt_float(raw, "p_value", path),
                rounds=_get(raw, "rounds", int, path),
                samples=_get(raw, "samples", int, path),
                verdict=_get(raw, "verdict", str, path),
                reason=str(raw.get("reason", "")),
            )
        )
    untimed = []
    for raw in _get({"untimed": data.get("untimed", [])}, "untimed", list, path):
        if not isinstance(raw, dict):
            raise ResultsError(f"{path}: an untimed item is not an object; {_fix(path)}")
        untimed.append(
            Untimed(
                benchmark=_get(raw, "benchmark", str, path),
                params=tuple(str(p) for p in _get(raw, "params", list, path)),
                cause=str(raw.get("cause", "")),
                skipped=raw.get("skipped") is True,
            )
        )
    error = data.get("error")
    fingerprint = data.get("fingerprint")
    first_look = data.get("first_look")
    if first_look is not None and (
        not isinstance(first_look, int) or isinstance(first_look, bool) or first_look < 1
    ):
        raise ResultsError(f"{path}: field 'first_look' is not a round count; {_fix(path)}")
    return PairedRun(
        machine=_get(data, "machine", str, path),
        env_name=_get(data, "env_name", str, path),
        base_commit=_get(data, "base_commit", str, path),
        head_commit=_get(data, "head_commit", str, path),
        per_round=_get(data, "per_round", int, path),
        factor=float(_get(data, "factor", (int, float), path)),
        alpha=float(_get(data, "alpha", (int, float), path)),
        date=_get(data, "date", int, path),
        estimates=tuple(estimates),
        fingerprint=fingerprint if isinstance(fingerprint, str) else None,
        first_look=first_look,
        untimed=tuple(untimed),
        error=error if isinstance(error, str) else None,
        took=float(_opt_float(data, "took", path) or 0.0),
        timed_seconds=float(_opt_float(data, "timed_seconds", path) or 0.0),
        looked_again=int(_opt_float(data, "looked_again", path) or 0),
    )


def load_paired(
    results_dir: Path, *, machine: str | None = None, env_name: str | None = None
) -> list[PairedRun]:
    """Every paired file under ``results_dir`` (of one machine / environment if given)."""
    if not results_dir.is_dir():
        return []
    runs = []
    for folder in sorted(results_dir.glob("*/paired")):
        if machine is not None and folder.parent.name != machine:
            continue
        for path in sorted(folder.glob(f"*{SUFFIX}")):
            run = read_paired(path)
            if env_name is None or run.env_name == env_name:
                runs.append(run)
    return runs


def check_commits(runs: Sequence[PairedRun], known: set[str], results_dir: Path) -> None:
    """Refuse a paired file that names a commit the asv results do not hold."""
    for run in runs:
        for commit in (run.base_commit, run.head_commit):
            if commit not in known:
                path = paired_path(
                    results_dir, run.machine, run.base_commit, run.head_commit, run.env_name
                )
                raise ResultsError(
                    f"{path}: names commit {commit[:12]}, which has no asv results in "
                    f"{results_dir}; run 'asv run' for it, or move the file away"
                )
