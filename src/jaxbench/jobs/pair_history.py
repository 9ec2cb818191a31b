"""The paired history's job: each commit timed side by side with the one before it.

For commits C1..Cn (newest first, as ``git rev-list`` prints them and asv's
``HASHFILE:`` reads them), the pairs (C1, C2), ..., (Cn-1, Cn) are timed in
lockstep (:func:`jaxbench.lockstep.coordinator.run_lockstep_suite`: one
worker pair per round serves every ``time_*`` benchmark), and each pair's
estimates are written to ``results/<machine>/paired/``
(:mod:`jaxbench.store.paired`). With ``previous`` the oldest commit is also
paired with the newest earlier commit of the branch that has asv results,
so the main job, measuring only the new commit, still makes its pair.

Each side runs the Python of an asv environment with that side's commit in
front of the installed one on ``PYTHONPATH``, built as asv builds it
(:mod:`jaxbench.lockstep.builds`: asv's kept wheel, else the project's own
build at that commit, once, cached); both sides run the working tree's
benchmark directory, as ``asv run`` does.

Nothing timed is never nothing found: an item that could not be timed is
kept in the pair's file with its cause (:class:`~jaxbench.store.paired.Untimed`),
and a pair that could time nothing (a commit that does not build, a suite
that does not import) is written with its ``error``; :class:`PairsDone`
counts them for the command's exit status. A pair on file is skipped when it
holds every time benchmark of asv's ``benchmarks.json``; otherwise the
missing ones are timed and added (the suite gained benchmarks), and a pair
that timed nothing is tried again. The pairs of one environment share one
jax compilation cache for the run. Never imports jax.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from jaxbench.analyse.paired_history import estimate_pair, wants_more_rounds
from jaxbench.analyse.stats import DEFAULT_ALPHA, PAIRED_FACTOR
from jaxbench.errors import JaxbenchError, ResultsError, UsageError
from jaxbench.jobs.git import git
from jaxbench.jobs.sides import asv_side
from jaxbench.lockstep.builds import Builds, commit_site
from jaxbench.lockstep.coordinator import (
    Item,
    Side,
    SideResult,
    compile_cache_environ,
    concurrent_rounds,
    list_benchmarks,
    rounds_beyond,
    run_lockstep_suite,
)
from jaxbench.lockstep.listing import items_of, param_values, selected
from jaxbench.lockstep.quiet import quiet
from jaxbench.render.paired import pair_line, untimed_lines
from jaxbench.render.progress import Progress
from jaxbench.store.asv_env import AsvEnv
from jaxbench.store.benchmarks_json import read_benchmarks_json
from jaxbench.store.paired import (
    PairedEstimate,
    PairedRun,
    Untimed,
    paired_path,
    read_paired,
    write_paired,
)

__all__ = ["PairSettings", "PairsDone", "Planned", "plan_pairs", "run_pairs"]

Say = Callable[[str], None]
Name = tuple[str, tuple[str, ...]]


@dataclass(frozen=True)
class PairSettings:
    """How each pair is sampled (``jaxbench pair-history``'s options)."""

    rounds: int = 10
    second_look: int = 10
    per_round: int = 20
    cpus: int = 1
    parallel: int | None = None
    compile_cache: bool = True
    #: asv run -b regexes; empty: every time benchmark
    bench: tuple[str, ...] = ()


@dataclass(frozen=True)
class Planned:
    """One pair to time: its environment, commits, and what is on file already."""

    env: AsvEnv
    base: str
    head: str
    #: the pair's file where it lacks some items (they are added to it), else None
    on_file: PairedRun | None = None
    #: the items wanted where some are on file (None: every item listed)
    missing: frozenset[Name] | None = None


@dataclass(frozen=True)
class PairsDone:
    """What a run of the job did."""

    measured: tuple[PairedRun, ...]
    #: pairs on file with every item, left as they were
    skipped: int

    @property
    def timed_nothing(self) -> tuple[PairedRun, ...]:
        return tuple(r for r in self.measured if r.timed_nothing)


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


def expected_items(results: Path, patterns: Sequence[str]) -> frozenset[Name] | None:
    """The time benchmarks (and parameter sets) asv's benchmarks.json lists, as -b selects
    them; None when there is no benchmarks.json to say."""
    try:
        listing = read_benchmarks_json(results / "benchmarks.json")
    except ResultsError:
        return None
    found = selected(
        [{"name": b.name} for b in listing.benchmarks if b.type == "time"], list(patterns)
    )
    names = {str(b["name"]) for b in found}
    return frozenset(
        (b.name, combo) for b in listing.benchmarks if b.name in names for combo in b.combinations()
    )


def plan_pairs(
    repo: Path,
    envs: Sequence[AsvEnv],
    commits: Sequence[str],
    results: Path,
    machine: str,
    *,
    expected: frozenset[Name] | None,
    unmeasured: bool = False,
    previous: bool = True,
    force: bool = False,
    say: Say,
) -> tuple[list[Planned], int]:
    """The pairs to time, in order, and how many are on file complete (skipped)."""
    planned: list[Planned] = []
    skipped = 0
    for env in envs:
        chain = list(reversed(commits))  # oldest first
        if not unmeasured:  # a pair is read against asv's results: both need them
            missing = [c for c in chain if not _has_results(results, machine, c, env.name)]
            for commit in missing:
                say(
                    f"jaxbench pair-history: warning: {commit[:8]} has no asv results in "
                    f"{env.name} on {machine}: not paired (asv run it first)"
                )
            chain = [c for c in chain if c not in missing]
            if not chain:
                continue
        if previous:
            before = _previous(repo, chain[0], results, machine, env.name)
            if before is not None:
                chain.insert(0, before)
        for base, head in itertools.pairwise(chain):
            target = paired_path(results, machine, base, head, env.name)
            on_file = read_paired(target) if target.is_file() and not force else None
            if on_file is None or on_file.error is not None:
                planned.append(Planned(env, base, head))
                continue
            lacking = None if expected is None else expected - on_file.names()
            if not lacking:
                say(f"jaxbench pair-history: {target.name} on file, skipped")
                skipped += 1
                continue
            say(
                f"jaxbench pair-history: {target.name} on file without {len(lacking)} "
                "benchmark(s) the suite has now: timing those"
            )
            planned.append(Planned(env, base, head, on_file, frozenset(lacking)))
    return planned, skipped


@contextlib.contextmanager
def _scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="jaxbench-pairs-") as tmp:
        yield Path(tmp)


def run_pairs(
    planned: Sequence[Planned],
    *,
    builds: Builds,
    bench_dir: Path,
    results: Path,
    machine: str,
    fingerprint: str | None,
    settings: PairSettings,
    fork: bool,
    skipped: int,
    say: Say,
) -> PairsDone:
    """Time every planned pair, writing each pair's file as it ends."""
    measured: list[PairedRun] = []
    progress = Progress("jaxbench pair-history", len(planned), settings.rounds, label="pair")
    with _scratch() as scratch:
        for step, pair in enumerate(planned, start=1):
            run = _one_pair(
                pair, builds, bench_dir, scratch, settings, fork, progress.within(step), say
            )
            run = replace(run, machine=machine, fingerprint=fingerprint)
            if pair.on_file is not None:
                run = _merged(pair.on_file, run, pair.missing or frozenset())
            path = write_paired(results, run)
            say(pair_line(run, path, rounds=settings.rounds, second_look=settings.second_look))
            for line in untimed_lines(run):
                say(f"jaxbench pair-history:   {line}")
            measured.append(run)
    progress.close()
    return PairsDone(tuple(measured), skipped)


def _merged(on_file: PairedRun, new: PairedRun, missing: frozenset[Name]) -> PairedRun:
    """The file's pair with the newly timed items added (the rest kept as measured)."""
    if new.error is not None:  # none of the missing items could be timed: say why, for each
        lost = tuple(Untimed(name, params, new.error) for name, params in sorted(missing))
        return replace(on_file, untimed=(*on_file.untimed, *lost), date=new.date)
    return replace(
        on_file,
        estimates=(*on_file.estimates, *new.estimates),
        untimed=(*on_file.untimed, *new.untimed),
        date=new.date,
        took=new.took,
        timed_seconds=new.timed_seconds,
        looked_again=new.looked_again,
    )


def _failed(pair: Planned, settings: PairSettings, cause: str) -> PairedRun:
    return _run_of(pair, settings, (), (), error=cause, first_look=None)


def _run_of(
    pair: Planned,
    settings: PairSettings,
    estimates: Sequence[PairedEstimate],
    untimed: Sequence[Untimed],
    *,
    error: str | None = None,
    first_look: int | None,
    took: float = 0.0,
    timed_seconds: float = 0.0,
    looked_again: int = 0,
) -> PairedRun:
    return PairedRun(
        machine="",
        env_name=pair.env.name,
        base_commit=pair.base,
        head_commit=pair.head,
        per_round=settings.per_round,
        factor=PAIRED_FACTOR,
        alpha=DEFAULT_ALPHA,
        date=int(time.time() * 1000),
        estimates=tuple(estimates),
        first_look=first_look,
        untimed=tuple(untimed),
        error=error,
        took=took,
        timed_seconds=timed_seconds,
        looked_again=looked_again,
    )


def _sides(
    pair: Planned, builds: Builds, bench_dir: Path, fork: bool, shared: tuple[tuple[str, str], ...]
) -> tuple[Side, Side]:
    base, head = (
        asv_side(label, pair.env, commit_site(builds, commit, pair.env), bench_dir, forkserver=fork)
        for label, commit in (("base", pair.base), ("head", pair.head))
    )
    return (
        replace(base, environ=(*base.environ, *shared)),
        replace(head, environ=(*head.environ, *shared)),
    )


def _one_pair(
    pair: Planned,
    builds: Builds,
    bench_dir: Path,
    scratch: Path,
    settings: PairSettings,
    fork: bool,
    progress: Callable[[int, int], None],
    say: Say,
) -> PairedRun:
    # One compilation cache per environment for the whole run: the next pair's
    # first round loads what this one compiled wherever the code is unchanged
    # (the cache keys on the program, jax and its flags, never on the commit).
    cache = scratch / pair.env.name / "jax-cache"
    cache.mkdir(parents=True, exist_ok=True)
    shared = compile_cache_environ(str(cache), os.environ) if settings.compile_cache else ()
    try:
        sides = _sides(pair, builds, bench_dir, fork, shared)
        listed = items_of(selected(list_benchmarks(sides[1]), list(settings.bench)))
    except JaxbenchError as exc:
        return _failed(pair, settings, str(exc))
    if pair.missing is not None:
        listed = [(b, i) for b, i in listed if _name(b, i) in pair.missing]
    if not listed:
        return _failed(pair, settings, "no time benchmark to time (asv run -b selects none)")
    items = [item for _, item in listed]
    first_look = settings.rounds if settings.second_look else None

    def more(_index: int, b: SideResult, h: SideResult) -> bool:
        return wants_more_rounds(
            b.samples,
            h.samples,
            per_round=settings.per_round,
            first_look=settings.rounds,
            family=len(items),
        )

    try:
        with quiet():  # the pair's rounds hold $JAXBENCH_QUIET_LOCK, not its wait for it
            clock = time.perf_counter()
            outcomes = run_lockstep_suite(
                *sides,
                items,
                rounds=settings.rounds,
                per_round=settings.per_round,
                cpus=settings.cpus,
                together=True,
                parallel=settings.parallel or concurrent_rounds(settings.cpus),
                progress=progress,
                more_rounds=settings.second_look,
                more=more,
            )
            took = time.perf_counter() - clock
    except JaxbenchError as exc:
        return _failed(pair, settings, str(exc))
    # What the pair spent inside the timed calls (both sides, every round): the
    # rest of ``took`` is starting processes, compiling, checking answers, warming up.
    timed = sum(sum(side.samples) * side.number for outcome in outcomes for side in outcome)
    estimates, untimed = _estimates(listed, outcomes, settings, first_look)
    return _run_of(
        pair,
        settings,
        estimates,
        untimed,
        first_look=first_look,
        took=took,
        timed_seconds=timed,
        looked_again=sum(
            rounds_beyond(b, h, rounds=settings.rounds, per_round=settings.per_round) > 0
            for b, h in outcomes
        ),
    )


def _name(bench: Mapping[str, Any], item: Item) -> Name:
    return (str(bench["name"]), param_values(bench, item.param_idx))


def _estimates(
    listed: Sequence[tuple[Mapping[str, Any], Item]],
    outcomes: Sequence[tuple[SideResult, SideResult]],
    settings: PairSettings,
    first_look: int | None,
) -> tuple[list[PairedEstimate], list[Untimed]]:
    estimates: list[PairedEstimate] = []
    untimed: list[Untimed] = []
    for (bench, item), (b, h) in zip(listed, outcomes, strict=True):
        name, params = _name(bench, item)
        if b.failure or h.failure or b.skip or h.skip:
            causes = [w for w in (b.failure, h.failure, b.skip, h.skip) if w]
            cause = next((w for w in causes if not w.startswith("not sampled")), causes[0])
            skipped = not (b.failure or h.failure)
            untimed.append(Untimed(name, params, _one_line(cause), skipped=skipped))
            continue
        estimate = estimate_pair(
            name,
            params,
            b.samples,
            h.samples,
            per_round=settings.per_round,
            factor=PAIRED_FACTOR,
            alpha=DEFAULT_ALPHA,
            first_look=first_look,
        )
        if estimate is None:
            untimed.append(
                Untimed(name, params, f"{len(b.samples)} samples: not whole paired rounds")
            )
        else:
            estimates.append(estimate)
    return estimates, untimed


def _one_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "failed (no message)"
