"""Atomic file output: a file is either fully written or left as it was.

A file gets the mode any other program would give it, ``0o666`` less the
user's umask (``tempfile.mkstemp`` alone would make every file ``0600``:
golden files, results and ``jaxbench init``'s files that the user's group, a
web server or a second account could not read).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from jaxbench.errors import UsageError

__all__ = ["write_bytes_atomic", "write_text_atomic"]

_TRIES = 100


def _open_temporary(path: Path) -> tuple[int, Path]:
    """A new, exclusive temporary file beside ``path``, created with mode 0o666: the
    kernel takes the umask off, as for any file a program creates."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(_TRIES):
        tmp = path.parent / f".{path.name}.{secrets.token_hex(4)}.tmp"
        try:
            fd = os.open(tmp, flags, 0o666)
        except FileExistsError:
            continue
        return fd, tmp
    raise FileExistsError(f"no free temporary name beside {path}")


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename.

    Raises :class:`UsageError` naming the path when it cannot be written.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _open_temporary(path)
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
        tmp.unlink(missing_ok=True)
        raise UsageError(
            f"cannot write {path}: {exc.strerror or exc}; choose a writable path"
        ) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    write_bytes_atomic(path, text.encode("utf-8"))
