"""``jaxbench ab``: time base and head side by side and record asv results.

Each asv time benchmark (and parameter set) is measured in ``--rounds``
rounds; a round starts one process per side, which serve every benchmark in
turn, ``--per-round`` samples from each side, taken in turn
(:mod:`jaxbench.lockstep.coordinator`). Then a second look: the benchmarks
whose first look is suggestive (paired p-value under 0.1, either way) get
up to ``--second-look`` more rounds, in fresh process pairs that serve only
them, in batches, each going on while its rounds so far stay suggestive
(:func:`jaxbench.analyse.stats.keep_looking`: ``compare --paired`` tests all
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
from pathlib import Path

from jaxbench.analyse.stats import KEEP_LOOKING_BELOW, SECOND_LOOK_BELOW
from jaxbench.commands import (
    add_compile_cache_argument,
    add_parallel_argument,
    add_side_arguments,
    non_negative_int,
    open_sides_of,
    positive_int,
    sampling_settings,
    say,
)
from jaxbench.jobs.ab import AbSettings, time_side_by_side
from jaxbench.store.machine import check_name

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
        default=AbSettings.rounds,
        help="process pairs of the first look (default: %(default)s)",
    )
    parser.add_argument(
        "--second-look",
        type=non_negative_int,
        default=AbSettings.second_look,
        metavar="ROUNDS",
        help="further process pairs, at most, for the benchmarks whose first look is "
        f"suggestive (paired p < {SECOND_LOOK_BELOW:g}), while they stay so "
        f"(p < {KEEP_LOOKING_BELOW:g}); 0: one look (default: %(default)s)",
    )
    parser.add_argument(
        "--per-round",
        type=positive_int,
        default=AbSettings.per_round,
        help="samples per side per round, taken in turn (default: %(default)s)",
    )
    parser.add_argument(
        "--cpus",
        type=int,
        default=AbSettings.cpus,
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


def run(args: argparse.Namespace) -> int:
    check_name(args.machine)
    settings = sampling_settings(AbSettings, args)
    with open_sides_of(args) as sides:
        env = sides.env_name or args.env or "lockstep"
        time_side_by_side(
            sides,
            results=args.results,
            machine=args.machine,
            env=env,
            settings=settings,
            say=say,
        )
    where = (
        f"{sides.base_commit} {sides.head_commit} --results {args.results} "
        f"--machine {args.machine} --env {env}"
    )
    say(f"jaxbench ab: compare with: jaxbench compare {where} --paired {args.per_round}")
    return 0
