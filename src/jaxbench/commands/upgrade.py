"""``jaxbench upgrade``: one commit in two environments of the history, e.g. two jax versions.

``jaxbench upgrade --base-env jax0.9.2 --head-env jax0.10.2 [COMMIT]``
compares what ``make bench`` measured at COMMIT (default: the newest commit
measured in both) in the two environments of asv.conf.json's matrix, row by
row, with compare's verdicts and formats (:mod:`jaxbench.jobs.upgrade`). An
environment is named in full or by a part only it has. Nothing is measured:
the figures are the history's. Exit status: 0 nothing worse in the head
environment, 1 worse (of a kind ``--fail-on`` names), 2 bad input, the cause
in one line. Never imports jax.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from jaxbench.analyse.compare import Settings, parse_fail_on
from jaxbench.commands import add_verdict_arguments, say, write_output
from jaxbench.jobs.compare import render
from jaxbench.jobs.upgrade import compare_environments

__all__ = ["HELP", "add_arguments", "run"]

HELP = "compare one commit in two environments of the history (e.g. two jax versions)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "commit",
        metavar="COMMIT",
        nargs="?",
        help="the commit (hash or prefix; default: the newest measured in both environments)",
    )
    parser.add_argument(
        "--base-env",
        required=True,
        help="the environment compared against: its asv name or a part only it has, e.g. jax0.9.2",
    )
    parser.add_argument(
        "--head-env", required=True, help="the environment reviewed, e.g. jax0.10.2"
    )
    parser.add_argument(
        "--results", type=Path, default=Path("results"), help="asv results dir (default: results)"
    )
    parser.add_argument("--machine", help="machine to compare on (needed if there are several)")
    add_verdict_arguments(parser)
    parser.add_argument("--output", type=Path, help="write here (atomically) instead of stdout")


def run(args: argparse.Namespace) -> int:
    fail_on = parse_fail_on(args.fail_on)
    done = compare_environments(
        results=args.results,
        machine=args.machine,
        base_env=args.base_env,
        head_env=args.head_env,
        commit=args.commit,
        settings=Settings(),
        say=say,
    )
    say(
        f"jaxbench upgrade: {done.base_env} -> {done.head_env} at {done.commit[:12]} "
        "(the history's figures; rows named by the base environment)"
    )
    text = render(done.compared, args.format, fail_on=fail_on)
    write_output(text, args.output)
    return 1 if done.compared.report.failing(fail_on) else 0
