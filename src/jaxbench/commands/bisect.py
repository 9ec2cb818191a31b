"""``jaxbench bisect``: the first commit of a step between GOOD and BAD, each step side by side.

``jaxbench bisect GOOD BAD`` (or ``--event N``: event N of ``jaxbench
regressions`` with the same ``--machine``, ``--env`` and ``--results``, or
``--event COMMIT``: the event that ends at that commit, as the listing's
bisect line gives it) searches GOOD..BAD in first-parent order for the
benchmarks ``-b`` names (default: every figure a bisect can measure) or the
event's series. The job is :mod:`jaxbench.jobs.bisect`; the rule and the
search, :mod:`jaxbench.analyse.bisect`; the output, :mod:`jaxbench.render.bisect`.

Each side runs an asv environment's Python (``--env``, the event's, or the
only one built; or ``--python`` with ``--env``) with its commit built as asv
builds it in front. Exit status: 0 when a commit was found to start a step;
1 when there is no single step (the ends do not differ, or the change is
spread or undecided); 2 on bad input. Never imports jax.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from jaxbench.commands import (
    add_compile_cache_argument,
    add_parallel_argument,
    positive_int,
)
from jaxbench.errors import UsageError

__all__ = ["HELP", "add_arguments", "run"]

HELP = "find the first commit of a step between two commits, each step timed side by side"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("good", nargs="?", metavar="GOOD", help="a commit before the step")
    parser.add_argument("bad", nargs="?", metavar="BAD", help="a later commit after the step")
    parser.add_argument(
        "--event",
        metavar="N|COMMIT",
        help="bisect event N of 'jaxbench regressions' (same --machine, --env, --results), "
        "or the event that ends at COMMIT: its range and its series",
    )
    parser.add_argument(
        "-b",
        "--bench",
        action="append",
        metavar="REGEX",
        help="only benchmarks whose name matches (as asv run -b; repeatable; default: every "
        "time_*, first-call, work, accuracy and track_workload_* figure)",
    )
    parser.add_argument(
        "--config", type=Path, default=Path("asv.conf.json"), help="asv configuration"
    )
    parser.add_argument(
        "--results", type=Path, default=None, help="results dir (default: asv.conf.json's)"
    )
    parser.add_argument("--machine", help="with --event: the listing's machine")
    parser.add_argument(
        "--env",
        help="the asv environment both sides run in (default: the event's, or the only one "
        "built); with --python, its name",
    )
    parser.add_argument("--python", help="one Python for both sides instead of asv's environment")
    parser.add_argument("--benchmarks", type=Path, help="benchmark dir (default: asv.conf.json's)")
    parser.add_argument(
        "--rounds",
        type=positive_int,
        default=5,
        help="rounds of a step's first look; each later look doubles them (default: %(default)s)",
    )
    parser.add_argument(
        "--max-rounds",
        type=positive_int,
        default=20,
        help="rounds at most in one step; a benchmark still undecided there stays undecided "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--per-round",
        type=positive_int,
        default=20,
        help="warm-time samples a side a round, taken in turn (default: %(default)s)",
    )
    parser.add_argument("--cpus", type=int, default=1, help="as jaxbench ab (default: 1)")
    add_compile_cache_argument(parser)
    add_parallel_argument(parser)
    parser.add_argument(
        "--max-steps",
        type=positive_int,
        default=None,
        help="side-by-side steps at most, the ends included (default: 2 ceil(log2 n) + 3 "
        "for n commits)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        help="seconds one figures process may take (default: %(default)s)",
    )
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format")


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _patterns(given: list[str] | None) -> tuple[str, ...]:
    for pattern in given or ():
        try:
            re.compile(pattern)
        except re.error as exc:
            raise UsageError(f"-b {pattern!r} is not a regular expression ({exc})") from None
    return tuple(given or ())


def run(args: argparse.Namespace) -> int:
    from jaxbench.jobs.bisect import (
        BisectSettings,
        Selection,
        event_targets,
        find_event,
        run_bisect,
        workplace,
    )
    from jaxbench.jobs.first_parent import first_parent_range, subjects
    from jaxbench.lockstep.builds import builds_of
    from jaxbench.render.bisect import format_json, format_text
    from jaxbench.store.asv_conf import forks_workers, read_project, thresholds_from_asv_conf
    from jaxbench.store.asv_env import AsvEnv, built_env

    if (args.event is None and args.bad is None) or (args.event is not None and args.good):
        raise UsageError("give GOOD and BAD, or --event N (one of the two)")
    if args.max_rounds < args.rounds or args.rounds < 3:
        raise UsageError(
            f"--rounds {args.rounds} must be 3 or more and --max-rounds {args.max_rounds} "
            "at least as many (the paired test needs 3 rounds)"
        )
    if args.cpus < 0:
        raise UsageError(f"--cpus must be 0 (no pinning) or more, got {args.cpus}")
    selection = Selection(_patterns(args.bench))
    project = read_project(args.config, job="jaxbench bisect")
    conf, repo = project.conf, project.root
    results = args.results or project.results
    event, good, bad, env_name = None, args.good, args.bad, args.env
    left_out: tuple[str, ...] = ()
    if args.event is not None:
        event = find_event(
            results,
            args.event,
            machine=args.machine,
            env_name=args.env,
            thresholds=thresholds_from_asv_conf(args.config),
        )
        _, found = event
        if found.good_commit is None:
            raise UsageError(
                f"--event {args.event}: it has no commit before the step to start from"
            )
        good, bad, env_name = found.good_commit, found.bad_commit, env_name or found.env_name
        targets, left_out = event_targets(found)
        if selection.patterns:
            targets = frozenset(t for t in targets if selection.wants(t))
        selection = Selection(selection.patterns, targets)
        if not targets:
            raise UsageError(f"--event {args.event}: none of its series can be bisected")
    if args.python is not None:
        if not env_name:
            raise UsageError("--python needs --env (the environment name)")
        env = AsvEnv(env_name, args.python, None)
    else:
        env = built_env(args.config, env_name)
    commits = first_parent_range(repo, str(good), str(bad))
    settings = BisectSettings(
        rounds=args.rounds,
        max_rounds=args.max_rounds,
        per_round=args.per_round,
        cpus=args.cpus,
        parallel=args.parallel,
        compile_cache=args.compile_cache,
        max_steps=args.max_steps,
        timeout=args.timeout,
    )
    bench_dir = args.benchmarks or repo / str(conf.get("benchmark_dir", "benchmarks"))
    _say(
        f"jaxbench bisect: {commits[0][:8]}..{commits[-1][:8]}, {len(commits) - 1} commit(s) "
        f"after GOOD, in {env.name}"
    )
    builds = builds_of(args.config, conf)
    with workplace(env, builds, bench_dir, forks_workers(conf), settings) as place:
        found_answer = run_bisect(place, commits, selection, say=_say)
    names = subjects(repo, [commits[i] for i in found_answer.culprits])
    if args.format == "json":
        sys.stdout.write(
            format_json(
                found_answer, commits, names, env_name=env.name, event=event, left_out=left_out
            )
        )
    else:
        sys.stdout.write(format_text(found_answer, commits, names, left_out=left_out))
    return 0 if found_answer.single else 1
