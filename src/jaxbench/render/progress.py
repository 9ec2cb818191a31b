"""A whole-job progress line: the step, how many of how many, elapsed, time left.

``jaxbench pair-history`` (pairs x rounds), ``jaxbench ab`` and
``jaxbench first-call`` (rounds) report through :class:`Progress`; a job of
several commands (``make bench``) reports each step with ``jaxbench
progress`` (:func:`step_line`, :func:`done_line`: the time left is what the
steps left took in the job's last complete run). On a
terminal the line is redrawn in place on stderr after every unit of work; in
a log (not a terminal: CI) one line is written per finished step, nothing in
between. The time left is the elapsed time scaled by the work left
(:func:`time_left`), every unit of a job counted as costing the same.
:func:`format_line` is pure; :class:`Progress` holds the clock and the stream.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

__all__ = [
    "Progress",
    "Snapshot",
    "done_line",
    "format_duration",
    "format_line",
    "step_line",
    "time_left",
]


@dataclass(frozen=True)
class Snapshot:
    """Where a job stands: ``step`` (1-based) of ``steps``, ``done`` of ``units`` in all."""

    job: str
    step: int
    steps: int
    label: str
    done: int
    units: int
    elapsed: float
    #: Seconds left as measured from the finished steps (None: from the units).
    left: float | None = None


def format_duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``1 h 02 min``."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def time_left(done: int, units: int, elapsed: float) -> float | None:
    """Seconds left if every unit costs what the done ones did; None before the first."""
    if done <= 0 or units <= 0:
        return None
    return elapsed * max(0, units - done) / done


def format_line(s: Snapshot) -> str:
    """``jaxbench ab: round 3/12 (25 %), 1 min 02 s elapsed, ~3 min 06 s left``."""
    left = s.left if s.left is not None else time_left(s.done, s.units, s.elapsed)
    share = round(100 * s.done / s.units) if s.units else 0
    step = f"{s.label} {s.step}/{s.steps}" if s.label else f"{s.step}/{s.steps}"
    tail = f"~{format_duration(left)} left" if left is not None else "time left unknown"
    return f"{s.job}: {step} ({share} %), {format_duration(s.elapsed)} elapsed, {tail}"


def step_line(
    job: str,
    step: int,
    steps: int,
    name: str,
    elapsed: float,
    left: float | None,
    *,
    basis: str = "as the last run",
) -> str:
    """``make bench: step 2/4 paired history, 6 min 01 s elapsed, ~4 min 58 s left``.

    ``left``: what the steps from this one on took in the last complete run
    (None: no complete run yet, or a step was not in it); ``basis`` says where
    it comes from (``jaxbench review``: the last review, or its time budget)."""
    tail = (
        f"~{format_duration(left)} left ({basis})"
        if left is not None
        else "time left unknown (no complete run yet)"
    )
    return f"{job}: step {step}/{steps} {name}, {format_duration(elapsed)} elapsed, {tail}"


def done_line(job: str, total: float, steps: list[tuple[str, float]], note: str = "") -> str:
    """``make bench: done in 11 min 10 s (asv run 5 min 58 s, publish 3 s, ...)``;
    ``note`` follows the steps (``...; waited 31 s for ...``)."""
    took = ", ".join(f"{name} {format_duration(seconds)}" for name, seconds in steps)
    parts = "; ".join(part for part in (took, note) if part)
    return f"{job}: done in {format_duration(total)}" + (f" ({parts})" if parts else "")


class Progress:
    """The progress of one job of ``steps`` steps, each of ``per_step`` units.

    ``advance(step, done_in_step, units_in_step)`` reports where the job is;
    a step's units may grow (a second look adds rounds). ``live``: redraw
    one line in place (default: ``stream`` is a terminal). ``deadline``: a
    ``clock`` time the job ends by at the latest (a budget), so the time left
    is never more than what is left of it.
    """

    def __init__(
        self,
        job: str,
        steps: int,
        per_step: int,
        *,
        label: str = "",
        stream: IO[str] | None = None,
        live: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        deadline: float | None = None,
    ) -> None:
        self._job = job
        self._deadline = deadline
        self._steps = max(1, steps)
        self._per_step = max(1, per_step)
        self._label = label
        self._stream = stream if stream is not None else sys.stderr
        self._live = self._stream.isatty() if live is None else live
        self._clock = clock
        self._start = clock()
        self._extra = 0  # units added to earlier steps beyond per_step
        self._drawn = False
        self._first: tuple[int, float] | None = None  # the first step seen, and when
        self._started: dict[int, float] = {}  # when each step started
        self._last_report = self._start

    def resize(self, steps: int) -> None:
        """The job turned out to have ``steps`` steps (a second look adds rounds)."""
        self._steps = max(1, steps)

    def snapshot(self, step: int, done_in_step: int, units_in_step: int) -> Snapshot:
        grown = max(0, units_in_step - self._per_step)
        units = self._steps * self._per_step + self._extra + grown
        done = (step - 1) * self._per_step + self._extra + done_in_step
        now = self._clock()
        left = self._left_by_steps(step, now)
        if self._deadline is not None:
            estimate = left if left is not None else time_left(done, units, now - self._start)
            budget = max(0.0, self._deadline - now)
            left = budget if estimate is None else min(estimate, budget)
        return Snapshot(
            self._job,
            step,
            self._steps,
            self._label,
            done,
            units,
            now - self._start,
            left,
        )

    def _left_by_steps(self, step: int, now: float) -> float | None:
        """Once a step of several units has finished: what the steps took so far,
        per step, times the steps left, less the time into this one. Steps differ
        less than their units do (a second look's rounds sample fewer benchmarks)."""
        last, self._last_report = self._last_report, now
        if self._per_step <= 1:
            return None
        started = self._started.setdefault(step, last)  # a step starts as the last one ends
        if self._first is None:
            self._first = (step, started)
        first_step, first_start = self._first
        if step <= first_step:
            return None
        per_step = (started - first_start) / (step - first_step)
        return max(0.0, per_step * (self._steps - step + 1) - (now - started))

    def advance(self, step: int, done_in_step: int, units_in_step: int) -> None:
        """Report ``done_in_step`` of ``units_in_step`` units done in step ``step`` (1-based)."""
        line = format_line(self.snapshot(step, done_in_step, units_in_step))
        finished = done_in_step >= units_in_step
        if self._live:  # a finished step's line stays, later output below it
            self._stream.write(f"\r\x1b[K{line}" + ("\n" if finished else ""))
            self._drawn = not finished
        elif finished:
            self._stream.write(line + "\n")
        if finished:
            self._extra += max(0, units_in_step - self._per_step)
        self._stream.flush()

    def rounds(self, done: int, total: int) -> None:
        """A job whose steps are rounds: round ``done`` of ``total`` finished.

        The shape of ``run_lockstep_suite``'s ``progress`` callback."""
        self.resize(total)
        self.advance(done, 1, 1)

    def within(self, step: int) -> Callable[[int, int], None]:
        """A callback for step ``step`` whose units are rounds: ``(done, total)``."""
        return lambda done, total: self.advance(step, done, total)

    def close(self) -> None:
        """End the redrawn line (a terminal), so later output starts on a fresh line."""
        if self._live and self._drawn:
            self._stream.write("\n")
            self._stream.flush()
            self._drawn = False
