"""Reading asv results directories: real pvlib history, synthetic histories, bad input."""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import PVLIB_MACHINE, PVLIB_RESULTS, AsvResultsWriter, commit_hash
from jaxbench.errors import ResultsError
from jaxbench.store.results import History, find_commit, load_history, load_result_file

PY36 = "conda-py3.6-ephem3.7.6.0-numba0.36.1-numpy1.12.0-pandas0.22.0-pytables3.6.1-scipy1.2.0"
UNMODIFIED = f"5a21ca46-{PY36}.json"
#: jumanji-benchmarks' results: a renamed benchmark that benchmarks.json no longer lists
JUMANJI_RESULTS = Path(__file__).resolve().parent / "data" / "jumanji" / "results"
DAY = 86_400_000


def _tree_digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        + str(p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _simple_history(writer: AsvResultsWriter, n: int = 4) -> list[str]:
    writer.add_benchmark("workloads.Predict.time_warm", params=[["64", "96"]])
    writer.add_benchmark("workloads.Predict.track_work_flops", unit="flops")
    writer.write_meta()
    commits = [commit_hash(i) for i in range(n)]
    for i, c in enumerate(commits):
        writer.write_result(
            c,
            1_600_000_000_000 + i * DAY,
            {
                "workloads.Predict.time_warm": [1e-5, 2e-5],
                "workloads.Predict.track_work_flops": 65536.0,
            },
        )
    return commits


# --- the real pvlib history (format 1) -------------------------------------------------


def test_pvlib_history_loads_every_file_converting_format_1_in_memory(pvlib_results: Path) -> None:
    before = _tree_digest(pvlib_results)
    history = load_history(pvlib_results)
    assert _tree_digest(pvlib_results) == before  # nothing rewritten (asv update would)
    assert history.machines() == (PVLIB_MACHINE,)
    assert len(history.env_names()) == 12
    assert len(history.commits()) == 530
    files = {(p.commit, p.key.env_name) for p in history.points}
    assert len(files) == 1059
    dates = [history.commit_dates()[c] for c in history.commits()]
    assert dates == sorted(dates)
    # Fuentes is NaN (asv's "skipped") in old files: a skip, not a warning
    assert history.warnings == ()
    fuentes = [p for p in history.points if p.key.benchmark == "temperature.Fuentes.time_fuentes"]
    assert any(p.skipped for p in fuentes)


def test_pvlib_data_is_what_trim_py_writes(tmp_path: Path) -> None:
    """tests/data/pvlib/trim.py reproduces the committed copy (PROVENANCE.md): trimming
    the trimmed copy again writes the same bytes, the unmodified file included."""
    trim = PVLIB_RESULTS.parent / "trim.py"
    out = tmp_path / "results"
    proc = subprocess.run(
        [sys.executable, str(trim), str(PVLIB_RESULTS), str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"1059 result files written to {out}\n"
    expected = {p.relative_to(PVLIB_RESULTS): p.read_bytes() for p in PVLIB_RESULTS.rglob("*.json")}
    written = {p.relative_to(out): p.read_bytes() for p in out.rglob("*.json")}
    assert written.keys() == expected.keys()
    assert [k for k in expected if written[k] != expected[k]] == []
    unmodified = json.loads((out / PVLIB_MACHINE / UNMODIFIED).read_text())
    assert len(unmodified["results"]) == 30  # kept whole
    trimmed = json.loads(next((out / PVLIB_MACHINE).glob("5a21ca46-conda-py3.8*")).read_text())
    assert set(trimmed["results"]) <= set(json.loads((out / "benchmarks.json").read_text()))


def test_pvlib_unmodified_file_keeps_values_stats_and_units(pvlib_results: Path) -> None:
    path = pvlib_results / PVLIB_MACHINE / UNMODIFIED
    points = load_result_file(path, pvlib_results / "benchmarks.json")
    raw = json.loads(path.read_text())
    assert raw["version"] == 1
    by_name = {(p.key.benchmark, p.key.params): p for p in points}
    clear = by_name[("detect_clearsky.DetectClear.time_detect_clearsky", ("1",))]
    expected = raw["results"]["detect_clearsky.DetectClear.time_detect_clearsky"]
    assert clear.value == expected["result"][0]
    # asv's converter (as 'asv update') keeps statistics to 5 significant digits
    assert clear.ci_99 == pytest.approx(tuple(expected["stats"][0]["ci_99"]), rel=2e-5)
    assert clear.q_25_75 == pytest.approx(
        (expected["stats"][0]["q_25"], expected["stats"][0]["q_75"]), rel=2e-5
    )
    assert (clear.number, clear.repeat) == (1, 10)
    assert clear.unit == "seconds"
    assert clear.commit == raw["commit_hash"]
    assert clear.date == raw["date"]
    assert clear.key.machine == PVLIB_MACHINE
    assert clear.key.version == raw["benchmark_version"][clear.key.benchmark]
    # benchmarks not in benchmarks.json are still read, with asv's unit for their type
    assert by_name[("temperature.SAPM.time_sapm_cell", ())].unit == "seconds"


def test_units_of_benchmarks_that_benchmarks_json_no_longer_lists() -> None:
    # jumanji-benchmarks renamed time_rollout_run; its old results keep the old name
    listed = json.loads((JUMANJI_RESULTS / "benchmarks.json").read_text())
    assert "time_rollout_run" not in listed
    history = load_history(JUMANJI_RESULTS)
    assert {p.key.benchmark for p in history.points} == {"time_rollout_run"}
    assert {p.unit for p in history.points} == {"seconds"}
    path = next((JUMANJI_RESULTS / "aa-desktop").glob("02c8bec2-*.json"))
    assert {p.unit for p in load_result_file(path)} == {"seconds"}


def test_unit_of_follows_asv_benchmark_types() -> None:
    from jaxbench.store.benchmarks_json import unit_of

    listed = {"b.B.track_flops": "flops", "b.B.time_x": "seconds"}
    assert unit_of(listed, "b.B.track_flops") == "flops"
    assert unit_of(listed, "gone.Suite.time_old") == "seconds"
    assert unit_of(listed, "timeraw_import") == "seconds"
    assert unit_of(listed, "gone.Suite.peakmem_old") == "bytes"
    assert unit_of(listed, "gone.Suite.mem_old") == "bytes"
    assert unit_of(listed, "gone.Suite.track_old") == ""  # a track's unit is its own
    assert unit_of(listed, "gone.time_suite.track_old") == ""  # the method decides


def test_pvlib_machine_and_env_filters(pvlib_results: Path) -> None:
    history = load_history(pvlib_results, env_name=PY36)
    assert history.env_names() == (PY36,)
    assert len({p.commit for p in history.points}) == 392
    with pytest.raises(ResultsError, match=r"no results for environment 'nope'.*pick one"):
        load_history(pvlib_results, env_name="nope")
    with pytest.raises(ResultsError, match=f"machines: {PVLIB_MACHINE}"):
        load_history(pvlib_results, machine="other")


# --- synthetic format-2 histories -------------------------------------------------------


def test_synthetic_round_trip(asv_writer: AsvResultsWriter) -> None:
    commits = _simple_history(asv_writer)
    history = load_history(asv_writer.root)
    assert history.warnings == ()
    assert history.commits() == tuple(commits)
    series = history.series()
    assert len(series) == 3  # two params of time_warm + the flops track
    warm64 = next(k for k in series if k.params == ("64",))
    assert warm64.benchmark == "workloads.Predict.time_warm"
    assert warm64.version == "v1"
    point = series[warm64][0]
    assert point.value == pytest.approx(1e-5)
    assert len(point.samples) == 5
    assert point.ci_99 is not None
    assert point.ci_99[0] <= 1e-5 <= point.ci_99[1]
    assert point.unit == "seconds"
    flops = next(k for k in series if k.benchmark.endswith("flops"))
    assert [p.value for p in series[flops]] == [65536.0] * 4
    assert series[flops][0].unit == "flops"


def test_find_commit(asv_writer: AsvResultsWriter) -> None:
    commits = _simple_history(asv_writer)
    history = load_history(asv_writer.root)
    assert find_commit(history, commits[2][:8]) == commits[2]
    assert find_commit(history, commits[2].upper()) == commits[2]
    with pytest.raises(ResultsError, match="ambiguous"):
        find_commit(history, "0000000")
    with pytest.raises(ResultsError, match="no results for commit 'ffff'"):
        find_commit(history, "ffff")
    with pytest.raises(ResultsError, match="empty commit"):
        find_commit(history, "")


def test_reading_modifies_nothing(asv_writer: AsvResultsWriter, pvlib_results: Path) -> None:
    _simple_history(asv_writer)
    shutil.copy(pvlib_results / PVLIB_MACHINE / UNMODIFIED, asv_writer.root / "m1" / "zz-v1.json")
    (asv_writer.root / "m1" / "broken.json").write_text('{"version": 2, "commit')
    before = _tree_digest(asv_writer.root)
    load_history(asv_writer.root)
    assert _tree_digest(asv_writer.root) == before


# --- bad input --------------------------------------------------------------------------


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(ResultsError, match=r"no such results directory.*asv run"):
        load_history(tmp_path / "nope")


def test_empty_directory(tmp_path: Path) -> None:
    with pytest.raises(ResultsError, match="no asv result files in it; run 'asv run'"):
        load_history(tmp_path)


def test_missing_machine_json(asv_writer: AsvResultsWriter) -> None:
    _simple_history(asv_writer)
    (asv_writer.root / "m1" / "machine.json").unlink()
    with pytest.raises(ResultsError, match=r"m1/machine.json: missing.*asv machine --machine m1"):
        load_history(asv_writer.root)
    other = AsvResultsWriter(asv_writer.root, machine="m2")
    _simple_history(other)
    history = load_history(asv_writer.root)
    assert history.machines() == ("m2",)
    assert any("m1/machine.json: missing" in w for w in history.warnings)


def test_missing_benchmarks_json(asv_writer: AsvResultsWriter) -> None:
    _simple_history(asv_writer)
    (asv_writer.root / "benchmarks.json").unlink()
    history = load_history(asv_writer.root)
    # asv's unit for a time benchmark; a track's unit is unknown without the file
    units = {p.key.benchmark: p.unit for p in history.points}
    assert units == {
        "workloads.Predict.time_warm": "seconds",
        "workloads.Predict.track_work_flops": "",
    }
    assert len(history.warnings) == 1
    assert "benchmarks.json: missing" in history.warnings[0]


def test_corrupt_benchmarks_json(asv_writer: AsvResultsWriter) -> None:
    _simple_history(asv_writer)
    (asv_writer.root / "benchmarks.json").write_text("{")
    history = load_history(asv_writer.root)
    assert "benchmarks.json: not valid JSON" in history.warnings[0]


def test_truncated_file_among_good_ones_is_skipped(asv_writer: AsvResultsWriter) -> None:
    commits = _simple_history(asv_writer)
    path = next((asv_writer.root / "m1").glob(f"{commits[1][:8]}-*.json"))
    path.write_bytes(path.read_bytes()[:50])
    history = load_history(asv_writer.root)
    assert commits[1] not in history.commits()
    assert len(history.commits()) == 3
    assert len(history.warnings) == 1
    assert f"{path}: not valid JSON (truncated?); delete the file and re-run" in history.warnings[0]
    assert "\n" not in history.warnings[0]


def test_single_truncated_file_raises(tmp_path: Path, asv_writer: AsvResultsWriter) -> None:
    commits = _simple_history(asv_writer, n=1)
    path = next((asv_writer.root / "m1").glob(f"{commits[0][:8]}-*.json"))
    path.write_text("{")
    with pytest.raises(ResultsError, match=r"no readable result files.*not valid JSON"):
        load_history(asv_writer.root)
    with pytest.raises(ResultsError, match="not valid JSON"):
        load_result_file(path)


def test_future_format_is_rejected_with_the_fix(asv_writer: AsvResultsWriter) -> None:
    commits = _simple_history(asv_writer)
    path = next((asv_writer.root / "m1").glob(f"{commits[0][:8]}-*.json"))
    data = json.loads(path.read_text())
    data["version"] = 3
    path.write_text(json.dumps(data))
    history = load_history(asv_writer.root)
    assert len(history.commits()) == 3
    assert (
        "result format 3 is newer than this reader understands (2); upgrade asv"
        in (history.warnings[0])
    )
    with pytest.raises(ResultsError, match="newer"):
        load_result_file(path)


def test_format_1_file_in_a_format_2_history(
    asv_writer: AsvResultsWriter, pvlib_results: Path
) -> None:
    _simple_history(asv_writer)
    v1 = json.loads((pvlib_results / PVLIB_MACHINE / UNMODIFIED).read_text())
    v1["params"]["machine"] = "m1"
    (asv_writer.root / "m1" / "5a21ca46-old.json").write_text(json.dumps(v1))
    history = load_history(asv_writer.root)
    assert v1["commit_hash"] in history.commits()
    assert history.warnings == ()


def test_machine_mismatch_is_skipped(asv_writer: AsvResultsWriter) -> None:
    commits = _simple_history(asv_writer)
    path = next((asv_writer.root / "m1").glob(f"{commits[0][:8]}-*.json"))
    data = json.loads(path.read_text())
    data["params"]["machine"] = "elsewhere"
    path.write_text(json.dumps(data))
    history = load_history(asv_writer.root)
    assert commits[0] not in history.commits()
    assert "machine is 'elsewhere', not 'm1'" in history.warnings[0]


def test_version_change_starts_a_new_series(asv_writer: AsvResultsWriter) -> None:
    asv_writer.add_benchmark("w.W.time_x")
    asv_writer.write_meta()
    for i in range(6):
        asv_writer.write_result(
            commit_hash(i),
            i * DAY,
            {"w.W.time_x": 1.0 if i < 3 else 2.0},
            versions={"w.W.time_x": "old" if i < 3 else "new"},
        )
    series = load_history(asv_writer.root).series()
    assert sorted(k.version or "" for k in series) == ["new", "old"]
    assert all(len({p.value for p in pts}) == 1 for pts in series.values())


def test_failed_benchmark_and_failed_parameter(asv_writer: AsvResultsWriter) -> None:
    asv_writer.add_benchmark("w.W.time_p", params=[["1", "2"]])
    asv_writer.add_benchmark("w.W.time_q")
    asv_writer.write_meta()
    asv_writer.write_result(commit_hash(0), 0, {"w.W.time_p": [1.0, None], "w.W.time_q": None})
    history = load_history(asv_writer.root)
    values = {(p.key.benchmark, p.key.params): p.value for p in history.points}
    assert values == {
        ("w.W.time_p", ("1",)): 1.0,
        ("w.W.time_p", ("2",)): None,
        ("w.W.time_q", ()): None,
    }
    assert history.warnings == ()


@pytest.mark.parametrize("bad", ["NaN", "Infinity", "-Infinity"])
def test_nan_is_skipped_quietly_and_infinite_is_failed_with_a_warning(
    asv_writer: AsvResultsWriter, bad: str
) -> None:
    commits = _simple_history(asv_writer)
    path = next((asv_writer.root / "m1").glob(f"{commits[0][:8]}-*.json"))
    data = json.loads(path.read_text())
    data["results"]["workloads.Predict.track_work_flops"][0] = [7.0]
    path.write_text(json.dumps(data).replace("[7.0]", f"[{bad}]"))
    history = load_history(asv_writer.root)
    flops = [p for p in history.points if p.key.benchmark.endswith("flops")]
    assert [p.value for p in sorted(flops, key=lambda p: p.date)] == [
        None,
        65536.0,
        65536.0,
        65536.0,
    ]
    if bad == "NaN":  # asv's "skipped": no warning
        assert history.warnings == ()
    else:
        assert len(history.warnings) == 1
        assert "track_work_flops is infinite in 1 result file(s)" in history.warnings[0]


def test_two_files_for_one_commit_and_env_keeps_one(asv_writer: AsvResultsWriter) -> None:
    commits = _simple_history(asv_writer)
    path = next((asv_writer.root / "m1").glob(f"{commits[0][:8]}-*.json"))
    copy = path.with_name(f"{commits[0][:8]}-copy.json")
    data = json.loads(path.read_text())
    data["results"]["workloads.Predict.track_work_flops"][0] = [1.0]
    copy.write_text(json.dumps(data))
    for _ in range(2):  # deterministic: same choice every time
        history = load_history(asv_writer.root)
        flops = [p for p in history.points if p.key.benchmark.endswith("flops")]
        assert len(flops) == 4
        kept = next(p for p in flops if p.commit == commits[0])
        assert kept.value == 1.0  # "<hash8>-copy.json" sorts before "<hash8>-virtualenv..."
        assert len(history.warnings) == 1
        assert "second result file for commit" in history.warnings[0]
        assert f"kept {copy.name}" in history.warnings[0]


def test_history_series_sorted_by_date_then_commit() -> None:
    from jaxbench.store.results import Point, SeriesKey

    key = SeriesKey("m", "e", "b.B.time_x", (), None)
    pts = (Point(key, "c2", 5, 1.0), Point(key, "c1", 5, 1.0), Point(key, "c0", 9, 1.0))
    history = History(points=pts)
    assert [p.commit for p in history.series()[key]] == ["c1", "c2", "c0"]
    assert history.commits() == ("c1", "c2", "c0")


# --- property: damaged files give ResultsError or points, never anything else -------------

_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


def _mutate(data: Any, path: list[int], op: int, value: Any) -> Any:
    """Delete or replace one node reached by following ``path`` (indices modulo size)."""
    if not path or not isinstance(data, dict | list) or not data:
        return value
    index = path[0] % len(data)
    key: Any = list(data)[index] if isinstance(data, dict) else index
    if len(path) == 1:
        if op == 0:
            del data[key]
        else:
            data[key] = value
        return data
    data[key] = _mutate(data[key], path[1:], op, value)
    return data


@pytest.fixture(scope="module")
def valid_files(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    writer = AsvResultsWriter(tmp_path_factory.mktemp("valid") / "results")
    _simple_history(writer, n=1)
    v2 = json.loads(next((writer.root / "m1").glob("0000*.json")).read_text())
    v1 = json.loads((PVLIB_RESULTS / PVLIB_MACHINE / UNMODIFIED).read_text())
    return [v2, v1]


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    which=st.integers(0, 1),
    mutations=st.lists(
        st.tuples(
            st.lists(st.integers(0, 50), min_size=1, max_size=5), st.integers(0, 1), _JSON_VALUES
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_mutated_files_raise_only_results_error(
    tmp_path: Path,
    valid_files: list[dict[str, Any]],
    which: int,
    mutations: list[tuple[list[int], int, Any]],
) -> None:
    data: Any = json.loads(json.dumps(valid_files[which]))
    for path, op, value in mutations:
        data = _mutate(data, path, op, value)
    target = tmp_path / "mutated.json"
    target.write_text(json.dumps(data))
    message = ""
    points = []
    try:
        points = load_result_file(target)
    except ResultsError as exc:
        message = str(exc)
    if message:
        assert "\n" not in message
        assert str(target) in message
    assert all(p.value is None or math.isfinite(p.value) for p in points)
