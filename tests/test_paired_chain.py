"""The paired history's pure core: pair estimates, chaining, gaps, the file format."""

from __future__ import annotations

import json
import math
import random
from dataclasses import replace
from pathlib import Path

import pytest

from jaxbench.analyse.paired_history import chain_series, estimate_pair
from jaxbench.errors import ResultsError
from jaxbench.store.paired import PairedEstimate, PairedRun, read_paired, write_paired

C = [f"{i:040x}" for i in range(1, 7)]


def _estimate(
    ratio: float, verdict: str = "unchanged", p: float | None = None, name: str = "b.T.time_x"
) -> PairedEstimate:
    p_value = p if p is not None else (0.001 if verdict == "regression" else 0.5)
    return PairedEstimate(
        name, ("64",), ratio, ratio * 0.99, ratio * 1.01, p_value, 10, 200, verdict
    )


def _run(base: str, head: str, ratio: float, verdict: str = "unchanged") -> PairedRun:
    return PairedRun("m1", "env", base, head, 20, 1.02, 0.01, 0, (_estimate(ratio, verdict),))


def test_the_series_of_one_pair_are_one_family_holm() -> None:
    """As in a review: ten series of one pair share alpha; p 0.005 alone is not enough."""
    from jaxbench.analyse.paired_history import flagged_in_pair

    others = tuple(_estimate(1.0, name=f"b.T{i}.time_x") for i in range(9))
    weak = PairedRun(
        "m1", "env", C[0], C[1], 20, 1.02, 0.01, 0, (_estimate(1.03, "regression", 0.005), *others)
    )
    strong = PairedRun(
        "m1", "env", C[1], C[2], 20, 1.02, 0.01, 0, (_estimate(1.03, "regression", 1e-4), *others)
    )
    assert flagged_in_pair(weak) == []
    assert [e.ratio for e in flagged_in_pair(strong)] == [1.03]
    series = next(s for s in chain_series([weak, strong], C) if s.benchmark == "b.T.time_x")
    assert [p.commit for p in series.flagged] == [C[2]]
    assert series.points[1].holm_p == pytest.approx(0.05)  # 0.005 x 10 series
    assert series.points[2].holm_p == pytest.approx(1e-3)


def test_side_by_side_samples_give_the_ratio_its_interval_and_verdict() -> None:
    rng = random.Random(3)
    base, head = [], []
    for _ in range(10):  # rounds: each its own level, shared by both sides
        level = rng.uniform(1.0, 3.0)
        for _ in range(20):
            b = level * rng.uniform(0.98, 1.02)
            base.append(b)
            head.append(b * 1.10 * rng.uniform(0.99, 1.01))
    e = estimate_pair("b.T.time_x", (), base, head, per_round=20)
    assert e is not None
    assert e.verdict == "regression"
    assert e.low < 1.10 < e.high
    assert 1.08 < e.ratio < 1.12
    assert e.rounds == 10
    assert e.samples == 200
    assert estimate_pair("b.T.time_x", (), base[:-1], head, per_round=20) is None


def test_chain_multiplies_the_ratios_and_marks_the_flagged_commit() -> None:
    runs = [
        _run(C[0], C[1], 1.0),
        _run(C[1], C[2], 1.5, "regression"),
        _run(C[2], C[3], 1.0),
    ]
    (series,) = chain_series(reversed(runs), C)
    assert [p.commit for p in series.points] == C[:4]
    assert [round(p.value, 6) for p in series.points] == [1.0, 1.0, 1.5, 1.5]
    assert [p.commit for p in series.flagged] == [C[2]]
    # intervals widen along the chain
    widths = [math.log(p.high / p.low) for p in series.points]
    assert widths == sorted(widths)


def test_a_gap_starts_a_new_segment_never_multiplied_across() -> None:
    runs = [_run(C[0], C[1], 2.0), _run(C[3], C[4], 1.5)]  # C[1]..C[3] never paired
    (series,) = chain_series(runs, C)
    assert [(p.commit, round(p.value, 6)) for p in series.points] == [
        (C[0], 1.0), (C[1], 2.0), (C[3], 1.0), (C[4], 1.5),
    ]  # fmt: skip


def test_the_file_round_trips_and_a_future_format_is_refused(tmp_path: Path) -> None:
    run = _run(C[0], C[1], 1.25, "regression")
    path = write_paired(tmp_path, run)
    assert path.name == f"{C[0][:8]}-{C[1][:8]}-env.paired"
    assert read_paired(path) == run
    data = json.loads(path.read_text())
    data["jaxbench_paired_format"] = 7
    path.write_text(json.dumps(data))
    with pytest.raises(ResultsError, match="format 7, newer than this jaxbench reads"):
        read_paired(path)
    data["jaxbench_paired_format"] = 1
    del data["estimates"][0]["ratio"]
    path.write_text(json.dumps(data))
    with pytest.raises(ResultsError, match="field 'ratio' missing"):
        read_paired(path)
    looked = replace(run, first_look=10)
    assert read_paired(write_paired(tmp_path, looked)) == looked
    data = json.loads(path.read_text())
    assert data["first_look"] == 10
    del data["first_look"]  # written before two looks: one look
    path.write_text(json.dumps(data))
    assert read_paired(path).first_look is None
    data["first_look"] = "ten"
    path.write_text(json.dumps(data))
    with pytest.raises(ResultsError, match="'first_look' is not a round count"):
        read_paired(path)


def test_a_machine_change_starts_a_new_segment() -> None:
    runs = [
        replace(_run(C[0], C[1], 1.1), fingerprint="aaaaaaaaaaaa"),
        replace(_run(C[1], C[2], 1.2), fingerprint="bbbbbbbbbbbb"),
        replace(_run(C[2], C[3], 1.5), fingerprint="bbbbbbbbbbbb"),
    ]
    (series,) = chain_series(runs, C)
    assert [(p.commit, round(p.value, 6)) for p in series.points] == [
        (C[0], 1.0), (C[1], 1.1), (C[1], 1.0), (C[2], 1.2), (C[3], 1.8),
    ]  # fmt: skip


def _rounds(shift: float, n: int) -> tuple[list[float], list[float]]:
    """One sample a side a round whose log ratios alternate around ``shift`` by 0.01."""
    base = [1.0] * n
    head = [math.exp(shift + (0.01 if i % 2 else -0.01)) for i in range(n)]
    return base, head


def test_a_series_gets_more_rounds_while_suggestive_never_for_looking_decided() -> None:
    """After the first look (10 rounds): more when suggestive but not decided; in the
    second look: more while p < KEEP_LOOKING_BELOW, even when it looks decided."""
    from jaxbench.analyse.paired_history import wants_more_rounds
    from jaxbench.analyse.stats import KEEP_LOOKING_BELOW, paired_samples_p_value

    def p_and_more(shift: float, n: int) -> tuple[float, bool]:
        base, head = _rounds(shift, n)
        p = paired_samples_p_value(base, head, 1)
        assert p is not None
        return p, wants_more_rounds(base, head, per_round=1, first_look=10, family=1)

    decided, more = p_and_more(0.05, 10)
    assert decided < 1e-6
    assert not more
    suggestive, more = p_and_more(0.0075, 10)
    assert 0.05 < suggestive < 0.1
    assert more
    flat, more = p_and_more(0.001, 10)
    assert flat > KEEP_LOOKING_BELOW
    assert not more
    decided, more = p_and_more(0.05, 12)
    assert decided < 1e-6
    assert more
    wandering, more = p_and_more(0.005, 12)
    assert 0.1 < wandering < KEEP_LOOKING_BELOW
    assert more
    flat, more = p_and_more(0.001, 12)
    assert flat > KEEP_LOOKING_BELOW
    assert not more
