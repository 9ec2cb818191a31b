"""``asv run ... 2>&1 | jaxbench asv-tee LOG``: asv's whole output to LOG, short on the terminal.

The main job's tee (``make bench``, the measuring workflow): asv's steps and
one line per environment's benchmarks (how many, how long, which failed) on
the terminal, every line in LOG, where ``publish``, ``regressions`` and
``check-run`` read the errors (:mod:`jaxbench.jobs.asv_tee`). ``--full``
shows every line too, as ``tee`` does. Never imports jax.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

from jaxbench.jobs.asv_tee import tee_asv

__all__ = ["HELP", "add_arguments", "run"]

HELP = "asv run's output (on standard input) to a log whole, to the terminal short"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log", metavar="LOG", type=Path, help="the file that keeps every line")
    parser.add_argument(
        "--full", action="store_true", help="show every line of asv's output, as tee does"
    )


def _show(line: str) -> None:
    print(line, flush=True)


def run(args: argparse.Namespace) -> int:
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(errors="replace")
    stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace", newline="")
    tee_asv(stdin, args.log, _show, full=args.full)
    return 0
