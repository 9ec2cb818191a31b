"""One module per ``jaxbench`` subcommand (see :mod:`jaxbench.cli`); shared option types."""

from __future__ import annotations

import argparse
import re
import sys
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from jaxbench.jobs.pair_history import PairSettings
    from jaxbench.jobs.sides import Sides

    Sampling = TypeVar("Sampling", bound=PairSettings)

__all__ = [
    "add_asv_log_argument",
    "add_compile_cache_argument",
    "add_measuring_arguments",
    "add_side_arguments",
    "add_verdict_arguments",
    "duration",
    "non_negative_int",
    "open_sides_of",
    "positive_int",
    "sampling_settings",
    "say",
    "write_output",
]


_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*(s|m|min|h)?$")
_UNIT = {None: 1.0, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def duration(text: str) -> float | None:
    """A time budget in seconds: ``8m``, ``90s``, ``480`` (seconds); ``none`` or 0: None."""
    if text.strip().lower() in ("none", "0"):
        return None
    match = _DURATION.match(text.strip().lower())
    if match is None or float(match.group(1)) <= 0:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a duration; give e.g. 8m, 90s or 480 (seconds), or none"
        )
    return float(match.group(1)) * _UNIT[match.group(2)]


def _int_at_least(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be at least {least}, got {value}")
    return value


def say(line: str) -> None:
    """A progress or warning line of a job, on stderr, as it happens."""
    print(line, file=sys.stderr, flush=True)


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
        metavar="FILE|DIR",
        help="saved output of 'asv run --show-stderr' (repeatable; a directory: its *.log "
        "files, as make bench keeps them): the last line of each failing benchmark's error "
        "(asv's result files keep none)",
    )


def add_parallel_argument(parser: argparse.ArgumentParser) -> None:
    """``--parallel`` of the lockstep commands (``args.parallel``; None: as many as fit)."""
    parser.add_argument(
        "--parallel",
        type=positive_int,
        default=None,
        metavar="ROUNDS",
        help="rounds run at once, each on CPUs of its own (--cpus each); the two processes "
        "of a round still share theirs (default: as many as this process's CPUs hold; "
        "1 with --cpus 0)",
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


def add_side_arguments(parser: argparse.ArgumentParser) -> None:
    """The two sides' options of ``ab`` and ``first-call``: commits, Pythons, benchmark dirs."""
    parser.add_argument(
        "--base-commit",
        required=True,
        help="base commit: a hash or any prefix git resolves (e.g. the 7 digits git log prints)",
    )
    parser.add_argument("--head-commit", required=True, help="head commit, as --base-commit")
    parser.add_argument(
        "--base-python",
        help="Python with the base commit installed (default: asv's environment --env, "
        "with the base commit, built as asv builds it, put in front of the installed one; "
        "without asv.conf.json, this Python)",
    )
    parser.add_argument(
        "--head-python", help="Python with the head commit installed (default: as --base-python)"
    )
    parser.add_argument(
        "--config",
        type=Path,
        default=Path("asv.conf.json"),
        help="asv configuration whose environments the sides run in (default: %(default)s)",
    )
    parser.add_argument(
        "--benchmarks",
        type=Path,
        default=Path("benchmarks"),
        help="asv benchmark directory for both sides (default: benchmarks)",
    )
    parser.add_argument("--base-benchmarks", type=Path, help="benchmark directory of the base")
    parser.add_argument("--head-benchmarks", type=Path, help="benchmark directory of the head")


def open_sides_of(args: argparse.Namespace) -> AbstractContextManager[Sides]:
    """Base and head lockstep sides from the options of :func:`add_side_arguments`."""
    from jaxbench.jobs.sides import open_sides

    return open_sides(
        config=args.config,
        base_commit=args.base_commit,
        head_commit=args.head_commit,
        base_python=args.base_python,
        head_python=args.head_python,
        base_benchmarks=args.base_benchmarks or args.benchmarks,
        head_benchmarks=args.head_benchmarks or args.benchmarks,
        env_name=args.env,
        default_python=sys.executable,
    )


def add_measuring_arguments(parser: argparse.ArgumentParser, *, what: str) -> None:
    """``--budget`` and ``-b/--bench`` of the commands that measure two sides (review, upgrade)."""
    from jaxbench.jobs.review import ReviewSettings

    parser.add_argument(
        "--budget",
        type=duration,
        default=ReviewSettings.budget,
        help=f"time {what} should take: 8m, 90s, 480, or none for every round "
        "(default: 8m); the rounds of first calls and warm times bend to it",
    )
    parser.add_argument(
        "-b",
        "--bench",
        action="append",
        metavar="REGEX",
        help="only benchmarks whose name matches (as asv run -b; repeatable)",
    )


def add_verdict_arguments(parser: argparse.ArgumentParser) -> None:
    """``--format`` and ``--fail-on`` of the commands that print compare's verdicts."""
    from jaxbench.analyse.compare import DEFAULT_FAIL_ON, FAIL_CATEGORIES

    parser.add_argument(
        "--format", choices=("text", "markdown", "json"), default="text", help="output format"
    )
    parser.add_argument(
        "--fail-on",
        default=",".join(sorted(DEFAULT_FAIL_ON)),
        help="comma-separated kinds whose regressions give exit status 1: "
        f"{', '.join(FAIL_CATEGORIES)}, or 'none' or 'all' (default: %(default)s)",
    )


def write_output(text: str, output: Path | None) -> None:
    """``text`` to ``--output`` (atomically) or, without it, to stdout."""
    if output is None:
        sys.stdout.write(text)
        return
    from jaxbench.store.fsio import write_text_atomic

    write_text_atomic(output, text)


def sampling_settings(kind: type[Sampling], args: argparse.Namespace) -> Sampling:
    """``pair-history``'s or ``ab``'s settings from their shared options."""
    return kind(
        rounds=args.rounds,
        second_look=args.second_look,
        per_round=args.per_round,
        cpus=args.cpus,
        parallel=args.parallel,
        compile_cache=args.compile_cache,
        bench=tuple(args.bench or ()),
    )
