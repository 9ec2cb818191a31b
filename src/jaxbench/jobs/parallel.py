"""Worker processes for the scan: forked, and only where forking is safe.

Parsing result files and fitting steps hold one core each; on a large history
the scan spreads them over forked processes (fork: the workers see the
parent's modules and data without pickling them again). The store and the
analysis decide *what* to split (:data:`jaxbench.store.series_table.BatchMap`:
a function mapped over batches); this module is the one place that starts
the processes, handed to them by the jobs (regressions, publish).

Forking a process that runs other threads can deadlock the child (a lock
held by a thread that does not exist there): JAX starts threads and warns at
``fork``. So :func:`forked_batches` answers None (the work stays in this
process) unless on Linux, with no other Python thread and jax not loaded,
and with more than one CPU. (NumPy's BLAS threads are not a reason: OpenBLAS
re-creates its pool in a forked child.)
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from jaxbench.store.series_table import BatchMap

__all__ = ["MAX_WORKERS", "fork_is_safe", "forked_batches"]

#: Most worker processes a scan starts.
MAX_WORKERS = 8


def fork_is_safe() -> bool:
    """True when this process may fork workers: Linux, no other Python thread, no jax."""
    if not sys.platform.startswith("linux"):
        return False
    if threading.active_count() > 1:
        return False
    return "jax" not in sys.modules and "jaxlib" not in sys.modules


def forked_batches(workers: int | None = None) -> BatchMap | None:
    """A :data:`BatchMap` that maps over forked worker processes, or None where
    forking is not safe or there is one CPU (``workers``: default the CPUs, at most
    :data:`MAX_WORKERS`)."""
    count = workers if workers is not None else min(os.cpu_count() or 1, MAX_WORKERS)
    if count <= 1 or not fork_is_safe():
        return None

    def run(
        fn: Callable[[Sequence[Any]], list[Any]], batches: Sequence[Sequence[Any]]
    ) -> Iterable[list[Any]]:
        import multiprocessing

        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=count, mp_context=context) as pool:
            yield from pool.map(fn, batches)

    return run
