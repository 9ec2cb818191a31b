"""What of a plan exists already, and writing the rest all or nothing.

:func:`survey` sorts each planned file into *new* (absent), *same* (present
with exactly the planned text, or any file where any will do: left alone,
which makes a second run a no-op) or *conflicting* (present with other
content, or a directory in the way).
:func:`check_writable` probes every directory that would receive a file;
:func:`write` writes the new files atomically and removes what it wrote if
any write fails, so a failed run leaves nothing behind.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from jaxbench.errors import UsageError
from jaxbench.scaffold.plan import Plan, PlannedFile
from jaxbench.store.fsio import write_text_atomic

__all__ = ["Survey", "check_writable", "survey", "write"]


@dataclass(frozen=True)
class Survey:
    new: tuple[PlannedFile, ...]
    same: tuple[PlannedFile, ...]
    conflicting: tuple[PlannedFile, ...]


def survey(root: Path, plan: Plan) -> Survey:
    new: list[PlannedFile] = []
    same: list[PlannedFile] = []
    conflicting: list[PlannedFile] = []
    for planned in plan.files:
        target = root / planned.path
        if not target.exists() and not target.is_symlink():
            new.append(planned)
            continue
        try:
            current = target.read_text(encoding="utf-8") if target.is_file() else None
        except (OSError, UnicodeDecodeError):
            current = None
        kept = planned.any_existing and target.is_file()
        (same if kept or current == planned.text else conflicting).append(planned)
    return Survey(tuple(new), tuple(same), tuple(conflicting))


def _nearest_existing(path: Path) -> Path:
    while not path.exists():
        path = path.parent
    return path


def check_writable(root: Path, files: tuple[PlannedFile, ...]) -> None:
    """UsageError naming the first place a planned file could not be written."""
    probed: set[Path] = set()
    for planned in files:
        parent = (root / planned.path).parent
        existing = _nearest_existing(parent)
        if existing in probed:
            continue
        probed.add(existing)
        if not existing.is_dir():
            raise UsageError(
                f"cannot write {planned.path}: {existing} is a file, not a directory; "
                "move it away and run jaxbench init again"
            )
        try:
            fd, probe = tempfile.mkstemp(prefix=".jaxbench-init-", dir=existing)
        except OSError as exc:
            raise UsageError(
                f"cannot write in {existing}: {exc.strerror or exc}; make it writable "
                "(chmod u+w) or run jaxbench init as its owner"
            ) from None
        os.close(fd)
        os.unlink(probe)


def write(root: Path, files: tuple[PlannedFile, ...]) -> None:
    """Write ``files`` under ``root``; on any failure remove what this call wrote."""
    written: list[Path] = []
    made_dirs: list[Path] = []
    replaced: dict[Path, bytes] = {}
    try:
        for planned in files:
            target = root / planned.path
            if target.is_file():  # init --force: put it back if a later write fails
                replaced[target] = target.read_bytes()
            missing = [p for p in reversed(target.parents) if not p.exists()]
            made_dirs.extend(p for p in missing if p not in made_dirs)
            write_text_atomic(target, planned.text)
            written.append(target)
    except BaseException:
        for path in reversed(written):
            if path in replaced:
                path.write_bytes(replaced[path])
            else:
                path.unlink(missing_ok=True)
        for directory in reversed(made_dirs):
            shutil.rmtree(directory, ignore_errors=True)
        raise
