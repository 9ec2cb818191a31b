"""``jaxbench publish``: asv's HTML history, working offline, plus a regressions page by kind.

The command line of :func:`jaxbench.jobs.publish.publish` (its module doc says
what it does and in which order).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from jaxbench.analyse.detect import DEFAULT_DETECTOR, DETECTORS
from jaxbench.commands import add_asv_log_argument
from jaxbench.jobs.publish import publish
from jaxbench.render.failures import publish_lines

__all__ = ["HELP", "add_arguments", "run"]

HELP = "Publish the asv history as HTML that works offline, with a regressions page by kind."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``jaxbench publish``."""
    parser.add_argument(
        "--config",
        type=Path,
        default=Path("asv.conf.json"),
        help="asv configuration (default: asv.conf.json)",
    )
    parser.add_argument(
        "--html-dir",
        type=Path,
        default=None,
        help="output directory (default: html_dir of the asv configuration)",
    )
    parser.add_argument(
        "--results",
        type=Path,
        default=None,
        help="asv results directory (default: results_dir of the asv configuration)",
    )
    parser.add_argument(
        "--detector",
        choices=DETECTORS,
        default=DEFAULT_DETECTOR,
        help="step fit of the regressions page, as in 'jaxbench regressions' (default binseg)",
    )
    add_asv_log_argument(parser)


def run(args: argparse.Namespace) -> int:
    """Run ``jaxbench publish``."""
    outcome = publish(
        args.config,
        html_dir=args.html_dir,
        results_dir=args.results,
        detector=args.detector,
        asv_logs=tuple(args.asv_log),
    )
    lines = publish_lines(
        outcome.html_dir,
        outcome.regressions_page,
        outcome.regressions,
        outcome.failing,
        args.asv_log,
        budget=0,
    )
    for line in lines:
        print(line)
    return 0
