"""A step of asv's fit is listed only when the values confirm it (analyse/evidence.py)."""

from __future__ import annotations

import itertools
import math
import random
from pathlib import Path

import pytest

from conftest import AsvResultsWriter, commit_hash
from jaxbench.analyse.detect import Evidence, Regression, Scan, scan
from jaxbench.analyse.evidence import MIN_SIDE, below_floor, judge
from jaxbench.analyse.stats import step_p_value
from jaxbench.cli import main
from jaxbench.kinds import Kind
from jaxbench.render.regressions import unconfirmed_summary
from jaxbench.store.results import SeriesKey
from jaxbench.store.series_table import load_series_table

DAY = 86_400_000
COMPILE = "w.W.track_compile_seconds"
RSS = "w.W.track_workload_peak_rss_bytes"
FLOPS = "w.W.track_work_flops"
UNCHECKED = "w.W.track_answer_unchecked"


def _scan(root: Path, detector: str = "binseg") -> Scan:
    found, _fits = scan(load_series_table(root, use_cache=False), detector=detector)
    return found


def _history(writer: AsvResultsWriter, rows: list[dict[str, float]]) -> None:
    for name in rows[0]:
        writer.add_benchmark(name, unit="bytes" if "bytes" in name else "seconds")
    writer.write_meta()
    for i, values in enumerate(rows):
        writer.write_result(commit_hash(i), i * DAY, values, single=frozenset(values))


# --- the test of one step -------------------------------------------------------------


def _p(before: list[float], after: list[float]) -> float:
    """A step's p-value when the windows are the whole series either side."""
    return step_p_value(before, after, (before, after))


def test_step_p_value_sees_a_clean_step_and_not_a_shuffle() -> None:
    rng = random.Random(1)
    before = [1.0 + rng.gauss(0, 0.05) for _ in range(12)]
    after = [1.5 + rng.gauss(0, 0.05) for _ in range(12)]
    assert _p(before, after) < 1e-6
    assert _p(after, before) == 1.0  # one-sided: a step down is no regression
    mixed = before + after
    rng.shuffle(mixed)
    assert _p(mixed[:12], mixed[12:]) > 0.01


def test_the_spread_comes_from_the_whole_series_not_the_fitted_levels() -> None:
    """Processes switching between two states: the fit's levels each look tight."""
    fast, slow = [1.0, 1.01, 0.99, 1.0], [1.8, 1.81, 1.79, 1.8]
    tight = step_p_value(fast, slow, (fast, slow))
    assert tight < 1e-6
    # the same windows inside a series that switched state all along
    switching = [1.0, 1.8, 1.0, 1.0, 1.8, 1.0, *fast]
    assert step_p_value(fast, slow, (switching, slow)) > 100 * tight


def test_step_p_value_pays_for_the_position_and_needs_values() -> None:
    from scipy.stats import t as student

    before, after = [1.0, 1.2, 1.0, 1.2], [2.0, 2.4, 2.0, 2.4]
    logs = [math.log(v) for v in before]
    diffs = [b - a for a, b in itertools.pairwise(logs)] * 2
    sigma = math.sqrt(sum(d * d for d in diffs) / len(diffs) / 2)
    statistic = math.log(2.0) / (sigma * math.sqrt(1 / 4 + 1 / 4))
    assert _p(before, after) == pytest.approx(7 * float(student.sf(statistic, 6)))
    assert _p([1.0], [2.0, 2.1, 2.2]) == 1.0
    assert _p([1.0, 1.0], [1.0, 1.0]) == 1.0
    assert _p([1.0, 1.0], [2.0, 2.0]) == 0.0  # no spread at all: any rise is real
    assert _p([0.0, 0.0], [5.0, 5.0]) == 0.0  # non-positive values: not logs


def test_holm_family_counts_the_series_searched_without_a_step() -> None:
    lows, highs = [1.0 + 0.01 * i for i in range(10)], [1.2 + 0.01 * i for i in range(10)]
    candidate = (_reg(Kind.COMPILE, 1.0, 1.2), lows, highs, (lows, highs))
    (alone,) = judge([candidate])
    (among_50,) = judge([candidate], family=50)
    assert alone.p_value == pytest.approx(_p(lows, highs))
    assert among_50.p_value == pytest.approx(min(1.0, 50 * _p(lows, highs)))
    (fewer,) = judge([candidate], family=0)  # never fewer than the tested steps
    assert fewer.p_value == alone.p_value


def _reg(kind: Kind, before: float, after: float, name: str = "w.W.x") -> Regression:
    key = SeriesKey("m", "env", name, (), "v1")
    ratio = after / before if before else math.inf
    return Regression(key, kind, "g", "b", 0, before, after, ratio, "unit")


def test_judge_by_kind_and_holm_over_the_scan() -> None:
    lows, highs = [1.0 + 0.01 * i for i in range(10)], [2.0 + 0.01 * i for i in range(10)]
    mixed = [lows[i // 2] if i % 2 else highs[i // 2] for i in range(20)]
    judged = judge(
        [
            (_reg(Kind.WORK, 1.0, 2.0, FLOPS), [1.0], [2.0], ([1.0], [2.0])),
            (
                _reg(Kind.MEMORY, 0.0, 24 * 1024.0, RSS),
                [0.0] * 5,
                [24 * 1024.0] * 5,
                ([0.0], [1.0]),
            ),
            (_reg(Kind.COMPILE, 1.0, 2.0), [1.0] * 3, [2.0] * 5, ([1.0] * 3, [2.0] * 5)),
            (_reg(Kind.COMPILE, 1.0, 2.0), lows, highs, (lows, highs)),
            (_reg(Kind.TIME, 1.0, 1.1), mixed[:10], mixed[10:], (mixed[:10], mixed[10:])),
        ]
    )
    assert [r.evidence for r in judged] == [
        Evidence.EXACT,
        Evidence.BELOW_FLOOR,
        Evidence.UNTESTED,
        Evidence.CONFIRMED,
        Evidence.NOISE,
    ]
    assert [(r.n_before, r.n_after) for r in judged][2:4] == [(3, 5), (10, 10)]
    assert judged[0].p_value is None
    assert judged[2].p_value is None
    tested = [r.p_value for r in judged[3:]]
    assert tested[0] is not None
    assert tested[0] < 0.01
    # Holm over the two tested steps: the smaller p doubled
    assert tested[0] == pytest.approx(2 * _p(lows, highs))
    assert [r.evidence.listed for r in judged] == [True, False, False, True, False]
    assert below_floor(judged[1])
    line = unconfirmed_summary([r for r in judged if not r.evidence.listed])
    assert line.startswith("Not listed: 3 fitted steps that the values do not confirm")
    assert f"1 with fewer than {MIN_SIDE} commits on a side" in line
    assert "1 within the noise" in line
    assert "1 within the measured floor of their family" in line
    assert unconfirmed_summary([]) == ""


# --- whole scans ----------------------------------------------------------------------


def _noisy(i: int, level: float, rng: random.Random) -> float:
    return level * math.exp(rng.gauss(0, 0.15))


def test_a_first_run_of_three_commits_lists_no_step_of_noise(
    asv_writer: AsvResultsWriter,
) -> None:
    """A fresh clone's first run: asv's fit finds steps in noise, none is listed."""
    rng = random.Random(7)
    names = [f"w.W{j:02d}.track_compile_seconds" for j in range(40)]
    _history(asv_writer, [{n: _noisy(i, 0.05, rng) for n in names} for i in range(3)])
    found = _scan(asv_writer.root, "asv")
    assert found.steps  # asv's fit alone would list these
    assert found.regressions == ()
    assert {r.evidence for r in found.unconfirmed} == {Evidence.UNTESTED}
    # binseg cuts nothing with fewer than 2 values on each side of the cut
    assert _scan(asv_writer.root).steps == ()


def test_a_real_compile_step_in_a_long_history_is_confirmed_at_its_commit(
    asv_writer: AsvResultsWriter,
) -> None:
    rng = random.Random(3)
    rows = [
        {
            COMPILE: (1.0 if i < 12 else 2.0) * 0.05 * math.exp(rng.gauss(0, 0.03)),
            RSS: (0.0 if i < 12 else 24 * 1024.0),
            FLOPS: 100.0 if i < 16 else 200.0,
            UNCHECKED: 0.0 if i < 22 else 1.0,  # the check dropped 2 commits ago
        }
        for i in range(24)
    ]
    _history(asv_writer, rows)
    found = _scan(asv_writer.root)
    listed = {(r.key.benchmark, r.bad_commit, r.evidence) for r in found.regressions}
    assert listed == {
        (COMPILE, commit_hash(12), Evidence.CONFIRMED),
        (FLOPS, commit_hash(16), Evidence.EXACT),
        (UNCHECKED, commit_hash(22), Evidence.EXACT),
    }
    ((rss),) = found.unconfirmed
    assert (rss.key.benchmark, rss.evidence) == (RSS, Evidence.BELOW_FLOOR)


def test_cli_counts_the_unconfirmed_and_lists_them_on_request(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(7)
    names = [f"w.W{j:02d}.track_compile_seconds" for j in range(40)]
    _history(asv_writer, [{n: _noisy(i, 0.05, rng) for n in names} for i in range(3)])
    base = ["regressions", "--results", str(asv_writer.root), "--no-cache", "--detector", "asv"]
    assert main(base) == 0
    out = capsys.readouterr().out
    assert out.startswith("No regressions in 40 series.\nNot listed: ")
    assert f"with fewer than {MIN_SIDE} commits on a side" in out
    assert main([*base, "--unconfirmed"]) == 0
    listing = capsys.readouterr().out
    assert "unconfirmed steps in 40 series" in listing
    assert "not tested (" in listing
