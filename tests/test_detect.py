"""Regression detection: the real pvlib history and planted steps in synthetic ones."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from conftest import PVLIB_MACHINE, PVLIB_RESULTS, AsvResultsWriter, commit_hash
from jaxbench.analyse.detect import (
    EXACT_RELATIVE,
    Regression,
    find_regressions,
    series_regressions,
    threshold_for,
)
from jaxbench.errors import ResultsError, UsageError
from jaxbench.kinds import Kind
from jaxbench.store.asv_conf import (
    read_asv_conf,
    read_project,
    results_dir,
    thresholds_from_asv_conf,
)
from jaxbench.store.results import History, Point, SeriesKey, load_history

PY36 = "conda-py3.6-ephem3.7.6.0-numba0.36.1-numpy1.12.0-pandas0.22.0-pytables3.6.1-scipy1.2.0"
PY38 = "conda-py3.8-ephem-numba-numpy-pandas-pytables-scipy"
PY38_H5 = "conda-py3.8-ephem-h5py-numba-numpy-pandas-scipy"
CLEARSKY = "detect_clearsky.DetectClear.time_detect_clearsky"
AOI = "irradiance.Irradiance.time_aoi"
AOI_PROJ = "irradiance.Irradiance.time_aoi_projection"
SINGLEAXIS = "tracking.SingleAxis.time_singleaxis"
FUENTES = "temperature.Fuentes.time_fuentes"
DAY = 86_400_000


@pytest.fixture(scope="module")
def pvlib_history() -> History:
    return load_history(PVLIB_RESULTS)


@pytest.fixture(scope="module")
def pvlib_current(pvlib_history: History) -> list[Regression]:
    return find_regressions(pvlib_history)


@pytest.fixture(scope="module")
def pvlib_all(pvlib_history: History) -> list[Regression]:
    return find_regressions(pvlib_history, include_fixed=True)


def _at(regs: list[Regression], bench: str, env: str, commit: str) -> list[Regression]:
    return [
        r
        for r in regs
        if r.key.benchmark == bench and r.key.env_name == env and r.bad_commit.startswith(commit)
    ]


# --- the documented pvlib regressions (tests/data/pvlib/PROVENANCE.md) ---


@pytest.mark.parametrize(
    ("env", "ratios"),
    [(PY36, {"1": 16.5, "10": 3.6, "100": 1.4}), (PY38, {"1": 10.0, "10": 3.4, "100": 1.6})],
)
def test_pvlib_1_detect_clearsky_at_5a21ca46c(
    pvlib_current: list[Regression], env: str, ratios: dict[str, float]
) -> None:
    found = _at(pvlib_current, CLEARSKY, env, "5a21ca46c")
    assert {r.key.params[0]: r.ratio for r in found} == pytest.approx(ratios, rel=0.15)
    assert all(r.kind is Kind.TIME and r.unit == "seconds" for r in found)
    assert all(r.key.machine == PVLIB_MACHINE for r in found)
    # and nowhere else in that benchmark and env
    assert [
        r for r in pvlib_current if r.key.benchmark == CLEARSKY and r.key.env_name == env
    ] == found


def test_pvlib_2_aoi_projection_at_5bdad6443_env_dependent(pvlib_current: list[Regression]) -> None:
    (py38,) = _at(pvlib_current, AOI_PROJ, PY38, "5bdad6443")
    assert py38.ratio == pytest.approx(1.38, rel=0.05)
    assert py38.before == pytest.approx(2.04e-3, rel=0.05)
    assert py38.after == pytest.approx(2.8e-3, rel=0.05)
    py36 = [r for r in pvlib_current if r.key.benchmark == AOI_PROJ and r.key.env_name == PY36]
    assert all(r.ratio < 1.1 for r in py36)  # README: "only ~1.05x" in the pinned env


def test_pvlib_3_singleaxis_at_d2c9bcd62_later_undone(
    pvlib_current: list[Regression], pvlib_all: list[Regression]
) -> None:
    (step,) = _at(pvlib_all, SINGLEAXIS, PY36, "d2c9bcd62")
    assert step.before == pytest.approx(24.5e-3, rel=0.05)
    assert step.after == pytest.approx(37e-3, rel=0.05)
    # undone in Sept 2018 (17 ms afterwards), so asv publish no longer lists it
    assert step.fixed_commit is not None
    assert not step.still_present
    assert _at(pvlib_current, SINGLEAXIS, PY36, "d2c9bcd62") == []
    # the py3.8 environment (newer pandas) shows no step
    assert [r for r in pvlib_all if r.key.benchmark == SINGLEAXIS and r.key.env_name != PY36] == []


def test_pvlib_trap_fuentes_env_step_is_not_flagged(
    pvlib_history: History, pvlib_all: list[Regression]
) -> None:
    series = next(
        pts
        for key, pts in pvlib_history.series().items()
        if key.benchmark == FUENTES and key.env_name == PY38_H5
    )
    values = {p.commit[:9]: p.value for p in series}
    assert values["1893b20a7"] is not None  # the jump is there
    assert values["1893b20a7"] > 3 * 1.43
    # Its runs had 99 % intervals ~100x wider than the others, so asv's weighted
    # step fit (as asv publish) discounts them: flagged neither now nor ever.
    assert [r for r in pvlib_all if r.key.benchmark == FUENTES] == []


def test_pvlib_control_time_aoi_moves_only_with_aoi_projection(
    pvlib_all: list[Regression],
) -> None:
    """README calls time_aoi a control; pvlib's aoi() calls aoi_projection(), so PR #1191
    (5bdad6443) slows both. Outside that PR's days the control shows nothing, in any env."""
    aoi = [r for r in pvlib_all if r.key.benchmark == AOI]
    pr_1191 = (1620777600000, 1621036800000)  # 2021-05-12 .. 2021-05-15 UTC
    assert aoi, "the PR #1191 step is expected in time_aoi too"
    assert all(pr_1191[0] <= r.date < pr_1191[1] for r in aoi)
    for commit in ("5a21ca46c", "d2c9bcd62", "1893b20a7"):
        assert [r for r in aoi if r.bad_commit.startswith(commit)] == []


def test_pvlib_series_never_mix_envs_or_versions(pvlib_history: History) -> None:
    for key, points in pvlib_history.series().items():
        assert {p.key for p in points} == {key}
        assert len({p.commit for p in points}) == len(points)
    # time_singleaxis changed version (py3.7/py3.8 "build" envs): two series, never one
    versions = {k.version for k in pvlib_history.series() if k.benchmark == SINGLEAXIS}
    assert len(versions) == 2


def test_mixing_envs_would_make_false_steps(pvlib_history: History) -> None:
    """What keying by env prevents (README): before the 5a21ca46c step, consecutive files
    alternate py3.6 / py3.8, and their detect_clearsky(1) times differ by 1.3-1.5x."""
    series = pvlib_history.series()
    keys = [
        k
        for k in series
        if k.benchmark == CLEARSKY and k.params == ("1",) and k.env_name in (PY36, PY38)
    ]
    step_date = next(p.date for p in series[keys[0]] if p.commit.startswith("5a21ca46c"))

    def jumps(points: list[Point]) -> list[float]:
        values = [p.value for p in points if p.date < step_date and p.value is not None]
        return [b / a for a, b in itertools.pairwise(values)]

    mixed = sorted((p for k in keys for p in series[k]), key=lambda p: (p.date, p.commit))
    assert max(jumps(mixed)) > 1.3  # a false step if envs were mixed
    for key in keys:
        assert all(0.8 < j < 1.2 for j in jumps(series[key]))  # none within one env


# --- synthetic histories with planted steps -------------------------------------------------


def _write_series(
    writer: AsvResultsWriter,
    name: str,
    values: Sequence[float | None],
    *,
    unit: str = "seconds",
    env_name: str = "virtualenv-py3.11",
    versions: list[str] | None = None,
) -> list[str]:
    if name not in writer.benchmarks:
        writer.add_benchmark(name, unit=unit)
        writer.write_meta()
    commits = []
    for i, v in enumerate(values):
        c = commit_hash(i)
        commits.append(c)
        writer.write_result(
            c,
            1_600_000_000_000 + i * DAY,
            {name: v},
            env_name=env_name,
            versions={name: versions[i]} if versions else None,
        )
    return commits


def _noisy(n: int, level: float, seed: int, sd: float = 0.02) -> list[float]:
    rng = random.Random(seed)
    return [level * (1 + rng.gauss(0, sd)) for _ in range(n)]


def test_planted_step_found_at_its_commit(asv_writer: AsvResultsWriter) -> None:
    values: list[float | None] = [*_noisy(30, 1e-3, 1), *_noisy(30, 1.3e-3, 2)]
    commits = _write_series(asv_writer, "w.W.time_x", values)
    (reg,) = find_regressions(load_history(asv_writer.root))
    assert (reg.good_commit, reg.bad_commit) == (commits[29], commits[30])
    assert reg.ratio == pytest.approx(1.3, rel=0.05)
    assert reg.date == 1_600_000_000_000 + 30 * DAY
    assert reg.still_present


def test_noise_alone_finds_nothing(asv_writer: AsvResultsWriter) -> None:
    _write_series(asv_writer, "w.W.time_x", list(_noisy(60, 1e-3, 3)))
    assert find_regressions(load_history(asv_writer.root)) == []


def test_failed_points_are_missing_data(asv_writer: AsvResultsWriter) -> None:
    values: list[float | None] = [*_noisy(20, 1.0, 4), None, None, *_noisy(20, 1.5, 5)]
    commits = _write_series(asv_writer, "w.W.time_x", values)
    (reg,) = find_regressions(load_history(asv_writer.root))
    assert (reg.good_commit, reg.bad_commit) == (commits[19], commits[22])


def test_undone_step_only_with_include_fixed(asv_writer: AsvResultsWriter) -> None:
    values: list[float | None] = [*_noisy(20, 1.0, 6), *_noisy(20, 2.0, 7), *_noisy(20, 1.0, 8)]
    commits = _write_series(asv_writer, "w.W.time_x", values)
    history = load_history(asv_writer.root)
    assert find_regressions(history) == []
    (reg,) = find_regressions(history, include_fixed=True)
    assert (reg.bad_commit, reg.fixed_commit) == (commits[20], commits[40])
    assert reg.ratio == pytest.approx(2.0, rel=0.05)


def test_version_change_is_a_new_series_not_a_step(asv_writer: AsvResultsWriter) -> None:
    values: list[float | None] = [*_noisy(20, 1.0, 9), *_noisy(20, 3.0, 10)]
    _write_series(asv_writer, "w.W.time_x", values, versions=["a"] * 20 + ["b"] * 20)
    history = load_history(asv_writer.root)
    assert len(history.series()) == 2
    assert find_regressions(history, include_fixed=True) == []


def test_environment_change_is_not_a_step(asv_writer: AsvResultsWriter) -> None:
    _write_series(asv_writer, "w.W.time_x", list(_noisy(20, 1.0, 11)), env_name="env-a")
    for i, v in enumerate(_noisy(20, 3.0, 12)):
        asv_writer.write_result(
            commit_hash(100 + i), 1_700_000_000_000 + i * DAY, {"w.W.time_x": v}, env_name="env-b"
        )
    history = load_history(asv_writer.root)
    assert history.env_names() == ("env-a", "env-b")
    assert find_regressions(history, include_fixed=True) == []


def test_work_figures_flag_any_lasting_increase_exactly(asv_writer: AsvResultsWriter) -> None:
    flops = [65536.0] * 10 + [65537.0] * 10
    commits = _write_series(asv_writer, "w.W.track_work_flops", flops, unit="flops")
    (reg,) = find_regressions(load_history(asv_writer.root))
    assert reg.kind is Kind.WORK
    assert (reg.good_commit, reg.bad_commit) == (commits[9], commits[10])
    assert (reg.before, reg.after) == (65536.0, 65537.0)
    assert reg.unit == "flops"


def test_work_single_commit_blip_is_flagged_only_as_undone(asv_writer: AsvResultsWriter) -> None:
    values = [100.0] * 5 + [200.0] + [100.0] * 5
    commits = _write_series(asv_writer, "w.W.track_work_hlo_ops", values, unit="ops")
    history = load_history(asv_writer.root)
    assert find_regressions(history) == []
    (reg,) = find_regressions(history, include_fixed=True)
    assert (reg.bad_commit, reg.fixed_commit) == (commits[5], commits[6])


@given(st.lists(st.integers(1, 10**9), min_size=1, max_size=40))
def test_work_series_that_never_goes_up_has_no_regression(raw: list[int]) -> None:
    key = SeriesKey("m", "e", "w.W.track_work_bytes_accessed", (), None)
    values = sorted(raw, reverse=True)
    points = [Point(key, commit_hash(i), i, float(v)) for i, v in enumerate(values)]
    assert (
        series_regressions(points, threshold=EXACT_RELATIVE, exact=True, include_fixed=True) == []
    )


@given(st.lists(st.integers(1, 10**6), min_size=2, max_size=40))
def test_work_series_last_increase_is_always_reported(raw: list[int]) -> None:
    key = SeriesKey("m", "e", "w.W.track_work_flops", (), None)
    values = [*raw, max(raw) + 1]
    points = [Point(key, commit_hash(i), i, float(v)) for i, v in enumerate(values)]
    regs = series_regressions(points, threshold=EXACT_RELATIVE, exact=True)
    assert regs
    assert regs[-1].bad_commit == commit_hash(len(values) - 1)


def test_thresholds_by_regex(asv_writer: AsvResultsWriter) -> None:
    values: list[float | None] = [*_noisy(30, 1.0, 13), *_noisy(30, 1.3, 14)]
    _write_series(asv_writer, "w.W.time_x", values)
    history = load_history(asv_writer.root)
    assert len(find_regressions(history, thresholds={r"w\.W\.time_y": 0.5})) == 1
    assert find_regressions(history, thresholds={r"w\.W\.time_x": 0.5}) == []
    assert find_regressions(history, threshold=0.5) == []
    key = SeriesKey("m", "e", "a.B.time_c", ("1", "'x'"), None)
    assert threshold_for(key, {r"a\.B\.time_c\(1, 'x'\)": 0.2, "a": 0.1}, 0.05) == 0.2
    assert threshold_for(key, {"zzz": 0.2}, 0.05) == 0.05


def test_newest_first(asv_writer: AsvResultsWriter) -> None:
    asv_writer.add_benchmark("w.W.time_a")
    asv_writer.add_benchmark("w.W.time_b")
    asv_writer.write_meta()
    a = [*_noisy(20, 1.0, 15), *_noisy(20, 2.0, 16)]
    b = [*_noisy(10, 1.0, 17), *_noisy(30, 2.0, 18)]
    for i in range(40):
        asv_writer.write_result(commit_hash(i), i * DAY, {"w.W.time_a": a[i], "w.W.time_b": b[i]})
    regs = find_regressions(load_history(asv_writer.root))
    assert [(r.key.benchmark, r.bad_commit) for r in regs] == [
        ("w.W.time_a", commit_hash(20)),
        ("w.W.time_b", commit_hash(10)),
    ]


# --- asv.conf.json ---------------------------------------------------------------------


def test_thresholds_from_asv_conf(tmp_path: Path) -> None:
    conf = tmp_path / "asv.conf.json"
    conf.write_text(
        '{\n  // asv allows comments\n  "version": 1, "project": "p // not a comment",\n'
        '  "regressions_thresholds": {"workloads\\\\..*": 0.1, ".*track_work_.*": 0}\n}\n'
    )
    assert thresholds_from_asv_conf(conf) == {r"workloads\..*": 0.1, ".*track_work_.*": 0.0}
    conf.write_text('{"version": 1}')
    assert thresholds_from_asv_conf(conf) == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "not valid JSON"),
        ("[]", "no JSON object"),
        ('{"regressions_thresholds": [1]}', "must map regexes to numbers"),
        ('{"regressions_thresholds": {"(": 0.1}}', "is not a regex mapped to a number"),
        ('{"regressions_thresholds": {"a": "x"}}', "is not a regex mapped to a number"),
        ('{"regressions_thresholds": {"a": -1}}', "must be >= 0"),
    ],
)
def test_bad_asv_conf(tmp_path: Path, text: str, message: str) -> None:
    conf = tmp_path / "asv.conf.json"
    conf.write_text(text)
    with pytest.raises(ResultsError, match=message):
        thresholds_from_asv_conf(conf)
    with pytest.raises(ResultsError, match="cannot read"):
        thresholds_from_asv_conf(tmp_path / "missing.json")


def test_results_dir_is_beside_the_configuration_as_asv_takes_it(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    conf = project / "asv.conf.json"
    conf.write_text('{"version": 1, // results elsewhere\n "results_dir": ".asv/results"}')
    assert results_dir(read_asv_conf(conf), conf) == project / ".asv" / "results"
    conf.write_text('{"version": 1}')
    assert results_dir(read_asv_conf(conf), conf) == project / "results"  # asv's default
    for bad in ("", 3, None):
        with pytest.raises(ResultsError, match=r"asv\.conf\.json: 'results_dir' must be a path"):
            results_dir({"results_dir": bad}, conf)


def test_a_project_is_read_from_its_configuration_or_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    conf = project / "asv.conf.json"
    conf.write_text('{"version": 1, "results_dir": "out", "benchmark_dir": "suite"}')
    found = read_project(conf)
    assert (found.root, found.results) == (project, project / "out")
    assert found.conf["benchmark_dir"] == "suite"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    missing = elsewhere / "asv.conf.json"
    with pytest.raises(UsageError, match=r"asv\.conf\.json: no such file; .* give --config"):
        read_project(missing)
    default = read_project(missing, required=False)  # asv's defaults, here
    assert (default.conf, default.root, default.results) == ({}, elsewhere, elsewhere / "results")
    conf.write_text("[1]")
    with pytest.raises(ResultsError, match=r"not an asv\.conf\.json"):
        read_project(conf, required=False)


# --- the whole-directory scan, its cache, fitted levels ---


def _scan_answer(results: Path, *, use_cache: bool) -> tuple[object, ...]:
    from jaxbench.analyse.detect import scan
    from jaxbench.store.series_table import load_series_table, save_fits

    table = load_series_table(results, use_cache=use_cache)
    found, fits = scan(table, include_fixed=True)
    save_fits(table, fits)
    return (
        found.regressions,
        found.machine_changes,
        found.n_series,
        dict(found.series_at),
        table.warnings,
    )


def test_scan_equals_find_regressions_on_pvlib(pvlib_history: History) -> None:
    from conftest import PVLIB_RESULTS
    from jaxbench.analyse.detect import scan
    from jaxbench.store.series_table import load_series_table

    table = load_series_table(PVLIB_RESULTS, use_cache=False)
    found, _fits = scan(table, include_fixed=True, detector="asv")
    old = find_regressions(pvlib_history, include_fixed=True)

    def ident(r: Regression) -> tuple[object, ...]:
        return (r.key, r.good_commit, r.bad_commit, r.before, r.after, r.best_after, r.fixed_commit)

    assert [ident(r) for r in found.steps] == [ident(r) for r in old]
    assert all(r.ratio > 1 and r.after > r.before for r in found.regressions)
    assert found.machine_changes == ()  # no fingerprints: one unknown segment


def test_steps_are_asvs_bit_for_bit(pvlib_history: History) -> None:
    from asv import step_detect

    from jaxbench.analyse.detect import _get_weight
    from jaxbench.analyse.steps import detect_steps

    for points in list(pvlib_history.series().values())[:40]:
        kept = [p for p in points if not p.skipped]
        y = [p.value for p in kept]
        w = [_get_weight(p) for p in kept]
        assert detect_steps(y, w) == step_detect.detect_steps(y, w)


def test_after_is_the_fitted_level_never_below_before(asv_writer: AsvResultsWriter) -> None:
    """A later outlier is asv's 'best after'; the listed 'after' is the fitted level."""
    asv_writer.add_benchmark("w.W.time_x")
    asv_writer.write_meta()
    for i in range(40):
        v = (1.0 if i < 20 else 2.0) * 1e-5 * (1 + 0.01 * ((i * 7) % 5 - 2))
        if i == 30:
            v = 1e-8  # one absurd outlier
        asv_writer.write_result(commit_hash(i), i * DAY, {"w.W.time_x": v})
    (reg,) = find_regressions(load_history(asv_writer.root))
    assert reg.bad_commit == commit_hash(20)
    assert reg.after == pytest.approx(2e-5, rel=0.03)
    assert reg.ratio == pytest.approx(2.0, rel=0.05)
    assert reg.best_after is not None
    assert reg.best_after <= reg.after


def test_corrupt_or_foreign_cache_is_rebuilt(asv_writer: AsvResultsWriter, tmp_path: Path) -> None:
    from jaxbench.store.series_table import CACHE_NAME, load_series_table

    asv_writer.add_benchmark("w.W.time_x")
    asv_writer.write_meta()
    for i in range(20):
        v = (1.0 if i < 10 else 1.5) * 1e-5 * (1 + 0.01 * ((i * 7) % 5 - 2))
        asv_writer.write_result(commit_hash(i), i * DAY, {"w.W.time_x": v})
    cold = _scan_answer(asv_writer.root, use_cache=False)
    cache = asv_writer.root / CACHE_NAME
    assert not cache.exists()
    assert _scan_answer(asv_writer.root, use_cache=True) == cold
    assert cache.is_file()
    assert load_series_table(asv_writer.root).from_cache
    assert _scan_answer(asv_writer.root, use_cache=True) == cold
    for garbage in (b"", b"not a zip", cache.read_bytes()[:100]):
        cache.write_bytes(garbage)
        assert _scan_answer(asv_writer.root, use_cache=True) == cold
        assert load_series_table(asv_writer.root).from_cache  # rewritten, usable again
    # a cache copied from another results directory is not trusted
    other = AsvResultsWriter(tmp_path / "other")
    other.add_benchmark("w.W.time_x")
    other.write_meta()
    for i in range(20):
        other.write_result(commit_hash(i), i * DAY, {"w.W.time_x": 3e-5})
    _scan_answer(other.root, use_cache=True)
    cache.write_bytes((other.root / CACHE_NAME).read_bytes())
    assert _scan_answer(asv_writer.root, use_cache=True) == cold
    # a result file changed in place (same name, new content) is read again
    asv_writer.write_result(commit_hash(19), 19 * DAY, {"w.W.time_x": 9e-5})
    assert _scan_answer(asv_writer.root, use_cache=True) == _scan_answer(
        asv_writer.root, use_cache=False
    )


@settings(max_examples=25, deadline=None)
@given(
    levels=st.lists(st.sampled_from([1.0, 1.0, 1.3, 2.0]), min_size=3, max_size=14),
    failed=st.sets(st.integers(0, 20), max_size=3),
    skipped=st.sets(st.integers(0, 20), max_size=4),
    appended=st.lists(st.sampled_from([1.0, 1.5, 3.0]), min_size=1, max_size=3),
    fingerprint_at=st.one_of(st.none(), st.integers(0, 16)),
)
def test_incremental_scan_equals_cold_scan(
    levels: list[float],
    failed: set[int],
    skipped: set[int],
    appended: list[float],
    fingerprint_at: int | None,
) -> None:
    """For random histories and random appended commits, the cached answer is the cold one."""
    import json
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        writer = AsvResultsWriter(Path(tmp) / "results")
        writer.add_benchmark("w.W.time_x", params=[["1", "2"]])
        writer.add_benchmark("w.W.track_work_flops", unit="flops")
        writer.write_meta()

        def write(i: int, level: float) -> None:
            noise = 1 + 0.01 * ((i * 7) % 5 - 2)
            time_x: list[float | None] = [level * 1e-5 * noise, 2 * level * 1e-5 * noise]
            if i in failed:
                time_x[0] = None
            if i in skipped:
                time_x[1] = math.nan  # asv's "skipped"
            path = writer.write_result(
                commit_hash(i),
                i * DAY,
                {"w.W.time_x": time_x, "w.W.track_work_flops": float(round(level * 100))},
            )
            if fingerprint_at is not None:
                doc = json.loads(path.read_text())
                doc["params"]["fingerprint"] = "a" if i < fingerprint_at else "b"
                path.write_text(json.dumps(doc))

        for i, level in enumerate(levels):
            write(i, level)
        assert _scan_answer(writer.root, use_cache=True) == _scan_answer(
            writer.root, use_cache=False
        )
        for k, level in enumerate(appended):
            write(len(levels) + k, level)
            incremental = _scan_answer(writer.root, use_cache=True)
            assert incremental == _scan_answer(writer.root, use_cache=False)


# --- the exact pre-screen: series that cannot reach their threshold are not fitted ---


def _listing(found: object) -> tuple[object, ...]:
    from jaxbench.analyse.detect import Scan

    assert isinstance(found, Scan)
    return (found.regressions, found.machine_changes, found.n_series, dict(found.series_at))


def _fit(method: str) -> dict[str, Any]:
    """scan's settings for a step fit: binseg, asv (penalty search) or quick (asv, one)."""
    return {"detector": "binseg" if method == "binseg" else "asv", "quick": method == "quick"}


@pytest.mark.parametrize("include_fixed", [False, True])
@pytest.mark.parametrize("method", ["binseg", "asv", "quick"])
def test_prescreen_changes_nothing_on_pvlib(include_fixed: bool, method: str) -> None:
    from jaxbench.analyse.detect import scan
    from jaxbench.store.series_table import load_series_table

    table = load_series_table(PVLIB_RESULTS, use_cache=False)
    screened, _fits = scan(table, include_fixed=include_fixed, **_fit(method))
    full, _fits = scan(table, include_fixed=include_fixed, prescreen=False, **_fit(method))
    assert _listing(screened) == _listing(full)
    assert screened.regressions  # the documented ones
    assert screened.screened >= 50  # pvlib's short, quiet series (74 of 129 when written)
    assert screened.fitted + screened.screened == full.fitted


def test_cannot_regress_bounds() -> None:
    import numpy as np

    from jaxbench.analyse.detect import cannot_regress

    nan = math.nan
    assert cannot_regress(np.asarray([1.0, 1.05, nan]), 0.05)  # 1.05 <= 1 + 0.05 * 1
    assert not cannot_regress(np.asarray([1.0, 1.0500001]), 0.05)
    assert cannot_regress(np.asarray([nan, nan]), 0.05)  # nothing to fit
    assert cannot_regress(np.asarray([-2.0, -2.0]), 0.0)
    assert not cannot_regress(np.asarray([-2.0, -1.95]), 0.05)  # below zero: m(1+t) < m
    assert not cannot_regress(np.asarray([1e308, 1e308]), 0.05)  # (a + b) / 2 could overflow
    assert not cannot_regress(np.asarray([1.0, math.inf]), 0.05)


@settings(max_examples=60, deadline=None)
@given(
    base=st.sampled_from([1e-5, 3.0, 1e3]),
    steps=st.lists(
        st.tuples(st.integers(1, 12), st.floats(0.9, 1.12), st.floats(0.0, 0.03)),
        min_size=1,
        max_size=4,
    ),
    threshold=st.sampled_from([0.0, 0.02, 0.05, 0.1]),
    failed=st.sets(st.integers(0, 40), max_size=3),
    include_fixed=st.booleans(),
    method=st.sampled_from(["binseg", "asv", "quick"]),
    seed=st.integers(0, 2**16),
)
def test_prescreen_listing_equals_fitting_everything(
    base: float,
    steps: list[tuple[int, float, float]],
    threshold: float,
    failed: set[int],
    include_fixed: bool,
    method: str,
    seed: int,
) -> None:
    """Random histories near the threshold: screened or not, the same listing."""
    import tempfile

    from jaxbench.analyse.detect import scan
    from jaxbench.store.series_table import load_series_table

    rng = random.Random(seed)
    values: list[float] = []
    for length, level, noise in steps:
        values += [base * level * (1 + rng.uniform(-noise, noise)) for _ in range(length)]
    with tempfile.TemporaryDirectory() as tmp:
        writer = AsvResultsWriter(Path(tmp) / "results")
        names = [f"w.W.time_{k}" for k in range(3)]
        for name in names:
            writer.add_benchmark(name)
        writer.write_meta()
        for i, v in enumerate(values):
            row: dict[str, float | None] = {
                # the same series, scaled and with one side flattened or mirrored
                names[0]: None if i in failed else v,
                names[1]: min(v, base) * 2.0,
                names[2]: base * 2 - v * 0.5,
            }
            writer.write_result(commit_hash(i), i * DAY, row)
        table = load_series_table(writer.root, use_cache=False)
        fit = _fit(method)
        screened, _f = scan(table, threshold=threshold, include_fixed=include_fixed, **fit)
        full, _f = scan(
            table, threshold=threshold, include_fixed=include_fixed, prescreen=False, **fit
        )
    event(f"screened {min(screened.screened, 1)}, listed {min(len(screened.regressions), 1)}")
    assert _listing(screened) == _listing(full)


_FORKED_EQUALS_SERIAL = """
import sys
import numpy as np
from jaxbench.analyse import detect
from jaxbench.jobs.parallel import forked_batches
from jaxbench.store import series_table

runs = []
real = forked_batches(2)
assert real is not None  # one thread, no jax, Linux: forking is safe here
def counting(fn, batches):
    runs.append(len(batches))
    yield from real(fn, batches)

results = sys.argv[1]
serial = series_table.load_series_table(results, use_cache=False)
serial_scan, _ = detect.scan(serial, include_fixed=True)
series_table.PARALLEL_MIN_BYTES = 0
detect.PARALLEL_MIN_POINTS = 0
forked = series_table.load_series_table(results, use_cache=False, parallel=counting)
forked_scan, _ = detect.scan(forked, include_fixed=True, parallel=counting)
assert len(runs) == 2, runs  # the files were read, and the steps fitted, in processes
assert forked.files == serial.files and forked.keys == serial.keys
assert forked.warnings == serial.warnings
for name in ("offsets", "file_idx", "values", "weights"):
    np.testing.assert_array_equal(getattr(forked, name), getattr(serial, name))
assert forked_scan == serial_scan
print("same")
"""


def test_reading_and_fitting_in_processes_gives_the_same_answer() -> None:
    """In a fresh interpreter (the CLI's case: one thread), the files are parsed and the
    steps fitted in forked workers: the same columns, warnings, order and listing."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", _FORKED_EQUALS_SERIAL, str(PVLIB_RESULTS)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "same"


def test_no_fork_while_another_thread_runs() -> None:
    """A process running other threads (jax's, here a plain one) scans in-process."""
    import threading

    from jaxbench.jobs import parallel
    from jaxbench.store import series_table

    release = threading.Event()
    thread = threading.Thread(target=release.wait)
    thread.start()
    try:
        assert not parallel.fork_is_safe()
        assert parallel.forked_batches(2) is None
        table = series_table.load_series_table(PVLIB_RESULTS, use_cache=False)
    finally:
        release.set()
        thread.join()
    assert table.keys


def test_no_fork_where_jax_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import types

    from jaxbench.jobs import parallel as forking

    monkeypatch.delitem(sys.modules, "jax", raising=False)
    monkeypatch.delitem(sys.modules, "jaxlib", raising=False)
    assert forking.fork_is_safe()  # Linux, the main thread alone
    monkeypatch.setitem(sys.modules, "jax", types.ModuleType("jax"))
    assert not forking.fork_is_safe()
