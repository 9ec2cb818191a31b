"""``jaxbench hlo-diff``: how each benchmark's optimized HLO changed between two commits.

Reads the HLO files :mod:`jaxbench.store.hlo_store` keeps beside asv's results
(:func:`~jaxbench.store.hlo_store.read_hlo_runs`), compares them with
:func:`jaxbench.analyse.hlo.diff_runs` and prints :mod:`jaxbench.render.hlo_diff`'s
text or markdown. Never imports jax.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from jaxbench.analyse.hlo import diff_runs
from jaxbench.commands import positive_int
from jaxbench.render.hlo_diff import format_markdown, format_text
from jaxbench.store.hlo_store import read_hlo_runs

__all__ = ["HELP", "add_arguments", "run"]

HELP = "show how the optimized HLO of each benchmark changed between two commits"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("base", metavar="BASE", help="base commit hash (or a unique prefix)")
    parser.add_argument("head", metavar="HEAD", help="head commit hash (or a unique prefix)")
    parser.add_argument(
        "--results", type=Path, default=Path("results"), help="asv results dir (default: results)"
    )
    parser.add_argument("--machine", help="machine name (default: the only one with HLO stored)")
    parser.add_argument("--env", help="asv environment name (default: the only one in both)")
    parser.add_argument("--benchmark", metavar="REGEX", help="only benchmarks matching REGEX")
    parser.add_argument("--format", choices=("text", "markdown"), default="text")
    parser.add_argument("--context", type=int, default=3, help="diff context lines (default: 3)")
    parser.add_argument(
        "--max-lines", type=positive_int, default=80, help="diff lines per benchmark (default: 80)"
    )


def run(args: argparse.Namespace) -> int:
    runs = read_hlo_runs(
        args.results,
        args.base,
        args.head,
        machine=args.machine,
        env_name=args.env,
        benchmark_regex=args.benchmark,
    )
    report = diff_runs(
        runs.base_texts,
        runs.head_texts,
        base=runs.base,
        head=runs.head,
        machine=runs.machine,
        env_name=runs.env_name,
        context=args.context,
        max_lines=args.max_lines,
    )
    print(format_markdown(report) if args.format == "markdown" else format_text(report), end="")
    return 0
