"""``jaxbench pair-history``: time each commit side by side with the one before it.

For commits C1..Cn (given newest first, as ``git rev-list`` prints them and
asv's ``HASHFILE:`` reads them), the pairs (C1, C2), ..., (Cn-1, Cn) are timed
in lockstep (:func:`jaxbench.lockstep.coordinator.run_lockstep_suite`: one
worker pair per round serves every ``time_*`` benchmark), and each pair's
estimates are written to ``results/<machine>/paired/`` (:mod:`jaxbench.store.paired`).
With ``--previous`` (the default) the oldest commit is also paired with the
newest earlier commit of the branch that has asv results, so the main job,
measuring only the new commit, still makes its pair. Pairs already on file
are skipped unless ``--force``.

Each side runs the Python of an asv environment (``asv run`` built it; one
pass per environment of ``asv.conf.json``, or ``--python`` and ``--env``),
with that side's commit put in front of the installed one on ``PYTHONPATH``:
the wheel asv built for that commit (its build cache), else the commit's
``src/`` tree from ``git archive``. Both sides run the working tree's
benchmark directory, as ``asv run`` does. The pairs of one environment share
one jax compilation cache for the run (as ``jaxbench ab``'s rounds do;
``--no-compile-cache`` turns it off): a round's fresh processes, and the next
pair's first round where the code is unchanged, load the compiled programs.
Never imports jax.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

from jaxbench.analyse.paired_history import estimate_pair, flagged_in_pair, wants_second_look
from jaxbench.analyse.stats import DEFAULT_ALPHA, PAIRED_FACTOR
from jaxbench.commands import (
    add_compile_cache_argument,
    add_parallel_argument,
    non_negative_int,
    positive_int,
)
from jaxbench.errors import UsageError
from jaxbench.lockstep.checkout import asv_side, commit_site
from jaxbench.lockstep.coordinator import (
    SideResult,
    compile_cache_environ,
    concurrent_rounds,
    list_benchmarks,
    run_lockstep_suite,
)
from jaxbench.lockstep.listing import items_of, param_values, selected
from jaxbench.render.progress import Progress
from jaxbench.store.asv_conf import forks_workers
from jaxbench.store.asv_env import AsvEnv, asv_envs
from jaxbench.store.git import git
from jaxbench.store.paired import PairedEstimate, PairedRun, paired_path, write_paired

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
    parser.add_argument(
        "--source-root",
        default="src",
        help="the commit's import root inside the repository, used when asv kept no "
        "wheel for it (default: %(default)s)",
    )
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
        help="further rounds for the series whose first look is suggestive but not decisive; "
        "0: one look (default: %(default)s)",
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
    parser.add_argument("--force", action="store_true", help="measure pairs already on file")
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


def _has_results(results: Path, machine: str, commit: str, env: str) -> bool:
    return (results / machine / f"{commit[:8]}-{env}.json").is_file()


def _previous(repo: Path, oldest: str, results: Path, machine: str, env: str) -> str | None:
    with contextlib.suppress(UsageError):
        for commit in git(
            repo, "rev-list", "--first-parent", "--max-count=500", f"{oldest}^"
        ).split():
            if _has_results(results, machine, commit, env):
                return commit
    return None


@contextlib.contextmanager
def _scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="jaxbench-pairs-") as tmp:
        yield Path(tmp)


def _fingerprint(results: Path, machine: str) -> str | None:
    try:
        data = json.loads((results / machine / "machine.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = data.get("fingerprint") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


def run(args: argparse.Namespace) -> int:
    repo = args.config.resolve().parent if args.config.is_file() else Path.cwd()
    conf: dict[str, object] = {}
    if args.config.is_file():
        from jaxbench.analyse.detect import read_asv_conf

        conf = read_asv_conf(args.config)
    results = args.results or repo / str(conf.get("results_dir", "results"))
    bench_dir = args.benchmarks or repo / str(conf.get("benchmark_dir", "benchmarks"))
    if args.python is not None:
        if not args.env:
            raise UsageError("--python needs --env (the environment name of the results)")
        envs = [AsvEnv(args.env, args.python, None)]
    else:
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
        envs = [e for e in envs if e.python]
    commits = _read_commits(args, repo)
    fingerprint = _fingerprint(results, args.machine)
    made = 0
    pending: list[tuple[AsvEnv, str, str]] = []  # the pairs to measure, in order
    with _scratch() as scratch:
        for env in envs:
            chain = list(reversed(commits))  # oldest first
            if not args.unmeasured:  # a pair is read against asv's results: both need them
                missing = [c for c in chain if not _has_results(results, args.machine, c, env.name)]
                for commit in missing:
                    print(
                        f"jaxbench pair-history: warning: {commit[:8]} has no asv results in "
                        f"{env.name} on {args.machine}: not paired (asv run it first)",
                        file=sys.stderr,
                    )
                chain = [c for c in chain if c not in missing]
                if not chain:
                    continue
            if args.previous:
                before = _previous(repo, chain[0], results, args.machine, env.name)
                if before is not None:
                    chain.insert(0, before)
            for base, head in itertools.pairwise(chain):
                target = paired_path(results, args.machine, base, head, env.name)
                if target.is_file() and not args.force:
                    print(f"jaxbench pair-history: {target.name} on file, skipped", file=sys.stderr)
                    continue
                pending.append((env, base, head))
        progress = Progress("jaxbench pair-history", len(pending), args.rounds, label="pair")
        for step, (env, base, head) in enumerate(pending, start=1):
            made += _one_pair(
                args, repo, env, base, head, bench_dir, results, scratch, fingerprint,
                progress.within(step), fork=forks_workers(conf),
            )  # fmt: skip
        progress.close()
    print(f"jaxbench pair-history: {made} pair(s) measured", file=sys.stderr)
    return 0


def _one_pair(
    args: argparse.Namespace,
    repo: Path,
    env: AsvEnv,
    base: str,
    head: str,
    bench_dir: Path,
    results: Path,
    scratch: Path,
    fingerprint: str | None,
    progress: Callable[[int, int], None] | None = None,
    *,
    fork: bool = False,
) -> int:
    sides = []
    for label, commit in (("base", base), ("head", head)):
        site = commit_site(repo, commit, env.cache, args.source_root, scratch / env.name)
        sides.append(asv_side(label, env, site, bench_dir, forkserver=fork))
    pairs = items_of(selected(list_benchmarks(sides[1]), args.bench))
    items = [item for _, item in pairs]
    first_look = args.rounds if args.second_look else None
    looked_again: list[int] = []

    def more(i: int, b: SideResult, h: SideResult) -> bool:
        wanted = wants_second_look(
            b.samples, h.samples, per_round=args.per_round, family=len(items), alpha=DEFAULT_ALPHA
        )
        if wanted:
            looked_again.append(i)
        return wanted

    clock = time.perf_counter()
    # One compilation cache per environment for the whole run: the next pair's
    # first round loads what this one compiled wherever the code is unchanged
    # (the cache keys on the program, jax and its flags, never on the commit).
    cache = scratch / env.name / "jax-cache"
    cache.mkdir(parents=True, exist_ok=True)
    shared = compile_cache_environ(str(cache), os.environ) if args.compile_cache else ()
    outcomes = run_lockstep_suite(
        replace(sides[0], environ=(*sides[0].environ, *shared)),
        replace(sides[1], environ=(*sides[1].environ, *shared)),
        items,
        rounds=args.rounds,
        per_round=args.per_round,
        cpus=args.cpus,
        together=True,
        parallel=args.parallel or concurrent_rounds(args.cpus),
        progress=progress,
        more_rounds=args.second_look,
        more=more,
    )
    took = time.perf_counter() - clock
    # What the pair spent inside the timed calls (both sides, every round): the
    # rest of ``took`` is starting processes, compiling, checking answers, warming up.
    timed = sum(sum(side.samples) * side.number for pair in outcomes for side in pair)
    estimates: list[PairedEstimate] = []
    for (bench, item), (b, h) in zip(pairs, outcomes, strict=True):
        if b.failure or h.failure or b.skip or h.skip:
            reasons = [w for w in (b.failure, h.failure, b.skip, h.skip) if w]
            why = next((w for w in reasons if not w.startswith("not sampled")), reasons[0])
            print(f"jaxbench pair-history:   {item.label}: not paired ({why})", file=sys.stderr)
            continue
        estimate = estimate_pair(
            str(bench["name"]),
            param_values(bench, item.param_idx),
            b.samples,
            h.samples,
            per_round=args.per_round,
            factor=PAIRED_FACTOR,
            alpha=DEFAULT_ALPHA,
            first_look=first_look,
        )
        if estimate is not None:
            estimates.append(estimate)
    run = PairedRun(
        machine=args.machine,
        env_name=env.name,
        base_commit=base,
        head_commit=head,
        per_round=args.per_round,
        factor=PAIRED_FACTOR,
        alpha=DEFAULT_ALPHA,
        date=int(time.time() * 1000),
        estimates=tuple(estimates),
        fingerprint=fingerprint,
        first_look=first_look,
    )
    path = write_paired(results, run)
    flagged = flagged_in_pair(run)
    print(
        f"jaxbench pair-history: {base[:8]}..{head[:8]} [{env.name}]: {len(items)} item(s), "
        f"{args.rounds} rounds x {args.per_round}"
        + (f" (+{args.second_look} for {len(looked_again)})" if first_look else "")
        + f" in {took:.1f} s (timed calls {timed:.1f} s, both sides); "
        f"{len(flagged)} regression(s) (Holm over the pair's {len(estimates)} series); "
        f"wrote {path}",
        file=sys.stderr,
    )
    return 1
