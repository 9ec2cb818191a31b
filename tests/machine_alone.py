"""The machine to one test at a time, for the parts that time two sides and assert a verdict.

jaxbench's side-by-side timing runs its processes one at a time, never
together, because two at once measure each other
(:mod:`jaxbench.lockstep.first_call`). Under pytest-xdist the other test
process is that other one: an A/A review timed while the other process
compiles jax reads its bursts as a change (seen in CI: an A/A review of an
empty commit flagged ``track_lower_seconds`` 1.52x, every stage of the head
1.4-1.7x slower in all three of its fresh-process pairs).

A readers-writer lock over one file that every process of a run shares
(``conftest.py`` names it in ``$JAXBENCH_TEST_MACHINE_LOCK``; the lock is
:class:`jaxbench.lockstep.quiet.FileLock`): every test holds it shared from
its setup to its teardown, module fixtures included (:func:`shared`, around
pytest's run of each test), and a part that times and asserts takes it alone
(:func:`alone`): it waits for the other process's current test to end, and
the other process starts no test until it is done. A turnstile lock keeps a
stream of short tests from starving it. A test whose jaxbench command builds
and runs asv before it times (a review, an upgrade) hands the lock to it
instead (:func:`handed_over`): the command holds it alone only while it
times, as ``$JAXBENCH_QUIET_LOCK`` lets a user's jobs on one machine do.
Outside pytest (no variable) all are no-ops. The shapes tier (``make
test-shapes``) takes no part: its tests share the machine freely and assert
no timed verdict (tests/test_shapes.py).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator

from jaxbench.lockstep.quiet import QUIET_LOCK, file_lock

__all__ = ["LOCK_VARIABLE", "alone", "handed_over", "held", "shared"]

#: The variable naming the run's lock file (the turnstile is beside it).
LOCK_VARIABLE = "JAXBENCH_TEST_MACHINE_LOCK"


@contextlib.contextmanager
def _holding(mode: int) -> Iterator[None]:
    named = os.environ.get(LOCK_VARIABLE)
    if not named:
        yield
        return
    lock = file_lock(named)
    before = lock.held
    lock.set(mode)
    try:
        yield
    finally:
        lock.set(before)


def held() -> int:
    """How this process holds the run's lock now (``fcntl.LOCK_SH``, ``LOCK_EX`` or ``LOCK_UN``)."""
    named = os.environ.get(LOCK_VARIABLE)
    return file_lock(named).held if named else fcntl.LOCK_UN


def shared() -> contextlib.AbstractContextManager[None]:
    """The machine shared with the other test processes' tests (every test)."""
    return _holding(fcntl.LOCK_SH)


def alone() -> contextlib.AbstractContextManager[None]:
    """The machine to this block alone: no other test process runs a test meanwhile."""
    return _holding(fcntl.LOCK_EX)


@contextlib.contextmanager
def handed_over() -> Iterator[None]:
    """The machine shared while this block's jaxbench processes build and run asv, and
    theirs alone while they time two sides: this process lets go of the run's lock and
    names it in ``$JAXBENCH_QUIET_LOCK`` for the processes it starts in the block
    (:mod:`jaxbench.lockstep.quiet`: they hold it exclusively while they time)."""
    named = os.environ.get(LOCK_VARIABLE)
    with _holding(fcntl.LOCK_UN):
        if named:
            os.environ[QUIET_LOCK] = named
        try:
            yield
        finally:
            os.environ.pop(QUIET_LOCK, None)
