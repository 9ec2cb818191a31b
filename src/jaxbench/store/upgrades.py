"""Where ``jaxbench upgrade`` keeps its verdicts for the published history: one file per
measured upgrade, beside asv's results.

Layout (``<results_dir>`` is asv.conf.json's ``results_dir``)::

    <results_dir>/<machine>/upgrades/<commit12>-<key8>.upgrade

``key8`` is a hash of the two environments' names, so that measuring the
same commit and environments again replaces the file. The files hold JSON,
named ``.upgrade`` so that asv's results reader (which loads every
``*.json`` under the results directory) and jaxbench's leave them alone;
``asv publish`` only rebuilds ``html_dir``, so they survive it. Format 1::

    {"jaxbench_upgrade_format": 1, "machine": ..., "commit": FULL,
     "base_env": ..., "head_env": ..., "changed": [[package, base, head], ...],
     "date": MS, "status": 0 or 1, "compare": {jaxbench compare's JSON document}}

``changed`` lists the packages whose versions differ between the two
environments (what the upgrade is: ``jax 0.9.2 -> 0.10.2``); ``compare`` is
what ``jaxbench upgrade --format json`` prints. Reading refuses (one line,
:class:`~jaxbench.errors.ResultsError`) a file that is not valid JSON, lacks
a field, or has a newer format. Never imports jax.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jaxbench.errors import ResultsError
from jaxbench.store.fsio import write_text_atomic

__all__ = [
    "UPGRADE_FORMAT",
    "UpgradeRecord",
    "load_upgrades",
    "read_upgrade",
    "upgrade_path",
    "write_upgrade",
]

UPGRADE_FORMAT = 1
SUFFIX = ".upgrade"


@dataclass(frozen=True)
class UpgradeRecord:
    """One commit measured in two environments, and the verdict."""

    machine: str
    commit: str
    base_env: str
    head_env: str
    #: (package, base version, head version) of each package that differs
    changed: tuple[tuple[str, str, str], ...]
    #: when it was measured, ms since the epoch (asv's unit)
    date: int
    #: the check: 0 nothing worse in the head environment, 1 worse
    status: int
    #: jaxbench compare's JSON document (``rows``, ``summary``, ...)
    compare: Mapping[str, Any]

    @property
    def title(self) -> str:
        """``jax 0.9.2 -> 0.10.2``: what changed, or the two environments' names."""
        if self.changed:
            return ", ".join(
                f"{name} {base or '(newest)'} -> {head or '(newest)'}"
                for name, base, head in self.changed
            )
        return f"{self.base_env} -> {self.head_env}"


def upgrade_path(
    results_dir: Path, machine: str, commit: str, base_env: str, head_env: str
) -> Path:
    """Where the upgrade of ``commit`` from ``base_env`` to ``head_env`` is kept."""
    key = hashlib.sha1(f"{base_env}\n{head_env}".encode()).hexdigest()[:8]
    return results_dir / machine / "upgrades" / f"{commit[:12]}-{key}{SUFFIX}"


def write_upgrade(results_dir: Path, record: UpgradeRecord) -> Path:
    """Write ``record`` atomically (replacing the same commit and environments); its path."""
    path = upgrade_path(
        results_dir, record.machine, record.commit, record.base_env, record.head_env
    )
    document = {
        "jaxbench_upgrade_format": UPGRADE_FORMAT,
        "machine": record.machine,
        "commit": record.commit,
        "base_env": record.base_env,
        "head_env": record.head_env,
        "changed": [list(c) for c in record.changed],
        "date": record.date,
        "status": record.status,
        "compare": dict(record.compare),
    }
    write_text_atomic(path, json.dumps(document, indent=1, allow_nan=False) + "\n")
    return path


def _field(data: Mapping[str, Any], key: str, kind: type, path: Path) -> Any:
    value = data.get(key)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ResultsError(
            f"{path}: field {key!r} missing or of the wrong type; move the file away and "
            "run 'jaxbench upgrade' for that commit again"
        )
    return value


def _changed(value: list[Any], path: Path) -> tuple[tuple[str, str, str], ...]:
    if not all(
        isinstance(c, list) and len(c) == 3 and all(isinstance(s, str) for s in c) for c in value
    ):
        raise ResultsError(
            f"{path}: field 'changed' must list [package, base, head] strings; move the "
            "file away and run 'jaxbench upgrade' for that commit again"
        )
    return tuple((c[0], c[1], c[2]) for c in value)


def read_upgrade(path: Path) -> UpgradeRecord:
    """One ``.upgrade`` file (see the module doc for the refusals)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ResultsError(
            f"{path}: not a readable upgrade file ({exc}); move it away and run "
            "'jaxbench upgrade' for that commit again"
        ) from None
    if not isinstance(data, dict):
        raise ResultsError(f"{path}: not an upgrade file (no JSON object); move it away")
    version = _field(data, "jaxbench_upgrade_format", int, path)
    if version > UPGRADE_FORMAT:
        raise ResultsError(
            f"{path}: upgrade format {version} is newer than this jaxbench reads "
            f"({UPGRADE_FORMAT}); upgrade jaxbench"
        )
    return UpgradeRecord(
        machine=_field(data, "machine", str, path),
        commit=_field(data, "commit", str, path),
        base_env=_field(data, "base_env", str, path),
        head_env=_field(data, "head_env", str, path),
        changed=_changed(_field(data, "changed", list, path), path),
        date=_field(data, "date", int, path),
        status=_field(data, "status", int, path),
        compare=_field(data, "compare", dict, path),
    )


def load_upgrades(results_dir: Path) -> list[UpgradeRecord]:
    """Every upgrade file under ``results_dir``, newest first."""
    if not results_dir.is_dir():
        return []
    records = [
        read_upgrade(path)
        for folder in sorted(results_dir.glob("*/upgrades"))
        for path in sorted(folder.glob(f"*{SUFFIX}"))
    ]
    return sorted(records, key=lambda r: (-r.date, r.commit, r.head_env))
