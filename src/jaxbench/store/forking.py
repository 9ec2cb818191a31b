"""Worker processes for the scan: forked, and only where forking is safe.

Parsing result files and fitting steps hold one core each; on a large history
the scan spreads them over forked processes (fork: the workers see the
parent's modules and data without pickling them again). Forking a process
that runs other threads can deadlock the child (a lock held by a thread that
does not exist there): JAX starts threads and warns at ``fork``. The
command-line tools never import jax, but ``scan`` and ``load_series_table``
are also called from notebooks and tests, so a process forks only on Linux,
when no other Python thread runs and jax is not loaded; anywhere else the
work stays in this process. (NumPy's BLAS threads are not a reason: OpenBLAS
re-creates its pool in a forked child.)
"""

from __future__ import annotations

import sys
import threading
from concurrent.futures import ProcessPoolExecutor

__all__ = ["fork_is_safe", "fork_pool"]


def fork_is_safe() -> bool:
    """True when this process may fork workers: Linux, no other Python thread, no jax."""
    if not sys.platform.startswith("linux"):
        return False
    if threading.active_count() > 1:
        return False
    return "jax" not in sys.modules and "jaxlib" not in sys.modules


def fork_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` forked processes (check :func:`fork_is_safe` first)."""
    import multiprocessing

    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"))
