"""Atomic file output: a file is either fully written or left as it was."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from jaxbench.errors import UsageError

__all__ = ["write_bytes_atomic", "write_text_atomic"]


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename.

    Raises :class:`UsageError` naming the path when it cannot be written.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise UsageError(
            f"cannot write {path}: {exc.strerror or exc}; choose a writable path"
        ) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise UsageError(
            f"cannot write {path}: {exc.strerror or exc}; choose a writable path"
        ) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    write_bytes_atomic(path, text.encode("utf-8"))
