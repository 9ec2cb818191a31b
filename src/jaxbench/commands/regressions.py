"""``jaxbench regressions``: list what the results history flags, newest first.

Reads an asv results directory (no git repository needed), keys every series
by machine, environment, benchmark, parameters and benchmark version, and
runs asv's own step detection on each (see :mod:`jaxbench.analyse.detect`). Exit
status 0 whether or not something is found (it is a listing); 2 on bad input.

JSON output (``--format json``) is versioned::

    {"format": 1, "regressions": [{...}, ...], "warnings": ["...", ...]}

Each regression has ``benchmark``, ``params`` (list of asv repr strings),
``machine``, ``env_name``, ``version``, ``kind``, ``good_commit``,
``bad_commit``, ``date`` (ms), ``before``, ``after``, ``ratio`` (null when not
finite), ``unit`` and ``fixed_commit`` (null unless ``--all`` found it undone).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jaxbench.errors import UsageError
from jaxbench.render.units import format_value

__all__ = [
    "HELP",
    "JSON_FORMAT",
    "add_arguments",
    "format_json",
    "format_text",
    "format_value",
    "run",
]

HELP = "list the regressions an asv results history shows (as asv publish finds them)"
JSON_FORMAT = 1
_CONF_NAME = "asv.conf.json"

if TYPE_CHECKING:
    from jaxbench.analyse.detect import Regression


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``jaxbench regressions``."""
    parser.add_argument(
        "--results",
        type=Path,
        default=None,
        help="asv results directory (default: results_dir of asv.conf.json, else 'results')",
    )
    parser.add_argument("--machine", default=None, help="only this machine")
    parser.add_argument("--env", default=None, help="only this environment name")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format")
    parser.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="relative threshold where regressions_thresholds does not match (default 0.05)",
    )
    parser.add_argument(
        "--config",
        type=Path,
        default=None,
        help="asv.conf.json for results_dir and regressions_thresholds "
        "(default: ./asv.conf.json if present)",
    )
    parser.add_argument(
        "--all",
        action="store_true",
        help="also list regressions that a later commit undid (with the commit that did)",
    )


def _entry(reg: Regression) -> dict[str, Any]:
    return {
        "benchmark": reg.key.benchmark,
        "params": list(reg.key.params),
        "machine": reg.key.machine,
        "env_name": reg.key.env_name,
        "version": reg.key.version,
        "kind": reg.kind.value,
        "good_commit": reg.good_commit,
        "bad_commit": reg.bad_commit,
        "date": reg.date,
        "before": reg.before,
        "after": reg.after,
        "ratio": reg.ratio if math.isfinite(reg.ratio) else None,
        "unit": reg.unit,
        "fixed_commit": reg.fixed_commit,
    }


def format_json(regressions: Sequence[Regression], warnings: Sequence[str]) -> str:
    """The versioned JSON listing."""
    document = {
        "format": JSON_FORMAT,
        "regressions": [_entry(r) for r in regressions],
        "warnings": list(warnings),
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _commits(reg: Regression) -> str:
    bad = reg.bad_commit[:8]
    span = bad if reg.good_commit is None else f"{reg.good_commit[:8]}..{bad}"
    if reg.fixed_commit is not None:
        span += f" (undone at {reg.fixed_commit[:8]})"
    return span


def format_text(regressions: Sequence[Regression], n_series: int) -> str:
    """A table of regressions, newest first."""
    if not regressions:
        return f"No regressions in {n_series} series.\n"
    header = ("benchmark", "commits", "before", "after", "ratio", "kind", "environment", "machine")
    rows = [header]
    for reg in regressions:
        ratio = f"x{reg.ratio:.2f}" if math.isfinite(reg.ratio) else "inf"
        rows.append(
            (
                reg.key.entry_name,
                _commits(reg),
                format_value(reg.before, reg.unit),
                format_value(reg.after, reg.unit),
                ratio,
                reg.kind.value,
                reg.key.env_name,
                reg.key.machine,
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    noun = "regression" if len(regressions) == 1 else "regressions"
    return (
        f"{len(regressions)} {noun} in {n_series} series (newest first):\n"
        + "\n".join(lines)
        + "\n"
    )


def _settings(args: argparse.Namespace, cwd: Path) -> tuple[Path, dict[str, float]]:
    """Results directory and per-benchmark thresholds from the options and asv.conf.json."""
    from jaxbench.analyse.detect import read_asv_conf, thresholds_from_asv_conf

    conf_path: Path | None = args.config
    if conf_path is None and (cwd / _CONF_NAME).is_file():
        conf_path = cwd / _CONF_NAME
    results: Path | None = args.results
    thresholds: dict[str, float] = {}
    if conf_path is not None:
        conf = read_asv_conf(conf_path)
        thresholds = thresholds_from_asv_conf(conf_path)
        if results is None:
            raw = conf.get("results_dir", "results")
            if not isinstance(raw, str):
                raise UsageError(f"{conf_path}: 'results_dir' must be a path; fix the file")
            results = conf_path.parent / raw
    return (results if results is not None else cwd / "results"), thresholds


def run(args: argparse.Namespace) -> int:
    """List the regressions; exit 0 whether or not there are any."""
    from jaxbench.analyse.detect import DEFAULT_THRESHOLD, find_regressions
    from jaxbench.store.results import load_history

    threshold = DEFAULT_THRESHOLD if args.threshold is None else args.threshold
    if not math.isfinite(threshold) or threshold < 0:
        raise UsageError(f"--threshold {args.threshold} must be a number >= 0, e.g. 0.05")
    results_dir, thresholds = _settings(args, Path.cwd())
    history = load_history(results_dir, machine=args.machine, env_name=args.env)
    regressions = find_regressions(
        history, threshold=threshold, thresholds=thresholds, include_fixed=args.all
    )
    if args.format == "json":
        sys.stdout.write(format_json(regressions, history.warnings))
        return 0
    for warning in history.warnings:
        print(f"jaxbench: warning: {warning}", file=sys.stderr)
    sys.stdout.write(format_text(regressions, len(history.series())))
    return 0
