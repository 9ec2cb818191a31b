"""Comparing a base run with a head run, benchmark by benchmark (pure).

Points are matched by (benchmark, parameter combination, environment); a
comparison never crosses machines. Each row gets the rule its kind calls for
(:mod:`jaxbench.kinds`, :mod:`jaxbench.analyse.stats`):

=========  ===============================================================
kind       rule
=========  ===============================================================
TIME       base and head in one run (:mod:`jaxbench.analyse.runs`): Welch
           t-test on log per-round medians (asv appends rounds of
           ``repeat`` samples, read from benchmarks.json; 30, the suite's,
           when unknown), Mann-Whitney U on pooled samples when they do not
           split into rounds; plus a factor (default 1.05). In separate
           runs: a t test of the log ratio whose spread comes from the
           series' other commits (:func:`_compare_across_runs`), or, with
           fewer than ``Settings.min_history`` of them, no test ("not side
           by side"). Measured side by side (``jaxbench ab``,
           ``Settings.paired``): a paired t-test over rounds and a 1.02 gate.
           Without ``Settings.paired``, where the paired history timed
           base and head side by side (``jaxbench pair-history``, a pair on
           file for exactly those two commits), its estimate and verdict
           (the pair's Holm family) replace the test of the runs; where it
           only chains them, the chained ratio is shown as evidence, never
           as a verdict (:mod:`jaxbench.analyse.paired_evidence`)
COMPILE    measured in fresh processes side by side (``jaxbench first-call``
           writes one value per process as samples, pair ``i`` of base and
           head taken one after the other): a paired t-test over the pairs
           and a gate (default 1.10). One value a side (``asv run`` alone):
           "moved, not tested" only beyond the stage's measured floor
           (:mod:`jaxbench.analyse.floors`) and 1.25, never failing by default
WORK       exact: any relative change beyond 1e-9 is "work changed"
ACCURACY   ``track_tolerance_used`` > 1 at head but not at base is a
           correctness regression; ``track_max_abs_error`` changes are shown;
           ``track_answer_unchecked`` 1 (declared ``Unchecked``) is UNCHECKED
MEMORY     what the workload adds to memory measured in fresh processes
           side by side (``jaxbench first-call``, one value per process): a
           paired t-test of the differences, gated by the memory factor
           (default 1.10) and the family's resolution (1 MiB). One value a
           side: "moved, not tested" only beyond the family's measured
           floor, absolute and relative (:mod:`jaxbench.analyse.floors`, e.g.
           24 MiB and 1.15x for ``peakmem_*``) and the memory factor; within
           it "unchanged (within the measured spread)"
OTHER      one value a side: "moved, not tested" beyond the time factor
=========  ===============================================================

One review is one family of tests: the p-values of every tested row (warm
times, first-call and workload-memory figures) are adjusted with Holm-Bonferroni
(:func:`jaxbench.analyse.stats.holm_adjust`) and a row is a regression or
improvement only when its adjusted p-value is below ``alpha`` (and its ratio
beyond the gate). So a review of two commits with the same code fails its
check at most ``alpha`` (1 %) of the time, however many rows it holds; work
and correctness are exact and cannot raise false alarms; untested figures
fail nothing unless ``Settings.fail_untested``, and are never counted as
changes: "moved, not tested" says a value moved beyond its gate where no test
could tell that from noise. Warm times judged by the paired history keep the
pair's own Holm family (the series of that pair), so a compare says what the
paired history's listing says about those two commits.

A benchmark that passed at base and fails at head (asv records no result,
e.g. its NumPy reference check failed) is FAILED whatever its kind. A
benchmark that asv *skipped* (NaN: setup raised ``NotImplementedError``, e.g.
a sharded workload on a machine with too few devices) on either side is
SKIPPED, never FAILED, unless it skipped at base and failed at head. A
workload declared ``Unchecked(reason)`` records ``track_answer_unchecked = 1``;
at head its accuracy rows (which asv skipped) and that flag are UNCHECKED, not
SKIPPED, with the reason from :mod:`jaxbench.store.checks` where the run kept
it. Losing a check (0 at base, 1 at head) is UNCHECKED too, and says so. Rows are
independent, so a speedup never hides a correctness regression of the same
workload; such a speedup is also marked in its reason.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import Enum

from jaxbench.analyse.floors import beyond_floor, floor_of
from jaxbench.analyse.paired_evidence import PairedEvidence, paired_evidence
from jaxbench.analyse.runs import one_run
from jaxbench.analyse.stats import (
    DEFAULT_ALPHA,
    DEFAULT_FACTOR,
    PAIRED_FACTOR,
    Comparison,
    Verdict,
    compare_across_runs,
    compare_exact,
    compare_factor,
    compare_failures,
    compare_new,
    compare_paired,
    compare_paired_amounts,
    compare_removed,
    compare_samples,
    compare_skipped,
    holm_adjust,
    round_medians,
    rounds_variance,
)
from jaxbench.errors import ResultsError, UsageError
from jaxbench.kinds import (
    REPEAT,
    TOLERANCE_TRACK,
    UNCHECKED_TRACK,
    WORKLOAD_MEMORY_TRACKS,
    Kind,
    kind_of,
    method_of,
)
from jaxbench.store.checks import UncheckedNote, find_note
from jaxbench.store.paired import PairedRun
from jaxbench.store.results import Point

_MiB = float(1 << 20)

__all__ = [
    "DEFAULT_FAIL_ON",
    "FAIL_CATEGORIES",
    "MIN_HISTORY",
    "CompareReport",
    "Row",
    "Settings",
    "WarmTest",
    "ab_command",
    "compare_points",
    "compare_single_value",
    "parse_fail_on",
]

#: Every category ``--fail-on`` accepts (plus ``none`` and ``all``).
FAIL_CATEGORIES = ("time", "compile", "accuracy", "work", "memory", "failed", "other")
#: Every kind of regression, and benchmarks that now fail.
DEFAULT_FAIL_ON = frozenset({"time", "compile", "accuracy", "work", "memory", "failed"})
#: Fewest other commits of a warm time's series (base and head left out)
#: from which its spread between runs is estimated; with fewer, base and
#: head from separate runs are not tested (bench/bench_cross_run.py).
MIN_HISTORY = 6


class WarmTest(Enum):
    """How a warm-time row was tested (see the module docstring)."""

    #: ``jaxbench ab`` (``--paired``): a paired t-test over side-by-side rounds
    SIDE_BY_SIDE = "side by side"
    #: base and head in one run: Welch on round medians (or Mann-Whitney)
    ONE_RUN = "one run"
    #: separate runs: the spread between runs from the series' history
    ACROSS_RUNS = "across runs"
    #: the paired history timed these two commits side by side: its pair's verdict
    PAIRED_HISTORY = "paired history"
    #: separate runs and too little history: no p-value
    NOT_TESTED = "not side by side"
    #: as NOT_TESTED, with the paired history's chained ratio shown (evidence, no test)
    CHAINED = "chained"

    @property
    def tested(self) -> bool:
        return self not in (WarmTest.NOT_TESTED, WarmTest.CHAINED)


@dataclass(frozen=True)
class Settings:
    """Thresholds of a comparison."""

    factor: float = DEFAULT_FACTOR
    #: Gate of first-call figures with one value a side (shown, not tested).
    compile_factor: float = 1.25
    memory_factor: float = 1.10
    #: Gate of first-call figures measured side by side in fresh processes.
    first_call_factor: float = 1.10
    #: Let untested figures (one value a side) beyond their factor fail the
    #: check, as asv's factor-only rule would; off: shown, never failing.
    fail_untested: bool = False
    alpha: float = DEFAULT_ALPHA
    #: Samples per asv round (``kinds.REPEAT``, the asv helper's default): warm
    #: times are tested on per-round (per-process) medians; None tests the
    #: pooled samples. Samples that do not split into >= 2 whole rounds of
    #: this size are tested pooled.
    round_size: int | None = REPEAT
    #: Per benchmark: samples per round read from asv's benchmarks.json
    #: (its ``repeat``; None where repeat is not a fixed count, so rounds
    #: cannot be split back). Benchmarks not listed use ``round_size``.
    round_sizes: tuple[tuple[str, int | None], ...] = ()
    #: Samples per round of base and head measured side by side by
    #: ``jaxbench ab`` (``--paired``): warm times are tested pair by pair
    #: (:func:`jaxbench.analyse.stats.compare_paired`); None: not paired.
    paired: int | None = None
    paired_factor: float = PAIRED_FACTOR
    #: Fewest other commits of history for the test across runs.
    min_history: int = MIN_HISTORY


@dataclass(frozen=True)
class Row:
    """One benchmark, parameter combination and environment, compared."""

    benchmark: str
    params: tuple[str, ...]
    env_name: str
    kind: Kind
    unit: str
    comparison: Comparison
    #: The samples each side recorded (for the spread in text tables); () if none.
    base_samples: tuple[float, ...] = ()
    head_samples: tuple[float, ...] = ()
    #: How a warm time measured at both sides was tested; None for other rows.
    warm_test: WarmTest | None = None
    #: The gate of a warm time read from the paired history (its pair's factor).
    gate: float | None = None

    @property
    def verdict(self) -> Verdict:
        return self.comparison.verdict

    @property
    def category(self) -> str | None:
        """The ``--fail-on`` category this row falls under, or None if it is no regression."""
        if self.verdict is Verdict.FAILED:
            return "failed"
        if self.verdict is Verdict.REGRESSION:
            return self.kind.value
        return None

    @property
    def workload(self) -> tuple[str, tuple[str, ...], str]:
        """The asv class, parameters and environment: rows of one workload share it."""
        return (self.benchmark.rsplit(".", 1)[0], self.params, self.env_name)


@dataclass(frozen=True)
class CompareReport:
    """Everything ``jaxbench compare`` found between two runs on one machine."""

    machine: str
    env_names: tuple[str, ...]
    base_commit: str
    head_commit: str
    rows: tuple[Row, ...]
    settings: Settings = Settings()
    #: Environment -> whether base and head were measured in one run there
    #: (:func:`jaxbench.analyse.runs.one_run`).
    one_run: tuple[tuple[str, bool], ...] = ()
    #: The head's environment where it is not the base's (one commit in two
    #: environments: ``jaxbench upgrade``; rows are named by the base's): "" otherwise.
    head_env: str = ""

    def warm_tests(self) -> Counter[WarmTest]:
        """Warm-time rows per way of testing them."""
        return Counter(row.warm_test for row in self.rows if row.warm_test is not None)

    def counts(self) -> Counter[Verdict]:
        """Rows per verdict."""
        return Counter(row.verdict for row in self.rows)

    def regressions_by_kind(self) -> Counter[Kind]:
        """Regression rows per kind (FAILED rows are counted by :meth:`counts`)."""
        return Counter(row.kind for row in self.rows if row.verdict is Verdict.REGRESSION)

    def improvements_by_kind(self) -> Counter[Kind]:
        """Improvement rows per kind."""
        return Counter(row.kind for row in self.rows if row.verdict is Verdict.IMPROVEMENT)

    def failing(self, fail_on: frozenset[str]) -> tuple[Row, ...]:
        """Rows that make the exit status non-zero under ``fail_on``."""
        return tuple(row for row in self.rows if row.category in fail_on)


def parse_fail_on(text: str) -> frozenset[str]:
    """``"time,accuracy"`` -> categories; ``none`` -> nothing; ``all`` -> everything."""
    parts = [p.strip().lower() for p in text.split(",") if p.strip()]
    if parts == ["none"]:
        return frozenset()
    if parts == ["all"]:
        return frozenset(FAIL_CATEGORIES)
    unknown = [p for p in parts if p not in FAIL_CATEGORIES]
    if unknown or not parts:
        raise UsageError(
            f"--fail-on: unknown category {', '.join(unknown) or repr(text)}; use a comma-"
            f"separated list of {', '.join(FAIL_CATEGORIES)}, or 'none' or 'all'"
        )
    return frozenset(parts)


_Match = tuple[str, tuple[str, ...], str]
#: One commit of a warm time's series: (date, commit, version, value, samples)
_Commit = tuple[int, str, str | None, float, tuple[float, ...]]


def _index(points: Iterable[Point]) -> dict[_Match, Point]:
    return {(p.key.benchmark, p.key.params, p.key.env_name): p for p in points}


def _one(values: set[str], what: str, side: str) -> str:
    if len(values) != 1:
        listed = ", ".join(sorted(values)) or "none"
        raise ResultsError(
            f"{side} results hold {len(values)} {what}s ({listed}); give one commit per side"
        )
    return next(iter(values))


def _result_file(point: Point) -> str:
    return f"{point.key.machine}/{point.commit[:8]}-{point.key.env_name}.json"


def _compare_time(
    base: Point,
    head: Point,
    settings: Settings,
    history: _History,
    evidence: PairedEvidence | None = None,
) -> tuple[Comparison, WarmTest]:
    for point in (base, head):
        if not point.samples and point.ci_99 is None:
            raise ResultsError(
                f"{_result_file(point)}: {point.key.benchmark} has no samples and no 99% "
                "interval; rerun asv with --record-samples for that commit"
            )
    note = ""
    if settings.paired is not None:
        paired = compare_paired(
            base.samples,
            head.samples,
            round_size=settings.paired,
            factor=settings.paired_factor,
            alpha=settings.alpha,
        )
        if paired is not None:
            return paired, WarmTest.SIDE_BY_SIDE
        note = (
            f"not paired ({len(base.samples)} and {len(head.samples)} samples, "
            f"not whole rounds of {settings.paired})"
        )
    elif evidence is not None and not evidence.chained:
        return _from_paired_history(base, head, evidence), WarmTest.PAIRED_HISTORY
    if history.one_run.get(base.key.env_name, False):
        comparison, how = _compare_unpaired(base, head, settings), WarmTest.ONE_RUN
    else:
        comparison, how = _compare_across_runs(base, head, settings, history)
    if evidence is not None and settings.paired is None:
        if how is WarmTest.NOT_TESTED:
            comparison = _chained(base, head, settings, history, comparison, evidence)
            how = WarmTest.CHAINED
        else:
            comparison = _with_note(comparison, f"{_paired_text(evidence)} (evidence, not a test)")
    return (_with_note(comparison, note) if note else comparison), how


def _x(ratio: float) -> str:
    return f"{ratio:.2f}x" if math.isfinite(ratio) else "inf"


def _paired_text(evidence: PairedEvidence) -> str:
    """``paired history: 1.01x [0.99x, 1.03x]``, with how many pairs it chains."""
    text = f"paired history: {_x(evidence.ratio)} [{_x(evidence.low)}, {_x(evidence.high)}]"
    if evidence.chained:
        return f"{text}, chained over {evidence.pairs} pairs"
    return f"{text}, {evidence.rounds} rounds side by side"


def _separate_ratio(base: Point, head: Point) -> str:
    """``; separate runs read 1.21x``: what asv's values alone say."""
    if base.value and head.value is not None:
        return f"; separate runs read {_x(head.value / base.value)}"
    return ""


def _from_paired_history(base: Point, head: Point, evidence: PairedEvidence) -> Comparison:
    """The row as the paired history judged it: the pair's estimate, Holm p and verdict."""
    verdict = evidence.verdict or Verdict.INCONCLUSIVE
    reason = _paired_text(evidence)
    holm, alpha = evidence.holm_p, evidence.alpha
    if holm is not None:
        sign = "<" if holm < alpha else ">="
        reason += f", Holm p={holm:.3g} {sign} {alpha:g} over the pair's {evidence.family} series"
        if verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT):
            reason += f" and ratio beyond {evidence.factor:g}"
        elif holm < alpha:
            reason += f" but ratio within {evidence.factor:g}"
    else:
        reason += f": {verdict.value}"
    return Comparison(
        base.value,
        head.value,
        evidence.ratio,
        evidence.p_value,
        verdict,
        reason + _separate_ratio(base, head),
        n_base=len(base.samples),
        n_head=len(head.samples),
        p_family=holm,
    )


def _chained(
    base: Point,
    head: Point,
    settings: Settings,
    history: _History,
    untested: Comparison,
    evidence: PairedEvidence,
) -> Comparison:
    """A warm time the runs cannot test, with the paired history's chained ratio
    shown instead of theirs. Never a verdict (:mod:`jaxbench.analyse.paired_evidence`
    says why): "moved, not tested" where the chain's interval lies beyond
    the pair's gate, unchanged where it lies within it, else inconclusive."""
    gate = evidence.factor
    if evidence.low > gate or evidence.high < 1 / gate:
        verdict, where = Verdict.UNTESTED, "lies beyond"
    elif evidence.low >= 1 / gate and evidence.high <= gate:
        verdict, where = Verdict.UNCHANGED, "lies within"
    else:
        verdict, where = Verdict.INCONCLUSIVE, "reaches both sides of"
    return replace(
        untested,
        ratio=evidence.ratio,
        verdict=verdict,
        reason=(
            f"{_paired_text(evidence)}: its interval {where} the gate {gate:g} "
            f"(a chain is evidence, not a test){_separate_ratio(base, head)}, "
            f"{_too_little(base, head, settings, history)}"
        ),
    )


def _round_size(benchmark: str, settings: Settings) -> int | None:
    for name, size in settings.round_sizes:
        if name == benchmark:
            return size
    return settings.round_size


@dataclass(frozen=True)
class _History:
    """What the test across runs needs besides base and head."""

    base_commit: str
    head_commit: str
    #: environment -> base and head measured in one run there
    one_run: Mapping[str, bool]
    #: (benchmark, params, env) -> (date, commit, version, value, samples) of every commit
    series: Mapping[_Match, Sequence[_Commit]]


def ab_command(base_commit: str, head_commit: str, command: str = "ab") -> str:
    """The command that measures base and head side by side (``jaxbench ab``, or
    ``first-call`` for first calls)."""
    return f"jaxbench {command} --base-commit {base_commit[:12]} --head-commit {head_commit[:12]}"


def _series_of(base: Point, head: Point, history: _History) -> list[_Commit]:
    """Base's series in the history, at the benchmark versions of base and head."""
    match = (base.key.benchmark, base.key.params, base.key.env_name)
    versions = {base.key.version, head.key.version}
    return [c for c in history.series.get(match, ()) if c[2] in versions]


def _history_parts(base: Point, head: Point, history: _History) -> list[list[float]]:
    """The series at the other commits, cut where base or head was left out."""
    parts: list[list[float]] = [[]]
    for _date, commit, _version, value, _samples in _series_of(base, head, history):
        if commit in (history.base_commit, history.head_commit):
            parts.append([])
        else:
            parts[-1].append(value)
    return [part for part in parts if part]


def _typical_rounds(base: Point, head: Point, history: _History, round_size: int) -> float | None:
    """How well a typical run of the series knew its value: the median
    :func:`jaxbench.analyse.stats.rounds_variance` of its other commits (None
    where none recorded rounds)."""
    found = [
        rounds
        for _date, commit, _version, _value, samples in _series_of(base, head, history)
        if commit not in (history.base_commit, history.head_commit)
        and (rounds := rounds_variance(round_medians(samples, round_size))) is not None
    ]
    return statistics.median(found) if found else None


def _too_little(base: Point, head: Point, settings: Settings, history: _History) -> str:
    """``1 other commit of history (6 needed): not tested``."""
    n_other = sum(len(part) for part in _history_parts(base, head, history))
    return (
        f"{n_other} other commit{'' if n_other == 1 else 's'} of history "
        f"({settings.min_history} needed): not tested"
    )


def _compare_across_runs(
    base: Point, head: Point, settings: Settings, history: _History
) -> tuple[Comparison, WarmTest]:
    """Warm times of base and head from separate runs (see :mod:`jaxbench.analyse.runs`).

    The within-run tests would read the shift between the runs as a change,
    so the spread is the series' spread between runs, estimated from its
    other commits (:func:`jaxbench.analyse.stats.compare_across_runs`). With
    fewer than ``settings.min_history`` of them there is nothing to estimate
    it from: no p-value; beyond the factor the row is "moved, not tested"
    (the "Not tested" line of the output names the command that tests it).
    """
    b_value, h_value = base.value, head.value
    if b_value is None or h_value is None:  # pragma: no cover - compare_points checked
        raise ValueError("a warm time without a value at base or head")
    parts = _history_parts(base, head, history)
    n_other = sum(len(part) for part in parts)
    n_base, n_head = len(base.samples), len(head.samples)
    if n_other >= settings.min_history:
        round_size = _round_size(base.key.benchmark, settings)
        tested = compare_across_runs(
            b_value,
            h_value,
            parts,
            factor=settings.factor,
            alpha=settings.alpha,
            n_base=n_base,
            n_head=n_head,
            base_rounds=round_medians(base.samples, round_size) if round_size else None,
            head_rounds=round_medians(head.samples, round_size) if round_size else None,
            typical_rounds=_typical_rounds(base, head, history, round_size) if round_size else None,
        )
        return tested, WarmTest.ACROSS_RUNS
    factor = compare_factor(b_value, h_value, factor=settings.factor)
    size = "beyond" if factor.verdict is Verdict.UNTESTED else "within"
    reason = (
        f"{size} factor {settings.factor:g}; separate runs, "
        f"{_too_little(base, head, settings, history)}"
    )
    untested = replace(factor, reason=reason, n_base=n_base, n_head=n_head)
    return untested, WarmTest.NOT_TESTED


def _compare_unpaired(base: Point, head: Point, settings: Settings) -> Comparison:
    return compare_samples(
        base.samples,
        head.samples,
        base_value=base.value,
        head_value=head.value,
        base_ci=base.ci_99,
        head_ci=head.ci_99,
        factor=settings.factor,
        alpha=settings.alpha,
        round_size=_round_size(base.key.benchmark, settings),
    )


def _outside(value: float) -> bool:
    return not math.isfinite(value) or value > 1.0


def _compare_tolerance(base: float, head: float) -> Comparison:
    ratio = head / base if base else None
    if _outside(head) and not _outside(base):
        return Comparison(
            base,
            head,
            ratio,
            None,
            Verdict.REGRESSION,
            f"correctness: outside tolerance at head ({head:.3g} of it used)",
        )
    if _outside(base) and not _outside(head):
        return Comparison(base, head, ratio, None, Verdict.FIXED, "back within tolerance")
    if _outside(base):
        return Comparison(
            base, head, ratio, None, Verdict.STILL_FAILING, "outside tolerance at base and head"
        )
    return Comparison(base, head, ratio, None, Verdict.UNCHANGED, "within tolerance")


def _compare_unchecked_flag(base: float, head: float) -> Comparison:
    """``track_answer_unchecked``: 1 declared unchecked, 0 checked against the reference."""
    if not base and not head:
        return Comparison(
            base, head, None, None, Verdict.UNCHANGED, "checked against the reference"
        )
    if base and not head:
        return Comparison(
            base, head, None, None, Verdict.CHANGED, "now checked against a reference"
        )
    if not base:
        return Comparison(
            base,
            head,
            None,
            None,
            Verdict.UNCHECKED,
            "checked at base, unchecked at head: the workload's reference was removed",
        )
    return Comparison(base, head, None, None, Verdict.UNCHECKED, "unchecked at base and head")


def _compare_values(base: Point, head: Point, kind: Kind, settings: Settings) -> Comparison:
    b_value, h_value = base.value, head.value
    if base.skipped or head.skipped:
        return compare_skipped(
            b_value, h_value, base_skipped=base.skipped, head_skipped=head.skipped
        )
    if b_value is None or h_value is None:
        return compare_failures(b_value, h_value)
    if kind is Kind.WORK:
        return compare_exact(b_value, h_value)
    if kind is Kind.ACCURACY:
        if method_of(base.key.benchmark) == UNCHECKED_TRACK:
            return _compare_unchecked_flag(b_value, h_value)
        if method_of(base.key.benchmark) == TOLERANCE_TRACK:
            return _compare_tolerance(b_value, h_value)
        exact = compare_exact(b_value, h_value)
        if exact.verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT):
            return Comparison(
                exact.base,
                exact.head,
                exact.ratio,
                None,
                Verdict.CHANGED,
                "error changed; track_tolerance_used decides pass or fail",
            )
        return exact
    if kind is Kind.COMPILE and len(base.samples) >= 2 and len(head.samples) >= 2:
        return _compare_first_call(base, head, settings)
    if (
        method_of(base.key.benchmark) in WORKLOAD_MEMORY_TRACKS
        and len(base.samples) >= 2
        and len(head.samples) >= 2
    ):
        return _compare_memory_pairs(base, head, settings)
    return compare_single_value(base.key.benchmark, b_value, h_value, kind, settings)


def compare_single_value(
    benchmark: str, base: float, head: float, kind: Kind, settings: Settings
) -> Comparison:
    """A figure with one value a side: changed only beyond its family's measured floor.

    The floor (:mod:`jaxbench.analyse.floors`: an absolute difference and a
    ratio, both sized from the spread between commits with identical code)
    and the kind's factor must both be exceeded; within them the figure is
    UNCHANGED, "within the measured spread". Beyond them it is "moved, not
    tested" (UNTESTED), or with ``Settings.fail_untested`` a regression or
    improvement. A family without a floor (``track_*`` figures of other
    kinds) keeps the factor alone.
    """
    fail = settings.fail_untested
    factor = {Kind.COMPILE: settings.compile_factor, Kind.MEMORY: settings.memory_factor}.get(
        kind, settings.factor
    )
    floor = floor_of(benchmark)
    if floor is None:
        return compare_factor(base, head, factor=factor, fail=fail)
    by_factor = compare_factor(base, head, factor=factor, fail=fail)
    if by_factor.verdict is Verdict.INCONCLUSIVE:
        return by_factor
    if not beyond_floor(floor, base, head, relative=factor):
        return replace(
            by_factor,
            verdict=Verdict.UNCHANGED,
            reason=f"unchanged (within the measured spread of {floor.label}; one value a side)",
        )
    verdict = Verdict.REGRESSION if head > base else Verdict.IMPROVEMENT
    return replace(
        by_factor,
        verdict=verdict if fail else Verdict.UNTESTED,
        reason=f"beyond the measured spread of {floor.label}, one value a side: no test possible",
    )


def _compare_first_call(base: Point, head: Point, settings: Settings) -> Comparison:
    """First-call figures with one value per fresh process: paired when counts match."""
    paired = compare_paired(
        base.samples,
        head.samples,
        round_size=1,
        factor=settings.first_call_factor,
        alpha=settings.alpha,
        what="fresh-process pairs",
    )
    if paired is not None:
        return paired
    unpaired = compare_samples(
        base.samples,
        head.samples,
        factor=settings.first_call_factor,
        alpha=settings.alpha,
        round_size=1,
    )
    return _with_note(
        unpaired,
        f"not paired ({len(base.samples)} and {len(head.samples)} processes)",
    )


def _compare_memory_pairs(base: Point, head: Point, settings: Settings) -> Comparison:
    """What a workload adds to memory, one value per fresh process (``jaxbench
    first-call``): a paired test of the differences, gated by the memory factor
    and the family's resolution (:attr:`~jaxbench.analyse.floors.Floor.history_absolute`)."""
    floor = floor_of(base.key.benchmark)
    absolute = floor.history_absolute if floor is not None else 0.0
    paired = compare_paired_amounts(
        base.samples,
        head.samples,
        factor=settings.memory_factor,
        absolute=absolute,
        absolute_text=f"{absolute / _MiB:g} MiB",
        alpha=settings.alpha,
    )
    if paired is not None:
        return paired
    return _with_note(
        compare_single_value(
            base.key.benchmark, base.value or 0.0, head.value or 0.0, Kind.MEMORY, settings
        ),
        f"not paired ({len(base.samples)} and {len(head.samples)} processes)",
    )


def _family(rows: Sequence[Row], alpha: float) -> list[Row]:
    """Every tested row judged with its Holm-adjusted p-value (see the module docstring).

    Warm times from the paired history keep the Holm adjustment of their own pair.
    """
    tested = [
        i
        for i, row in enumerate(rows)
        if row.comparison.p_value is not None and row.warm_test is not WarmTest.PAIRED_HISTORY
    ]
    adjusted = holm_adjust([rows[i].comparison.p_value or 0.0 for i in tested])
    out = list(rows)
    m = len(tested)
    family = f"{m} tested row{'s' if m != 1 else ''}"
    for i, p_family in zip(tested, adjusted, strict=True):
        row = out[i]
        c = replace(row.comparison, p_family=p_family)
        if c.verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT):
            if p_family < alpha:
                c = _with_note(c, f"Holm p={p_family:.3g} over {family}")
            else:
                c = replace(
                    c,
                    verdict=Verdict.NOT_SIGNIFICANT,
                    reason=f"{c.reason}, but Holm p={p_family:.3g} >= {alpha:g} over {family}",
                )
        out[i] = replace(row, comparison=c)
    return out


def _with_note(comparison: Comparison, note: str) -> Comparison:
    return replace(comparison, reason=f"{comparison.reason}; {note}")


def _unchecked(
    rows: Sequence[Row],
    head: Sequence[Point],
    notes: Sequence[UncheckedNote],
) -> list[Row]:
    """Rows of workloads declared unchecked at head: UNCHECKED, with the reason."""
    declared = {
        (p.key.benchmark.rsplit(".", 1)[0], p.key.params, p.key.env_name): p
        for p in head
        if method_of(p.key.benchmark) == UNCHECKED_TRACK and p.value == 1.0
    }
    out: list[Row] = []
    for row in rows:
        point = declared.get(row.workload)
        if point is None or row.kind is not Kind.ACCURACY:
            out.append(row)
            continue
        note = find_note(
            tuple(notes),
            machine=point.key.machine,
            commit=point.commit,
            env_name=point.key.env_name,
            benchmark=row.workload[0],
            params=row.params,
        )
        why = note.reason if note else "declared Unchecked (its reason was not kept)"
        c = row.comparison
        if c.verdict is Verdict.SKIPPED:
            c = replace(
                c,
                verdict=Verdict.UNCHECKED,
                reason=f"unchecked: {why}",
                base_skipped=False,  # not a skip: the figure does not exist, by declaration
                head_skipped=False,
            )
        elif c.verdict is Verdict.UNCHECKED:
            c = _with_note(c, why)
        out.append(replace(row, comparison=c))
    return out


def compare_points(
    base: Sequence[Point],
    head: Sequence[Point],
    settings: Settings = Settings(),
    *,
    notes: Sequence[UncheckedNote] = (),
    history: Iterable[Point] = (),
    paired: Iterable[PairedRun] = (),
) -> CompareReport:
    """Compare the points of one base commit with those of one head commit.

    ``notes``: why workloads are unchecked (:func:`jaxbench.store.checks.read_unchecked`),
    shown on their rows. ``history``: every point of the results directory
    (the machine's series at other commits), for warm times that base and
    head recorded in separate runs (:func:`_compare_across_runs`).
    ``paired``: the machine's paired history (:func:`jaxbench.store.paired.load_paired`);
    where it timed base and head side by side, its verdict is the warm time's
    (:mod:`jaxbench.analyse.paired_evidence`; not with ``Settings.paired``).

    Raises :class:`ResultsError` when a side is empty, the two sides (or
    either side) span several machines or commits, or a warm time has
    nothing to test.
    """
    if not base:
        raise ResultsError("no base results to compare; run asv on the base commit first")
    if not head:
        raise ResultsError("no head results to compare; run asv on the head commit first")
    machines = {p.key.machine for p in (*base, *head)}
    if len(machines) > 1:
        raise ResultsError(
            f"results from different machines: {', '.join(sorted(machines))}; "
            "compare results of one machine (pass --machine)"
        )
    base_commit = _one({p.commit for p in base}, "commit", "base")
    head_commit = _one({p.commit for p in head}, "commit", "head")
    base_index, head_index = _index(base), _index(head)
    same_run = one_run(base, head)
    series: dict[_Match, list[_Commit]] = {}
    history = tuple(history)
    dates = {p.commit: p.date for p in (*history, *base, *head)}
    order = sorted(dates, key=lambda c: (dates[c], c))
    evidence = paired_evidence(
        (r for r in paired if r.machine in machines), order, base_commit, head_commit
    )
    for p in history:
        if (
            p.value is not None
            and p.key.machine in machines
            and kind_of(p.key.benchmark) is Kind.TIME
        ):
            match = (p.key.benchmark, p.key.params, p.key.env_name)
            series.setdefault(match, []).append(
                (p.date, p.commit, p.key.version, p.value, p.samples)
            )
    for values in series.values():
        values.sort(key=lambda v: (v[0], v[1]))
    around = _History(base_commit, head_commit, same_run, series)

    rows: list[Row] = []
    for match in sorted(set(base_index) | set(head_index)):
        benchmark, params, env_name = match
        kind = kind_of(benchmark)
        b, h = base_index.get(match), head_index.get(match)
        how: WarmTest | None = None
        if b is not None and h is None:
            comparison, unit = compare_removed(b.value, skipped=b.skipped), b.unit
        elif h is not None and b is None:
            comparison, unit = compare_new(h.value, skipped=h.skipped), h.unit
        elif b is not None and h is not None:
            measured = not (b.skipped or h.skipped or b.value is None or h.value is None)
            if kind is Kind.TIME and measured:
                comparison, how = _compare_time(b, h, settings, around, evidence.get(match))
            else:
                comparison = _compare_values(b, h, kind, settings)
            unit = h.unit
            if b.key.version != h.key.version:
                comparison = _with_note(comparison, "benchmark code changed")
        else:  # pragma: no cover - every match comes from at least one side
            continue
        samples = (b.samples if b else (), h.samples if h else ())
        found = evidence.get(match) if how in (WarmTest.PAIRED_HISTORY, WarmTest.CHAINED) else None
        gate = found.factor if found is not None else None
        rows.append(Row(benchmark, params, env_name, kind, unit, comparison, *samples, how, gate))

    rows = _unchecked(_family(rows, settings.alpha), head, notes)
    broken = {row.workload for row in rows if row.category in ("accuracy", "failed")}
    rows = [
        replace(
            r, comparison=_with_note(r.comparison, "but this workload now breaks its tolerance")
        )
        if r.verdict is Verdict.IMPROVEMENT and r.workload in broken
        else r
        for r in rows
    ]
    return CompareReport(
        machine=next(iter(machines)),
        env_names=tuple(sorted({r.env_name for r in rows})),
        base_commit=base_commit,
        head_commit=head_commit,
        rows=tuple(rows),
        settings=settings,
        one_run=tuple(sorted(same_run.items())),
    )
