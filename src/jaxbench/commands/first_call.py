"""``jaxbench first-call``: first calls of base and head in fresh processes, side by side.

Runs the suite's figures process (the ``setup_cache`` of its ``track_*``
first-call benchmarks) ``--rounds`` times a side, base and head in turn
(:mod:`jaxbench.lockstep.first_call`), and writes the values into the two
commits' asv result files (created, or updated in place with asv's own
``Results`` class, written atomically) as the samples of
``track_first_call_seconds`` and its stages, and of what each workload adds
to memory (``track_workload_peak_rss_bytes``, ``track_workload_device_peak_bytes``;
``--no-memory`` leaves them out): pair ``i`` of base and head measured one
right after the other. ``jaxbench compare`` then tests them pair by pair (a
paired t-test, and ``--first-call-factor`` or the memory gate) instead of
showing one value a side as "changed (not tested)". A round that failed or
skipped on either side is dropped from both, so the pairs stay pairs; where
one side failed every round (a head whose answer is wrong), the other side
keeps its own values, unpaired, so the row reads failing at that side only.

Cost: one process a side a round (this project's suite: about 4 s each on a
quiet 2-core machine, so 10 rounds take about 80 s). Never imports jax.
"""

from __future__ import annotations

import argparse
import datetime
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from jaxbench.commands import add_side_arguments, open_sides_of, positive_int
from jaxbench.errors import UsageError
from jaxbench.kinds import COMPILE_TRACKS, WORKLOAD_MEMORY_TRACKS
from jaxbench.lockstep.coordinator import Side
from jaxbench.lockstep.first_call import FirstCalls, measure_first_calls
from jaxbench.render.progress import Progress
from jaxbench.store.asv_results import load_or_new, save_atomic

__all__ = ["HELP", "add_arguments", "kept_values", "paired_values", "run"]

HELP = "time first calls of base and head in fresh processes side by side, for compare"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_side_arguments(parser)
    parser.add_argument(
        "--rounds",
        type=positive_int,
        default=10,
        help="fresh processes a side, in turn (default: %(default)s)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        help="seconds one figures process may take (default: %(default)s)",
    )
    parser.add_argument(
        "--no-memory",
        dest="memory",
        action="store_false",
        help="leave out what each workload adds to memory (track_workload_*), measured "
        "by default in a fresh process of its own per parameter set, each round",
    )
    parser.add_argument("--machine", required=True, help="machine name for the results")
    parser.add_argument(
        "--env",
        help="the asv environment both sides run in and the results' environment name "
        "(default: the only one asv built; needed with --base-python and --head-python)",
    )
    parser.add_argument(
        "--results", type=Path, default=Path("results"), help="asv results dir (default: results)"
    )


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


def run(args: argparse.Namespace) -> int:
    with open_sides_of(args) as sides:
        args.base_commit, args.head_commit = sides.base_commit, sides.head_commit
        args.env = sides.env_name or args.env
        if not args.env:
            raise UsageError(
                "--env: give the environment name of the results (the asv environment "
                "the Pythons match)"
            )
        return _run(args, sides.base, sides.head)


def _run(args: argparse.Namespace, base: Side, head: Side) -> int:
    if args.base_commit == args.head_commit:
        raise UsageError("--base-commit and --head-commit are the same; give two commits")
    clock = time.perf_counter()
    started = datetime.datetime.now(datetime.UTC)
    progress = Progress("jaxbench first-call", args.rounds, 1, label="round")
    methods = sorted(COMPILE_TRACKS) + (sorted(WORKLOAD_MEMORY_TRACKS) if args.memory else [])
    base_calls, head_calls = measure_first_calls(
        base,
        head,
        methods,
        rounds=args.rounds,
        timeout=args.timeout,
        progress=progress.rounds,
    )
    progress.close()
    results = {
        "base": load_or_new(args.results, args.machine, args.base_commit, args.env),
        "head": load_or_new(args.results, args.machine, args.head_commit, args.env),
    }
    n = _add(results, base_calls, head_calls, started)
    if not n:
        raise UsageError(
            f"no first-call benchmark ({', '.join(sorted(COMPILE_TRACKS))}) found in "
            f"{head.benchmarks}; is it a jaxbench suite (jax_suite)?"
        )
    written = [save_atomic(results[side], args.results) for side in ("base", "head")]
    print(
        f"jaxbench first-call: {n} benchmark(s), {args.rounds} rounds a side in "
        f"{time.perf_counter() - clock:.0f} s; wrote {written[0]} and {written[1]}",
        file=sys.stderr,
    )
    return 0
