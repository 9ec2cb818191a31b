"""``jaxbench upgrade``: one commit in two environments of the matrix, e.g. two jax versions.

``jaxbench upgrade --base-env jax0.9.2 --head-env jax0.10.2 [COMMIT]``
measures COMMIT (default: HEAD) in both environments of asv.conf.json's
matrix, and ``jaxbench upgrade --head jax==0.11.0`` in the matrix entry of
the newest jax (or ``--base-env``) against that entry with one package at
another version (``--base jax==0.9.2`` sets the base's; asv builds both
through a copy of the configuration), as a review measures two commits:
``asv run`` of the figures in both, then the first calls and the warm times of the two environments'
Pythons side by side, and compares them row by row with compare's verdicts
(:func:`jaxbench.jobs.upgrade.measure_upgrade`). It writes under
``.asv/upgrade/`` (the comment, with the HLO diff of each benchmark whose
program changed, and every row as JSON), never into asv's history; the
verdict is kept in ``<results_dir>/<machine>/upgrades/``, which ``jaxbench
publish`` shows on the site's upgrades page ("jax 0.9.2 -> 0.10.2 at
<commit>"); ``--budget``
(default 8 minutes) bounds its rounds. With ``--from-history`` nothing is
measured: COMMIT (default: the newest measured in both) is read from the
history's results, warm times tested only where both environments were
measured in one run (:func:`jaxbench.jobs.upgrade.compare_environments`).
An environment is named in full or by a part only it has.

Exit status: 0 nothing worse in the head environment, 1 worse (of a kind
``--fail-on`` names), 2 bad input, the cause in one line. Never imports jax.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import replace
from pathlib import Path

from jaxbench.analyse.compare import Settings, parse_fail_on
from jaxbench.commands import (
    add_measuring_arguments,
    add_verdict_arguments,
    say,
    write_output,
)
from jaxbench.errors import UsageError
from jaxbench.jobs.compare import render
from jaxbench.jobs.review import ReviewPlace, ReviewSettings
from jaxbench.jobs.upgrade import (
    JOB,
    NothingToCompare,
    compare_environments,
    measure_upgrade,
    parse_pin,
    pinned_matrix,
)
from jaxbench.store.asv_conf import read_project

__all__ = ["HELP", "add_arguments", "run"]

HELP = "compare one commit in two environments of the matrix (e.g. two jax versions)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "commit",
        metavar="COMMIT",
        nargs="?",
        help="the commit (anything git resolves; default: HEAD, or with --from-history the "
        "newest measured in both environments)",
    )
    parser.add_argument(
        "--base-env",
        help="the environment compared against: its asv name or a part only it has, e.g. "
        "jax0.9.2 (with --head: default the matrix entry of the newest jax)",
    )
    parser.add_argument("--head-env", help="the environment reviewed, e.g. jax0.10.2")
    parser.add_argument(
        "--head",
        metavar="PACKAGE==VERSION",
        help="instead of --head-env: the base environment with this one package at this "
        "version, e.g. jax==0.11.0 (asv builds it; the matrix is left as it is)",
    )
    parser.add_argument(
        "--base",
        metavar="PACKAGE==VERSION",
        help="with --head: the base's version of that package (default: the base "
        "environment's own), e.g. jax==0.9.2",
    )
    parser.add_argument(
        "--from-history",
        action="store_true",
        help="measure nothing: read COMMIT's figures in both environments from --results",
    )
    parser.add_argument(
        "--config", type=Path, default=Path("asv.conf.json"), help="asv configuration"
    )
    add_measuring_arguments(parser, what="the measurement")
    parser.add_argument(
        "--comment",
        type=Path,
        help="where the markdown verdict goes (default: .asv/upgrade/comment.md beside "
        "asv.conf.json)",
    )
    parser.add_argument(
        "--results",
        type=Path,
        default=Path("results"),
        help="with --from-history: asv results dir (default: results)",
    )
    parser.add_argument(
        "--machine",
        help="asv machine name: of the measured results (default: upgrade), or with "
        "--from-history the one to read (needed if there are several)",
    )
    add_verdict_arguments(parser)
    parser.add_argument("--output", type=Path, help="write here (atomically) instead of stdout")


def _from_history(args: argparse.Namespace, fail_on: frozenset[str]) -> int:
    if args.bench:
        raise UsageError("-b/--bench measures; with --from-history every benchmark is read")
    done = compare_environments(
        results=args.results,
        machine=args.machine,
        base_env=args.base_env,
        head_env=args.head_env,
        commit=args.commit,
        settings=Settings(),
        say=say,
    )
    say(
        f"{JOB}: {done.base_env} -> {done.head_env} at {done.commit[:12]} "
        "(the history's figures; rows named by the base environment)"
    )
    write_output(render(done.compared, args.format, fail_on=fail_on), args.output)
    return 1 if done.compared.report.failing(fail_on) else 0


def _check(args: argparse.Namespace) -> None:
    if args.head is not None:
        if args.from_history:
            raise UsageError("--head builds an environment; --from-history reads the history")
        if args.head_env is not None:
            raise UsageError("give --head-env or --head PACKAGE==VERSION, not both")
        return
    if args.base is not None:
        raise UsageError("--base goes with --head PACKAGE==VERSION (e.g. --head jax==0.11.0)")
    if args.base_env is None or args.head_env is None:
        raise UsageError(
            "give --base-env and --head-env (two environments of the matrix), or "
            "--head PACKAGE==VERSION (e.g. jax==0.11.0)"
        )


def run(args: argparse.Namespace) -> int:
    fail_on = parse_fail_on(args.fail_on)
    _check(args)
    if args.from_history:
        return _from_history(args, fail_on)
    work = args.config.resolve().parent / ".asv" / "upgrade"
    place = ReviewPlace(
        config=args.config,
        machine=args.machine or "upgrade",
        work=work,
        comment=args.comment or work / "comment.md",
        groups=os.environ.get("GITHUB_ACTIONS") == "true",
        job=JOB,
    )
    settings = ReviewSettings(budget=args.budget, bench=tuple(args.bench or ()), fail_on=fail_on)
    commit = args.commit or "HEAD"
    if args.head is None:
        measured = measure_upgrade(commit, args.base_env, args.head_env, place, settings, say=say)
    else:
        read_project(args.config, job=JOB)
        head = parse_pin(args.head, "--head")
        base = None if args.base is None else parse_pin(args.base, "--base")
        try:
            with pinned_matrix(args.config, head, base, args.base_env) as (
                config,
                base_name,
                head_name,
            ):
                measured = measure_upgrade(
                    commit, base_name, head_name, replace(place, config=config), settings, say=say
                )
        except NothingToCompare as same:
            say(f"{JOB}: {same}")
            write_output(f"{JOB}: {same}.\n", args.output)
            return 0
    done = measured.done
    say(
        f"{JOB}: {measured.title} ({measured.base_env} -> {measured.head_env}) at "
        f"{measured.commit[:12]} (rows named by the base environment); the verdict is kept "
        f"for the published history in {measured.record}"
    )
    if args.format == "text":
        text = done.summary
    else:  # what the job wrote: the comment, every row
        text = (done.comment if args.format == "markdown" else work / "review.json").read_text(
            encoding="utf-8"
        )
    write_output(text, args.output)
    return done.status
