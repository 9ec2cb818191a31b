"""``jaxbench bisect``'s job: the first commit of a step in GOOD..BAD, each step side by side.

The range is GOOD and the commits after it up to BAD in first-parent order
(:func:`jaxbench.jobs.first_parent.first_parent_range`, as ``make bench``
measures them). Each step times two of its commits side by side
(:func:`measure_step`), every target at once, and the pure rule and search
of :mod:`jaxbench.analyse.bisect` decide what it says and which pair comes
next:

* warm times (``time_*``): the lockstep workers, as ``jaxbench ab`` and the
  paired history time them (:func:`jaxbench.lockstep.coordinator.run_lockstep_suite`:
  one worker pair a round serves every benchmark, ``per_round`` samples a
  side in turn, the rounds of one bisect sharing one jax compilation cache);
* first call and its stages, what each workload adds to memory, XLA's work
  figures and the accuracy figures: the suite's figures process, once a
  side a round, in fresh processes, one right after the other, as ``jaxbench
  first-call`` runs it (:func:`jaxbench.lockstep.first_call.measure_first_calls`),
  without the compilation cache (it would time a cache load). The exact
  figures (work, accuracy) are read from the first round only.

Each side runs the Python of one asv environment (or ``--python``) with its
commit built as asv builds it in front of ``PYTHONPATH``
(:func:`jaxbench.lockstep.builds.commit_site`: asv's kept wheel where there
is one, else the project's own build of that commit, once, cached); both run
the working tree's benchmark directory, as ``asv run`` does. A commit that
does not build leaves its step undecided (the search picks another pair),
unless it is GOOD or BAD.

:func:`find_event` reads an event of ``jaxbench regressions`` from the same
scan (the same results, thresholds and numbering): its range and its series.
Never imports jax.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import re
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from jaxbench.analyse.bisect import (
    FIGURE_METHODS,
    Answer,
    Call,
    Judged,
    Looks,
    Sampled,
    StepRecord,
    Target,
    answer,
    bisectable,
    judge_step,
    looks_of,
    next_pair,
    record_step,
    start,
)
from jaxbench.analyse.events import Event
from jaxbench.analyse.stats import DEFAULT_ALPHA
from jaxbench.errors import JaxbenchError, UsageError
from jaxbench.jobs.sides import asv_side
from jaxbench.kinds import method_of
from jaxbench.lockstep.builds import Builds, commit_site
from jaxbench.lockstep.coordinator import (
    Item,
    Side,
    SideResult,
    compile_cache_environ,
    concurrent_rounds,
    list_benchmarks,
    run_lockstep_suite,
)
from jaxbench.lockstep.first_call import FirstCalls, measure_first_calls
from jaxbench.lockstep.listing import items_of, param_values
from jaxbench.lockstep.quiet import timed_quietly
from jaxbench.render.bisect import step_line
from jaxbench.store.asv_env import AsvEnv

__all__ = [
    "BisectSettings",
    "Selection",
    "Workplace",
    "default_max_steps",
    "event_targets",
    "find_event",
    "measure_step",
    "run_bisect",
    "workplace",
]

Say = Callable[[str], None]


@dataclass(frozen=True)
class BisectSettings:
    """How a step samples and how long a search may go on (``jaxbench bisect``'s options)."""

    #: rounds of the first look; each later look doubles them, up to ``max_rounds``
    rounds: int = 5
    max_rounds: int = 20
    #: warm-time samples a side a round
    per_round: int = 20
    cpus: int = 1
    parallel: int | None = None
    compile_cache: bool = True
    #: steps at most, the ends included (None: :func:`default_max_steps`)
    max_steps: int | None = None
    #: seconds one figures process may take
    timeout: float = 600.0
    alpha: float = DEFAULT_ALPHA

    @property
    def looks(self) -> Looks:
        return looks_of(self.rounds, self.max_rounds)


def default_max_steps(n: int) -> int:
    """Steps a search of ``n`` commits may take: twice a plain bisection's, and the ends."""
    return 2 * math.ceil(math.log2(max(n, 2))) + 3


@dataclass(frozen=True)
class Selection:
    """What a bisect measures: ``-b`` regexes (none: every figure it can), or an event's series."""

    patterns: tuple[str, ...] = ()
    targets: frozenset[Target] | None = None

    def wants(self, target: Target) -> bool:
        if self.targets is not None:
            return target in self.targets
        if bisectable(target.benchmark) is not None:
            return False
        return not self.patterns or any(re.search(p, target.benchmark) for p in self.patterns)


@dataclass(frozen=True)
class Workplace:
    """Where the sides run: the environment, the builds, the suite, a shared compile cache."""

    env: AsvEnv
    builds: Builds
    bench_dir: Path
    fork: bool
    settings: BisectSettings
    #: the lockstep workers' extra variables (the rounds' shared jax compilation cache)
    shared: tuple[tuple[str, str], ...] = ()
    #: the warm-time items of the suite, by target (listed at the first step)
    items: dict[Target, Item] = field(default_factory=dict, compare=False)


@contextlib.contextmanager
def workplace(
    env: AsvEnv, builds: Builds, bench_dir: Path, fork: bool, settings: BisectSettings
) -> Iterator[Workplace]:
    """A :class:`Workplace` whose compilation cache lives until the bisect ends."""
    with tempfile.TemporaryDirectory(prefix="jaxbench-bisect-") as tmp:
        shared = compile_cache_environ(str(Path(tmp) / "jax-cache"), os.environ)
        yield Workplace(
            env, builds, bench_dir, fork, settings, shared if settings.compile_cache else ()
        )


def _sides(place: Workplace, label: str, commit: str) -> tuple[Side, Side]:
    """(the lockstep side, the figures side) of ``commit``."""
    site = commit_site(place.builds, commit, place.env)
    side = asv_side(label, place.env, site, place.bench_dir, forkserver=place.fork)
    return replace(side, environ=(*side.environ, *place.shared)), side


@dataclass
class _Acc:
    """One target's samples in one step, as they come."""

    base: list[float] = field(default_factory=list)
    head: list[float] = field(default_factory=list)
    per_round: int = 1
    failed: list[str] = field(default_factory=lambda: ["", ""])
    skipped: list[bool] = field(default_factory=lambda: [False, False])
    #: exact figures: read once
    read: bool = False

    def sampled(self) -> Sampled:
        return Sampled(
            tuple(self.base),
            tuple(self.head),
            self.per_round,
            self.failed[0],
            self.failed[1],
            self.skipped[0],
            self.skipped[1],
        )


def _one_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "failed (no message)"


def _add_lockstep(acc: _Acc, outcome: tuple[SideResult, SideResult], per_round: int) -> None:
    acc.per_round = per_round
    for i, side in enumerate(outcome):
        if side.failure and not side.failure.startswith("not sampled"):
            acc.failed[i] = acc.failed[i] or _one_line(side.failure)
        elif side.skip:
            acc.skipped[i] = True
    if not any(acc.failed) and not any(acc.skipped):
        acc.base.extend(outcome[0].samples)
        acc.head.extend(outcome[1].samples)


def _figure_targets(calls: FirstCalls) -> Iterator[tuple[Target, str, int]]:
    for name, params in calls.params.items():
        combos = list(itertools.product(*params)) if params else [()]
        for idx, combo in enumerate(combos):
            yield Target(name, tuple(str(p) for p in combo)), name, idx


def _add_figures(accs: Mapping[Target, _Acc], sides: tuple[FirstCalls, FirstCalls]) -> None:
    base, head = sides
    for target, name, idx in _figure_targets(head):
        acc = accs.get(target)
        if acc is None or name not in base.values:
            continue
        b_rounds, h_rounds = base.values[name][idx], head.values[name][idx]
        for i, (calls, rounds) in enumerate(((base, b_rounds), (head, h_rounds))):
            if rounds and all(v is not None and math.isnan(v) for v in rounds):
                acc.skipped[i] = True
            elif rounds and all(v is None for v in rounds):
                errors = calls.errors.get(name) or ["failed (no message)"]
                acc.failed[i] = acc.failed[i] or _one_line(errors[-1])
        if target.exact:
            if not acc.read and b_rounds and h_rounds:
                acc.read = True
                for side, value in ((acc.base, b_rounds[0]), (acc.head, h_rounds[0])):
                    if value is not None and not math.isnan(value):
                        side.append(value)
            continue
        for b, h in zip(b_rounds, h_rounds, strict=False):
            if b is not None and h is not None and math.isfinite(b) and math.isfinite(h):
                acc.base.append(b)
                acc.head.append(h)


def _listing(place: Workplace, side: Side, selection: Selection) -> dict[Target, Item]:
    found = {}
    for bench, item in items_of(list_benchmarks(side)):
        target = Target(str(bench["name"]), param_values(bench, item.param_idx))
        if selection.wants(target):
            found[target] = item
    return found


def _methods(targets: Sequence[Target] | None, selection: Selection) -> list[str]:
    """The figures process's methods a step asks for (every one at the first step of -b)."""
    if targets is None:
        if selection.targets is None:
            return sorted(FIGURE_METHODS)
        targets = sorted(selection.targets)
    return sorted({method_of(t.benchmark) for t in targets if not t.lockstep})


def _sample_figures(
    place: Workplace,
    sides: tuple[Side, Side],
    methods: list[str],
    accs: dict[Target, _Acc],
    done: set[Target],
    look: int,
    rounds: int,
    discover: Selection | None,
) -> None:
    """The figures process's rounds of one look: as many as the look adds while a paired
    figure is undecided, one for exact figures only; at the first step (``discover``),
    one round first, to learn which figures the suite has."""
    if look == 0 and discover is not None:
        calls = measure_first_calls(*sides, methods, rounds=1, timeout=place.settings.timeout)
        for target, _, _ in _figure_targets(calls[1]):
            if discover.wants(target):
                accs.setdefault(target, _Acc())
        _add_figures(accs, calls)
        rounds -= 1
    figures = [t for t in accs if not t.lockstep and t not in done]
    if any(not t.exact for t in figures):
        wanted = rounds
    else:
        wanted = 1 if look == 0 and figures and discover is None else 0
    if wanted > 0:
        calls = measure_first_calls(*sides, methods, rounds=wanted, timeout=place.settings.timeout)
        _add_figures(accs, calls)


def _undecided_judged(targets: Sequence[Target], reason: str) -> tuple[Judged, ...]:
    return tuple(Judged(t, Call.UNDECIDED, reason) for t in targets)


@timed_quietly  # the step holds $JAXBENCH_QUIET_LOCK
def measure_step(
    place: Workplace,
    commits: Sequence[str],
    pair: tuple[int, int],
    *,
    targets: Sequence[Target] | None,
    selection: Selection,
    ends: Mapping[Target, float] | None,
) -> StepRecord:
    """Time ``commits[pair[0]]`` (base) and ``commits[pair[1]]`` (head) side by side.

    ``targets``: what to measure (None at the first step: every target of
    ``selection`` the suite has). Rounds are added look by look while some
    paired target is undecided (:func:`jaxbench.analyse.bisect.judge_step`).
    """
    clock = time.perf_counter()
    settings = place.settings
    x, y = pair
    try:
        (base_lock, base_fig), (head_lock, head_fig) = (
            _sides(place, "base", commits[x]),
            _sides(place, "head", commits[y]),
        )
    except JaxbenchError as exc:
        if targets is None:
            raise
        return StepRecord(x, y, _undecided_judged(targets, str(exc)), time.perf_counter() - clock)
    if targets is None and not place.items:
        place.items.update(_listing(place, head_lock, selection))
    lock_items = {t: i for t, i in place.items.items() if targets is None or t in targets}
    methods = _methods(targets, selection)
    accs: dict[Target, _Acc] = {t: _Acc() for t in lock_items}
    if targets is not None:
        accs.update({t: _Acc() for t in targets if not t.lockstep})
    looks = settings.looks
    judged: dict[Target, Judged] = {}
    done: set[Target] = set()
    taken = 0
    for look, rounds in enumerate(looks.rounds):
        more = rounds - taken
        wanted = [t for t in lock_items if t not in done]
        if wanted:
            outcomes = run_lockstep_suite(
                base_lock,
                head_lock,
                [lock_items[t] for t in wanted],
                rounds=more,
                per_round=settings.per_round,
                cpus=settings.cpus,
                together=True,
                parallel=settings.parallel or concurrent_rounds(settings.cpus),
            )
            for target, outcome in zip(wanted, outcomes, strict=True):
                _add_lockstep(accs[target], outcome, settings.per_round)
        if methods:
            _sample_figures(place, (base_fig, head_fig), methods, accs, done, look, more,
                            selection if targets is None else None)  # fmt: skip
        taken = rounds
        sampled = {t: a.sampled() for t, a in accs.items()}
        judged = judge_step(sampled, looks, look, ends=ends, alpha=settings.alpha)
        done = {t for t, j in judged.items() if j.call is not Call.UNDECIDED or sampled[t].failed}
        if len(done) == len(judged):
            break
    return StepRecord(x, y, tuple(judged[t] for t in sorted(judged)), time.perf_counter() - clock)


def run_bisect(
    place: Workplace,
    commits: Sequence[str],
    selection: Selection,
    *,
    say: Say,
) -> Answer:
    """Bisect ``commits`` (GOOD first): the ends, then the pairs the search picks."""
    n = len(commits) - 1
    limit = place.settings.max_steps or default_max_steps(n)
    first = measure_step(place, commits, (0, n), targets=None, selection=selection, ends=None)
    if not first.judged:
        raise UsageError(
            "no benchmark to bisect: the suite has none that the selection names "
            "(-b REGEX: asv check lists them; bisect measures time_*, first call, work, "
            "accuracy and track_workload_* memory)"
        )
    search = record_step(start(commits, (j.target for j in first.judged)), first)
    say(step_line(1, first, commits))
    while len(search.steps) < limit and (pair := next_pair(search)) is not None:
        step = measure_step(
            place,
            commits,
            pair,
            targets=search.measured(),
            selection=selection,
            ends=search.ends_effects(),
        )
        search = record_step(search, step)
        say(step_line(len(search.steps), step, commits))
    return answer(search)


def event_targets(event: Event) -> tuple[frozenset[Target], tuple[str, ...]]:
    """The series of ``event`` a bisect can measure, and one line for each it cannot."""
    wanted: set[Target] = set()
    left_out: list[str] = []
    for reg in event.regressions:
        target = Target(reg.key.benchmark, tuple(reg.key.params))
        why = bisectable(reg.key.benchmark)
        if why is None:
            wanted.add(target)
        else:
            left_out.append(f"{target.name}: {why}")
    return frozenset(wanted), tuple(left_out)


def _events(
    results: Path,
    *,
    machine: str | None,
    env_name: str | None,
    thresholds: Mapping[str, float],
) -> list[Event]:
    """The events ``jaxbench regressions`` lists with these options, numbered as it numbers them."""
    from jaxbench.analyse.detect import scan
    from jaxbench.analyse.events import group_events
    from jaxbench.store.series_table import load_series_table, save_fits

    table = load_series_table(results, machine=machine, env_name=env_name)
    found, fits = scan(table, thresholds=thresholds)
    save_fits(table, fits)
    return group_events([r for r in found.steps if r.evidence.listed], found.series_at)


def find_event(
    results: Path,
    which: str,
    *,
    machine: str | None,
    env_name: str | None,
    thresholds: Mapping[str, float],
) -> tuple[int, Event]:
    """Event ``which`` of the listing: its number (1, 2, ...) or its bad commit (a prefix)."""
    events = _events(results, machine=machine, env_name=env_name, thresholds=thresholds)
    if not events:
        raise UsageError(
            f"no regression events in {results} (jaxbench regressions lists none); "
            "give GOOD and BAD instead"
        )
    if which.isdigit() and len(which) < 7:
        number = int(which)
        if not 1 <= number <= len(events):
            raise UsageError(
                f"--event {which}: the listing has events 1 to {len(events)} "
                "(jaxbench regressions with the same --machine, --env and --results)"
            )
        return number, events[number - 1]
    found = [(i, e) for i, e in enumerate(events, 1) if e.bad_commit.startswith(which.lower())]
    if len(found) != 1:
        why = "no event ends at that commit" if not found else "several events end there"
        raise UsageError(
            f"--event {which}: {why}; give its number in 'jaxbench regressions'"
            + (", or --machine and --env" if found else "")
        )
    return found[0]
