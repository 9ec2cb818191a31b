"""The warm times of base and head timed side by side (lockstep) into asv result files.

Each asv time benchmark (and parameter set) is measured in
``AbSettings.rounds`` rounds; a round starts one process per side, which
serve every benchmark in turn, ``per_round`` samples from each side, taken
in turn (:mod:`jaxbench.lockstep.coordinator`). Then a second look: the
benchmarks whose first look is suggestive (paired p-value under 0.1, either
way) get up to ``second_look`` more rounds, in fresh process pairs that serve
only them, in batches; after each batch a benchmark whose rounds so far are
no longer suggestive stops (:func:`jaxbench.analyse.stats.keep_looking`,
:func:`~jaxbench.analyse.stats.look_again`:
``compare --paired`` tests all rounds as one look, which stays valid under
that rule). Under a deadline (``jaxbench review``'s budget) the second look
may take up to ``second_look_in_budget`` rounds instead, as many as the
budget allows: the clock, not the benchmark's p-values, ends it there.

The samples go into the two commits' asv result files (created, or updated
in place with asv's own ``Results`` class, written atomically), so
``compare --paired PER_ROUND`` tests them pair by pair and every other
figure asv recorded in those files is compared as usual. Where the results
directory has no ``<machine>/machine.json`` yet, it is written (with the
host's fingerprint, :mod:`jaxbench.store.machine`). The rounds' processes
share one jax compilation cache (a temporary directory, removed at the end)
unless ``compile_cache`` is off. ``jaxbench ab`` and ``jaxbench review``
call :func:`time_side_by_side`. Never imports jax: the worker processes do.
"""

from __future__ import annotations

import datetime
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from jaxbench.analyse.stats import (
    MIN_PAIRED_ROUNDS,
    keep_looking,
    look_again,
    paired_samples_p_value,
)
from jaxbench.errors import UsageError
from jaxbench.jobs.pair_history import PairSettings
from jaxbench.jobs.sides import Sides
from jaxbench.lockstep.coordinator import (
    Item,
    Side,
    SideResult,
    compile_cache_environ,
    concurrent_rounds,
    list_benchmarks,
    rounds_beyond,
    run_lockstep_suite,
)
from jaxbench.lockstep.listing import items_of, selected
from jaxbench.lockstep.quiet import timed_quietly
from jaxbench.render.progress import Progress
from jaxbench.store.asv_results import load_or_new, save_atomic
from jaxbench.store.machine import probe, write_machine

__all__ = ["PROBE_SAMPLES", "AbDone", "AbSettings", "Size", "describe", "time_side_by_side"]

Say = Callable[[str], None]
#: ``size(sample, rest)`` -> samples a round (see :func:`time_side_by_side`)
Size = Callable[[float, float], int]
#: Samples a side a round of the probe round that sizes the rounds to a budget.
PROBE_SAMPLES = 3


@dataclass(frozen=True)
class AbSettings(PairSettings):
    """How ``jaxbench ab`` samples: a pair's settings, with fewer, longer rounds."""

    #: process pairs of the first look
    rounds: int = 6
    #: further process pairs, at most, for the benchmarks whose first look is suggestive,
    #: while they stay so (asked after each batch); 0: one look
    second_look: int = 6
    #: with a deadline (the review's budget): the second look's most rounds instead,
    #: taken while the budget allows (0: ``second_look``)
    second_look_in_budget: int = 0
    #: samples per side per round, taken in turn (``compare --paired``'s N)
    per_round: int = 100


@dataclass(frozen=True)
class AbDone:
    """What a side-by-side run did."""

    #: the items (benchmark and parameter set) timed
    items: int
    #: the items that got the second look
    looked_again: tuple[str, ...]
    #: the two result files written (base, head)
    written: tuple[Path, Path]
    seconds: float
    #: samples a side a round (``compare --paired``'s N)
    per_round: int


def _probe(base: Side, head: Side, items: list[Item], settings: AbSettings, size: Size) -> int:
    """One round of :data:`PROBE_SAMPLES` samples a side: ``size`` of what it cost."""
    clock = time.monotonic()
    outcomes = run_lockstep_suite(
        base, head, items, rounds=1, per_round=PROBE_SAMPLES, cpus=settings.cpus
    )
    took = time.monotonic() - clock
    sample = 0.0
    for pair in outcomes:
        taken = [s * o.number for o in pair for s in o.samples if math.isfinite(s)]
        if taken:
            sample += statistics.median(taken)
    return size(sample, max(0.0, took - 2 * PROBE_SAMPLES * sample))


def _check_python(side: Side) -> None:
    """Fail early, before anything is printed or run, on a Python that is not there."""
    found = shutil.which(side.python)
    if found is None or not os.access(found, os.X_OK):
        raise UsageError(
            f"cannot start the {side.label} Python {side.python!r}: not an executable; "
            "give the interpreter of an environment where that commit and asv_runner "
            "are installed"
        )


def _fmt_us(seconds: float) -> str:
    return f"{seconds * 1e6:.2f} us" if math.isfinite(seconds) else "-"


def describe(outcome: SideResult) -> str:
    """``median 37.02 us (100 samples)``, or why a side has no samples."""
    if outcome.failure:
        return f"failed ({outcome.failure})"
    if outcome.skip:
        return f"skipped ({outcome.skip})"
    median = statistics.median(outcome.samples)
    return f"median {_fmt_us(median)} ({len(outcome.samples)} samples)"


def _benchmark_result(outcomes: list[SideResult]) -> Any:
    from asv.runner import BenchmarkResult

    values: list[float | None] = []
    samples: list[list[float] | None] = []
    numbers: list[int | None] = []
    errors = []
    for outcome in outcomes:
        if outcome.failure:
            values.append(None)
            samples.append(None)
            numbers.append(None)
            errors.append(outcome.failure)
        elif outcome.skip:
            values.append(math.nan)
            samples.append(None)
            numbers.append(None)
        else:
            values.append(statistics.median(outcome.samples))  # asv recomputes it
            samples.append(list(outcome.samples))
            numbers.append(outcome.number)
    return BenchmarkResult(
        result=values,
        samples=samples,
        number=numbers,
        errcode=1 if errors else 0,
        stderr="\n".join(errors),
        profile=None,
    )


@timed_quietly  # the rounds hold $JAXBENCH_QUIET_LOCK, the wait moves the deadline
def time_side_by_side(
    sides: Sides,
    *,
    results: Path,
    machine: str,
    env: str,
    settings: AbSettings,
    say: Say,
    job: str = "jaxbench ab",
    deadline: float | None = None,
    size: Size | None = None,
) -> AbDone:
    """Time every selected warm time of both sides, in rounds, into both sides' results
    (the base's in ``env``, the head's in ``sides.head_env_name`` where it has one).

    ``deadline``: a :func:`time.monotonic` time the rounds should end by; from
    :data:`~jaxbench.analyse.stats.MIN_PAIRED_ROUNDS` rounds on, a batch of
    rounds starts only when the last one says it will end by then (a budget
    that ends the first look early also leaves out the second), and the second
    look takes up to ``settings.second_look_in_budget`` rounds where set.

    ``size``: the samples a round are chosen after a probe round of
    :data:`PROBE_SAMPLES` samples a side (which also fills the compilation
    cache; its samples are not kept): ``size(sample, rest)`` gets what one
    sample of every item costs a side and what the probe round took beside
    its samples, in seconds, and returns the samples a round."""
    base, head = sides.base, sides.head
    base_commit, head_commit = sides.base_commit, sides.head_commit
    if settings.cpus < 0:
        raise UsageError(f"--cpus must be 0 (no pinning) or more, got {settings.cpus}")
    _check_python(base)
    _check_python(head)
    if settings.rounds < MIN_PAIRED_ROUNDS:
        say(
            f"jaxbench: warning: --rounds {settings.rounds}: compare --paired's paired t-test "
            f"needs {MIN_PAIRED_ROUNDS} rounds or more (6 recommended); it will call every "
            "warm time it does not look at again inconclusive"
        )
    head_env = sides.head_env_name or env
    if base_commit == head_commit and head_env == env:
        raise UsageError("--base-commit and --head-commit are the same; give two commits")
    listed = selected(list_benchmarks(head), list(settings.bench))
    if not listed:
        raise UsageError(
            f"no asv time benchmark in {head.benchmarks} matches {list(settings.bench)}; "
            "check the --bench pattern (asv check lists the benchmarks)"
        )
    items = [item for _, item in items_of(listed)]
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    files = {
        "base": load_or_new(results, machine, base_commit, env, python),
        "head": load_or_new(results, machine, head_commit, head_env, python),
    }
    started = datetime.datetime.now(datetime.UTC)
    clock = time.perf_counter()
    last_batch = [time.monotonic()]
    cut: list[int] = []

    def keep_going(done: int) -> bool:
        now = time.monotonic()
        took, last_batch[0] = now - last_batch[0], now
        if deadline is None or done < MIN_PAIRED_ROUNDS or now + took <= deadline:
            return True
        cut.append(done)
        return False

    with tempfile.TemporaryDirectory(prefix="jaxbench-ab-jax-cache-") as cache:
        shared = compile_cache_environ(cache, os.environ) if settings.compile_cache else ()
        base = replace(base, environ=(*base.environ, *shared))
        head = replace(head, environ=(*head.environ, *shared))
        if size is not None:
            per_round = _probe(base, head, items, settings, size)
            if per_round != settings.per_round:
                say(f"{job}: {per_round} samples a round, not {settings.per_round}: the budget")
            settings = replace(settings, per_round=per_round)
        second_look = settings.second_look
        if deadline is not None and settings.second_look_in_budget:
            second_look = settings.second_look_in_budget
        looks = f" (+{second_look} where suggestive)" if second_look else ""
        say(
            f"{job}: {len(listed)} benchmark(s), {settings.rounds} rounds{looks} x "
            f"{settings.per_round} samples a side, base {base_commit[:8]} / head "
            f"{head_commit[:8]}"
        )
        n = settings.per_round

        first_look = settings.rounds * n

        def more(_index: int, base_result: SideResult, head_result: SideResult) -> bool:
            so_far = paired_samples_p_value(base_result.samples, head_result.samples, n)
            if so_far is None:
                return False
            if min(len(base_result.samples), len(head_result.samples)) <= first_look:
                return look_again(so_far)
            return keep_looking(so_far)

        progress = Progress(job, settings.rounds, 1, label="round", deadline=deadline)
        last_batch[0] = time.monotonic()
        outcomes = run_lockstep_suite(
            base,
            head,
            items,
            rounds=settings.rounds,
            per_round=settings.per_round,
            cpus=settings.cpus,
            progress=progress.rounds,
            parallel=settings.parallel or concurrent_rounds(settings.cpus),
            more_rounds=second_look,
            more=more,
            keep_going=keep_going,
        )
    progress.close()
    if cut:
        say(f"{job}: the time budget ends the rounds after {cut[0]}")
    beyond = [
        rounds_beyond(b, h, rounds=settings.rounds, per_round=settings.per_round)
        for b, h in outcomes
    ]
    again = {items[i].label: extra for i, extra in enumerate(beyond) if extra}
    if second_look:
        say(
            f"{job}: second look (up to {second_look} more rounds while suggestive) for "
            f"{len(again)} of {len(items)} benchmark(s)"
            + "".join(f"\n  {label}: {more_rounds} more" for label, more_rounds in again.items())
        )
    seconds = time.perf_counter() - clock
    duration = seconds / max(1, len(items))
    by_item = dict(zip(items, outcomes, strict=True))
    for bench in listed:
        name = str(bench["name"])
        mine = [(item, by_item[item]) for item in items if item.name == name]
        for item, (b, h) in mine:
            say(f"  {item.label}: base {describe(b)}, head {describe(h)}")
        info = {"name": name, "version": bench.get("version"), "params": bench.get("params")}
        for side, pick in (("base", 0), ("head", 1)):
            files[side].add_result(
                info,
                _benchmark_result([pair[pick] for _, pair in mine]),
                started_at=started,
                duration=duration * len(mine),
                record_samples=True,
            )
    written = (save_atomic(files["base"], results), save_atomic(files["head"], results))
    for path in written:
        say(f"{job}: wrote {path}")
    if not (results / machine / "machine.json").is_file():
        # So that 'compare BASE HEAD --results DIR' finds the results: asv's
        # machine.json, as 'jaxbench machine' writes it (~/.asv-machine.json untouched).
        machine_json, _ = write_machine(probe(machine), results, register=False)
        say(f"{job}: wrote {machine_json}")
    return AbDone(len(items), tuple(again), written, seconds, settings.per_round)
