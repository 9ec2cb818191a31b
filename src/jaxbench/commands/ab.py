"""``jaxbench ab``: time base and head side by side and record asv results.

Each asv time benchmark (and parameter set) is measured in ``--rounds``
rounds; a round starts one process per side, which serve every benchmark in
turn, ``--per-round`` samples from each side, taken in turn
(:mod:`jaxbench.lockstep.coordinator`). Then a second look: the benchmarks
whose first look is suggestive (paired p-value under 0.1, either way) get
``--second-look`` more rounds, in fresh process pairs that serve only them
(:func:`jaxbench.analyse.stats.look_again`: ``compare --paired`` tests all
rounds as one look, which stays valid under that rule). An unchanged pull
request's warm times mostly stop after the first look.

Where the results directory has no ``<machine>/machine.json`` yet, it is
written (with the host's fingerprint, :mod:`jaxbench.store.machine`), so the
directory is usable on its own. The samples go into the two commits' asv
result files (created, or updated in place with asv's own ``Results``
class, written atomically), so ``jaxbench compare BASE HEAD --paired
PER_ROUND`` tests them pair by pair, and every other figure asv recorded in
those files is compared as usual.

The rounds' processes share one jax compilation cache (a temporary
directory, removed at the end; ``--no-compile-cache`` turns it off): a
round's processes then load the programs compiled in the first round
instead of compiling them again, which was most of a round's wall time.
Samples time the compiled executable, never its compilation.

``--base-commit`` and ``--head-commit`` take what ``compare`` takes: a full
hash or any prefix git resolves (the 7 digits ``git log --oneline`` prints),
stored as the full hash asv's result files carry. Each side's Python:
asv's environment (``--env``, or the only one ``asv run`` built), with that
side's commit put in front of the installed one
(:mod:`jaxbench.jobs.sides`, as ``pair-history`` does), so a local
review is ``asv run`` then ``jaxbench ab --base-commit BASE --head-commit
HEAD --machine M``. ``--base-python`` and ``--head-python`` give the Pythons
instead; without an ``asv.conf.json`` both sides run this interpreter, for
benchmarks whose difference lies in the benchmark directories themselves
(``--base-benchmarks``, ``--head-benchmarks``).
Never imports jax: the worker processes do.
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from jaxbench.analyse.stats import (
    MIN_PAIRED_ROUNDS,
    SECOND_LOOK_BELOW,
    look_again,
    paired_samples_p_value,
)
from jaxbench.commands import (
    add_compile_cache_argument,
    add_parallel_argument,
    add_side_arguments,
    non_negative_int,
    open_sides_of,
    positive_int,
)
from jaxbench.errors import UsageError
from jaxbench.lockstep.coordinator import (
    Side,
    SideResult,
    compile_cache_environ,
    concurrent_rounds,
    list_benchmarks,
    run_lockstep_suite,
)
from jaxbench.lockstep.listing import items_of, selected
from jaxbench.render.progress import Progress
from jaxbench.store.asv_results import load_or_new, save_atomic
from jaxbench.store.machine import check_name, probe, write_machine

__all__ = ["HELP", "add_arguments", "run"]

HELP = "time base and head side by side (lockstep) into asv results, for 'compare --paired'"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_side_arguments(parser)
    parser.add_argument(
        "-b",
        "--bench",
        action="append",
        metavar="REGEX",
        help="only time benchmarks whose name matches (as asv run -b; repeatable)",
    )
    parser.add_argument(
        "--rounds",
        type=positive_int,
        default=6,
        help="process pairs of the first look (default: %(default)s)",
    )
    parser.add_argument(
        "--second-look",
        type=non_negative_int,
        default=6,
        metavar="ROUNDS",
        help="further process pairs for the benchmarks whose first look is suggestive "
        f"(paired p < {SECOND_LOOK_BELOW:g}); 0: one look (default: %(default)s)",
    )
    parser.add_argument(
        "--per-round",
        type=positive_int,
        default=100,
        help="samples per side per round, taken in turn (default: %(default)s)",
    )
    parser.add_argument(
        "--cpus",
        type=int,
        default=1,
        help="CPUs both processes of a round are pinned to, rotating between rounds; "
        "0: no pinning (default: %(default)s; see docs/pull-requests.md)",
    )
    add_compile_cache_argument(parser)
    add_parallel_argument(parser)
    parser.add_argument("--machine", required=True, help="machine name for the results")
    parser.add_argument(
        "--env",
        help="the asv environment both sides run in and the results' environment name, "
        "to merge with 'asv run' results (default: the only one asv built; with "
        "--base-python and --head-python: lockstep)",
    )
    parser.add_argument(
        "--results", type=Path, default=Path("results"), help="asv results dir (default: results)"
    )


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


def run(args: argparse.Namespace) -> int:
    check_name(args.machine)
    with open_sides_of(args) as sides:
        args.base_commit, args.head_commit = sides.base_commit, sides.head_commit
        args.env = sides.env_name or args.env or "lockstep"
        return _run(args, sides.base, sides.head)


def _run(args: argparse.Namespace, base: Side, head: Side) -> int:
    if args.cpus < 0:
        raise UsageError(f"--cpus must be 0 (no pinning) or more, got {args.cpus}")
    _check_python(base)
    _check_python(head)
    if args.rounds < MIN_PAIRED_ROUNDS:
        print(
            f"jaxbench: warning: --rounds {args.rounds}: compare --paired's paired t-test "
            f"needs {MIN_PAIRED_ROUNDS} rounds or more (6 recommended); it will call every "
            "warm time it does not look at again inconclusive",
            file=sys.stderr,
        )
    if args.base_commit == args.head_commit:
        raise UsageError("--base-commit and --head-commit are the same; give two commits")
    listed = selected(list_benchmarks(head), args.bench)
    if not listed:
        raise UsageError(
            f"no asv time benchmark in {head.benchmarks} matches {args.bench}; "
            "check the --bench pattern (asv check lists the benchmarks)"
        )
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    results = {
        "base": load_or_new(args.results, args.machine, args.base_commit, args.env, python),
        "head": load_or_new(args.results, args.machine, args.head_commit, args.env, python),
    }
    looks = f" (+{args.second_look} where suggestive)" if args.second_look else ""
    print(
        f"jaxbench ab: {len(listed)} benchmark(s), {args.rounds} rounds{looks} x "
        f"{args.per_round} samples a side, base {args.base_commit[:8]} / head "
        f"{args.head_commit[:8]}",
        file=sys.stderr,
    )
    items = [item for _, item in items_of(listed)]
    looked_again: list[int] = []

    def more(index: int, base_result: SideResult, head_result: SideResult) -> bool:
        first = paired_samples_p_value(base_result.samples, head_result.samples, args.per_round)
        wanted = first is not None and look_again(first)
        if wanted:
            looked_again.append(index)
        return wanted

    started = datetime.datetime.now(datetime.UTC)
    clock = time.perf_counter()
    progress = Progress("jaxbench ab", args.rounds, 1, label="round")
    with tempfile.TemporaryDirectory(prefix="jaxbench-ab-jax-cache-") as cache:
        shared = compile_cache_environ(cache, os.environ) if args.compile_cache else ()
        outcomes = run_lockstep_suite(
            replace(base, environ=(*base.environ, *shared)),
            replace(head, environ=(*head.environ, *shared)),
            items,
            rounds=args.rounds,
            per_round=args.per_round,
            cpus=args.cpus,
            progress=progress.rounds,
            parallel=args.parallel or concurrent_rounds(args.cpus),
            more_rounds=args.second_look,
            more=more,
        )
    progress.close()
    if args.second_look:
        print(
            f"jaxbench ab: second look ({args.second_look} more rounds) for "
            f"{len(looked_again)} of {len(items)} benchmark(s)"
            + "".join(f"\n  {items[i].label}" for i in looked_again),
            file=sys.stderr,
        )
    duration = (time.perf_counter() - clock) / max(1, len(items))
    by_item = dict(zip(items, outcomes, strict=True))
    for bench in listed:
        name = str(bench["name"])
        mine = [(item, by_item[item]) for item in items if item.name == name]
        for item, (b, h) in mine:
            print(f"  {item.label}: base {_describe(b)}, head {_describe(h)}", file=sys.stderr)
        info = {"name": name, "version": bench.get("version"), "params": bench.get("params")}
        for side, pick in (("base", 0), ("head", 1)):
            results[side].add_result(
                info,
                _benchmark_result([pair[pick] for _, pair in mine]),
                started_at=started,
                duration=duration * len(mine),
                record_samples=True,
            )
    written = [save_atomic(results[side], args.results) for side in ("base", "head")]
    for path in written:
        print(f"jaxbench ab: wrote {path}", file=sys.stderr)
    if not (args.results / args.machine / "machine.json").is_file():
        # So that 'compare BASE HEAD --results DIR' finds the results: asv's
        # machine.json, as 'jaxbench machine' writes it (~/.asv-machine.json untouched).
        machine_json, _ = write_machine(probe(args.machine), args.results, register=False)
        print(f"jaxbench ab: wrote {machine_json}", file=sys.stderr)
    sides = (
        f"{args.base_commit} {args.head_commit} --results {args.results} "
        f"--machine {args.machine} --env {args.env}"
    )
    print(
        f"jaxbench ab: compare with: jaxbench compare {sides} --paired {args.per_round}",
        file=sys.stderr,
    )
    return 0


def _describe(outcome: SideResult) -> str:
    if outcome.failure:
        return f"failed ({outcome.failure})"
    if outcome.skip:
        return f"skipped ({outcome.skip})"
    median = statistics.median(outcome.samples)
    return f"median {_fmt_us(median)} ({len(outcome.samples)} samples)"
