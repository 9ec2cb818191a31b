"""The measuring half's own processes: forked children, and whether a fork is safe.

asv's ``forkserver`` imports every benchmark module once and forks each
benchmark from that process; :mod:`jaxbench.measure.asvsuite` forks fresh
processes for its figures. A fork is safe only while jax's backend has not
started (its threads do not survive the fork; the child's first jax call
hangs). This module notes, in each forked child, whether its parent's backend
had started (:func:`refuse_unsafe_fork` then stops the benchmark with the fix
before it touches jax), and runs work in fresh forked children
(:func:`in_fresh_processes`). It imports jax's bridge only when asked.
"""

from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["backend_started", "backend_state", "in_fresh_processes", "refuse_unsafe_fork"]


def backend_state() -> bool | None:
    """Whether jax's backend has started in this process; None if jax cannot say.

    jax has no public query: ``backends_are_initialized`` is looked up, not assumed.
    """
    from jax._src import xla_bridge

    started = getattr(xla_bridge, "backends_are_initialized", None)
    return None if started is None else bool(started())


def backend_started() -> bool:
    """Whether jax's backend may have started (True when jax cannot say)."""
    return backend_state() is not False


# --- forks after the backend started ---------------------------------------------
#
# asv's forkserver imports every benchmark module once and forks each benchmark
# from that process. If an import started jax's backend (a module-level jax
# array or PRNG key, here or in the library a module imports), the child
# inherits a backend whose threads did not survive the fork: its first jax call
# hangs until asv's timeout. The hooks below note, in each forked child, whether
# its parent's backend had started; :func:`refuse_unsafe_fork` then stops the
# benchmark with the fix before it touches jax.

#: In the parent, just before a fork: whether its backend had started.
_backend_at_fork = False
#: In a forked child: whether any process it was forked from had started jax's backend.
_FORKED_AFTER_BACKEND = False


def _before_fork() -> None:
    global _backend_at_fork
    _backend_at_fork = backend_state() is True


def _after_fork_in_child() -> None:
    global _FORKED_AFTER_BACKEND
    _FORKED_AFTER_BACKEND = _FORKED_AFTER_BACKEND or _backend_at_fork


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)


def refuse_unsafe_fork() -> None:
    """Raise :class:`~jaxbench.errors.ForkAfterBackend` in a process forked after
    jax's backend started (its first jax call would hang); else nothing."""
    if _FORKED_AFTER_BACKEND:
        from jaxbench.errors import ForkAfterBackend

        raise ForkAfterBackend(
            'this benchmark was forked (asv\'s "launch_method": "forkserver") from a '
            "process in which jax's backend had started while the benchmark modules were "
            "imported (a jax array, PRNG key or device query at module level, in a benchmark "
            "module or a library it imports), and jax cannot run after such a fork; set "
            '"launch_method": "spawn" in asv.conf.json, or make those values inside a '
            "function"
        )


def in_fresh_processes(works: Sequence[Callable[[], Any]], *, at_a_time: int) -> list[Any]:
    """Each of ``works`` in a forked child (jax imported, its backend not
    started), at most ``at_a_time`` at once; each result, or a one-line error."""
    results: list[Any] = [None] * len(works)
    running: list[tuple[int, int, int]] = []  # (index, pid, read end)
    for index, work in enumerate(works):
        if len(running) >= at_a_time:
            oldest, pid, read_end = running.pop(0)
            results[oldest] = _collect(pid, read_end)
        running.append((index, *_fork(work)))
    for index, pid, read_end in running:
        results[index] = _collect(pid, read_end)
    return results


def _fork(work: Callable[[], Any]) -> tuple[int, int]:
    sys.stdout.flush()
    sys.stderr.flush()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child; its result comes back through the pipe
        os.close(read_end)
        try:
            try:
                payload = pickle.dumps(work())
            except Exception as exc:  # one line for every track; the traceback: here
                import traceback

                traceback.print_exc()
                payload = pickle.dumps(f"{type(exc).__name__}: {exc}")
            with os.fdopen(write_end, "wb") as out:
                out.write(payload)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)
    os.close(write_end)
    return pid, read_end


def _collect(pid: int, read_end: int) -> Any:
    with os.fdopen(read_end, "rb") as source:
        payload = source.read()
    _, status = os.waitpid(pid, 0)
    if not payload:
        return (
            f"RuntimeError: a fresh figures process ended with wait status {status} "
            "and no figures; run the benchmark alone to see its output"
        )
    return pickle.loads(payload)
