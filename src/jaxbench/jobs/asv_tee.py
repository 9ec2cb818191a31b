"""``asv run``'s output kept whole in a log and shown short (``jaxbench asv-tee``).

The main job (``make bench``, the measuring workflow) pipes ``asv run`` into
it in place of ``tee``: every line goes to the log as it comes, where
``publish``, ``regressions`` and ``check-run`` read the failures' errors,
and the terminal gets asv's steps and one line per environment's benchmarks
(:class:`jaxbench.render.asv_output.ShortAsvOutput`), or every line
(``full``). The review (:mod:`jaxbench.jobs.review`) feeds the asv run it
starts through the same :func:`asv_tee`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from jaxbench.errors import UsageError
from jaxbench.render.asv_output import ShortAsvOutput

__all__ = ["asv_tee", "tee_asv"]


@contextlib.contextmanager
def asv_tee(
    log: Path,
    show: Callable[[str], None],
    *,
    full: bool = False,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[Callable[[str], None]]:
    """A feed for asv's output (a line, its newline kept): each line to ``log`` as it
    comes, and what to show of it to ``show`` (a line, no newline); the totals shown
    when the block ends. UsageError, before the block, when ``log`` cannot be written."""
    try:
        kept = log.open("w", encoding="utf-8")
    except OSError as exc:
        raise UsageError(
            f"cannot write asv's log {log} ({exc.strerror or exc}); make its folder or "
            "name another file"
        ) from None
    short = ShortAsvOutput(str(log))

    def feed(raw: str) -> None:
        kept.write(raw)
        kept.flush()  # a stopped job keeps what asv said up to then
        if full:
            show(raw.rstrip("\r\n"))
            return
        for line in short.feed(raw, clock()):
            show(line)

    with kept:
        yield feed
    if not full:
        for line in short.close(clock()):
            show(line)


def tee_asv(
    lines: Iterable[str],
    log: Path,
    show: Callable[[str], None],
    *,
    full: bool = False,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Each of ``lines`` (asv's output, newlines kept) through :func:`asv_tee`."""
    with asv_tee(log, show, full=full, clock=clock) as feed:
        for raw in lines:
            feed(raw)
