"""``jaxbench pair-history``: time each commit side by side with the one before it.

The job is :mod:`jaxbench.jobs.pair_history` (how pairs are chosen, built,
timed and written); this module reads the options. With ``--previous`` (the
default) the oldest commit is also paired with the newest earlier commit of
the branch that has asv results. A pair on file is skipped when it holds
every time benchmark of the suite (else the new ones are added), unless
``--force``. Each side runs an asv environment's Python (one pass per
environment of ``asv.conf.json``, or ``--python`` and ``--env``) with its
commit, built as asv builds it, in front. The pairs of one environment share
one jax compilation cache (``--no-compile-cache`` turns it off).

Exit status: 0; 1 when some pair timed nothing (a commit that does not
build, a suite that does not import, every item failing), after every pair's
file is written, its cause in the last line; 2 on bad input. Never imports jax.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from jaxbench.commands import (
    add_compile_cache_argument,
    add_parallel_argument,
    non_negative_int,
    positive_int,
    sampling_settings,
)
from jaxbench.errors import UsageError
from jaxbench.jobs.git import git
from jaxbench.store.asv_env import AsvEnv, asv_envs

__all__ = ["HELP", "add_arguments", "run"]

HELP = "time each commit side by side with the previous one: the paired history"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("commits", nargs="*", metavar="COMMIT", help="commits, newest first")
    parser.add_argument(
        "--commits", dest="commit_file", type=Path, help="file of commit hashes, newest first"
    )
    parser.add_argument(
        "--config", type=Path, default=Path("asv.conf.json"), help="asv configuration"
    )
    parser.add_argument("--machine", required=True, help="asv machine name of the results")
    parser.add_argument(
        "--results", type=Path, default=None, help="results dir (default: asv.conf.json's)"
    )
    parser.add_argument("--benchmarks", type=Path, help="benchmark dir (default: asv.conf.json's)")
    parser.add_argument(
        "--python", help="one Python for both sides (with --env) instead of asv's environments"
    )
    parser.add_argument("--env", help="environment name (with --python), or one asv environment")
    parser.add_argument("-b", "--bench", action="append", metavar="REGEX", help="as asv run -b")
    parser.add_argument(
        "--rounds",
        type=positive_int,
        default=10,
        help="rounds of the first look (default: %(default)s)",
    )
    parser.add_argument(
        "--second-look",
        type=non_negative_int,
        default=10,
        metavar="ROUNDS",
        help="further rounds, at most, for the series whose first look is suggestive but "
        "not decisive, while they stay suggestive; 0: one look (default: %(default)s)",
    )
    parser.add_argument("--per-round", type=positive_int, default=20, help="(default: %(default)s)")
    parser.add_argument("--cpus", type=int, default=1, help="as jaxbench ab (default: 1)")
    parser.add_argument(
        "--no-previous",
        dest="previous",
        action="store_false",
        help="do not pair the oldest commit with the earlier measured one",
    )
    add_compile_cache_argument(parser)
    add_parallel_argument(parser)
    parser.add_argument(
        "--force",
        action="store_true",
        help="measure pairs already on file again (default: complete them where the suite "
        "gained benchmarks, else skip them)",
    )
    parser.add_argument(
        "--unmeasured",
        action="store_true",
        help="also pair commits without asv results (regressions and publish refuse such "
        "pairs until asv results exist)",
    )


def _read_commits(args: argparse.Namespace, repo: Path) -> list[str]:
    given = list(args.commits)
    if args.commit_file is not None:
        try:
            given += args.commit_file.read_text(encoding="utf-8").split()
        except OSError as exc:
            raise UsageError(f"{args.commit_file}: {exc.strerror or exc}") from None
    if not given:
        raise UsageError("no commits: give COMMIT... or --commits FILE (newest first)")
    return [git(repo, "rev-parse", "--verify", f"{c}^{{commit}}") for c in given]


def _fingerprint(results: Path, machine: str) -> str | None:
    try:
        data = json.loads((results / machine / "machine.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = data.get("fingerprint") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


def _envs(args: argparse.Namespace) -> list[AsvEnv]:
    if args.python is not None:
        if not args.env:
            raise UsageError("--python needs --env (the environment name of the results)")
        return [AsvEnv(args.env, args.python, None)]
    if not args.config.is_file():
        raise UsageError(f"{args.config}: no such file; give --config, or --python and --env")
    envs = [e for e in asv_envs(args.config) if args.env in (None, e.name)]
    if not envs:
        raise UsageError(f"no asv environment named {args.env!r} in {args.config}")
    for env in [e for e in envs if not e.python]:
        if args.env is not None:
            raise UsageError(
                f"asv environment {env.name} is not built; run 'asv run' (make measure) first"
            )
        print(
            f"jaxbench pair-history: warning: asv environment {env.name} is not built "
            "(asv run measured nothing in it); no pairs there",
            file=sys.stderr,
        )
    return [e for e in envs if e.python]


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    from jaxbench.jobs.pair_history import (
        PairSettings,
        expected_items,
        plan_pairs,
        run_pairs,
    )
    from jaxbench.lockstep.builds import builds_of
    from jaxbench.render.paired import pair_history_summary
    from jaxbench.store.asv_conf import forks_workers, read_project

    project = read_project(args.config, required=False)
    repo, conf = project.root, project.conf
    results = args.results or project.results
    bench_dir = args.benchmarks or repo / str(conf.get("benchmark_dir", "benchmarks"))
    envs = _envs(args)
    commits = _read_commits(args, repo)
    settings = sampling_settings(PairSettings, args)
    planned, skipped = plan_pairs(
        repo,
        envs,
        commits,
        results,
        args.machine,
        expected=expected_items(results, settings.bench),
        unmeasured=args.unmeasured,
        previous=args.previous,
        force=args.force,
        say=_say,
    )
    done = run_pairs(
        planned,
        builds=builds_of(args.config, conf),
        bench_dir=bench_dir,
        results=results,
        machine=args.machine,
        fingerprint=_fingerprint(results, args.machine),
        settings=settings,
        fork=forks_workers(conf),
        skipped=skipped,
        say=_say,
    )
    _say(pair_history_summary(done.measured, skipped))
    return 1 if done.timed_nothing else 0
