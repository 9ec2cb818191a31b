"""``jaxbench check-run``: exit 1, naming the cause, when a run measured nothing.

The last step of ``make bench`` and of the main workflow's measuring job
(:mod:`jaxbench.jobs.run_check`): the steps before it go on past a suite
that does not import or a pair that timed nothing, so that what was measured
is still published; this step then ends the job non-zero with the cause in
its last lines. Silent, exit 0, when the run measured what it could. Never
imports jax.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jaxbench.errors import UsageError

__all__ = ["HELP", "add_arguments", "run"]

HELP = "exit 1, naming the cause, when asv could not import the suite or a pair timed nothing"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--job", default="jaxbench check-run", help="the job's name in the lines")
    parser.add_argument("--asv-log", type=Path, help="this run's output of 'asv run --show-stderr'")
    parser.add_argument(
        "--asv-status",
        metavar="N|FILE",
        help="asv run's exit status, or a file holding it (0 and 2 mean it ran)",
    )
    parser.add_argument(
        "--commits", type=Path, help="this run's commits (a file, as pair-history --commits)"
    )
    parser.add_argument("--machine", required=True, help="asv machine name of the results")
    parser.add_argument(
        "--config", type=Path, default=Path("asv.conf.json"), help="asv configuration"
    )


def _status(text: str | None) -> int | None:
    if text is None:
        return None
    value = text
    if not text.strip().lstrip("-").isdigit():
        try:
            value = Path(text).read_text(encoding="utf-8")
        except OSError:
            return None  # no status written: asv did not get to run
    try:
        return int(value.strip())
    except ValueError:
        raise UsageError(f"--asv-status {text!r} is not an exit status or a file of one") from None


def _commits(path: Path | None) -> list[str]:
    if path is None:
        return []
    try:
        return path.read_text(encoding="utf-8").split()
    except OSError as exc:
        raise UsageError(f"--commits {path}: {exc.strerror or exc}") from None


def run(args: argparse.Namespace) -> int:
    from jaxbench.jobs.run_check import run_problems
    from jaxbench.store.asv_conf import read_project

    project = read_project(args.config, required=False)
    log = args.asv_log if args.asv_log is not None and args.asv_log.is_file() else None
    problems = run_problems(
        asv_log=log,
        asv_status=_status(args.asv_status),
        commits=_commits(args.commits),
        results=project.results,
        machine=args.machine,
        root=project.root,
    )
    for line in problems:
        print(f"{args.job}: failed: {line}", file=sys.stderr)
    return 1 if problems else 0
