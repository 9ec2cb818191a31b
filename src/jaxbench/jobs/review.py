"""The pull-request review of two commits, in one job: measure both sides, compare, say.

``jaxbench review BASE HEAD`` (and the pull-request workflow) runs, in one
asv environment (the matrix entry of the newest jax, or ``env``):

1. ``asv run`` of both commits in interleaved rounds, every benchmark but
   the warm times (``time_*``): the exact figures (work, accuracy, XLA's
   memory plan), one value a side of the others, and the HLO; asv's output
   is kept whole in ``asv-run.log`` and said short (its steps, one line per
   side's benchmarks: :mod:`jaxbench.render.asv_output`);
2. the first calls side by side in fresh processes
   (:func:`jaxbench.jobs.first_call.measure_side_by_side`), with rounds
   that stop once every figure is settled (a rule that adds no false
   alarm, :mod:`jaxbench.analyse.sequential`) or at the budget's share;
3. the warm times side by side (:func:`jaxbench.jobs.ab.time_side_by_side`),
   two looks, its samples a round sized to the budget
   (:mod:`jaxbench.analyse.budget`) and its rounds ended by it: the second
   look goes on, for the benchmarks still suggestive, while the budget
   allows (up to :data:`SECOND_LOOK_IN_BUDGET` rounds);
4. the comparison (:func:`jaxbench.jobs.compare.compare_commits`, the warm
   times tested pair by pair at the samples a round ab took): the
   pull-request comment (markdown, with the HLO diff appended while the
   comment stays under 60,000 bytes) written to a file, and a text summary
   of what changed for the terminal.

Every setting lives in :class:`ReviewSettings`. The review writes under its
own folder (``.asv/review/``: asv's results of the two commits, asv's output,
the comment), never into the history's results: asv runs with a copy of
``asv.conf.json`` whose ``results_dir`` is the review's. The time budget
(8 minutes by default) is kept by the steps that can bend: the first calls
get half of what ``asv run`` left, the warm times the rest; each stops at
its minimum rounds at the latest (3 pairs, the paired test's least), so a
suite that cannot fit says so. Steps 2 and 3 hold ``$JAXBENCH_QUIET_LOCK``
where it is set (:mod:`jaxbench.lockstep.quiet`); the wait for it is not
counted against the budget. Each step prints a progress line with the
time left (as the last review's steps took, else by the budget); under
GitHub Actions each step is a log group. The result is the check: 0 no
regression, 1 regression; bad input raises :class:`~jaxbench.errors.UsageError`
(exit 2). The four steps take any two sides (:class:`Subject`: two commits in
one environment, or one commit in two, which :mod:`jaxbench.jobs.upgrade`
measures): :func:`measure_and_compare`. Never imports jax.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from jaxbench.analyse.budget import batches, per_round_within, sample_seconds
from jaxbench.analyse.compare import DEFAULT_FAIL_ON, CompareReport, Settings
from jaxbench.analyse.hlo import diff_runs
from jaxbench.analyse.stats import REVIEW_PAIRED_FACTOR
from jaxbench.errors import JaxbenchError, UsageError
from jaxbench.jobs.ab import AbSettings, Size, time_side_by_side
from jaxbench.jobs.asv_tee import asv_tee
from jaxbench.jobs.compare import Compared, compare_commits, render
from jaxbench.jobs.first_call import FirstCallDone, FirstCallSettings, measure_side_by_side
from jaxbench.jobs.git import resolve_commit
from jaxbench.jobs.sides import open_asv_sides
from jaxbench.jobs.streamed import run_streamed
from jaxbench.kinds import COMPILE_STAGES
from jaxbench.lockstep.coordinator import concurrent_rounds, list_benchmarks
from jaxbench.lockstep.first_call import FirstCalls
from jaxbench.lockstep.listing import combos, selected
from jaxbench.lockstep.quiet import QUIET_LOCK, quiet
from jaxbench.render.hlo_diff import format_markdown as hlo_markdown
from jaxbench.render.progress import done_line, format_duration, step_line
from jaxbench.render.text import format_changes
from jaxbench.store.asv_conf import read_asv_conf, read_project
from jaxbench.store.asv_env import AsvEnv, asv_envs, built_env, review_env
from jaxbench.store.asv_log import read_suite_failure, selected_nothing
from jaxbench.store.fsio import write_text_atomic
from jaxbench.store.hlo_store import read_hlo_runs
from jaxbench.store.machine import check_name, probe, write_machine

__all__ = [
    "JOB",
    "REVIEW_PAIRED_FACTOR",
    "STEPS",
    "ReviewDone",
    "ReviewPlace",
    "ReviewSettings",
    "Subject",
    "measure_and_compare",
    "resolve",
    "review",
]

Say = Callable[[str], None]

JOB = "jaxbench review"
#: The review's steps, in order (each a progress line, a log group under GitHub Actions).
STEPS = ("asv run", "first calls", "warm times", "compare")
#: The figures ``asv run`` records: every benchmark but the warm times, which ab times.
FIGURES = r"^(?!.*\.time_)"
#: The comment's size beyond which the HLO diff is left out (GitHub's limit is 65,536).
COMMENT_LIMIT = 60_000
#: Seconds kept back from the budget for the comparison and the comment.
RESERVE = 15.0
#: asv run exit statuses that mean it ran (2: some benchmark failed; the review says which).
_ASV_RAN = (0, 2)


#: The warm times' second look under the budget: up to this many rounds for the
#: benchmarks whose first look is suggestive, while they stay so and the budget allows
#: (the review otherwise left a minute or two of its 8 unused; docs/measured.md).
SECOND_LOOK_IN_BUDGET = 42


def _ab_defaults() -> AbSettings:
    return AbSettings(second_look_in_budget=SECOND_LOOK_IN_BUDGET)


def _first_call_defaults() -> FirstCallSettings:
    return FirstCallSettings(rounds=10, min_rounds=4)


def _compare_defaults() -> Settings:
    return Settings(paired_factor=REVIEW_PAIRED_FACTOR)


@dataclass(frozen=True)
class ReviewSettings:
    """Every setting of a review, in one place (the workflow and ``make review`` use these)."""

    #: ``asv run`` rounds of the figures (exact or one value a side: one is enough)
    asv_rounds: int = 1
    #: the warm times side by side: rounds, second look (under the budget: up to
    #: :data:`SECOND_LOOK_IN_BUDGET` rounds), samples a round (compare's N)
    ab: AbSettings = field(default_factory=_ab_defaults)
    #: the first calls side by side: at most 10 rounds, settled ones stop from 4 on
    first_call: FirstCallSettings = field(default_factory=_first_call_defaults)
    #: the comparison's gates (warm times: :data:`REVIEW_PAIRED_FACTOR`) and family-wise
    #: alpha (its ``paired`` is ab's samples a round)
    compare: Settings = field(default_factory=_compare_defaults)
    fail_on: frozenset[str] = DEFAULT_FAIL_ON
    #: seconds the review should take (None: no budget; every step its full rounds)
    budget: float | None = 480.0
    #: the share of what ``asv run`` leaves that the first calls may take
    first_call_share: float = 0.5
    #: asv run -b regexes of the benchmarks reviewed (empty: all)
    bench: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReviewPlace:
    """What is reviewed where: the configuration, the machine, the review's folder."""

    config: Path
    machine: str
    #: the review's folder: results, asv's output, the comment by default
    work: Path
    #: the comment's file
    comment: Path
    #: asv's environment (None: the matrix entry of the newest jax)
    env: str | None = None
    html_url: str | None = None
    #: print ``::group::`` lines around each step (GitHub Actions)
    groups: bool = False
    #: the name its lines start with
    job: str = JOB


@dataclass(frozen=True)
class Subject:
    """What is measured: two sides, each a commit in an asv environment.

    Two commits in one environment (a pull request's review), or one commit
    in two environments (:mod:`jaxbench.jobs.upgrade`: jax 0.9.2 and 0.10.2)."""

    commits: tuple[str, str]
    envs: tuple[AsvEnv, AsvEnv]

    def describe(self) -> str:
        """``base 9a04e3f0, head 1b2c3d4e, environment E`` or the two environments'."""
        (base, head), (base_env, head_env) = self.commits, self.envs
        if base_env.name == head_env.name:
            return f"base {base[:8]}, head {head[:8]}, environment {base_env.name}"
        if base == head:
            return f"commit {base[:8]}, base environment {base_env.name}, head {head_env.name}"
        return f"base {base[:8]} in {base_env.name}, head {head[:8]} in {head_env.name}"


#: ``compare(results, machine, settings)``: the comparison of the measured sides.
Compare = Callable[[Path, str, Settings], Compared]


@dataclass(frozen=True)
class ReviewDone:
    """What a review found and where it wrote it."""

    #: the check: 0 no regression, 1 regression
    status: int
    report: CompareReport
    #: the terminal's summary: what changed, worst first
    summary: str
    comment: Path
    steps: tuple[tuple[str, float], ...]
    seconds: float


def resolve(root: Path, what: str, text: str) -> str:
    """The full hash of ``text`` (anything git resolves) in ``root``; ``what`` names it."""
    full = resolve_commit(root, text)
    if full is None:
        raise UsageError(
            f"{what} {text!r} is not a commit of the repository {root}; give a hash, a "
            "prefix git resolves (git log --oneline prints them), a branch or a tag"
        )
    return full


def _env(config: Path, name: str | None) -> AsvEnv:
    envs = asv_envs(config)
    if name is None:
        return review_env(envs, config)
    found = next((e for e in envs if e.name == name), None)
    if found is None:
        known = ", ".join(e.name for e in envs) or "none"
        raise UsageError(f"no asv environment named {name!r} in {config} (it has: {known})")
    return found


class _Steps:
    """The review's progress: one line a step, the time left, GitHub's log groups."""

    def __init__(self, place: ReviewPlace, budget: float | None, say: Say) -> None:
        self._say = say
        self._job = place.job
        self._groups = place.groups
        self._state = place.work / "steps.json"
        self._budget = budget
        self._start = time.monotonic()
        self._current: tuple[str, float] | None = None
        #: seconds waited for $JAXBENCH_QUIET_LOCK: in no step's time, not in the budget
        self._waited = 0.0
        self._waited_in_step = 0.0
        self.took: list[tuple[str, float]] = []
        try:
            last = json.loads(self._state.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            last = {}
        self._last = {str(k): float(v) for k, v in last.items()} if isinstance(last, dict) else {}

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self._start

    def _left(self, index: int) -> tuple[float | None, str]:
        rest = STEPS[index:]
        if all(name in self._last for name in rest):
            return sum(self._last[name] for name in rest), "as the last review"
        if self._budget is not None:
            return max(0.0, self._budget - (self.elapsed - self._waited)), "of the budget"
        return None, ""

    def waited(self, seconds: float) -> None:
        """The current step waited ``seconds`` for $JAXBENCH_QUIET_LOCK."""
        self._waited += seconds
        self._waited_in_step += seconds

    def start(self, index: int) -> None:
        self.end()
        left, basis = self._left(index)
        line = step_line(
            self._job, index + 1, len(STEPS), STEPS[index], self.elapsed, left, basis=basis
        )
        self._say(f"::group::{line}" if self._groups else line)
        self._current = (STEPS[index], time.monotonic())

    def end(self) -> None:
        if self._current is None:
            return
        name, started = self._current
        self.took.append((name, time.monotonic() - started - self._waited_in_step))
        self._current = None
        self._waited_in_step = 0.0
        if self._groups:
            self._say("::endgroup::")

    def finish(self) -> str:
        self.end()
        with contextlib.suppress(OSError):
            write_text_atomic(self._state, json.dumps(dict(self.took), indent=1) + "\n")
        note = f"waited {format_duration(self._waited)} for ${QUIET_LOCK}" if self._waited else ""
        return done_line(self._job, self.elapsed, self.took, note)


@contextlib.contextmanager
def _review_conf(config: Path, results: Path) -> Iterator[Path]:
    """A copy of ``config`` beside it whose ``results_dir`` is the review's (removed after)."""
    conf = dict(read_asv_conf(config), results_dir=str(results))
    fd, name = tempfile.mkstemp(prefix=".asv.conf.jaxbench-", suffix=".json", dir=config.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(conf, handle, indent=2)
        yield Path(name)
    finally:
        Path(name).unlink(missing_ok=True)


def _figures_pattern(bench: Sequence[str]) -> str:
    """``asv run -b``: the figures of the benchmarks ``bench`` names (one regex: asv ORs)."""
    if not bench:
        return FIGURES
    return f"{FIGURES}(?=.*(?:{'|'.join(bench)}))"


def _asv_run(
    place: ReviewPlace,
    subject: Subject,
    results: Path,
    settings: ReviewSettings,
    say: Say,
) -> None:
    """Both sides' figures with asv (each commit in each environment), its output said
    and kept; UsageError when it measured nothing."""
    root = place.config.resolve().parent
    hashes = place.work / "commits.txt"
    write_text_atomic(hashes, "".join(f"{c}\n" for c in dict.fromkeys(subject.commits)))
    envs = [arg for name in dict.fromkeys(e.name for e in subject.envs) for arg in ("-E", name)]
    log = place.work / "asv-run.log"
    environ = {
        **os.environ,
        "JAXBENCH_MACHINE": place.machine,
        "JAXBENCH_RESULTS_DIR": str(results),
        "PYTHONUNBUFFERED": "1",
    }
    with _review_conf(place.config, results) as conf:
        command = [
            sys.executable, "-m", "asv", "run", f"HASHFILE:{hashes}", "--config", str(conf),
            *envs, "--machine", place.machine, "--interleave-rounds",
            "--record-samples", "-a", f"rounds={settings.asv_rounds}", "--show-stderr",
            "-b", _figures_pattern(settings.bench),
        ]  # fmt: skip
        with asv_tee(log, say) as feed:
            status = run_streamed(command, cwd=root, env=environ, line=feed)
    failure = read_suite_failure(log, root)
    if failure is not None:
        raise UsageError(f"{failure}; nothing to review (asv's output: {log})")
    if status not in _ASV_RAN and selected_nothing(log):
        # a suite of warm times alone (time_*): timed side by side in step 3
        say(f"{place.job}: asv run: no benchmark but warm times (time_*) to run here")
        return
    if status not in _ASV_RAN:
        raise UsageError(f"asv run exited with status {status}; read why in {log}")


def _fresh(results: Path, machine: str) -> None:
    """The review's results of this machine start empty: a review measures afresh."""
    shutil.rmtree(results / machine, ignore_errors=True)


def _warm_costs(listed: Sequence[Mapping[str, Any]], head: FirstCalls) -> float:
    """One sample of every warm time a side, from the first executions just measured."""
    first_execute = next(m for m, stage in COMPILE_STAGES.items() if stage == "first_execute")
    costs: list[tuple[int, float | None]] = []
    for bench in listed:
        module, cls, _ = str(bench["name"]).rsplit(".", 2)
        values = head.values.get(f"{module}.{cls}Figures.{first_execute}", [])
        number = int(bench.get("number") or 0)
        for idx in combos(bench):
            found = [v for v in (values[idx or 0] if values else []) if v is not None and v > 0]
            costs.append((number, min(found) if found else None))
    return sample_seconds(costs)


def _ab_sizing(
    settings: ReviewSettings,
    sides: Any,
    deadline: float | None,
    head: FirstCalls,
    say: Say,
    job: str,
) -> tuple[AbSettings, Size | None]:
    """ab's settings, and how to size its samples a round to the budget (None: keep them)."""
    ab = replace(settings.ab, bench=settings.bench or settings.ab.bench)
    if deadline is None:
        return ab, None
    listed = selected(list_benchmarks(sides.head), list(ab.bench))
    bound = _warm_costs(listed, head)
    rounds = batches(ab.rounds, ab.parallel or concurrent_rounds(ab.cpus))
    left = max(0.0, deadline - time.monotonic())
    if per_round_within(left, bound, batches=rounds, most=ab.per_round) >= ab.per_round:
        return ab, None
    say(
        f"{job}: a sample of every warm time may cost up to {bound:.2f} s a side (their first "
        f"executions), and {format_duration(left)} are left: a probe round sizes the rounds"
    )

    def size(sample: float, rest: float) -> int:
        now_left = max(0.0, deadline - time.monotonic())
        return per_round_within(now_left, sample, batches=rounds, most=ab.per_round, rest=rest)

    return ab, size


def _comment(compared: Any, place: ReviewPlace, settings: ReviewSettings, hlo: str) -> str:
    text = render(compared, "markdown", fail_on=settings.fail_on, html_url=place.html_url)
    if hlo and len((text + "\n" + hlo).encode("utf-8")) < COMMENT_LIMIT:
        text += "\n" + hlo
    return text


def _hlo_diff(results: Path, subject: Subject, machine: str) -> str:
    """The HLO diff's markdown section, or "" where there is none to show."""
    base_env, head_env = (e.name for e in subject.envs)
    try:
        runs = read_hlo_runs(
            results,
            *subject.commits,
            machine=machine,
            env_name=base_env,
            head_env_name=head_env if head_env != base_env else None,
        )
    except JaxbenchError:
        return ""
    report = diff_runs(
        runs.base_texts,
        runs.head_texts,
        base=runs.base,
        head=runs.head,
        machine=runs.machine,
        env_name=runs.env_name,
    )
    return hlo_markdown(report)


def review(
    base: str, head: str, place: ReviewPlace, settings: ReviewSettings, *, say: Say
) -> ReviewDone:
    """Review ``head`` against ``base`` (anything git resolves); see the module docstring."""
    config = place.config
    root = read_project(config, job=JOB).root
    commits = (resolve(root, "BASE", base), resolve(root, "HEAD", head))
    if commits[0] == commits[1]:
        raise UsageError(f"BASE and HEAD are the same commit ({commits[0][:8]}); give two")
    env = _env(config, place.env)

    def compare(results: Path, machine: str, paired: Settings) -> Compared:
        return compare_commits(
            commits[0],
            commits[1],
            results=results,
            machine=machine,
            env=env.name,
            settings=paired,
            say=say,
        )

    return measure_and_compare(Subject(commits, (env, env)), place, settings, compare, say=say)


def measure_and_compare(
    subject: Subject,
    place: ReviewPlace,
    settings: ReviewSettings,
    compare: Compare,
    *,
    say: Say,
) -> ReviewDone:
    """The review's four steps on ``subject``'s two sides (see the module docstring);
    ``compare`` reads what they measured (``settings.compare`` with the warm times'
    samples a round)."""
    config = place.config
    root = config.resolve().parent
    check_name(place.machine)
    job = place.job
    results = (place.work / "results").resolve()
    _fresh(results, place.machine)
    write_machine(probe(place.machine), results)
    deadline = None if settings.budget is None else time.monotonic() + settings.budget - RESERVE
    steps = _Steps(place, settings.budget, say)
    say(
        f"{job}: {subject.describe()}, machine {place.machine}"
        + (f", budget {format_duration(settings.budget)}" if settings.budget else "")
    )
    steps.start(0)
    _asv_run(place, subject, results, settings, say)
    built = [built_env(config, e.name) for e in subject.envs]  # asv built them, else said why
    steps.start(1)
    bench_dir = root / str(read_asv_conf(config).get("benchmark_dir", "benchmarks"))
    with (
        open_asv_sides(
            config=config,
            commits=subject.commits,
            env_names=(built[0].name, built[1].name),
            benchmarks=(bench_dir, bench_dir),
        ) as sides,
        quiet() as waited,  # both timed steps in one hold of $JAXBENCH_QUIET_LOCK
    ):
        if waited > 1.0:
            say(f"{job}: waited {format_duration(waited)} for ${QUIET_LOCK} (not in the budget)")
            steps.waited(waited)
        if deadline is not None:
            deadline += waited
        share = None
        if deadline is not None:
            share = time.monotonic() + settings.first_call_share * (deadline - time.monotonic())
        first: FirstCallDone = measure_side_by_side(
            sides,
            results=results,
            machine=place.machine,
            env=built[0].name,
            settings=settings.first_call,
            deadline=share,
            job=f"{job}: first calls",
            required=False,  # a suite of plain asv time_* benchmarks has none
        )
        if not first.benchmarks:
            say(f"{job}: first calls: none ({first.stopped})")
        else:
            said = f" ({first.stopped})" if first.stopped else ""
            say(f"{job}: first calls: {first.rounds} rounds a side{said}")
        steps.start(2)
        ab, size = _ab_sizing(settings, sides, deadline, first.calls[1], say, job)
        warm = time_side_by_side(
            sides,
            results=results,
            machine=place.machine,
            env=built[0].name,
            settings=ab,
            say=say,
            job=f"{job}: warm times",
            deadline=deadline,
            size=size,
        )
    steps.start(3)
    compared = compare(results, place.machine, replace(settings.compare, paired=warm.per_round))
    hlo = _hlo_diff(results, subject, place.machine)
    write_text_atomic(place.comment, _comment(compared, place, settings, hlo))
    write_text_atomic(
        place.work / "review.json", render(compared, "json", fail_on=settings.fail_on)
    )
    say(f"{job}: wrote the comment to {place.comment} (every row: {place.work / 'review.json'})")
    finished = steps.finish()
    say(finished)
    report = compared.report
    return ReviewDone(
        status=1 if report.failing(settings.fail_on) else 0,
        report=report,
        summary=format_changes(report),
        comment=place.comment,
        steps=tuple(steps.took),
        seconds=steps.elapsed,
    )
