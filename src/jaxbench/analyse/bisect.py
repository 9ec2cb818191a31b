"""Bisecting a range of commits side by side: each step's three-way rule and the search (pure).

``jaxbench bisect GOOD BAD`` looks for the first commit of a step between
two commits, in first-parent order (``GOOD`` is commit 0, ``BAD`` commit
``n``). Each *step* times two commits of the range side by side
(:mod:`jaxbench.jobs.bisect` measures; this module decides), every benchmark
being bisected (a *target*) at once, and says of each target one of three
things, as Chromium Pinpoint's comparisons do:

* **different**: the two commits differ;
* **same**: they do not (differently defined at the ends and inside, below);
* **undecided**: neither yet; the step adds rounds, up to a limit.

**Paired figures** (warm times, first call and its stages, what a workload
adds to memory) are measured in rounds of fresh processes. Each round gives
one statistic: the log of head / base (warm times: the median over the
round's side-by-side samples, :func:`~jaxbench.analyse.stats.paired_round_estimates`;
first calls: one process a side), or head - base for memory amounts, which
may be 0. Rounds come in *looks* (:class:`Looks`: 5, 10 then 20 rounds by
default); after each look the rule is applied to the rounds so far:

* *different* when the paired t-test of "no change"
  (:func:`~jaxbench.analyse.stats.paired_p_value`) rejects, and the mean
  lies beyond the kind's gate (warm times: the review's 1.01,
  :data:`~jaxbench.analyse.stats.REVIEW_PAIRED_FACTOR`, so that what a
  review flags can be bisected; ``compare``'s 1.10 for first calls, 1.10
  and 1 MiB for memory). The p-value is spent over the
  looks by weighted Bonferroni: ``P = min over looks k of p_k / w_k``, the
  weights ``w_k`` proportional to the rounds of each look and summing to 1
  (:func:`spent_p_value`), so that under no change ``P <= u`` has a chance of
  at most ``u`` whenever the search stops. The step's targets are one family:
  *different* needs the Holm-adjusted ``P`` below ``alpha`` (1 %). ``P``
  only falls as looks are added and Holm's rejections only grow as
  p-values fall, so calling a target different at an early look never
  calls more than Holm on the final p-values would: the chance that a step
  between two commits of identical code calls any target different is at
  most ``alpha``.
* *same*, at the ends (no step size known yet): the two one-sided tests of
  equivalence, each at ``alpha * w_k``, put the mean within the kind's band
  (warm times: ``compare``'s 1.02, :data:`~jaxbench.analyse.stats.PAIRED_FACTOR`,
  as before their gate was lowered to the review's, so an unchanged
  benchmark settles in the rounds it did; the other kinds: their gate).
  Inside the range, for a target whose ends differed by ``D`` (the ends'
  mean): the one-sided upper bound of the change, at ``alpha * w_k``, lies
  below half of ``D``: this pair holds less than half of the step.
* *undecided* otherwise; after the last look it stays undecided.

**Exact figures** (XLA work, accuracy, and whether a benchmark fails at all)
need no rounds: one figures process a side gives each commit's value, and a
value is the same as another within a relative 1e-9
(:data:`~jaxbench.analyse.stats.EXACT_RTOL`).

**The search.** Step 1 times the ends: a target whose ends are not
different is left out (*no single step* when none is left). A target's
candidates are the commits ``1..n``; a different pair ``(x, y)`` keeps the
candidates in ``(x, y]``, a same pair drops them (a paired figure changes
between ``x`` and ``y`` only if its step lies there). An exact figure's
value at each commit measured tells on which side of it the step lies.
The next pair is the one whose outcomes tell the most about every target
still searched: the sum over their candidate sets (each counted once) of
the entropy of the split the pair makes, at most one bit each, a uniform
belief over the candidates (:func:`next_pair`); a pair already timed is
never timed again. So one step halves every candidate set the pair
reaches: two steps at two commits are found together, a range of ``n``
commits takes ``1 + ceil(log2 n)`` steps for one or two steps
(``tests/test_bisect.py`` checks this for every placement up to 32 commits).

**The answer.** A target whose candidates narrow to one commit ``c`` has its
step there; its size is the narrowest different pair around ``c`` (ratio
and interval at ``1 - alpha``). It is the *single* step only if that pair
holds at least :data:`SINGLE_SHARE` of the ends' change (the share's upper
bound, from the pair's upper bound over the ends' lower one); below it, the
change is *spread over several commits* and ``c`` is only the first part
found. An exact figure's step is single when ``c`` takes the value ``BAD``
has. A target left with several candidates (undecided at every pair that
could split them, or contradicting pairs) has no single step either.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum

from jaxbench.analyse.floors import floor_of
from jaxbench.analyse.stats import (
    DEFAULT_ALPHA,
    EXACT_RTOL,
    MIN_PAIRED_ROUNDS,
    PAIRED_FACTOR,
    REVIEW_PAIRED_FACTOR,
    holm_adjust,
    paired_p_value,
    paired_round_estimates,
)
from jaxbench.kinds import (
    ACCURACY_TRACKS,
    COMPILE_TRACKS,
    UNCHECKED_TRACK,
    WORK_FIGURES,
    WORK_PREFIX,
    WORKLOAD_MEMORY_TRACKS,
    Kind,
    kind_of,
    method_of,
)

__all__ = [
    "FIGURE_METHODS",
    "HALF",
    "SINGLE_SHARE",
    "Answer",
    "Call",
    "Finding",
    "Judged",
    "Looks",
    "Sampled",
    "Search",
    "StepRecord",
    "Target",
    "answer",
    "bisectable",
    "judge_step",
    "looks_of",
    "next_pair",
    "record_step",
    "spent_p_value",
    "start",
]

#: Inside the range, a pair that holds less than this share of the ends' change is "same".
HALF = 0.5
#: The step found is the single step when its pair holds at least this share of the change.
SINGLE_SHARE = 0.75
#: Gates of the paired kinds, as ``compare``'s defaults (warm, first call, memory).
FIRST_CALL_FACTOR = 1.10
MEMORY_FACTOR = 1.10
#: The figures a figures process (the ``track_*`` of a jax_suite) gives a bisect.
FIGURE_METHODS = frozenset(
    {
        *COMPILE_TRACKS,
        *WORKLOAD_MEMORY_TRACKS,
        *ACCURACY_TRACKS,
        UNCHECKED_TRACK,
        *(WORK_PREFIX + f for f in WORK_FIGURES),
    }
)


class Call(Enum):
    """A step's verdict on one target."""

    DIFFERENT = "different"
    SAME = "same"
    UNDECIDED = "undecided"


def bisectable(benchmark: str) -> str | None:
    """None when a bisect can measure ``benchmark`` side by side, else why not."""
    kind = kind_of(benchmark)
    method = method_of(benchmark)
    if kind is Kind.TIME or method in FIGURE_METHODS or kind is Kind.WORK:
        return None
    if kind is Kind.MEMORY:
        return (
            f"{method} has one value per asv run; bisect measures what each workload adds "
            "to memory (track_workload_*) instead"
        )
    return f"{method} is not a figure bisect measures (time_*, first call, work, accuracy, memory)"


@dataclass(frozen=True, order=True)
class Target:
    """One benchmark and parameter set being bisected."""

    benchmark: str
    params: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.benchmark + (f"({', '.join(self.params)})" if self.params else "")

    @property
    def kind(self) -> Kind:
        return kind_of(self.benchmark)

    @property
    def exact(self) -> bool:
        """Compared value to value (work, accuracy): no rounds."""
        return self.kind in (Kind.WORK, Kind.ACCURACY)

    @property
    def amounts(self) -> bool:
        """Memory amounts (may be 0): differences, not logs."""
        return self.kind is Kind.MEMORY

    @property
    def lockstep(self) -> bool:
        """Timed warm by the lockstep workers (else by the figures process)."""
        return self.kind is Kind.TIME


@dataclass(frozen=True)
class Looks:
    """Rounds (cumulative) at which the rule is applied, and alpha's share at each."""

    rounds: tuple[int, ...]

    def share(self, look: int) -> float:
        """Alpha spent at ``look``: in proportion to its rounds, summing to 1."""
        return self.rounds[look] / sum(self.rounds)

    @property
    def last(self) -> int:
        return len(self.rounds) - 1


def looks_of(first: int, most: int) -> Looks:
    """``first`` rounds, doubled at each look, up to ``most`` (the last look)."""
    if first < MIN_PAIRED_ROUNDS or most < first:
        raise ValueError(f"rounds: first >= {MIN_PAIRED_ROUNDS} and most >= first")
    rounds = [first]
    while rounds[-1] * 2 < most:
        rounds.append(rounds[-1] * 2)
    if rounds[-1] != most:
        rounds.append(most)
    return Looks(tuple(rounds))


def spent_p_value(stats: Sequence[float], looks: Looks) -> float:
    """The p-value of "no change" spent over the looks taken (weighted Bonferroni).

    ``stats`` holds one statistic per round, in order; the looks taken are
    those whose rounds it reaches (the rounds left out of a short last look
    count as that look). Valid whenever the sampling stops: see the module doc.
    """
    p = 1.0
    for look, rounds in enumerate(looks.rounds):
        taken = stats[:rounds]
        if len(taken) >= 2:
            p = min(p, paired_p_value(taken) / looks.share(look))
        if len(stats) <= rounds:
            break
    return min(1.0, p)


@dataclass(frozen=True)
class Sampled:
    """What one step measured of one target.

    Paired figures: every sample of each side in order, ``per_round`` a
    round (1 for first calls and memory). Exact figures: one value a side.
    A side that failed has its cause in ``*_failed`` and no samples; a side
    asv skipped has ``*_skipped``.
    """

    base: tuple[float, ...] = ()
    head: tuple[float, ...] = ()
    per_round: int = 1
    base_failed: str = ""
    head_failed: str = ""
    base_skipped: bool = False
    head_skipped: bool = False

    @property
    def failed(self) -> str:
        """Why one side or both gave nothing to compare ("" when both did)."""
        sides = [
            side for side, why in (("base", self.base_failed), ("head", self.head_failed)) if why
        ]
        if sides:
            return f"failed at {' and '.join(sides)}: {self.base_failed or self.head_failed}"
        if self.base_skipped or self.head_skipped:
            sides = [
                side
                for side, skip in (("base", self.base_skipped), ("head", self.head_skipped))
                if skip
            ]
            return f"skipped by asv at {' and '.join(sides)}"
        return ""


def _t(p: float, dof: int) -> float:
    from scipy.special import stdtrit  # scipy.stats.t's own inverse

    return float(stdtrit(dof, p))


def _stats(target: Target, s: Sampled) -> list[float] | None:
    """One statistic a round: log(head / base), or head - base for amounts."""
    if target.amounts:
        if len(s.base) != len(s.head):
            return None
        return [h - b for b, h in zip(s.base, s.head, strict=True) if math.isfinite(b + h)]
    return paired_round_estimates(s.base, s.head, s.per_round)


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _band(target: Target, s: Sampled) -> float:
    """The band of *same* at the ends, in the statistic's units: log(factor), or bytes."""
    if target.kind is Kind.TIME:
        return math.log(PAIRED_FACTOR)
    if target.kind is Kind.COMPILE:
        return math.log(FIRST_CALL_FACTOR)
    floor = floor_of(target.benchmark)
    absolute = floor.history_absolute if floor is not None else 0.0
    base = _median(s.base) if s.base else 0.0
    return max(absolute, (MEMORY_FACTOR - 1.0) * abs(base))


@dataclass(frozen=True)
class Judged:
    """One target's verdict in one step (the base and head of the step are the pair's)."""

    target: Target
    call: Call
    reason: str
    #: head / base: exp of the mean log (paired times), medians (amounts), values (exact)
    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    #: the mean statistic (log ratio or bytes) and its one-sided bounds at 1 - alpha / 2
    effect: float | None = None
    effect_low: float | None = None
    effect_high: float | None = None
    #: the p-value of "no change", spent over the looks, and Holm-adjusted over the step
    p_value: float | None = None
    holm_p: float | None = None
    rounds: int = 0
    #: exact figures: each side's value (None: failed; NaN: skipped)
    base_value: float | None = None
    head_value: float | None = None
    #: the benchmark failed on that side (an exception, a wrong answer, a timeout)
    base_failed: bool = False
    head_failed: bool = False


@dataclass(frozen=True)
class _Estimate:
    stats: tuple[float, ...]
    mean: float
    se: float
    #: beyond it *different* (with the test)
    gate: float
    #: within it *same* at the ends (equivalence)
    band: float
    p: float
    ratio: float | None


def _estimate(target: Target, s: Sampled, looks: Looks) -> _Estimate | None:
    stats = _stats(target, s)
    if stats is None or len(stats) < MIN_PAIRED_ROUNDS:
        return None
    n = len(stats)
    mean = sum(stats) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in stats) / (n - 1))
    if target.amounts:
        b, h = _median(s.base), _median(s.head)
        ratio = h / b if b > 0 else None
    else:
        ratio = math.exp(mean)
    band = _band(target, s)
    # a *different* warm time lies beyond the review's gate; the other kinds' gate is their band
    gate = math.log(REVIEW_PAIRED_FACTOR) if target.kind is Kind.TIME else band
    return _Estimate(
        tuple(stats), mean, sd / math.sqrt(n), gate, band, spent_p_value(stats, looks), ratio
    )


def _exact_value(values: tuple[float, ...], failed: str, skipped: bool) -> float | None:
    if skipped:
        return math.nan
    if failed or not values:
        return None
    return values[0]


def same_value(a: float | None, b: float | None) -> bool:
    """Exact figures: both failed, both skipped, or equal within a relative 1e-9."""
    if a is None or b is None:
        return a is None and b is None
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= EXACT_RTOL * max(abs(a), abs(b))


def _judge_exact(target: Target, s: Sampled) -> Judged:
    base = _exact_value(s.base, s.base_failed, s.base_skipped)
    head = _exact_value(s.head, s.head_failed, s.head_skipped)
    ratio = head / base if base and head is not None and math.isfinite(base + head) else None
    if same_value(base, head):
        call, reason = Call.SAME, "the same value"
    else:
        call, reason = Call.DIFFERENT, s.failed or "the value changed"
    return Judged(
        target,
        call,
        reason,
        ratio,
        ratio,
        ratio,
        base_value=base,
        head_value=head,
        base_failed=bool(s.base_failed),
        head_failed=bool(s.head_failed),
    )


def _fmt_p(p: float) -> str:
    return f"{p:.2g}"


def _call_paired(
    e: _Estimate, holm: float, ends: float | None, level: float, alpha: float
) -> tuple[Call, str]:
    t = _t(1 - level, len(e.stats) - 1)
    upper, lower = e.mean + t * e.se, e.mean - t * e.se
    different = holm < alpha and abs(e.mean) > e.gate
    tested = f"Holm p={_fmt_p(holm)}"
    if ends is None:
        if different:
            return Call.DIFFERENT, f"{tested} < {alpha:g}, beyond the gate"
        if -e.band < lower and upper < e.band:
            return Call.SAME, "within the band (equivalence at the look's alpha)"
        return Call.UNDECIDED, f"{tested}; neither beyond the gate nor surely within the band"
    sign = 1.0 if ends > 0 else -1.0
    bound = upper if sign > 0 else -lower
    if bound < abs(ends) * HALF:
        return Call.SAME, f"holds under {HALF:.0%} of the ends' change (upper bound)"
    if different:
        return Call.DIFFERENT, f"{tested} < {alpha:g}, beyond the gate"
    return Call.UNDECIDED, f"{tested}; may hold the step or not"


def judge_step(
    sampled: Mapping[Target, Sampled],
    looks: Looks,
    look: int,
    *,
    ends: Mapping[Target, float] | None = None,
    alpha: float = DEFAULT_ALPHA,
) -> dict[Target, Judged]:
    """Every target's verdict after ``look`` (see the module doc).

    ``ends``: each target's change between the ends (its mean statistic at
    the first step); None at the first step. The paired targets of
    ``sampled`` are the Holm family: give every target the step measured,
    decided or not (a decided target's samples stop growing).
    """
    judged: dict[Target, Judged] = {}
    estimates: dict[Target, _Estimate] = {}
    for target, s in sampled.items():
        if target.exact:
            judged[target] = _judge_exact(target, s)
        elif s.failed:
            judged[target] = Judged(
                target,
                Call.UNDECIDED,
                s.failed,
                base_failed=bool(s.base_failed),
                head_failed=bool(s.head_failed),
            )
        else:
            found = _estimate(target, s, looks)
            if found is None:
                judged[target] = Judged(
                    target,
                    Call.UNDECIDED,
                    f"fewer than {MIN_PAIRED_ROUNDS} whole rounds side by side",
                )
            else:
                estimates[target] = found
    adjusted = dict(zip(estimates, holm_adjust([e.p for e in estimates.values()]), strict=True))
    level = alpha * looks.share(look)
    for target, e in estimates.items():
        change = None if ends is None else ends.get(target)
        call, reason = _call_paired(e, adjusted[target], change, level, alpha)
        half = _t(1 - alpha / 2, len(e.stats) - 1) * e.se
        interval: tuple[float | None, float | None] = (None, None)
        if not target.amounts:
            interval = (math.exp(e.mean - half), math.exp(e.mean + half))
        judged[target] = Judged(
            target,
            call,
            reason,
            ratio=e.ratio,
            low=interval[0],
            high=interval[1],
            effect=e.mean,
            effect_low=e.mean - half,
            effect_high=e.mean + half,
            p_value=e.p,
            holm_p=adjusted[target],
            rounds=len(e.stats),
        )
    return judged


@dataclass(frozen=True)
class StepRecord:
    """One step: the pair timed (indices into the range), every verdict, rounds and time."""

    base: int
    head: int
    judged: tuple[Judged, ...]
    seconds: float = 0.0

    @property
    def rounds(self) -> int:
        return max((j.rounds for j in self.judged), default=0)

    def of(self, target: Target) -> Judged | None:
        return next((j for j in self.judged if j.target == target), None)


@dataclass(frozen=True)
class _Track:
    """One target's search: what the ends said and the commits that may hold its step."""

    target: Target
    candidates: tuple[int, ...]
    ends: Judged | None = None
    #: compared value to value: an exact figure, or one that fails at one end only
    exact: bool = False
    #: compare only whether it fails (a paired figure failing at one end)
    fails_only: bool = False
    #: exact values seen, by commit index (0: GOOD, n: BAD)
    values: tuple[tuple[int, float | None], ...] = ()
    contradicted: bool = False

    @property
    def searched(self) -> bool:
        """Still looking: the ends differ and several commits remain."""
        return (
            self.ends is not None
            and self.ends.call is Call.DIFFERENT
            and len(self.candidates) > 1
            and not self.contradicted
        )

    def value_at(self, index: int) -> float | None:
        return dict(self.values).get(index)

    def is_old(self, value: float | None) -> bool:
        """Whether ``value`` is GOOD's (its step lies after the commit that has it)."""
        old = self.value_at(0)
        if self.fails_only:
            return (value is None) == (old is None)
        return same_value(value, old)

    def is_new(self, value: float | None) -> bool:
        new = self.values[1][1] if len(self.values) > 1 else None
        if self.fails_only:
            return (value is None) == (new is None)
        return same_value(value, new)


@dataclass(frozen=True)
class Search:
    """A bisection under way: the range (first-parent order), the targets' searches, steps."""

    commits: tuple[str, ...]
    tracks: tuple[_Track, ...]
    steps: tuple[StepRecord, ...] = ()

    @property
    def n(self) -> int:
        return len(self.commits) - 1

    def measured(self) -> tuple[Target, ...]:
        """The targets the next step measures: all at the ends, then those still searched."""
        if not self.steps:
            return tuple(t.target for t in self.tracks)
        return tuple(t.target for t in self.tracks if t.searched)

    def ends_effects(self) -> dict[Target, float]:
        """Each searched paired target's change between the ends (its mean statistic)."""
        return {
            t.target: t.ends.effect
            for t in self.tracks
            if t.ends is not None and t.ends.effect is not None and not t.exact
        }


def start(commits: Sequence[str], targets: Iterable[Target]) -> Search:
    """A search of ``commits`` (GOOD first, BAD last) for ``targets``."""
    if len(commits) < 2:
        raise ValueError("a range needs two commits")
    n = len(commits) - 1
    tracks = tuple(_Track(t, tuple(range(1, n + 1)), exact=t.exact) for t in sorted(set(targets)))
    return Search(tuple(commits), tracks)


def _side_values(track: _Track, judged: Judged) -> tuple[float | None, float | None]:
    """The values that place a step: exact values, or failed (None) / ran (0.0)."""
    if track.fails_only or not track.target.exact:
        return (None if judged.base_failed else 0.0), (None if judged.head_failed else 0.0)
    return judged.base_value, judged.head_value


def _ends_track(track: _Track, judged: Judged | None, n: int) -> _Track:
    if judged is None:
        return replace(track, ends=Judged(track.target, Call.UNDECIDED, "not measured"))
    if track.exact:
        return replace(track, ends=judged, values=((0, judged.base_value), (n, judged.head_value)))
    if judged.base_failed != judged.head_failed:
        # a paired figure that fails at one end only: its step is where that begins
        fails = replace(track, exact=True, fails_only=True)
        base, head = _side_values(fails, judged)
        ends = replace(judged, call=Call.DIFFERENT, reason=judged.reason)
        return replace(fails, ends=ends, values=((0, base), (n, head)))
    return replace(track, ends=judged)


def _narrow_exact(track: _Track, index: int, value: float | None) -> _Track:
    cands = track.candidates
    if track.is_old(value):  # the step lies after this commit
        kept = tuple(c for c in cands if c > index)
    else:  # it lies at or before it
        kept = tuple(c for c in cands if c <= index)
    values = (*track.values, (index, value))
    return replace(track, candidates=kept or cands, values=values, contradicted=not kept)


def _narrow(track: _Track, step: StepRecord, n: int) -> _Track:
    judged = step.of(track.target)
    if judged is None or not track.searched:
        return track
    if track.exact:
        for index, value in zip((step.base, step.head), _side_values(track, judged), strict=True):
            if 0 < index < n and track.searched:
                track = _narrow_exact(track, index, value)
        return track
    inside = tuple(c for c in track.candidates if step.base < c <= step.head)
    if judged.call is Call.DIFFERENT:
        kept = inside
    elif judged.call is Call.SAME:
        kept = tuple(c for c in track.candidates if c not in inside)
    else:
        return track
    return replace(track, candidates=kept or track.candidates, contradicted=not kept)


def record_step(search: Search, step: StepRecord) -> Search:
    """The search after ``step`` (the first step is the ends)."""
    if not search.steps:
        tracks = tuple(_ends_track(t, step.of(t.target), search.n) for t in search.tracks)
    else:
        tracks = tuple(_narrow(t, step, search.n) for t in search.tracks)
    return replace(search, tracks=tracks, steps=(*search.steps, step))


def _bits(parts: Sequence[int]) -> float:
    total = sum(parts)
    if total <= 0:
        return 0.0
    return -sum(p / total * math.log2(p / total) for p in parts if p)


def _split_points(candidates: Sequence[int]) -> set[int]:
    """Commits whose pairs split ``candidates`` near its quantiles (eighths)."""
    m = len(candidates)
    points = {candidates[0] - 1, candidates[-1]}
    for eighth in range(1, 8):
        j = min(m - 1, max(0, round(m * eighth / 8)))
        points.update((candidates[j] - 1, candidates[j]))
    return points


def next_pair(search: Search) -> tuple[int, int] | None:
    """The next pair to time (indices, base older), or None when the search is over."""
    if not search.steps:
        return (0, search.n)
    live = [t for t in search.tracks if t.searched]
    if not live:
        return None
    groups: dict[tuple[tuple[int, ...], bool], _Track] = {}
    for track in live:
        groups.setdefault((track.candidates, track.exact), track)
    timed = {(s.base, s.head) for s in search.steps}
    points = sorted({0, search.n}.union(*(_split_points(t.candidates) for t in live)))
    best: tuple[tuple[float, int, int], tuple[int, int]] | None = None
    for x, y in itertools.combinations(points, 2):
        if (x, y) in timed:
            continue
        gain = 0.0
        for (cands, exact), _ in groups.items():
            inside = sum(1 for c in cands if x < c <= y)
            if exact:
                before = sum(1 for c in cands if c <= x)
                parts = [before, inside, len(cands) - before - inside]
            else:
                parts = [inside, len(cands) - inside]
            gain += min(1.0, _bits(parts))
        key = (round(gain, 9), -(y - x), -x)
        if best is None or key > best[0]:
            best = (key, (x, y))
    if best is None or best[0][0] <= 0:
        return None
    return best[1]


@dataclass(frozen=True)
class Finding:
    """One target's answer."""

    target: Target
    #: the first commit of the step (index into the range); None: no single step
    index: int | None
    #: "single": the step is there; "spread", "no change", "undecided", "contradicted"
    outcome: str
    reason: str
    #: the narrowest different pair around the commit (paired), or the commit's own values
    evidence: Judged | None = None
    pair: tuple[int, int] | None = None
    #: the share of the ends' change that pair holds (paired figures), and its bounds
    share: float | None = None
    share_high: float | None = None
    ends: Judged | None = None
    #: the commits still candidates when no single commit was found
    candidates: tuple[int, ...] = ()

    @property
    def found(self) -> bool:
        return self.index is not None and self.outcome == "single"


@dataclass(frozen=True)
class Answer:
    """What the bisection found: per target, and the commits named."""

    findings: tuple[Finding, ...]
    steps: tuple[StepRecord, ...] = field(default=())

    @property
    def culprits(self) -> tuple[int, ...]:
        """Commits named the single step of some target, in range order."""
        return tuple(sorted({f.index for f in self.findings if f.found and f.index is not None}))

    @property
    def single(self) -> bool:
        return bool(self.culprits)

    @property
    def seconds(self) -> float:
        return sum(s.seconds for s in self.steps)


def _share(evidence: Judged, ends: Judged) -> tuple[float | None, float | None]:
    if evidence.effect is None or ends.effect is None or not ends.effect:
        return None, None
    share = evidence.effect / ends.effect
    sign = 1.0 if ends.effect > 0 else -1.0
    top = evidence.effect_high if sign > 0 else evidence.effect_low
    bottom = ends.effect_low if sign > 0 else ends.effect_high
    if top is None or bottom is None or sign * bottom <= 0:
        return share, math.inf
    return share, (sign * top) / (sign * bottom)


def _evidence(search: Search, target: Target, index: int) -> tuple[Judged, tuple[int, int]] | None:
    around = [
        (s.head - s.base, s, j)
        for s in search.steps
        if s.base < index <= s.head and (j := s.of(target)) is not None and j.call is Call.DIFFERENT
    ]
    if not around:
        return None
    _, step, judged = min(around, key=lambda t: t[0])
    return judged, (step.base, step.head)


def _finding(search: Search, track: _Track) -> Finding:
    target, ends = track.target, track.ends
    if ends is None or ends.call is not Call.DIFFERENT:
        why = ends.reason if ends is not None else "not measured"
        outcome = "no change" if ends is not None and ends.call is Call.SAME else "undecided"
        return Finding(target, None, outcome, f"the ends: {why}", ends=ends)
    if track.contradicted:
        return Finding(
            target,
            None,
            "contradicted",
            "the pairs contradict one another (a change that comes and goes?)",
            ends=ends,
            candidates=track.candidates,
        )
    if len(track.candidates) > 1:
        return Finding(
            target,
            None,
            "undecided",
            f"undecided between {len(track.candidates)} commits",
            ends=ends,
            candidates=track.candidates,
        )
    (index,) = track.candidates
    if track.exact:
        return _exact_finding(track, index)
    found = _evidence(search, target, index)
    if found is None:  # pragma: no cover - a single candidate always has its different pair
        return Finding(target, None, "undecided", "no different pair around it", ends=ends)
    judged, pair = found
    share, high = _share(judged, ends)
    if high is not None and high < SINGLE_SHARE:
        reason = (
            f"holds {share:.0%} of the ends' change (at most {high:.0%}): the change is "
            "spread over several commits"
        )
        return Finding(target, index, "spread", reason, judged, pair, share, high, ends)
    return Finding(target, index, "single", "the step", judged, pair, share, high, ends)


def _exact_finding(track: _Track, index: int) -> Finding:
    value, parent = track.value_at(index), track.value_at(index - 1)
    evidence = Judged(
        track.target,
        Call.DIFFERENT,
        "fails from here" if track.fails_only else "the value changed",
        base_value=parent,
        head_value=value,
        base_failed=parent is None,
        head_failed=value is None,
    )
    if parent and value is not None and math.isfinite(parent + value):
        evidence = replace(evidence, ratio=value / parent, low=value / parent, high=value / parent)
    pair = (index - 1, index)
    if any(i >= index and not track.is_new(v) for i, v in track.values):
        reason = "the value changed there, and again later: spread over several commits"
        return Finding(track.target, index, "spread", reason, evidence, pair, ends=track.ends)
    return Finding(track.target, index, "single", "the step", evidence, pair, ends=track.ends)


def answer(search: Search) -> Answer:
    """Every target's finding, in the order of the targets."""
    return Answer(tuple(_finding(search, t) for t in search.tracks), search.steps)
