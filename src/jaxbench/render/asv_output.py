"""``asv run``'s output, short: what a person follows on a terminal while asv runs.

``asv run --show-stderr`` prints every result of every benchmark: a table for
each benchmark with parameters, the standard error of each, the whole output
of a failed build (6,100 lines for this project's three commits in two
environments, 176 benchmarks each). :class:`ShortAsvOutput` keeps asv's own
steps (environments created, built, installed; each commit; each environment
benchmarked; a build that failed, a suite that did not import) and gives the
benchmarks of each environment one line when they are done: how many, how
long, how many failed and which::

    [ 0.00%] ·· Benchmarking virtualenv-py3.11-jax0.10.2
    [16.67%] ··· 176 benchmarks in 52 s: 174 ok, 2 failed (workloads.Step.time_warm, ...)

A long run of benchmarks says how far it is once a minute. The whole output
goes to a log beside it (``jaxbench asv-tee``, ``jaxbench review``): the
failures' error lines are read there (``publish``, ``regressions``,
``check-run``), and the last line names it. Pure: the caller passes the
clock.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from jaxbench.render.progress import format_duration
from jaxbench.store.asv_log import (
    MAX_ERROR_CHARS,
    TRACEBACK,
    AsvLine,
    asv_line,
    cut_line,
    error_line,
)

__all__ = ["EVERY", "MAX_LINE_CHARS", "NAMED", "ShortAsvOutput"]

#: Seconds of benchmarks without a line, after which one says how far they are.
EVERY = 60.0
#: Failed benchmarks named on an environment's line (the others counted).
NAMED = 3
#: asv's own lines longer than this (a failed build's whole command) are cut, as its
#: error lines are.
MAX_LINE_CHARS = MAX_ERROR_CHARS
#: Lines that asv did not bullet after one of its steps, kept in case asv itself stops
#: with a traceback.
_TAIL = 200


def _count(number: int, what: str) -> str:
    return f"{number:,} {what}{'' if number == 1 else 's'}"


@dataclass
class _Block:
    """The benchmarks of one environment at one commit, as they come."""

    started: float
    progress: str = ""
    done: int = 0
    failed: list[str] = field(default_factory=list)
    skipped: int = 0
    shown: float = 0.0

    def line(self, now: float, *, last: bool) -> str:
        ok = self.done - len(self.failed) - self.skipped
        parts = [f"{ok:,} ok"] if ok or not (self.failed or self.skipped) else []
        if self.failed:
            named = ", ".join(self.failed[:NAMED])
            more = f", {len(self.failed) - NAMED:,} more" if len(self.failed) > NAMED else ""
            parts.append(f"{len(self.failed):,} failed ({named}{more})")
        if self.skipped:
            parts.append(f"{self.skipped:,} skipped")
        took = format_duration(now - self.started)
        head = f"{self.progress} ··· " if self.progress else "··· "
        if last:
            return f"{head}{_count(self.done, 'benchmark')} in {took}: {', '.join(parts)}"
        return f"{head}{_count(self.done, 'benchmark')} so far, {took}: {', '.join(parts)}"


class ShortAsvOutput:
    """Feed it asv's output line by line (:meth:`feed`), then :meth:`close`; each returns
    the lines to show. ``log`` names where the whole output is kept."""

    def __init__(self, log: str, *, every: float = EVERY) -> None:
        self._log = log
        self._every = every
        self._block: _Block | None = None
        self._results = 0
        self._failed = 0
        self._commits: set[str] = set()
        self._envs: set[str] = set()
        self._asv_started = False
        #: the depth of asv's last line: what follows one of its steps may be its own crash
        self._depth = 0
        #: asv said how many it would run ("Running N total benchmarks")
        self._planned = False
        self._tail: deque[str] = deque(maxlen=_TAIL)

    def feed(self, raw: str, now: float) -> list[str]:
        """The lines to show for ``raw``, one line of asv's output, read at ``now``."""
        line = asv_line(raw)
        if line.depth == 0:
            if not self._asv_started:  # before asv's first line: not asv's (a warning)
                return [line.text] if line.text.strip() else []
            if self._depth <= 2:  # after asv's own step, not a benchmark's table or error
                self._tail.append(line.text)
            return []
        self._asv_started = True
        self._depth = line.depth
        self._tail.clear()
        if line.benchmark is not None:
            return self._result(line, now)
        if line.depth <= 2:
            shown = self._end(now)
            if line.text.startswith("Benchmarking "):
                self._block = _Block(now, line.progress, shown=now)
                self._envs.add(line.text.removeprefix("Benchmarking "))
            elif line.depth == 1 and line.text.startswith("For ") and " commit " in line.text:
                # "For proj commit 64c850eb <main> (round 1/2):": a commit, once a round
                self._commits.add(line.text.split(" commit ", 1)[1].split(" ", 1)[0])
            elif line.depth == 1 and line.text.startswith("Running "):
                self._planned = True
            return [*shown, self._said(line)]
        if line.text.startswith("Error running "):  # a build or install that failed
            return [self._said(line)]
        return []

    def close(self, now: float) -> list[str]:
        """The last lines: the open environment's, asv's own last error, the totals."""
        shown = self._end(now)
        if any(text.strip() == TRACEBACK for text in self._tail):  # asv itself stopped
            found = error_line(list(self._tail))
            if found is not None:
                shown.append(f"asv's last words: {found}")
        if self._results:
            failed = f"{self._failed:,} failed" if self._failed else "none failed"
            commits = _count(len(self._commits), "commit")
            envs = _count(len(self._envs), "environment")
            total = f"{_count(self._results, 'result')} ({commits}, {envs}), {failed}"
        elif self._planned:  # --skip-existing: every result is on file
            total = "nothing left to run (every benchmark of these commits has its results)"
        else:
            total = "no benchmark ran"
        shown.append(f"asv run: {total}; its whole output: {self._log}")
        return shown

    def _said(self, line: AsvLine) -> str:
        dots = "·" * line.depth
        head = f"{line.progress} {dots}" if line.progress else dots
        return cut_line(f"{head} {line.text}")

    def _result(self, line: AsvLine, now: float) -> list[str]:
        block = self._block
        if block is None:  # results without asv's "Benchmarking" line
            block = self._block = _Block(now, line.progress, shown=now)
        block.done += 1
        if line.failed:
            block.failed.append(str(line.benchmark))
        elif line.skipped:
            block.skipped += 1
        if line.progress:
            block.progress = line.progress
        if now - block.shown < self._every:
            return []
        block.shown = now
        return [block.line(now, last=False)]

    def _end(self, now: float) -> list[str]:
        block, self._block = self._block, None
        if block is None or not block.done:
            return []
        self._results += block.done
        self._failed += len(block.failed)
        return [block.line(now, last=True)]
