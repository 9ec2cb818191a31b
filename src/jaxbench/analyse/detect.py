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

``before`` is the fitted level before the step and ``after`` the best level
after it (asv's ``jumps`` entries), so ``ratio = after / before``.

Thresholds follow ``asv.conf.json``'s ``regressions_thresholds``: regular
expressions matched (``re.match``) against ``name`` or ``name(p1, p2)``; when
several match, the largest wins; when none matches, ``threshold`` (5 %).

Deterministic figures (:attr:`Kind.WORK <jaxbench.analyse.kinds.Kind>`: XLA flops,
bytes, HLO op counts) are not step-fitted: consecutive equal values (within
:data:`EXACT_RELATIVE` relative) form the segments, and asv's
``detect_regressions`` runs on those with a threshold of :data:`EXACT_RELATIVE`
and no minimum segment length, so any lasting increase is reported at the
exact commit where it appeared (a matching ``thresholds`` entry still wins).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from jaxbench.analyse.kinds import Kind, kind_of
from jaxbench.errors import ResultsError
from jaxbench.store import jsonc
from jaxbench.store.results import History, Point, SeriesKey

__all__ = [
    "DEFAULT_THRESHOLD",
    "EXACT_RELATIVE",
    "Regression",
    "find_regressions",
    "series_regressions",
    "threshold_for",
    "thresholds_from_asv_conf",
]

#: asv publish's default relative threshold.
DEFAULT_THRESHOLD = 0.05
#: Relative change above which a deterministic (WORK) figure has changed.
EXACT_RELATIVE = 1e-9

# asv's steps: (left, right, value, min_value, l1_error); left inclusive, right exclusive.
_Step = tuple[int, int, float, float, float]
# asv's jumps: (last index before, first index after, level before, best level after).
_Jump = tuple[int, int, float, float]


@dataclass(frozen=True)
class Regression:
    """A step up that is still present at the end of a series."""

    key: SeriesKey
    kind: Kind
    good_commit: str | None
    bad_commit: str
    date: int
    before: float
    after: float
    ratio: float
    unit: str
    fixed_commit: str | None = None

    @property
    def still_present(self) -> bool:
        """True unless a later commit brought the series back down."""
        return self.fixed_commit is None


def thresholds_from_asv_conf(path: Path) -> dict[str, float]:
    """``regressions_thresholds`` of an ``asv.conf.json`` (``{}`` when absent).

    asv.conf.json may hold ``//`` comments; they are stripped as asv does.
    Raises :class:`ResultsError` naming the file when it cannot be used.
    """
    conf = read_asv_conf(path)
    raw = conf.get("regressions_thresholds", {})
    if not isinstance(raw, dict):
        raise ResultsError(
            f"{path}: 'regressions_thresholds' must map regexes to numbers; fix the file"
        )
    thresholds: dict[str, float] = {}
    for regex, value in raw.items():
        try:
            number = float(value)
            re.compile(regex)
        except (TypeError, ValueError, re.error):
            raise ResultsError(
                f"{path}: regressions_thresholds[{regex!r}] = {value!r} is not a regex "
                "mapped to a number; fix the file"
            ) from None
        if not math.isfinite(number) or number < 0:
            raise ResultsError(
                f"{path}: regressions_thresholds[{regex!r}] = {value!r} must be >= 0; fix the file"
            )
        thresholds[regex] = number
    return thresholds


def read_asv_conf(path: Path) -> dict[str, object]:
    """The content of an ``asv.conf.json`` (asv allows ``//`` comments in it)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read ({exc.strerror or exc}); check the path") from None
    try:
        data = jsonc.loads(text)
    except ValueError as exc:
        raise ResultsError(f"{path}: not valid JSON ({exc}); fix the file") from None
    if not isinstance(data, dict):
        raise ResultsError(f"{path}: not an asv.conf.json (no JSON object); fix the file")
    return data


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


def _steps_of(points: Sequence[Point], exact: bool) -> tuple[list[_Step], int]:
    """asv-style steps of one series and the minimum segment length to report."""
    from asv import step_detect

    values = [p.value for p in points]
    if exact:
        return _exact_steps(values), 1
    weights = [_get_weight(p) for p in points]
    steps: list[_Step] = step_detect.detect_steps(values, weights)
    return steps, 2


def _jumps(steps: Sequence[_Step], threshold: float, min_size: int) -> list[_Jump]:
    from asv import step_detect

    _last, _best, jumps = step_detect.detect_regressions(list(steps), threshold, min_size=min_size)
    return [(int(g), int(b), float(v0), float(v1)) for g, b, v0, v1 in jumps or ()]


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
    final = _jumps(steps, threshold, min_size)
    # bad index -> (jump, fixed-at point index or None)
    found: dict[int, tuple[_Jump, int | None]] = {j[1]: (j, None) for j in final}
    if include_fixed:
        open_jumps: dict[int, _Jump] = {}
        for end in range(1, len(steps) + 1):
            current = {j[1]: j for j in _jumps(steps[:end], threshold, min_size)}
            for bad, jump in open_jumps.items():
                if bad not in current and bad not in found:
                    found[bad] = (jump, steps[end - 1][0])
            open_jumps = current
    key = points[0].key
    kind = kind_of(key.benchmark)
    regressions: list[Regression] = []
    for bad_idx, ((good_idx, _bad, before, after), fixed_idx) in sorted(found.items()):
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
        exact = kind_of(key.benchmark).exact
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
