"""Regressions in a results history, the way ``asv publish`` finds them.

For each series (one machine, environment, benchmark, parameter combination
and benchmark version: see :class:`~jaxbench.store.results.SeriesKey`), ordered by
commit date (there is no git repository to linearize), this does what
``asv publish`` does per graph:

1. ``asv.step_detect.detect_steps(values, weights)`` fits a piecewise
   constant function (L1 Potts), with asv's weights ``2 / |ci_99_b - ci_99_a|``
   (``asv._stats.get_weight``); failed points are missing data and
   skipped points (asv's NaN) are left out of the series.
2. ``asv.step_detect.detect_regressions(steps, threshold)`` keeps the upward
   steps that are *still present*: those needed to explain why the latest
   value is worse than the best value seen before. A step that a later
   improvement undid is not reported, as in asv's regressions page.

``before`` and ``after`` are the fitted levels on either side of the step, so
``ratio = after / before`` is above 1 for every regression listed; asv's
``jumps`` entry holds the *best* level after the step instead, kept as
``best_after`` (asv's regressions page shows that one, which a later outlier
can put far below ``before``).

A series is never fitted across a change of the machine's fingerprint (the
``fingerprint`` that asv copies from ``machine.json`` into each result file's
``params``): each run of equal fingerprints is fitted on its own, and the
change is reported as a :class:`MachineChange`, never as a step. Result files
without a fingerprint form one "unknown" segment.

:func:`scan` runs all of this on a :class:`~jaxbench.store.series_table.SeriesTable`
(the columns of a whole results directory). Its step fit is, by default,
:mod:`jaxbench.analyse.binseg` (binary segmentation with the evidence test,
seconds on a history where asv's fit takes minutes; measured against asv's in
``docs/measured.md``), or with ``detector="asv"`` asv's own, with its hot loop
vectorized (:mod:`jaxbench.analyse.steps`, bit-identical); segments whose values cannot
reach their threshold not fitted at all (:func:`cannot_regress`, exact), fits
reused by the digest of each segment's values and weights, and the remaining
fits spread over processes.

Thresholds follow ``asv.conf.json``'s ``regressions_thresholds``: regular
expressions matched (``re.match``) against ``name`` or ``name(p1, p2)``; when
several match, the largest wins; when none matches, ``threshold`` (5 %).

Deterministic figures (:attr:`Kind.WORK <jaxbench.kinds.Kind>`: XLA flops,
bytes, HLO op counts) are not step-fitted: consecutive equal values (within
:data:`EXACT_RELATIVE` relative) form the segments, and asv's
``detect_regressions`` runs on those with a threshold of :data:`EXACT_RELATIVE`
and no minimum segment length, so any lasting increase is reported at the
exact commit where it appeared (a matching ``thresholds`` entry still wins).
"""

from __future__ import annotations

import hashlib
import itertools
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jaxbench.analyse.evidence import judge
from jaxbench.analyse.findings import Evidence, Regression
from jaxbench.kinds import exact_figure, kind_of
from jaxbench.store.benchmarks_json import unit_of
from jaxbench.store.results import History, Point, SeriesKey

if TYPE_CHECKING:
    from jaxbench.store.series_table import BatchMap, Fits, SeriesTable

__all__ = [
    "DEFAULT_DETECTOR",
    "DEFAULT_THRESHOLD",
    "DETECTORS",
    "EXACT_RELATIVE",
    "Evidence",
    "MachineChange",
    "Regression",
    "Scan",
    "cannot_regress",
    "find_regressions",
    "scan",
    "series_regressions",
    "threshold_for",
]

#: asv publish's default relative threshold.
DEFAULT_THRESHOLD = 0.05
#: Step fits :func:`scan` can use: :mod:`jaxbench.analyse.binseg` and asv publish's.
DETECTORS = ("binseg", "asv")
#: The step fit of ``jaxbench regressions`` and ``jaxbench publish``.
DEFAULT_DETECTOR = "binseg"
#: Relative change above which a deterministic (WORK) figure has changed.
EXACT_RELATIVE = 1e-9

# asv's steps: (left, right, value, min_value, l1_error); left inclusive, right exclusive.
_Step = tuple[int, int, float, float, float]
# asv's jumps: (last index before, first index after, level before, best level after).
_Jump = tuple[int, int, float, float]


def threshold_for(key: SeriesKey, thresholds: Mapping[str, float] | None, default: float) -> float:
    """The relative threshold for a series, as asv publish picks it."""
    matched = [
        value for regex, value in (thresholds or {}).items() if re.match(regex, key.entry_name)
    ]
    return max(matched) if matched else default


def _get_weight(point: Point) -> float | None:
    """asv's data-point weight: 2 / width of the 99 % interval (None if unknown)."""
    if point.ci_99 is None:
        return None
    from asv import _stats

    weight: float | None = _stats.get_weight({"ci_99_a": point.ci_99[0], "ci_99_b": point.ci_99[1]})
    return weight


def _exact_steps(values: Sequence[float | None]) -> list[_Step]:
    """Runs of equal values (within EXACT_RELATIVE) as asv-style steps, error 0."""
    steps: list[_Step] = []
    start = last = -1
    level = 0.0
    for j, value in enumerate(values):
        if value is None:
            continue
        if start >= 0 and abs(value - level) <= EXACT_RELATIVE * max(abs(level), abs(value)):
            last = j
            continue
        if start >= 0:
            steps.append((start, last + 1, level, level, 0.0))
        start = last = j
        level = value
    if start >= 0:
        steps.append((start, last + 1, level, level, 0.0))
    return steps


def _exact_steps_of_array(values: Any) -> list[_Step]:
    """:func:`_exact_steps` of a float array (NaN: missing), the same steps, vectorized.

    A run starts where a value is not within EXACT_RELATIVE of the one before;
    when some value of a run is not within it of the run's first value, or a
    run's first value is within it of the previous run's (a drift in tiny
    steps), the loop of :func:`_exact_steps` decides instead.
    """
    import numpy as np

    index = np.flatnonzero(~np.isnan(values))
    if not len(index):
        return []
    v = values[index]
    prev, cur = v[:-1], v[1:]
    near = np.abs(cur - prev) <= EXACT_RELATIVE * np.maximum(np.abs(prev), np.abs(cur))
    starts = np.concatenate(([0], np.flatnonzero(~near) + 1))
    run_of = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(v))))
    level = v[starts][run_of]

    def close(x: Any, y: Any) -> Any:
        return np.abs(x - y) <= EXACT_RELATIVE * np.maximum(np.abs(x), np.abs(y))

    runs_hold = bool(np.all(close(v, level)))
    breaks_hold = not bool(np.any(close(v[starts[1:]], v[starts[:-1]])))
    if not (runs_hold and breaks_hold):
        return _exact_steps([None if x != x else float(x) for x in values.tolist()])
    ends = np.append(starts[1:], len(v)) - 1
    return [
        (int(index[a]), int(index[b]) + 1, float(v[a]), float(v[a]), 0.0)
        for a, b in zip(starts.tolist(), ends.tolist(), strict=True)
    ]


def _steps_of(points: Sequence[Point], exact: bool) -> tuple[list[_Step], int]:
    """asv-style steps of one series and the minimum segment length to report."""
    from jaxbench.analyse.steps import detect_steps

    values = [p.value for p in points]
    if exact:
        return _exact_steps(values), 1
    weights = [_get_weight(p) for p in points]
    return detect_steps(values, weights), 2


def _jumps(steps: Sequence[_Step], threshold: float, min_size: int) -> list[_Jump]:
    from asv import step_detect

    _last, _best, jumps = step_detect.detect_regressions(list(steps), threshold, min_size=min_size)
    return [(int(g), int(b), float(v0), float(v1)) for g, b, v0, v1 in jumps or ()]


def _found_jumps(
    steps: Sequence[_Step], threshold: float, min_size: int, include_fixed: bool
) -> list[tuple[_Jump, float, int | None]]:
    """(asv's jump, fitted level after it, index where it was undone or None), by position."""
    if len(steps) < 2:
        return []  # one level: no step (and asv's import spared)
    final = _jumps(steps, threshold, min_size)
    found: dict[int, tuple[_Jump, int | None]] = {j[1]: (j, None) for j in final}
    if include_fixed:
        open_jumps: dict[int, _Jump] = {}
        for end in range(1, len(steps) + 1):
            current = {j[1]: j for j in _jumps(steps[:end], threshold, min_size)}
            for bad, jump in open_jumps.items():
                if bad not in current and bad not in found:
                    found[bad] = (jump, steps[end - 1][0])
            open_jumps = current
    level_at = {step[0]: step[2] for step in steps}
    return [
        (jump, level_at.get(bad, jump[3]), fixed) for bad, (jump, fixed) in sorted(found.items())
    ]


def series_regressions(
    points: Sequence[Point],
    *,
    threshold: float,
    exact: bool = False,
    include_fixed: bool = False,
) -> list[Regression]:
    """Regressions in one series (points sorted by date, all of one key).

    By default only those still present at the end, as ``asv publish``.
    With ``include_fixed``, also every regression that was still present at
    some earlier point of the history (asv's rule applied to each prefix of
    the fitted steps) and was later undone; ``fixed_commit`` then names the
    first commit of the level where it no longer counted.
    """
    if not points:
        return []
    steps, min_size = _steps_of(points, exact)
    key = points[0].key
    kind = kind_of(key.benchmark)
    regressions: list[Regression] = []
    for (good_idx, bad_idx, before, best), after, fixed_idx in _found_jumps(
        steps, threshold, min_size, include_fixed
    ):
        bad_point = points[bad_idx]
        regressions.append(
            Regression(
                key=key,
                kind=kind,
                good_commit=points[good_idx].commit,
                bad_commit=bad_point.commit,
                date=bad_point.date,
                before=before,
                after=after,
                ratio=after / before if before else math.inf,
                unit=bad_point.unit,
                fixed_commit=None if fixed_idx is None else points[fixed_idx].commit,
                best_after=best,
            )
        )
    return regressions


def find_regressions(
    history: History,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    thresholds: Mapping[str, float] | None = None,
    include_fixed: bool = False,
) -> list[Regression]:
    """Regressions in every series of ``history``, newest first.

    Only those still present at the end of their series (as ``asv publish``),
    unless ``include_fixed``: see :func:`series_regressions`.
    """
    found: list[Regression] = []
    for key, all_points in history.series().items():
        # asv skipped these (NaN): not data, not failures; drop them from the series.
        points = [p for p in all_points if not p.skipped]
        if not points:
            continue
        exact = exact_figure(key.benchmark)
        default = EXACT_RELATIVE if exact else threshold
        found.extend(
            series_regressions(
                points,
                threshold=threshold_for(key, thresholds, default),
                exact=exact,
                include_fixed=include_fixed,
            )
        )
    found.sort(key=lambda r: (-r.date, r.key, r.bad_commit))
    return found


# ---------------------------------------------------------------------------
# The whole-directory scan


@dataclass(frozen=True)
class MachineChange:
    """Series of one machine and environment restarted at a fingerprint change."""

    machine: str
    env_name: str
    commit: str
    date: int
    before: str | None
    after: str | None
    series: int


@dataclass(frozen=True)
class Scan:
    """What a scan of a results directory found."""

    #: every step asv's fit finds, each with its evidence, newest first
    steps: tuple[Regression, ...]
    machine_changes: tuple[MachineChange, ...]
    n_series: int
    #: (machine, env_name, commit) -> series with a point at that commit
    series_at: Mapping[tuple[str, str, str], int]
    #: segments not fitted: their values cannot reach the threshold (see cannot_regress)
    screened: int = 0
    #: segments fitted in this scan (neither screened, exact nor found in the cache)
    fitted: int = 0

    @property
    def regressions(self) -> tuple[Regression, ...]:
        """The steps listed as regressions (exact, or confirmed by the values)."""
        return tuple(r for r in self.steps if r.evidence.listed)

    @property
    def unconfirmed(self) -> tuple[Regression, ...]:
        """The steps the values do not confirm (not tested, within noise, below a floor)."""
        return tuple(r for r in self.steps if not r.evidence.listed)


def _fit_rules(method: str) -> bytes:
    """The digest's personalisation of ``method``'s fits: binseg's with its rules' version."""
    from jaxbench.analyse.binseg import RULES

    return (f"{method}{RULES}" if method == "binseg" else method).encode()


def _segment_digest(values: Any, weights: Any, rules: bytes) -> bytes:
    h = hashlib.blake2b(digest_size=16, person=rules)
    h.update(values.tobytes())
    h.update(weights.tobytes())
    return h.digest()


def _sides(steps: Sequence[_Step], good_idx: int, bad_idx: int, limit: float) -> tuple[int, int]:
    """Where the values either side of a step start and end (for its test).

    Each side is the fitted level next to the step, widened over the
    neighbouring fitted levels within ``limit`` (relative) of it: up to the
    nearest change the threshold would count. A level change below the
    threshold is how the fit describes noise, and leaving those values out
    would test the fit's own choice of values again.
    """
    k = next(i for i, step in enumerate(steps) if step[1] - 1 == good_idx)
    m = next(i for i, step in enumerate(steps) if step[0] == bad_idx)

    def near(i: int, level: float) -> bool:
        return abs(steps[i][2] - level) <= limit * abs(level)

    first = k
    while first > 0 and near(first - 1, steps[k][2]):
        first -= 1
    last = m
    while last + 1 < len(steps) and near(last + 1, steps[m][2]):
        last += 1
    return steps[first][0], steps[last][1]


def _present(values: Any) -> list[float]:
    """The values of a slice of a series that are there (NaN: missing)."""
    return [float(v) for v in values.tolist() if v == v]


def cannot_regress(values: Any, threshold: float) -> bool:
    """True when no step fit of ``values`` can hold a regression at ``threshold``.

    An exact pre-screen: a series (segment) for which this is True is not fitted,
    and the listing is the same as if it were. Proof:

    1. Every fitted level lies in ``[lo, hi]``, the least and largest of the
       values (NaN, asv's missing data, left out). asv's levels are
       ``RangeMedian.mu(l, r)`` (``merge_pieces`` rebuilds every value with it,
       for the penalty search and ``--quick`` alike): a weighted median, which
       is one of the values of the segment or ``(a + b) / 2`` of two of them,
       ``a <= b``; rounding is monotone and ``2a``, ``2b`` are exact, so
       ``fl(a + b) / 2`` is in ``[a, b]`` unless ``a + b`` overflows (hence
       the ``1e300`` guard). ``detect_steps`` fits a subset of the values
       (it also drops points of non-positive weight): still in ``[lo, hi]``.
    2. ``asv.step_detect.detect_regressions`` lists a step only when
       ``thresholded_best_v > cur_v + threshold_step``, where ``cur_v`` is a
       level, ``thresholded_best_v`` is a level (the last one, an earlier
       ``cur_v``, or a restored earlier value of itself) and ``threshold_step
       = max(cur_err, best_err, threshold * cur_v) >= fl(threshold * cur_v)``.
       ``include_fixed`` applies the same function to prefixes of the same steps.
    3. Floating-point ``x -> fl(x + fl(t * x))`` is non-decreasing for
       ``t >= 0`` (products, sums and rounding are monotone), so for every
       level ``cur_v >= lo``: ``cur_v + threshold_step >= fl(lo + fl(t * lo))``,
       computed here with the same Python float operations as asv. If ``hi``
       is not above that, no level ``<= hi`` passes the test of 2.

    Deterministic figures (exact kinds) are not step-fitted and not screened.
    """
    import numpy as np

    finite = values[~np.isnan(values)]
    if not len(finite):
        return True  # nothing to fit: asv's detect_steps returns no step
    lo, hi = float(finite.min()), float(finite.max())
    if not (abs(lo) < 1e300 and abs(hi) < 1e300):
        return False
    return bool(hi <= lo + threshold * lo)


def _fit_many(batch: Sequence[tuple[Any, Any, str]]) -> list[list[_Step]]:
    """Step fits of (values, weights, method); NaN is missing, as asv reads None.

    ``method``: ``"binseg"`` (:mod:`jaxbench.analyse.binseg`), ``"autogamma"``
    (asv's fit with its penalty search) or ``"quick"`` (asv's default penalty).
    """
    from jaxbench.analyse import binseg
    from jaxbench.analyse.steps import detect_steps

    return [
        binseg.detect_steps(y, w)
        if method == "binseg"
        else detect_steps(y.tolist(), w.tolist(), quick=method == "quick")
        for y, w, method in batch
    ]


#: Below this many points to fit (about 1 s of fitting here), processes cost more than they save.
PARALLEL_MIN_POINTS = 20_000


def _fit_all(
    pending: Sequence[tuple[Any, Any, str]], parallel: BatchMap | None
) -> list[list[_Step]]:
    """Step fits of every pending segment, through ``parallel`` when it pays."""
    # a binseg fit costs about 1/25 of asv's per point (bench/bench_scan_parts.py)
    total = sum(len(y) // (25 if m == "binseg" else 1) for y, _w, m in pending)
    if parallel is None or total < PARALLEL_MIN_POINTS or len(pending) < 2:
        return _fit_many(pending)
    n_workers = min(os.cpu_count() or 1, 8)

    # Batches of about equal work (a fit costs about linear time), big ones first.
    order = sorted(range(len(pending)), key=lambda i: -len(pending[i][0]))
    n_batches = n_workers * 4
    batches: list[list[int]] = [[] for _ in range(n_batches)]
    loads = [0] * n_batches
    for i in order:
        j = loads.index(min(loads))
        batches[j].append(i)
        loads[j] += len(pending[i][0]) + 50
    batches = [b for b in batches if b]
    results: list[list[_Step]] = [[] for _ in pending]
    outputs = parallel(_fit_many, [[pending[i] for i in b] for b in batches])
    for batch, fitted in zip(batches, outputs, strict=True):
        for i, steps in zip(batch, fitted, strict=True):
            results[i] = steps
    return results


def scan(
    table: SeriesTable,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    thresholds: Mapping[str, float] | None = None,
    include_fixed: bool = False,
    parallel: BatchMap | None = None,
    quick: bool = False,
    prescreen: bool = True,
    detector: str = DEFAULT_DETECTOR,
) -> tuple[Scan, Fits]:
    """Regressions and machine changes of every series of ``table``, newest first.

    The same regressions as :func:`find_regressions` on the same files, with
    ``after`` the fitted level, and each series cut at fingerprint changes.
    ``quick``: asv's fit with its default penalty, not searched for (see
    :func:`jaxbench.analyse.steps.detect_steps`). A segment whose values
    cannot reach its threshold (:func:`cannot_regress`) is not fitted: the
    answer is the same; ``prescreen=False`` fits it anyway (tests, benchmarks).
    ``detector``: ``"asv"``, asv's step fit, or ``"binseg"``,
    :mod:`jaxbench.analyse.binseg` (fast); either is cached by segment digest.
    ``parallel``: how to spread the step fits (the jobs pass worker processes;
    None: this process). Returns the fits used (digest -> steps) for the cache.
    """
    if detector not in DETECTORS:
        raise ValueError(f"detector {detector!r}: one of {', '.join(DETECTORS)}")
    if quick and detector != "asv":
        raise ValueError("quick is a setting of asv's fit (detector='asv')")
    import numpy as np

    files = table.files
    fp_ids: dict[str | None, int] = {}
    file_fp = np.asarray(
        [fp_ids.setdefault(f.fingerprint, len(fp_ids)) for f in files], dtype=np.int64
    )
    series_at_file: Any = np.bincount(table.file_idx, minlength=len(files)) if len(files) else []
    series_at = {
        (f.machine, f.env_name, f.commit): int(series_at_file[i]) for i, f in enumerate(files)
    }

    # (series index, segment start, segment end, exact, fit digest, threshold)
    segments: list[tuple[int, int, int, bool, bytes | None, float]] = []
    screened = 0
    searched = 0  # step-fitted segments, screened ones included (Holm's family)
    pending: list[tuple[Any, Any, str]] = []
    method = "binseg" if detector == "binseg" else "quick" if quick else "autogamma"
    rules = _fit_rules(method)  # once a scan, not once a segment
    pending_keys: list[bytes] = []
    pending_set: set[bytes] = set()
    used: Fits = {}
    changes: dict[tuple[str, str, str, str | None, str | None], int] = {}
    for i, key in enumerate(table.keys):
        fidx, values, weights = table.points(i)
        if not len(values):
            continue
        exact = exact_figure(key.benchmark)
        limit = threshold_for(key, thresholds, EXACT_RELATIVE if exact else threshold)
        fps = file_fp[fidx]
        cuts = [0, *(np.flatnonzero(fps[1:] != fps[:-1]) + 1).tolist(), len(values)]
        for a, b in itertools.pairwise(cuts):
            if a > 0:
                prev_file, next_file = files[int(fidx[a - 1])], files[int(fidx[a])]
                change = (
                    key.machine,
                    key.env_name,
                    next_file.commit,
                    prev_file.fingerprint,
                    next_file.fingerprint,
                )
                changes[change] = changes.get(change, 0) + 1
            digest = None
            searched += not exact
            if not exact and prescreen and cannot_regress(values[a:b], limit):
                screened += 1
                continue
            if not exact:
                digest = _segment_digest(values[a:b], weights[a:b], rules)
                cached = table.fits.get(digest)
                if cached is not None:
                    used[digest] = cached
                elif digest not in pending_set:
                    pending_set.add(digest)
                    pending_keys.append(digest)
                    pending.append((values[a:b], weights[a:b], method))
            segments.append((i, a, b, exact, digest, limit))
    if pending:
        import scipy.special  # noqa: F401  (once, before any worker process is forked)

    for digest, new in zip(pending_keys, _fit_all(pending, parallel), strict=True):
        used[digest] = tuple(new)

    candidates: list[
        tuple[Regression, list[float], list[float], tuple[list[float], list[float]]]
    ] = []
    for i, a, b, exact, digest, limit in segments:
        key = table.keys[i]
        fidx, values, _weights = table.points(i)
        if exact:
            fitted: Sequence[_Step] = _exact_steps_of_array(values[a:b])
            min_size = 1
        else:
            assert digest is not None
            fitted = list(used[digest])
            min_size = 2
        if not fitted:
            continue
        kind = kind_of(key.benchmark)
        unit = unit_of(table.units, key.benchmark)
        for (good_idx, bad_idx, before, best), after, fixed_idx in _found_jumps(
            fitted, limit, min_size, include_fixed
        ):
            good = files[int(fidx[a + good_idx])]
            bad = files[int(fidx[a + bad_idx])]
            fixed = None if fixed_idx is None else files[int(fidx[a + fixed_idx])].commit
            start, end = _sides(fitted, good_idx, bad_idx, limit)
            candidates.append(
                (
                    Regression(
                        key=key,
                        kind=kind,
                        good_commit=good.commit,
                        bad_commit=bad.commit,
                        date=bad.date,
                        before=before,
                        after=after,
                        ratio=after / before if before else math.inf,
                        unit=unit,
                        fixed_commit=fixed,
                        best_after=best,
                        fingerprint=bad.fingerprint,
                    ),
                    _present(values[a + start : a + good_idx + 1]),
                    _present(values[a + bad_idx : a + end]),
                    (_present(values[a : a + good_idx + 1]), _present(values[a + bad_idx : b])),
                )
            )
    found = judge(candidates, family=searched)
    found.sort(key=lambda r: (-r.date, r.key, r.bad_commit))
    dates = {f.commit: f.date for f in files}
    machine_changes = tuple(
        sorted(
            (
                MachineChange(m, e, c, dates[c], fb, fa, n)
                for (m, e, c, fb, fa), n in changes.items()
            ),
            key=lambda x: (-x.date, x.machine, x.env_name),
        )
    )
    return (
        Scan(
            steps=tuple(found),
            machine_changes=machine_changes,
            n_series=len(table.keys),
            series_at=series_at,
            screened=screened,
            fitted=len(pending),
        ),
        used,
    )
