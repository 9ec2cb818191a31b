"""``jaxbench review BASE HEAD``: the pull-request review of two commits, in one command.

Measures both commits in one asv environment (``asv run`` of the figures,
the first calls and the warm times side by side), compares them, writes the
pull-request comment (markdown, ``--comment``, by default
``.asv/review/comment.md``) and prints what changed. BASE and HEAD are
anything git resolves (a hash or prefix, a branch, ``HEAD~1``). The review
writes under ``.asv/review/`` only, never into the history's results. Its
settings are :class:`jaxbench.jobs.review.ReviewSettings`; ``--budget``
(default 8 minutes) bounds the rounds. Under GitHub Actions
(``GITHUB_ACTIONS=true``) each step is a log group.

Exit status: 0 no regression, 1 regression (of a kind ``--fail-on`` names),
2 could not review (bad input, a project that does not build, a suite that
does not import), the cause in one line. Never imports jax.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from jaxbench.analyse.compare import DEFAULT_FAIL_ON, FAIL_CATEGORIES, parse_fail_on
from jaxbench.commands import add_measuring_arguments, say
from jaxbench.jobs.review import ReviewPlace, ReviewSettings, review

__all__ = ["HELP", "add_arguments", "run"]

HELP = "review a pull request locally: measure BASE and HEAD, compare, write the comment"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("base", metavar="BASE", help="the base commit (anything git resolves)")
    parser.add_argument("head", metavar="HEAD", help="the commit reviewed (e.g. HEAD)")
    parser.add_argument(
        "--config", type=Path, default=Path("asv.conf.json"), help="asv configuration"
    )
    parser.add_argument(
        "--machine",
        default="review",
        help="asv machine name of the review's results (default: %(default)s)",
    )
    parser.add_argument(
        "--env", help="asv environment (default: the matrix entry of the newest jax)"
    )
    parser.add_argument(
        "--comment",
        type=Path,
        help="where the pull-request comment (markdown) goes (default: .asv/review/comment.md "
        "beside asv.conf.json)",
    )
    add_measuring_arguments(parser, what="the review")
    parser.add_argument(
        "--fail-on",
        default=",".join(sorted(DEFAULT_FAIL_ON)),
        help="comma-separated kinds whose regressions give exit status 1: "
        f"{', '.join(FAIL_CATEGORIES)}, or 'none' or 'all' (default: %(default)s)",
    )
    parser.add_argument("--html-url", help="base URL of the published dashboard, to link graphs")


def run(args: argparse.Namespace) -> int:
    work = args.config.resolve().parent / ".asv" / "review"
    place = ReviewPlace(
        config=args.config,
        machine=args.machine,
        work=work,
        comment=args.comment or work / "comment.md",
        env=args.env,
        html_url=args.html_url or None,
        groups=os.environ.get("GITHUB_ACTIONS") == "true",
    )
    settings = ReviewSettings(
        budget=args.budget,
        bench=tuple(args.bench or ()),
        fail_on=parse_fail_on(args.fail_on),
    )
    done = review(args.base, args.head, place, settings, say=say)
    sys.stdout.write(done.summary)
    sys.stdout.flush()
    return done.status
