"""A machine shared with other work: time two sides only while that work stays out.

jaxbench times two sides one process at a time because two processes at once
measure each other. Other work on the machine does the same: another job's
build or a test process compiling jax beside a review reads as a change
(seen: an A/A review's first calls 1.4-1.7x slower, every stage of the head).
Where several jobs share one machine (self-hosted runners, a test run's
processes), ``$JAXBENCH_QUIET_LOCK`` names a file they all see: jaxbench holds
it exclusively while it times two sides (a review's or an upgrade's first
calls and warm times, ``ab``, ``first-call``, each bisect step, each pair of
the paired history) and not while asv builds, installs or records the
figures. Other work holds it shared (``flock -s FILE COMMAND``, or
:class:`FileLock` ``.set(fcntl.LOCK_SH)``) and so never runs beside a timing.

A :class:`FileLock` waits at a turnstile (the file ``FILE.turnstile``) before
it waits for the lock itself, so that a stream of short shared holders cannot
keep an exclusive one out forever. Unset, :func:`quiet` does nothing.
Standard library only; never jax.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import functools
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, ParamSpec, TypeVar

from jaxbench.errors import UsageError

__all__ = ["QUIET_LOCK", "FileLock", "file_lock", "quiet", "timed_quietly"]

#: The variable naming the lock file.
QUIET_LOCK = "JAXBENCH_QUIET_LOCK"


class FileLock:
    """One lock file (and its turnstile), held by this process in one mode."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._main: IO[str] = path.open("a", encoding="utf-8")
        try:
            self._turnstile: IO[str] = path.with_name(path.name + ".turnstile").open(
                "a", encoding="utf-8"
            )
        except OSError:
            self._main.close()  # nothing left open when the turnstile cannot be
            raise
        #: ``fcntl.LOCK_UN``, ``LOCK_SH`` or ``LOCK_EX``
        self.held = fcntl.LOCK_UN

    def set(self, mode: int) -> None:
        """Hold the lock in ``mode``; while this waits, no new holder gets in."""
        if self.held == mode:
            return
        if self.held != fcntl.LOCK_UN:
            fcntl.flock(self._main, fcntl.LOCK_UN)  # never wait at the turnstile holding it
            self.held = fcntl.LOCK_UN
        if mode == fcntl.LOCK_UN:
            return
        fcntl.flock(self._turnstile, fcntl.LOCK_EX)
        try:
            fcntl.flock(self._main, mode)
        finally:
            fcntl.flock(self._turnstile, fcntl.LOCK_UN)
        self.held = mode

    def close(self) -> None:
        """Let go of the lock and close its files."""
        self.held = fcntl.LOCK_UN
        self._main.close()  # closing the file releases its flock
        self._turnstile.close()


_locks: dict[str, FileLock] = {}


@atexit.register
def _close_all() -> None:
    for lock in _locks.values():
        lock.close()
    _locks.clear()


def file_lock(named: str) -> FileLock:
    """This process's one :class:`FileLock` of ``named`` (two would lock each other out)."""
    if named not in _locks:
        try:
            _locks[named] = FileLock(Path(named))
        except OSError as exc:
            raise UsageError(
                f"${QUIET_LOCK}={named}: cannot open it ({exc.strerror}); "
                "name a file in a folder that exists and that you may write, or unset it"
            ) from exc
    return _locks[named]


@contextlib.contextmanager
def quiet() -> Iterator[float]:
    """Hold ``$JAXBENCH_QUIET_LOCK`` exclusively for the block; yields the seconds waited.

    Re-entrant: a block inside another (a review's steps, each timing) holds it
    once. Unset or empty: yields 0.0 and holds nothing."""
    named = os.environ.get(QUIET_LOCK, "")
    if not named:
        yield 0.0
        return
    lock = file_lock(named)
    before = lock.held
    clock = time.monotonic()
    lock.set(fcntl.LOCK_EX)
    try:
        yield time.monotonic() - clock
    finally:
        lock.set(before)


P = ParamSpec("P")
R = TypeVar("R")


def timed_quietly(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` run holding ``$JAXBENCH_QUIET_LOCK`` (:func:`quiet`); its ``deadline``
    keyword (a :func:`time.monotonic` time), where given, moves by the wait."""

    @functools.wraps(fn)
    def holding(*args: P.args, **kwargs: P.kwargs) -> R:
        with quiet() as waited:
            deadline = kwargs.get("deadline")
            if isinstance(deadline, float):
                kwargs["deadline"] = deadline + waited
            return fn(*args, **kwargs)

    return holding
