"""Base and head timed side by side: two live processes, sampled in turn.

On a shared machine the speed of a warm JAX call drifts by tens of percent
from second to second and from process to process (``docs/detection-power.md``),
far more than the 5 % a review must see. ``asv run --interleave-rounds``
alternates whole processes, seconds apart, so the drift falls on base and
head unequally. Here both sides are alive at once: a *round* starts one
worker process per side (``worker.py``, run by each side's Python),
then asks them for one asv sample each, in turn, ``per_round`` times (the
side that goes first alternates), so every base sample has a head sample
taken within milliseconds of it. Rounds are repeated in fresh processes,
because a process keeps some of its own speed for its whole life.

Both processes of a round are pinned to the same CPU (``cpus`` per round,
rotating over the CPUs this process may use from round to round): on this
project's 2-core machine the two vCPUs ran the same call in 13 and 20 µs
(jax's async dispatch off), and where a process's threads land was the
larger part of the difference between two processes. Pinned, the per-round
estimate of head / base for identical code (predict, ~25 µs a call) spread
by about 1 %; unpinned by 2 to 12 % (``docs/detection-power.md``). Pinning
puts a workload's threads on the round's CPUs: a change in how work spreads
over cores needs ``cpus`` > 1 (or 0: no pinning).

The samples are asv samples (asv_runner's timer, the benchmark's ``number``),
written by ``jaxbench ab`` into ordinary asv result files;
``jaxbench compare --paired N`` tests them pair by pair
(:func:`jaxbench.analyse.stats.compare_paired`).

Never imports jax: the workers do, in their own environments.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from jaxbench.errors import JaxbenchError, UsageError

__all__ = [
    "DEFAULT_TIMEOUT",
    "WORKER",
    "Side",
    "SideResult",
    "list_benchmarks",
    "round_cpus",
    "run_lockstep",
    "schedule",
]

#: The worker script, run as a file so that the benchmarked environment needs
#: only asv_runner, not this version of jaxbench.
WORKER = Path(__file__).with_name("worker.py")

#: Seconds a worker may take to answer, as asv's default benchmark ``timeout``.
DEFAULT_TIMEOUT = 60.0


@dataclass(frozen=True)
class Side:
    """One side of a comparison: a Python with the commit installed, and the benchmarks."""

    label: str
    python: str
    benchmarks: Path
    #: The worker script; another one speaking the same protocol may stand in
    #: (``bench/bench_fidelity.py`` times a bare loop that way).
    worker: Path = WORKER


@dataclass(frozen=True)
class SideResult:
    """What one side recorded for one benchmark and parameter set.

    ``samples`` are seconds per call in the order taken: round by round,
    ``per_round`` each. ``failure`` is set (and ``samples`` empty) when the
    benchmark failed on this side; ``skip`` when asv would skip it.
    """

    samples: tuple[float, ...] = ()
    number: int = 0
    failure: str = ""
    skip: str = ""


def schedule(per_round: int, round_index: int) -> list[tuple[int, int]]:
    """Order of sides (0 = base, 1 = head) within each step of a round.

    The side that goes first alternates from step to step, and the first
    step's order alternates from round to round, so neither side is always
    measured right after the other.
    """
    steps = []
    for step in range(per_round):
        steps.append((0, 1) if (step + round_index) % 2 == 0 else (1, 0))
    return steps


class WorkerError(JaxbenchError):
    """A worker process that failed or broke the protocol."""


class _Worker:
    """A live worker process speaking JSON lines."""

    def __init__(self, side: Side, stderr: IO[str], cpus: tuple[int, ...] = ()) -> None:
        self.side = side
        self._stderr = stderr
        pin = [",".join(str(c) for c in cpus)] if cpus else []
        try:
            self.proc = subprocess.Popen(
                [side.python, str(side.worker), str(side.benchmarks), *pin],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                bufsize=1,
            )
        except OSError as exc:
            raise UsageError(
                f"cannot start the {side.label} Python {side.python!r}: "
                f"{exc.strerror or exc}; give the interpreter of an environment "
                "where that commit and asv_runner are installed"
            ) from None

    def send(self, request: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._died() from None

    def receive(self, timeout: float | None = None) -> dict[str, Any]:
        """The next answer; a worker silent for ``timeout`` seconds is killed."""
        assert self.proc.stdout is not None
        # One answer per request, so nothing is left in the reader's buffer
        # between answers and select() on the pipe is accurate.
        if timeout is not None:
            ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
            if not ready:
                self.proc.kill()
                self.proc.wait()
                raise WorkerError(
                    f"{self.side.label} worker: no answer within {timeout:g} s "
                    "(the benchmark's timeout); killed"
                )
        line = self.proc.stdout.readline()
        if not line:
            raise self._died()
        try:
            answer = json.loads(line)
        except ValueError:
            raise WorkerError(
                f"{self.side.label} worker wrote {line[:80]!r}, not a protocol line"
            ) from None
        if not isinstance(answer, dict):
            raise WorkerError(f"{self.side.label} worker answered {answer!r}")
        if "error" in answer:
            raise WorkerError(str(answer["error"]))
        return answer

    def ask(self, request: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        self.send(request)
        return self.receive(timeout)

    def _died(self) -> WorkerError:
        self.proc.wait(timeout=30)
        self._stderr.flush()
        self._stderr.seek(0)
        lines = [ln.strip() for ln in self._stderr.read().splitlines() if ln.strip()]
        last = lines[-1] if lines else "no output"
        return WorkerError(
            f"{self.side.label} worker ({self.side.python}) exited with status "
            f"{self.proc.returncode}: {last}"
        )

    def close(self) -> None:
        """End the worker (EOF on its stdin ends it) and release both pipes."""
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def round_cpus(per_round_cpus: int, round_index: int) -> tuple[int, ...]:
    """The CPUs both workers of a round are pinned to; () means no pinning.

    Rotates over the CPUs this process may run on, so that rounds sample
    every CPU alike. No pinning where the OS has no affinity call, or when
    ``per_round_cpus`` is 0 or covers every CPU.
    """
    if per_round_cpus <= 0 or not hasattr(os, "sched_getaffinity"):
        return ()
    allowed = sorted(os.sched_getaffinity(0))
    if per_round_cpus >= len(allowed):
        return ()
    start = (round_index * per_round_cpus) % len(allowed)
    return tuple((allowed + allowed)[start : start + per_round_cpus])


@contextmanager
def _workers(sides: tuple[Side, ...], cpus: tuple[int, ...] = ()) -> Iterator[list[_Worker]]:
    with ExitStack() as stack:
        workers = []
        for side in sides:
            err = stack.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8"))
            worker = _Worker(side, err, cpus)
            stack.callback(worker.close)
            workers.append(worker)
        yield workers


def list_benchmarks(side: Side) -> list[dict[str, Any]]:
    """The asv time benchmarks under ``side.benchmarks``, as asv_runner describes them."""
    if not side.benchmarks.is_dir():
        raise UsageError(
            f"{side.benchmarks}: no such benchmark directory; give the suite's folder "
            "(asv.conf.json's benchmark_dir)"
        )
    with _workers((side,)) as (worker,):
        try:
            found = worker.ask({"op": "list"}, DEFAULT_TIMEOUT * 5)["benchmarks"]
        except WorkerError as exc:
            raise UsageError(
                f"cannot list the benchmarks in {side.benchmarks}: {exc}; "
                "check that the suite imports in that environment (asv check)"
            ) from None
        worker.ask({"op": "close"}, DEFAULT_TIMEOUT)
    return [b for b in found if isinstance(b, dict)]


@dataclass
class _Collected:
    samples: list[float]
    number: int = 0
    failure: str = ""
    skip: str = ""


def run_lockstep(
    base: Side,
    head: Side,
    name: str,
    param_idx: int | None,
    *,
    rounds: int,
    per_round: int,
    cpus: int = 1,
    timeout: float = DEFAULT_TIMEOUT,
) -> tuple[SideResult, SideResult]:
    """Sample one benchmark (and parameter set) at base and head, in lockstep.

    A side that fails (a wrong answer, an exception, a recompilation caught
    by teardown, no answer within ``timeout`` seconds, as asv's benchmark
    ``timeout``) or skips stops being sampled; the other goes on alone, so
    its figure is still recorded.
    """
    if rounds < 1 or per_round < 1:
        raise ValueError("rounds and per_round must be >= 1")
    collected = [_Collected([]), _Collected([])]
    for round_index in range(rounds):
        live = [i for i in (0, 1) if not (collected[i].failure or collected[i].skip)]
        if not live:
            break
        _one_round(
            (base, head),
            collected,
            live,
            name,
            param_idx,
            per_round,
            round_index,
            round_cpus(cpus, round_index),
            timeout,
        )
    out = []
    for c in collected:
        samples = () if c.failure or c.skip else tuple(c.samples)
        out.append(SideResult(samples, c.number, c.failure, c.skip))
    return out[0], out[1]


def _one_round(
    sides: tuple[Side, Side],
    collected: list[_Collected],
    live: list[int],
    name: str,
    param_idx: int | None,
    per_round: int,
    round_index: int,
    cpus: tuple[int, ...],
    timeout: float,
) -> None:
    # The side started first alternates too (it may get the better memory, or CPU).
    order = live if round_index % 2 == 0 else live[::-1]
    with _workers(tuple(sides[i] for i in order), cpus) as workers:
        by_side = dict(sorted(zip(order, workers, strict=True)))
        # Load both at once (each compiles and checks its answer), then sample.
        for worker in workers:
            worker.send({"op": "load", "name": name, "param_idx": param_idx})
        for i, worker in list(by_side.items()):
            try:
                answer = worker.receive(timeout)
            except WorkerError as exc:
                collected[i].failure = str(exc)
                del by_side[i]
                continue
            if "skip" in answer:
                collected[i].skip = str(answer["skip"])
                del by_side[i]
                continue
            number = int(answer.get("number", 0))
            if collected[i].number and number != collected[i].number:
                collected[i].failure = "the benchmark's number changed between rounds"
                del by_side[i]
                continue
            collected[i].number = number
        for step in schedule(per_round, round_index):
            for i in step:
                worker_or_none = by_side.get(i)
                if worker_or_none is None:
                    continue
                try:
                    sample = worker_or_none.ask({"op": "sample", "count": 1}, timeout)["samples"]
                except WorkerError as exc:
                    collected[i].failure = str(exc)
                    del by_side[i]
                    continue
                collected[i].samples.extend(float(s) for s in sample)
        for i, worker in by_side.items():
            try:
                worker.ask({"op": "close"}, timeout)  # teardown: the recompilation guard
            except WorkerError as exc:
                collected[i].failure = str(exc)
