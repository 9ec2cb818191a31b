"""Base and head timed side by side: two live processes, sampled in turn.

On a shared machine the speed of a warm JAX call drifts by tens of percent
from second to second and from process to process (``docs/detection-power.md``),
far more than the 5 % a review must see. ``asv run --interleave-rounds``
alternates whole processes, seconds apart, so the drift falls on base and
head unequally. Here both sides are alive at once: a *round* starts one
worker process per side (``worker.py``, run by each side's Python),
then, benchmark after benchmark, asks them for one asv sample each, in turn,
``per_round`` times (the side that goes first alternates), so every base
sample has a head sample taken within milliseconds of it. One worker pair
serves every benchmark of the suite in a round (:func:`run_lockstep_suite`):
jax is imported once per process, not once per benchmark. Rounds are
repeated in fresh processes, because a process keeps some of its own speed
for its whole life.

With ``Side.forkserver`` (asv.conf.json's ``"launch_method": "forkserver"``)
each round starts a server per side that imports the suite (``worker.py
--serve``, pinned to the round's CPUs) and forks the round's worker from it,
which pins itself before jax's backend starts: a fresh process, as asv's
forkserver starts a benchmark. A server serves one round only: rounds forked
from one server kept for the whole run were not independent (an A/A
experiment in ``docs/measured.md``: their run means spread 1.5 times the
standard error the rounds claimed, a new interpreter per round 0.7 times),
and the paired test counts the rounds as independent units. ``parallel``
rounds run at once, each on CPUs of its own (two on a 2-core machine at one
CPU a round).

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
import signal
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from jaxbench.errors import JaxbenchError, UsageError

__all__ = [
    "COMPILE_CACHE_VARIABLE",
    "DEFAULT_TIMEOUT",
    "WORKER",
    "Item",
    "Side",
    "SideResult",
    "compile_cache_environ",
    "concurrent_rounds",
    "list_benchmarks",
    "round_cpus",
    "rounds_beyond",
    "run_lockstep",
    "run_lockstep_suite",
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
    #: Extra environment variables of this side's workers (e.g. a
    #: ``PYTHONPATH`` that puts this side's commit in front of the installed one).
    environ: tuple[tuple[str, str], ...] = ()
    #: Fork each round's worker from a server that imported the suite once
    #: (``worker.py --serve``), as asv's ``forkserver`` launch method does;
    #: False starts a new interpreter per round, as ``spawn``.
    forkserver: bool = False


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


def rounds_beyond(base: SideResult, head: SideResult, *, rounds: int, per_round: int) -> int:
    """The rounds one benchmark took past its first look of ``rounds`` rounds of
    ``per_round`` samples a side (its second look): 0 where it stopped there."""
    taken = max(len(base.samples), len(head.samples))
    return max(0, taken - rounds * per_round) // per_round


#: jax's persistent compilation cache, as environment variables every jax
#: version in use reads at import; a minimum compile time of 0 and any entry
#: size, so that every program of the suite is kept.
COMPILE_CACHE_VARIABLE = "JAX_COMPILATION_CACHE_DIR"


def compile_cache_environ(
    directory: str, environ: Mapping[str, str]
) -> tuple[tuple[str, str], ...]:
    """Worker variables that share one jax compilation cache between rounds.

    Each round starts fresh worker processes, which compile every benchmark
    again before its first sample (most of a round's wall time for a suite of
    small programs); with the cache, the rounds after the first load the
    compiled executables instead. Warm samples time the executable, never the
    compilation, and base and head read the cache alike. None where the
    caller already names a cache (``JAX_COMPILATION_CACHE_DIR`` set): theirs
    is used as is.
    """
    if environ.get(COMPILE_CACHE_VARIABLE):
        return ()
    return (
        (COMPILE_CACHE_VARIABLE, directory),
        ("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0"),
        ("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "-1"),
    )


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

    def __init__(
        self, side: Side, stderr: IO[str], cpus: tuple[int, ...] = (), *, serve: bool = False
    ) -> None:
        self.side = side
        self._stderr = stderr
        pin = [",".join(str(c) for c in cpus)] if cpus else []
        args = ["--serve"] if serve else []
        args += [str(side.benchmarks), *pin]
        try:
            self.proc = subprocess.Popen(
                [side.python, str(side.worker), *args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                bufsize=1,
                env={**os.environ, **dict(side.environ)} if side.environ else None,
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
        answer = self.read(timeout)
        if "error" in answer:
            raise WorkerError(str(answer["error"]))
        return answer

    def silent(self, timeout: float | None) -> bool:
        """True when no answer came within ``timeout`` seconds."""
        assert self.proc.stdout is not None
        # One answer per request (a fork server's "exited" line is read at
        # once after the answer before it), so nothing is left in the
        # reader's buffer between answers and select() on the pipe is accurate.
        if timeout is None:
            return False
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        return not ready

    def read(self, timeout: float | None = None) -> dict[str, Any]:
        """The next protocol line, errors included; a worker silent for ``timeout`` is killed."""
        assert self.proc.stdout is not None
        if self.silent(timeout):
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
        return answer

    def ask(self, request: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        self.send(request)
        return self.receive(timeout)

    def _died(self) -> WorkerError:
        self.proc.wait(timeout=30)
        return self.exited(self.proc.returncode)

    def exited(self, status: int | None) -> WorkerError:
        """The error of a worker that ended with ``status``, with its last line of output."""
        self._stderr.flush()
        self._stderr.seek(0)
        lines = [ln.strip() for ln in self._stderr.read().splitlines() if ln.strip()]
        self._stderr.seek(0, os.SEEK_END)
        last = lines[-1] if lines else "no output"
        return WorkerError(
            f"{self.side.label} worker ({self.side.python}) exited with status {status}: {last}"
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


class _Forked:
    """A worker forked by a fork server (``worker.py --serve``), on the server's pipes.

    It speaks the worker protocol; when it ends (``close``, a failure, a
    crash, or killed for silence) the server answers ``{"exited": status}``,
    which is read here, so the next fork starts from an empty pipe.
    """

    def __init__(self, server: _Worker, cpus: tuple[int, ...]) -> None:
        self._server = server
        self.side = server.side
        self._ended = False
        server.send({"op": "fork", "cpus": ",".join(str(c) for c in cpus)})
        answer = server.receive(DEFAULT_TIMEOUT)
        if "forked" not in answer:
            raise WorkerError(f"{self.side.label} fork server answered {answer!r}")
        self.pid = int(answer["forked"])

    def send(self, request: dict[str, Any]) -> None:
        if self._ended:
            raise WorkerError(f"{self.side.label} worker has ended")
        self._server.send(request)

    def receive(self, timeout: float | None = None) -> dict[str, Any]:
        if self._server.silent(timeout):
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            self._end()
            raise WorkerError(
                f"{self.side.label} worker: no answer within {timeout:g} s "
                "(the benchmark's timeout); killed"
            )
        answer = self._server.read()
        if "exited" in answer:  # it ended without answering
            self._ended = True
            raise self._server.exited(int(answer["exited"]))
        if "error" in answer:  # it reported, then ends
            self._end()
            raise WorkerError(str(answer["error"]))
        return answer

    def ask(self, request: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        self.send(request)
        answer = self.receive(timeout)
        if request.get("op") == "close":
            self._end()
        return answer

    def _end(self) -> None:
        """Read the server's line for this worker's end (it has ended or is ending)."""
        if not self._ended:
            self._ended = True
            # No select() here: that line may already sit in the reader's buffer,
            # read with the answer before it; the server writes it at the end.
            answer = self._server.read()
            if "exited" not in answer:
                raise WorkerError(f"{self.side.label} fork server answered {answer!r}")

    def close(self) -> None:
        """End the worker if it is still serving; the server stays, for the next fork."""
        if not self._ended:
            with contextlib.suppress(WorkerError):
                self.ask({"op": "close"}, DEFAULT_TIMEOUT)


#: Starts side ``i``'s worker in one round (its processes end with the round).
_Start = Callable[[int], "_Worker | _Forked"]


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
            worker = _Worker(side, _stderr_file(stack), cpus)
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

    @property
    def done(self) -> bool:
        return bool(self.failure or self.skip)

    def fresh(self) -> _Collected:
        """An empty copy for one round: no samples, this one's state otherwise."""
        return _Collected([], self.number, self.failure, self.skip)


@dataclass(frozen=True)
class Item:
    """One benchmark and parameter set to sample, and its asv ``timeout`` in seconds."""

    name: str
    param_idx: int | None = None
    timeout: float = DEFAULT_TIMEOUT

    @property
    def label(self) -> str:
        return self.name if self.param_idx is None else f"{self.name}-{self.param_idx}"


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
    (outcome,) = run_lockstep_suite(
        base,
        head,
        [Item(name, param_idx, timeout)],
        rounds=rounds,
        per_round=per_round,
        cpus=cpus,
    )
    return outcome


def run_lockstep_suite(
    base: Side,
    head: Side,
    items: Sequence[Item],
    *,
    rounds: int,
    per_round: int,
    cpus: int = 1,
    progress: Callable[[int, int], None] | None = None,
    together: bool = False,
    more_rounds: int = 0,
    more: Callable[[int, SideResult, SideResult], bool] | None = None,
    parallel: int = 1,
    keep_going: Callable[[int], bool] | None = None,
) -> list[tuple[SideResult, SideResult]]:
    """Sample every item at base and head, in lockstep; one worker pair per round.

    Each round starts one process per side and lets the pair serve every
    item in turn (load both, sample in turn, release both), starting from a
    different item each round, so no benchmark always runs first in a fresh
    process. A worker that fails an item (it exits after reporting) is
    replaced for the rest of the round; the item stays failed on that side.
    ``progress(round, rounds)`` is called after each round. With
    ``together``, an item that fails or skips on one side is no longer sampled
    on the other either (only pairs are wanted: ``jaxbench pair-history``).

    A second look: after ``rounds``, the items for which
    ``more(index, base_result, head_result)`` is true (index into ``items``)
    get up to ``more_rounds`` further rounds, in fresh worker pairs that serve
    only them; their samples are appended, so the first ``rounds * per_round``
    samples are still the first look's. ``more`` is asked again, with every
    sample so far, after each batch of the second look: an item for which it
    turns false is no longer sampled, and the second look ends when none is.

    ``parallel`` rounds run at once, each pinned to CPUs of its own
    (:func:`concurrent_rounds` says how many fit): the two processes of a
    round still share their CPUs and are sampled within milliseconds of each
    other, so a round's estimate stays side by side; only the rounds, the
    independent units, overlap. Samples are kept in round order, whatever
    order the rounds of a batch finish in. A batch never spans the two looks,
    and the first round runs alone (it fills the compilation cache).

    ``keep_going(rounds_done)``, asked before each batch but the first, ends
    the rounds there when it returns False (a time budget): no further round
    of either look; ``progress`` then reports the rounds done as the whole.
    """
    if rounds < 1 or per_round < 1 or more_rounds < 0 or parallel < 1:
        raise ValueError("rounds, per_round and parallel must be >= 1, more_rounds >= 0")
    return _suite_rounds(
        (base, head),
        items,
        rounds,
        per_round,
        cpus,
        progress,
        together,
        more_rounds,
        more,
        keep_going,
        parallel,
    )


def _round_starter(sides: tuple[Side, Side], stack: ExitStack, cpus: tuple[int, ...]) -> _Start:
    """How one round starts a side's worker: a new process, or a fork from that
    side's server, which the round starts on first use (pinned to the round's
    CPUs) and ends with ``stack``; a server is never shared between rounds."""
    servers: dict[int, _Worker] = {}

    def start(i: int) -> _Worker | _Forked:
        side = sides[i]
        if not side.forkserver:
            return _Worker(side, _stderr_file(stack), cpus)
        server = servers.get(i)
        if server is None or server.proc.poll() is not None:
            server = _Worker(side, _stderr_file(stack), cpus, serve=True)
            stack.callback(server.close)
            servers[i] = server
        return _Forked(server, cpus)

    return start


def _stderr_file(stack: ExitStack) -> IO[str]:
    """A worker's stderr, kept (for its last line in an error) until ``stack`` closes."""
    return stack.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8"))


def _suite_rounds(
    sides: tuple[Side, Side],
    items: Sequence[Item],
    rounds: int,
    per_round: int,
    cpus: int,
    progress: Callable[[int, int], None] | None,
    together: bool,
    more_rounds: int,
    more: Callable[[int, SideResult, SideResult], bool] | None,
    keep_going: Callable[[int], bool] | None,
    parallel: int,
) -> list[tuple[SideResult, SideResult]]:
    collected = [[_Collected([]), _Collected([])] for _ in items]
    chosen = list(range(len(items)))
    total = rounds + more_rounds
    round_index = 0
    while round_index < total:
        if not _wanted(collected, chosen):
            break
        if round_index and keep_going is not None and not keep_going(round_index):
            if progress is not None:
                progress(round_index, round_index)
            break
        # The first round runs alone: it fills the rounds' shared compilation
        # cache, which jax writes without a lock, before any round reads it.
        width = 1 if round_index == 0 else parallel
        end = min(round_index + width, rounds if round_index < rounds else total)
        batch = range(round_index, end)
        copies = _run_batch(sides, items, chosen, collected, per_round, cpus, batch)
        for copy in copies:  # in round order
            _merge(collected, copy)
            if together:
                _together(collected)
        round_index = end
        if rounds <= round_index < total:
            # After the first look and after each batch of the second: choose the
            # items that go on now, so that the progress below already knows
            # whether more rounds follow.
            so_far = _results(collected)
            chosen = [
                i
                for i in chosen
                if more is not None
                and not any(c.done for c in collected[i])
                and more(i, *so_far[i])
            ]
        if progress is not None:
            if round_index >= rounds and not (round_index < total and _wanted(collected, chosen)):
                progress(round_index, round_index)  # no further round: done
            else:
                progress(round_index, rounds if round_index < rounds else total)
    return _results(collected)


def _wanted(collected: list[list[_Collected]], chosen: list[int]) -> bool:
    """Some chosen item is still sampled on a side."""
    return not all(collected[i][0].done and collected[i][1].done for i in chosen)


def concurrent_rounds(per_round_cpus: int) -> int:
    """How many rounds can run at once on CPUs of their own (1 without pinning)."""
    if per_round_cpus <= 0 or not hasattr(os, "sched_getaffinity"):
        return 1
    return max(1, len(os.sched_getaffinity(0)) // per_round_cpus)


def _run_batch(
    sides: tuple[Side, Side],
    items: Sequence[Item],
    chosen: list[int],
    collected: list[list[_Collected]],
    per_round: int,
    cpus: int,
    batch: range,
) -> list[list[list[_Collected]]]:
    """Run the rounds of ``batch`` at once, each into its own copy of ``collected``."""

    def one(round_index: int) -> list[list[_Collected]]:
        copy = [[c.fresh() for c in pair] for pair in collected]
        shift = round_index % len(chosen) if chosen else 0
        order = chosen[shift:] + chosen[:shift]
        _one_round(
            sides,
            [(items[i], copy[i]) for i in order],
            per_round,
            round_index,
            round_cpus(cpus, round_index),
        )
        return copy

    if len(batch) == 1:
        return [one(batch[0])]
    with ThreadPoolExecutor(max_workers=len(batch)) as pool:
        futures = [pool.submit(one, r) for r in batch]
        return [f.result() for f in futures]


def _merge(collected: list[list[_Collected]], copy: list[list[_Collected]]) -> None:
    """Add one round's samples (and any failure or skip) to what was collected."""
    for pair, new in zip(collected, copy, strict=True):
        for mine, theirs in zip(pair, new, strict=True):
            if mine.done:
                continue
            if mine.number and theirs.number and theirs.number != mine.number:
                mine.failure = "the benchmark's number changed between rounds"
                continue
            mine.number = mine.number or theirs.number
            mine.samples.extend(theirs.samples)
            mine.failure = theirs.failure
            mine.skip = theirs.skip


def _together(collected: list[list[_Collected]]) -> None:
    for pair in collected:
        for i in (0, 1):
            other = pair[1 - i]
            if other.done and not pair[i].done:
                side = ("base", "head")[1 - i]
                pair[i].failure = f"not sampled: the {side} side failed or skipped"


def _results(collected: list[list[_Collected]]) -> list[tuple[SideResult, SideResult]]:
    out = []
    for pair in collected:
        sides = []
        for c in pair:
            samples = () if c.done else tuple(c.samples)
            sides.append(SideResult(samples, c.number, c.failure, c.skip))
        out.append((sides[0], sides[1]))
    return out


class _Pair:
    """The round's two workers; a side whose worker failed gets a fresh one on demand."""

    def __init__(self, stack: ExitStack, start: _Start, order: list[int]) -> None:
        self._stack = stack
        self._start = start
        self._workers: dict[int, _Worker | _Forked] = {}
        for i in order:  # the side started first alternates too
            with contextlib.suppress(WorkerError):  # a fork server that failed: at its use
                self.get(i)

    def get(self, i: int) -> _Worker | _Forked:
        worker = self._workers.get(i)
        if worker is None:
            worker = self._start(i)
            self._stack.callback(worker.close)
            self._workers[i] = worker
        return worker

    def live(self, order: list[int]) -> list[_Worker | _Forked]:
        """The workers running now, in ``order``."""
        return [self._workers[i] for i in order if i in self._workers]

    def lost(self, i: int) -> None:
        """Side ``i``'s worker failed (and exits): start another before its next use."""
        worker = self._workers.pop(i, None)
        if worker is not None:
            worker.close()


def _one_round(
    sides: tuple[Side, Side],
    work: list[tuple[Item, list[_Collected]]],
    per_round: int,
    round_index: int,
    cpus: tuple[int, ...],
) -> None:
    order = [0, 1] if round_index % 2 == 0 else [1, 0]
    with ExitStack() as stack:
        pair = _Pair(stack, _round_starter(sides, stack, cpus), order)
        for item, collected in work:
            _one_item(pair, item, collected, per_round, round_index)
        for worker in pair.live(order):  # a lost side's worker is not restarted to close it
            with contextlib.suppress(WorkerError):
                worker.ask({"op": "close"}, DEFAULT_TIMEOUT)


def _one_item(
    pair: _Pair, item: Item, collected: list[_Collected], per_round: int, round_index: int
) -> None:
    live = [i for i in (0, 1) if not collected[i].done]
    if not live:
        return
    order = live if round_index % 2 == 0 else live[::-1]
    # Load both at once (each compiles and checks its answer), then sample.
    loaded: dict[int, _Worker | _Forked] = {}
    sent: dict[int, _Worker | _Forked] = {}
    for i in order:
        try:
            worker = pair.get(i)
            worker.send({"op": "load", "name": item.name, "param_idx": item.param_idx})
        except WorkerError as exc:
            collected[i].failure = str(exc)
            pair.lost(i)
            continue
        sent[i] = worker
    for i, worker in sorted(sent.items()):
        try:
            answer = worker.receive(item.timeout)
        except WorkerError as exc:
            collected[i].failure = str(exc)
            pair.lost(i)
            continue
        if "skip" in answer:
            collected[i].skip = str(answer["skip"])
            _release(pair, i, worker, collected[i], item.timeout)
            continue
        number = int(answer.get("number", 0))
        if collected[i].number and number != collected[i].number:
            collected[i].failure = "the benchmark's number changed between rounds"
            _release(pair, i, worker, collected[i], item.timeout)
            continue
        collected[i].number = number
        loaded[i] = worker
    for step in schedule(per_round, round_index):
        for i in step:
            worker_or_none = loaded.get(i)
            if worker_or_none is None:
                continue
            try:
                sample = worker_or_none.ask({"op": "sample", "count": 1}, item.timeout)
            except WorkerError as exc:
                collected[i].failure = str(exc)
                del loaded[i]
                pair.lost(i)
                continue
            collected[i].samples.extend(float(s) for s in sample["samples"])
    for i, worker in loaded.items():
        _release(pair, i, worker, collected[i], item.timeout)


def _release(
    pair: _Pair, i: int, worker: _Worker | _Forked, collected: _Collected, timeout: float
) -> None:
    """Teardown (the recompilation guard) without ending the process."""
    try:
        worker.ask({"op": "release"}, timeout)
    except WorkerError as exc:
        if not collected.done:
            collected.failure = str(exc)
        pair.lost(i)
