"""One module per ``jaxbench`` subcommand (see :mod:`jaxbench.cli`); shared option types."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jaxbench.lockstep.coordinator import Side

__all__ = [
    "add_asv_log_argument",
    "add_compile_cache_argument",
    "add_side_arguments",
    "non_negative_int",
    "positive_int",
    "sides_of",
]


def _int_at_least(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be at least {least}, got {value}")
    return value


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    return _int_at_least(text, 1)


def non_negative_int(text: str) -> int:
    """An argparse type: an integer of at least 0."""
    return _int_at_least(text, 0)


def add_asv_log_argument(parser: argparse.ArgumentParser) -> None:
    """``--asv-log FILE`` (repeatable) of ``jaxbench regressions`` and ``jaxbench publish``."""
    parser.add_argument(
        "--asv-log",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="saved output of 'asv run --show-stderr' (repeatable): the last line of each "
        "failing benchmark's error (asv's result files keep none)",
    )


def add_compile_cache_argument(parser: argparse.ArgumentParser) -> None:
    """``--no-compile-cache`` of the lockstep commands (``args.compile_cache``)."""
    parser.add_argument(
        "--no-compile-cache",
        dest="compile_cache",
        action="store_false",
        help="compile every benchmark afresh in every round's processes (default: the "
        "rounds share one jax compilation cache, removed at the end)",
    )


def add_side_arguments(
    parser: argparse.ArgumentParser, *, commit: Callable[[str], str] = str
) -> None:
    """The two sides' options of ``ab`` and ``first-call``: commits, Pythons, benchmark dirs.

    ``commit`` is the argparse type of ``--base-commit`` and ``--head-commit``.
    """
    parser.add_argument("--base-commit", type=commit, required=True, help="base commit hash")
    parser.add_argument("--head-commit", type=commit, required=True, help="head commit hash")
    parser.add_argument(
        "--base-python",
        default=sys.executable,
        help="Python with the base commit installed (default: this one)",
    )
    parser.add_argument(
        "--head-python",
        default=sys.executable,
        help="Python with the head commit installed (default: this one)",
    )
    parser.add_argument(
        "--benchmarks",
        type=Path,
        default=Path("benchmarks"),
        help="asv benchmark directory for both sides (default: benchmarks)",
    )
    parser.add_argument("--base-benchmarks", type=Path, help="benchmark directory of the base")
    parser.add_argument("--head-benchmarks", type=Path, help="benchmark directory of the head")


def sides_of(args: argparse.Namespace) -> tuple[Side, Side]:
    """Base and head lockstep sides from the options of :func:`add_side_arguments`."""
    from jaxbench.lockstep.coordinator import Side

    return (
        Side("base", args.base_python, args.base_benchmarks or args.benchmarks),
        Side("head", args.head_python, args.head_benchmarks or args.benchmarks),
    )
