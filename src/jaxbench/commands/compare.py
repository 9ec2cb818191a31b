"""``jaxbench compare BASE HEAD``: what changed between two commits' asv results.

BASE and HEAD are commit hashes (or unique prefixes) found in the results
directory, or paths to two asv result JSON files. Warm times that ``jaxbench
pair-history`` timed side by side for exactly these two commits take the
paired history's verdict (not with ``--paired``: the review's own rounds).
The work is :mod:`jaxbench.jobs.compare`. Exit status: 1 when a regression
of a kind named by ``--fail-on`` is found, 0 otherwise, 2 for bad input.
Never imports jax.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from jaxbench.analyse.compare import (
    Settings,
    parse_fail_on,
)
from jaxbench.commands import add_verdict_arguments, positive_int, say, write_output
from jaxbench.jobs.compare import compare_commits, render

__all__ = ["HELP", "add_arguments", "run"]

HELP = "compare two commits' asv results: statistical verdicts, markdown for a pull request"


def _factor(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (math.isfinite(value) and value >= 1.0):
        raise argparse.ArgumentTypeError(f"must be a number >= 1 (e.g. 1.05), got {text}")
    return value


def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1 (e.g. 0.01), got {text}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("base", metavar="BASE", help="base commit (hash or prefix) or result file")
    parser.add_argument("head", metavar="HEAD", help="head commit (hash or prefix) or result file")
    parser.add_argument(
        "--results", type=Path, default=Path("results"), help="asv results dir (default: results)"
    )
    parser.add_argument("--machine", help="machine to compare on (needed if there are several)")
    parser.add_argument("--env", help="one environment name (default: every environment)")
    add_verdict_arguments(parser)
    parser.add_argument("--html-url", help="base URL of 'asv publish' HTML, to link graphs")
    parser.add_argument(
        "--factor",
        type=_factor,
        default=Settings.factor,
        help="warm-time ratio that counts as a change (default: %(default)s)",
    )
    parser.add_argument(
        "--compile-factor",
        type=_factor,
        default=Settings.compile_factor,
        help="first-call/compile-time ratio beyond which a figure with one value a side "
        "is shown as moved, not tested, and beyond the stage's measured floor "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--first-call-factor",
        type=_factor,
        default=Settings.first_call_factor,
        help="gate of first-call figures measured side by side in fresh processes "
        "('jaxbench first-call') (default: %(default)s)",
    )
    parser.add_argument(
        "--fail-untested",
        action="store_true",
        help="let figures with one value a side (first call from asv run, peak memory) "
        "beyond their factor and measured floor fail (default: shown, never failing)",
    )
    parser.add_argument(
        "--memory-factor",
        type=_factor,
        default=Settings.memory_factor,
        help="memory ratio that counts, with one value a side, and beyond the family's "
        "measured floor (default: %(default)s)",
    )
    parser.add_argument(
        "--alpha",
        type=_alpha,
        default=Settings.alpha,
        help="false-alarm level of the whole review: tested rows are held to it together "
        "(Holm-Bonferroni) (default: %(default)s)",
    )
    parser.add_argument(
        "--paired",
        type=positive_int,
        metavar="N",
        help="warm times were measured side by side by 'jaxbench ab', N samples per round "
        "(its --per-round): test them pair by pair",
    )
    parser.add_argument(
        "--paired-factor",
        type=_factor,
        default=Settings.paired_factor,
        help="warm-time ratio that counts as a change with --paired (default: %(default)s)",
    )
    parser.add_argument("--output", type=Path, help="write here (atomically) instead of stdout")


def run(args: argparse.Namespace) -> int:
    fail_on = parse_fail_on(args.fail_on)
    settings = Settings(
        factor=args.factor,
        compile_factor=args.compile_factor,
        memory_factor=args.memory_factor,
        first_call_factor=args.first_call_factor,
        fail_untested=args.fail_untested,
        alpha=args.alpha,
        paired=args.paired,
        paired_factor=args.paired_factor,
    )
    compared = compare_commits(
        args.base,
        args.head,
        results=args.results,
        machine=args.machine,
        env=args.env,
        settings=settings,
        say=say,
    )
    text = render(compared, args.format, fail_on=fail_on, html_url=args.html_url)
    write_output(text, args.output)
    return 1 if compared.report.failing(fail_on) else 0
