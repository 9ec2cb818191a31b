"""``jaxbench regressions``: which commits made things worse, worst first.

Reads an asv results directory (no git repository needed) through the scan
cache beside it (:mod:`jaxbench.store.series_table`), keys every series by
machine, environment, benchmark, parameters and benchmark version, cuts it at
machine fingerprint changes, fits steps to each piece (``--detector``: binseg,
:mod:`jaxbench.analyse.binseg`, or asv's own fit), keeps the upward steps by
asv publish's rule (see :mod:`jaxbench.analyse.detect`) and groups them into events, one per
machine, environment and commit (:mod:`jaxbench.analyse.events`).

First it names the benchmarks that fail at the newest commit of their
machine and environment (:mod:`jaxbench.analyse.failures`), one line per
machine, environment, commit and cause: a whole result that failed (a build,
install or suite import) in one line, a partial failure with its worst
series; newly failing first (it had a value at an earlier commit), then those
that never had one, then those of retired environments (no longer measured:
never news). The cause is the last line of the error where ``--asv-log``
gives the output of ``asv run --show-stderr`` (:mod:`jaxbench.store.asv_log`;
asv's result files keep no error text). The text fits one screen
(:func:`jaxbench.render.regressions.listing_text`); ``--failing`` lists every
failing series.

Exit status 0 whether or not something is found (it is a listing), unless
``--fail-on``: 1 when a benchmark newly fails (``newly-failing``) or any
benchmark fails (``failing``) at the newest commit, retired environments
aside; 2 on bad input. The text and JSON formatters are
:mod:`jaxbench.render.regressions`.

A fitted step is listed only when the values confirm it
(:mod:`jaxbench.analyse.evidence`: exact figures at once; the others by a
t-test of the commits on either side, Holm at 1 % over the scan, with at least
3 commits a side; memory steps beyond their measured floor). The rest are counted in
one line and listed with ``--unconfirmed``.

JSON output (``--format json``) is versioned; its fields are described in
:mod:`jaxbench.render.regressions`.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from jaxbench.analyse.detect import DEFAULT_DETECTOR, DETECTORS
from jaxbench.commands import add_asv_log_argument
from jaxbench.errors import UsageError
from jaxbench.render.regressions import DEFAULT_LIMIT, JSON_FORMAT, SCREEN_LINES

__all__ = ["FAIL_ON", "HELP", "JSON_FORMAT", "add_arguments", "run"]

HELP = "list the commits that made an asv results history worse (asv's step detection)"
_CONF_NAME = "asv.conf.json"
#: ``--fail-on`` choices: exit 1 on newly failing benchmarks, or on any failing one.
FAIL_ON = ("newly-failing", "failing")

if TYPE_CHECKING:
    from jaxbench.analyse.failures import FailureGroup


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
    parser.add_argument(
        "--since",
        default=None,
        metavar="COMMIT|DATE",
        help="only steps, and failing benchmarks that began failing, at or after this commit "
        "(hash or prefix) or date (YYYY-MM-DD, UTC)",
    )
    parser.add_argument(
        "--benchmark", default=None, metavar="REGEX", help="only series whose name(params) matches"
    )
    parser.add_argument(
        "--min-ratio",
        type=float,
        default=None,
        help="only steps at least this large (after / before), e.g. 1.2",
    )
    parser.add_argument(
        "--limit",
        type=int,
        default=None,
        help=f"events shown in the text listing (default: up to {DEFAULT_LIMIT}, as many as "
        f"fit the {SCREEN_LINES}-line screen with the failures; 0: all)",
    )
    parser.add_argument(
        "--failing",
        action="store_true",
        help="list every failing series (by default one line per machine, environment, "
        "commit and cause, with the worst few series of each)",
    )
    parser.add_argument(
        "--series",
        action="store_true",
        help="list every series' step, newest first, instead of events",
    )
    parser.add_argument(
        "--unconfirmed",
        action="store_true",
        help="list the steps that the step fit finds but the values do not confirm "
        "(too few commits on a side, within noise, below the memory floor)",
    )
    parser.add_argument(
        "--detector",
        choices=DETECTORS,
        default=DEFAULT_DETECTOR,
        help="step fit: binseg (default; binary segmentation with the step test, seconds on "
        "a large history) or asv (asv publish's L1 fit, minutes); see docs/measured.md",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="with --detector asv: asv's default penalty instead of asv publish's penalty "
        "search (see docs/measured.md, 'Regression scan time')",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor write the scan cache beside the results",
    )
    add_asv_log_argument(parser)
    parser.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default=None,
        help="exit 1 when a benchmark fails at the newest commit: newly-failing (it had a "
        "value at an earlier commit; the main workflow's gate) or failing (also those that "
        "never had one); retired environments (no longer measured) never count; default: "
        "exit 0, a listing",
    )


def _settings(args: argparse.Namespace, cwd: Path) -> tuple[Path, dict[str, float]]:
    """Results directory and per-benchmark thresholds from the options and asv.conf.json."""
    from jaxbench.store.asv_conf import read_asv_conf, results_dir, thresholds_from_asv_conf

    conf_path: Path | None = args.config
    if conf_path is None and (cwd / _CONF_NAME).is_file():
        conf_path = cwd / _CONF_NAME
    results: Path | None = args.results
    thresholds: dict[str, float] = {}
    if conf_path is not None:
        conf = read_asv_conf(conf_path)
        thresholds = thresholds_from_asv_conf(conf_path)
        if results is None:
            results = results_dir(conf, conf_path)
    return (results if results is not None else cwd / "results"), thresholds


def _check_options(args: argparse.Namespace) -> re.Pattern[str] | None:
    if args.min_ratio is not None and (not math.isfinite(args.min_ratio) or args.min_ratio < 1):
        raise UsageError(f"--min-ratio {args.min_ratio} must be a number >= 1, e.g. 1.2")
    if args.limit is not None and args.limit < 0:
        raise UsageError(f"--limit {args.limit} must be >= 0 (0: all events)")
    if args.benchmark is None:
        return None
    try:
        return re.compile(args.benchmark)
    except re.error as exc:
        raise UsageError(
            f"--benchmark {args.benchmark!r} is not a regular expression ({exc})"
        ) from None


def run(args: argparse.Namespace) -> int:
    """List the failing benchmarks and the regressions; exit 0 unless ``--fail-on`` finds some."""
    from jaxbench.analyse.detect import DEFAULT_THRESHOLD
    from jaxbench.jobs.first_parent import bisect_hint
    from jaxbench.jobs.regressions import ListingOptions, make_listing
    from jaxbench.render.paired import format_paired_text, paired_json
    from jaxbench.render.regressions import (
        changes_text,
        format_events,
        format_json,
        format_text,
        listing_text,
        short_history_note,
        unconfirmed_summary,
    )

    if args.quick and args.detector != "asv":
        raise UsageError("--quick is a setting of asv's fit; add --detector asv")
    threshold = DEFAULT_THRESHOLD if args.threshold is None else args.threshold
    if not math.isfinite(threshold) or threshold < 0:
        raise UsageError(f"--threshold {args.threshold} must be a number >= 0, e.g. 0.05")
    cwd = Path.cwd()
    results_dir, thresholds = _settings(args, cwd)
    found = make_listing(
        ListingOptions(
            results_dir=results_dir,
            machine=args.machine,
            env_name=args.env,
            use_cache=not args.no_cache,
            threshold=threshold,
            thresholds=thresholds,
            include_fixed=args.all,
            quick=args.quick,
            detector=args.detector,
            since=args.since,
            pattern=_check_options(args),
            min_ratio=args.min_ratio,
            asv_logs=tuple(args.asv_log),
        )
    )
    runs, series = found.paired_runs, found.paired_series
    paired = format_paired_text(series, runs) if runs else ""
    status = _status(list(found.failing), args.fail_on)
    n_series = found.found.n_series
    longest = found.table.longest()
    short = short_history_note(longest, paired=bool(runs)) if n_series else ""
    if args.format == "json":
        sys.stdout.write(
            format_json(
                found.regressions,
                found.table.warnings,
                events=found.events,
                machine_changes=found.machine_changes,
                n_series=found.found.n_series,
                unconfirmed=found.unconfirmed,
                detector=args.detector,
                failing=found.failing,
                retired=found.retired,
                asv_logs=args.asv_log,
                paired_history=paired_json(series, runs) if runs else None,
                longest_series=longest,
                notes=(short,),
            )
        )
        return status
    for warning in found.table.warnings:
        print(f"jaxbench: warning: {warning}", file=sys.stderr)

    def events_text(budget: int | None) -> str:
        if args.series:
            tail = [
                *changes_text(found.machine_changes),
                unconfirmed_summary(found.unconfirmed),
                short,
            ]
            return format_text(found.regressions, n_series) + "".join(f"{x}\n" for x in tail if x)
        return format_events(
            found.events,
            n_series,
            limit=DEFAULT_LIMIT if args.limit is None else args.limit,
            machine_changes=found.machine_changes,
            unconfirmed=found.unconfirmed,
            budget=budget,
            bisect=bisect_hint(args.config.parent if args.config else cwd, results=args.results),
            notes=(short,),
        )

    if args.unconfirmed:
        text = format_text(found.unconfirmed, n_series, what="unconfirmed step")
    else:
        text = listing_text(
            found.failing,
            events_text,
            asv_logs=args.asv_log,
            every_failing=args.failing,
            budgeted=args.limit is None and not args.series,
            # the paired section (a blank line, then its own) shares the screen
            screen=max(SCREEN_LINES - (paired.count("\n") + 1 if paired else 0), SCREEN_LINES // 2),
        )
    sys.stdout.write(text)
    if paired:
        sys.stdout.write("\n" + paired)
    return status


def _status(failing: list[FailureGroup], fail_on: str | None) -> int:
    """1 when ``--fail-on`` finds what it names among ``failing`` (retired aside), else 0."""
    if fail_on == "failing" and any(not g.retired for g in failing):
        return 1
    if fail_on == "newly-failing" and any(g.newly for g in failing):
        return 1
    return 0
