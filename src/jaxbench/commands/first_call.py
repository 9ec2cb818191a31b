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

With ``--min-rounds N`` the rounds may stop after N once every figure is
settled (:mod:`jaxbench.analyse.sequential`: a rule that adds no false
alarm); by default all ``--rounds`` run. The work is
:func:`jaxbench.jobs.first_call.measure_side_by_side`.

Cost: one process a side a round (this project's suite: about 4 s each on a
quiet 2-core machine, so 10 rounds take about 80 s). Never imports jax.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from jaxbench.commands import add_side_arguments, open_sides_of, positive_int, say
from jaxbench.errors import UsageError
from jaxbench.jobs.first_call import (
    FirstCallSettings,
    kept_values,
    measure_side_by_side,
    paired_values,
)

__all__ = ["HELP", "add_arguments", "kept_values", "paired_values", "run"]

HELP = "time first calls of base and head in fresh processes side by side, for compare"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_side_arguments(parser)
    parser.add_argument(
        "--rounds",
        type=positive_int,
        default=FirstCallSettings.rounds,
        help="fresh processes a side, in turn (default: %(default)s)",
    )
    parser.add_argument(
        "--min-rounds",
        type=positive_int,
        metavar="N",
        help="stop after N rounds or more once every figure is settled (a paired test "
        "not suggestive, or an estimate well within its gate); default: every round",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=FirstCallSettings.timeout,
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


def run(args: argparse.Namespace) -> int:
    settings = FirstCallSettings(
        rounds=args.rounds,
        min_rounds=args.min_rounds or args.rounds,
        timeout=args.timeout,
        memory=args.memory,
    )
    with open_sides_of(args) as sides:
        env = sides.env_name or args.env
        if not env:
            raise UsageError(
                "--env: give the environment name of the results (the asv environment "
                "the Pythons match)"
            )
        done = measure_side_by_side(
            sides, results=args.results, machine=args.machine, env=env, settings=settings
        )
    stopped = f" ({done.stopped})" if done.stopped else ""
    say(
        f"jaxbench first-call: {done.benchmarks} benchmark(s), {done.rounds} rounds a side"
        f"{stopped} in {done.seconds:.0f} s; wrote {done.written[0]} and {done.written[1]}"
    )
    return 0
