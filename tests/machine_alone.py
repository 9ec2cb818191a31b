"""The machine to one test at a time, for the parts that time two sides and assert a verdict.

jaxbench's side-by-side timing runs its processes one at a time, never
together, because two at once measure each other
(:mod:`jaxbench.lockstep.first_call`). Under pytest-xdist the other test
process is that other one: an A/A review timed while the other process
compiles jax reads its bursts as a change (seen in CI: an A/A review of an
empty commit flagged ``track_lower_seconds`` 1.52x, every stage of the head
1.4-1.7x slower in all three of its fresh-process pairs).

A readers-writer lock over one file that every process of a run shares
(``conftest.py`` names it in ``$JAXBENCH_TEST_MACHINE_LOCK``): every test
holds it shared from its setup to its teardown, module fixtures included
(:func:`shared`, around pytest's run of each test), and a
part that times and asserts takes it alone (:func:`alone`): it waits for the
other process's current test to end, and the other process starts no test
until it is done. A turnstile lock keeps a stream of short tests from
starving it. Outside pytest (no variable) both are no-ops. The shapes tier
(``make test-shapes``) takes no part: its tests share the machine freely and
assert no timed verdict (tests/test_shapes.py).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO

__all__ = ["LOCK_VARIABLE", "alone", "held", "shared"]

#: The variable naming the run's lock file (the turnstile is beside it).
LOCK_VARIABLE = "JAXBENCH_TEST_MACHINE_LOCK"


class _Lock:
    """One run's lock (the file and its turnstile), held by this process in one mode."""

    def __init__(self, path: Path) -> None:
        self._main: IO[str] = path.open("a", encoding="utf-8")
        self._turnstile: IO[str] = path.with_name(path.name + ".turnstile").open(
            "a", encoding="utf-8"
        )
        self.held = fcntl.LOCK_UN

    def set(self, mode: int) -> None:
        """Hold the lock in ``mode``; a wait for it lets no new test in meanwhile."""
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


_locks: dict[str, _Lock] = {}


@contextlib.contextmanager
def _holding(mode: int) -> Iterator[None]:
    named = os.environ.get(LOCK_VARIABLE)
    if not named:
        yield
        return
    if named not in _locks:
        _locks[named] = _Lock(Path(named))
    lock = _locks[named]
    before = lock.held
    lock.set(mode)
    try:
        yield
    finally:
        lock.set(before)


def held() -> int:
    """How this process holds the run's lock now (``fcntl.LOCK_SH``, ``LOCK_EX`` or ``LOCK_UN``)."""
    named = os.environ.get(LOCK_VARIABLE)
    return _locks[named].held if named in _locks else fcntl.LOCK_UN


def shared() -> contextlib.AbstractContextManager[None]:
    """The machine shared with the other test processes' tests (every test)."""
    return _holding(fcntl.LOCK_SH)


def alone() -> contextlib.AbstractContextManager[None]:
    """The machine to this block alone: no other test process runs a test meanwhile."""
    return _holding(fcntl.LOCK_EX)
