"""First calls of base and head in fresh processes, side by side, into asv result files.

Runs the suite's figures process (the ``setup_cache`` of its ``track_*``
first-call benchmarks) up to ``FirstCallSettings.rounds`` times a side, base
and head in turn (:mod:`jaxbench.lockstep.first_call`), and writes the values
into the two commits' asv result files (created, or updated in place with
asv's own ``Results`` class, written atomically) as the samples of
``track_first_call_seconds`` and its stages, and of what each workload adds
to memory (``track_workload_peak_rss_bytes``,
``track_workload_device_peak_bytes``; left out without ``memory``): pair
``i`` of base and head measured one right after the other. ``compare`` then
tests them pair by pair. A round that failed or skipped on either side is
dropped from both, so the pairs stay pairs; where one side failed every
round (a head whose answer is wrong), the other side keeps its own values,
unpaired, so the row reads failing at that side only.

Sequential rounds: from ``min_rounds`` on, the rounds stop as soon as every
figure is settled (:func:`jaxbench.analyse.sequential.open_rows`: a rule
that adds no false alarm), and as soon as the next round would not end by
``deadline`` (a time budget; never before the paired test's 3). With
``min_rounds == rounds`` (``jaxbench first-call``'s default) every round
runs. ``jaxbench first-call`` and ``jaxbench review`` call
:func:`measure_side_by_side`. Never imports jax.
"""

from __future__ import annotations

import datetime
import math
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jaxbench.analyse.compare import Settings
from jaxbench.analyse.sequential import PairedFigure, open_rows
from jaxbench.analyse.stats import MIN_PAIRED_ROUNDS, SECOND_LOOK_BELOW
from jaxbench.errors import UsageError
from jaxbench.jobs.sides import Sides
from jaxbench.kinds import COMPILE_TRACKS, WORKLOAD_MEMORY_TRACKS
from jaxbench.lockstep.first_call import FirstCalls, measure_first_calls
from jaxbench.lockstep.quiet import timed_quietly
from jaxbench.render.progress import Progress
from jaxbench.store.asv_results import load_or_new, save_atomic

__all__ = [
    "FirstCallDone",
    "FirstCallSettings",
    "kept_values",
    "measure_side_by_side",
    "paired_values",
]


@dataclass(frozen=True)
class FirstCallSettings:
    """How many fresh processes a side, and what they measure."""

    #: the most rounds (one fresh process a side each)
    rounds: int = 10
    #: rounds before the sequential rule may stop them (``rounds``: every round runs)
    min_rounds: int = 10
    #: seconds one figures process may take
    timeout: float = 600.0
    #: what each workload adds to memory (track_workload_*), too
    memory: bool = True
    #: the p-value at and above which a figure counts as settled (at least compare's alpha)
    below: float = SECOND_LOOK_BELOW
    #: the gates the sequential rule relaxes (compare's defaults)
    compare: Settings = field(default_factory=Settings)


#: Why the rounds of a suite without first-call benchmarks end after one.
NO_FIRST_CALLS = "the suite has no first-call benchmark"


def _nothing_found(base: FirstCalls, head: FirstCalls) -> bool:
    """Neither side's suite has a first-call benchmark (plain asv ``time_*`` ones)."""
    return not base.values and not head.values


@dataclass(frozen=True)
class FirstCallDone:
    """What a side-by-side run of first calls did."""

    #: first-call benchmarks written (each with all its parameter sets)
    benchmarks: int
    rounds: int
    #: why the rounds ended before ``rounds`` ("" when every round ran)
    stopped: str
    #: the two sides' result files (none when nothing was measured)
    written: tuple[Path, ...]
    seconds: float
    #: what each side measured, every round (base, head)
    calls: tuple[FirstCalls, FirstCalls] = (FirstCalls(), FirstCalls())


def paired_values(
    base: list[float | None], head: list[float | None]
) -> tuple[list[float], list[float], str]:
    """The rounds where both sides have a finite value, and why there are none.

    The reason is ``"skip"`` when a side skipped every round, ``"failed"``
    when a side never gave a value, else ``""``.
    """
    pairs = [
        (b, h)
        for b, h in zip(base, head, strict=False)
        if b is not None and h is not None and math.isfinite(b) and math.isfinite(h)
    ]
    if pairs:
        return [b for b, _ in pairs], [h for _, h in pairs], ""
    for side in (base, head):
        if side and all(v is not None and math.isnan(v) for v in side):
            return [], [], "skip"
    return [], [], "failed"


def _finite(values: list[float | None]) -> list[float]:
    return [v for v in values if v is not None and math.isfinite(v)]


def kept_values(
    base: list[float | None], head: list[float | None]
) -> tuple[list[float], list[float], str]:
    """What each side's result keeps: the paired rounds (:func:`paired_values`).

    Where there are none because one side failed every round (the head's
    answer is wrong, say), the other side's own values stand, unpaired:
    writing a failure there too would lose them and read "still failing".
    Where both sides gave values but never in the same round, neither is to
    blame and both stay failed.
    """
    kept_b, kept_h, reason = paired_values(base, head)
    if reason == "failed":
        if not _finite(head):
            kept_b = _finite(base)
        if not _finite(base):
            kept_h = _finite(head)
    return kept_b, kept_h, reason


def _result(samples: list[list[float]], reasons: list[str], errors: list[str]) -> Any:
    from asv.runner import BenchmarkResult

    values: list[float | None] = []
    for kept, reason in zip(samples, reasons, strict=True):
        if kept:
            values.append(statistics.median(kept))
        else:
            values.append(math.nan if reason == "skip" else None)
    return BenchmarkResult(
        result=values,
        samples=[kept or None for kept in samples],
        number=[None] * len(values),
        errcode=1 if None in values else 0,
        stderr="\n".join(errors),
        profile=None,
    )


def _add(results: dict[str, Any], base: FirstCalls, head: FirstCalls, started: Any) -> int:
    """Paired values of every benchmark both sides measured, into both result files."""
    written = 0
    for name in sorted(set(base.values) & set(head.values)):
        sides: dict[str, list[list[float]]] = {"base": [], "head": []}
        reasons = []
        for b, h in zip(base.values[name], head.values[name], strict=False):
            kept_b, kept_h, reason = kept_values(b, h)
            sides["base"].append(kept_b)
            sides["head"].append(kept_h)
            reasons.append(reason)
        for label, calls in (("base", base), ("head", head)):
            info = {"name": name, "version": calls.versions[name], "params": calls.params[name]}
            results[label].add_result(
                info,
                _result(sides[label], reasons, calls.errors.get(name, [])),
                started_at=started,
                record_samples=True,
            )
        written += 1
    return written


def figures_so_far(base: FirstCalls, head: FirstCalls) -> list[PairedFigure]:
    """Every figure both sides measured, as pairs (one per parameter set)."""
    found = []
    for name in sorted(set(base.values) & set(head.values)):
        for index, (b, h) in enumerate(zip(base.values[name], head.values[name], strict=False)):
            kept_b, kept_h, _ = paired_values(b, h)
            found.append(PairedFigure(name, (str(index),), tuple(kept_b), tuple(kept_h)))
    return found


def _check(settings: FirstCallSettings) -> None:
    if settings.min_rounds < min(MIN_PAIRED_ROUNDS, settings.rounds):
        raise UsageError(
            f"--min-rounds {settings.min_rounds}: the paired test needs {MIN_PAIRED_ROUNDS} "
            f"rounds before the rounds may stop; give {MIN_PAIRED_ROUNDS} or more"
        )
    if settings.below < settings.compare.alpha:
        raise UsageError(
            f"the sequential rule's p-value ({settings.below:g}) is below compare's alpha "
            f"({settings.compare.alpha:g}): a stop could hide a change; raise it"
        )


@timed_quietly  # the rounds hold $JAXBENCH_QUIET_LOCK, the wait moves the deadline
def measure_side_by_side(
    sides: Sides,
    *,
    results: Path,
    machine: str,
    env: str,
    settings: FirstCallSettings,
    deadline: float | None = None,
    job: str = "jaxbench first-call",
    required: bool = True,
) -> FirstCallDone:
    """Measure the first calls of both sides in rounds, into both sides' result files
    (the base's in ``env``, the head's in ``sides.head_env_name`` where it has one).

    ``deadline``: a :func:`time.monotonic` time the rounds should end by; a
    round is started only when the rounds so far say it will end by then
    (:data:`~jaxbench.analyse.stats.MIN_PAIRED_ROUNDS` always run). A suite
    with no first-call benchmark (plain asv ``time_*`` benchmarks) stops after
    one round: a UsageError, or with ``required=False`` nothing measured and
    nothing written."""
    base, head = sides.base, sides.head
    base_commit, head_commit = sides.base_commit, sides.head_commit
    head_env = sides.head_env_name or env
    if base_commit == head_commit and head_env == env:
        raise UsageError("--base-commit and --head-commit are the same; give two commits")
    _check(settings)
    clock = time.perf_counter()
    started = datetime.datetime.now(datetime.UTC)
    progress = Progress(job, settings.rounds, 1, label="round")
    methods = sorted(COMPILE_TRACKS) + (sorted(WORKLOAD_MEMORY_TRACKS) if settings.memory else [])
    stopped: list[str] = []

    def keep_going(done: int, base_calls: FirstCalls, head_calls: FirstCalls) -> bool:
        if _nothing_found(base_calls, head_calls):
            stopped.append(NO_FIRST_CALLS)
            return False
        if done < MIN_PAIRED_ROUNDS:
            return True
        per_round = (time.perf_counter() - clock) / done
        if deadline is not None and time.monotonic() + per_round > deadline:
            stopped.append(f"the time budget ends before round {done + 1}")
            return False
        if done < settings.min_rounds:
            return True
        figures = figures_so_far(base_calls, head_calls)
        if not open_rows(figures, settings.compare, below=settings.below):
            stopped.append(f"every figure settled after {done} rounds")
            return False
        return True

    base_calls, head_calls = measure_first_calls(
        base,
        head,
        methods,
        rounds=settings.rounds,
        timeout=settings.timeout,
        progress=progress.rounds,
        keep_going=keep_going,
    )
    progress.close()
    if not required and _nothing_found(base_calls, head_calls):
        return FirstCallDone(0, 0, NO_FIRST_CALLS, (), time.perf_counter() - clock)
    files = {
        "base": load_or_new(results, machine, base_commit, env),
        "head": load_or_new(results, machine, head_commit, head_env),
    }
    n = _add(files, base_calls, head_calls, started)
    if not n:
        raise UsageError(
            f"no first-call benchmark ({', '.join(sorted(COMPILE_TRACKS))}) found in "
            f"{head.benchmarks}; is it a jaxbench suite (jax_suite)?"
        )
    written = (save_atomic(files["base"], results), save_atomic(files["head"], results))
    rounds = max((len(v) for values in base_calls.values.values() for v in values), default=0)
    seconds = time.perf_counter() - clock
    return FirstCallDone(
        n, rounds, stopped[0] if stopped else "", written, seconds, (base_calls, head_calls)
    )
