"""asv's benchmarks.json, read by the one reader every command uses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from asv import util as asv_util

from conftest import PVLIB_RESULTS, AsvResultsWriter
from jaxbench.errors import ResultsError
from jaxbench.store.benchmarks_json import (
    BenchmarksJson,
    read_benchmarks_json,
    read_benchmarks_json_or_warn,
)
from jaxbench.store.results import load_history

CLEARSKY = "detect_clearsky.DetectClear.time_detect_clearsky"


def test_pvlib_benchmarks_json() -> None:
    found = read_benchmarks_json(PVLIB_RESULTS / "benchmarks.json")
    assert len(found.benchmarks) == 5
    assert set(found.units().values()) == {"seconds"}
    assert found.param_names()[CLEARSKY] == ("ndays",)
    assert found.param_names()["irradiance.Irradiance.time_aoi"] == ()
    # pvlib leaves repeat to asv (0): its rounds cannot be split back
    assert dict(found.round_sizes()) == {b.name: None for b in found.benchmarks}


def test_the_history_carries_what_the_reader_reads() -> None:
    history = load_history(PVLIB_RESULTS)
    assert history.benchmarks == read_benchmarks_json(PVLIB_RESULTS / "benchmarks.json")


def test_units_param_names_and_round_sizes_as_asv_writes_them(tmp_path: Path) -> None:
    entries = {
        "w.W.time_fixed": {"type": "time", "unit": "seconds", "repeat": 30, "param_names": ["n"]},
        "w.W.time_auto": {"type": "time", "unit": "seconds", "repeat": 0, "param_names": []},
        "w.W.time_triple": {"type": "time", "unit": "seconds", "repeat": [1, 10, 20.0]},
        "w.W.time_bool": {"type": "time", "unit": "seconds", "repeat": True},
        "w.W.time_none": {"type": "time", "unit": "seconds"},
        "w.W.track_flops": {"type": "track", "unit": "flops", "repeat": 30},
        "w.W.peakmem_x": {"type": "peakmemory", "unit": "bytes"},
    }
    path = tmp_path / "benchmarks.json"
    asv_util.write_json(str(path), entries, api_version=2)
    found = read_benchmarks_json(path)
    assert found.round_sizes() == (
        ("w.W.time_auto", None),
        ("w.W.time_bool", None),
        ("w.W.time_fixed", 30),
        ("w.W.time_triple", None),
    )
    assert found.units()["w.W.track_flops"] == "flops"
    assert found.units()["w.W.peakmem_x"] == "bytes"
    assert found.param_names()["w.W.time_fixed"] == ("n",)
    assert found.param_names()["w.W.time_none"] == ()


def test_the_writer_of_the_tests_is_read_too(asv_writer: AsvResultsWriter) -> None:
    asv_writer.add_benchmark("w.W.time_x", params=[["1", "2"]])
    asv_writer.write_meta()
    found = read_benchmarks_json(asv_writer.root / "benchmarks.json")
    assert found.param_names() == {"w.W.time_x": ("p0",)}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "benchmarks.json: missing; regenerate it with 'asv run"),
        ('{"version": 2, "a": ', "benchmarks.json: not valid JSON (truncated?); regenerate it"),
        (b"\xff\xfe", "benchmarks.json: not valid JSON (truncated?); regenerate it"),
        ("[1, 2]", "benchmarks.json: not an asv benchmarks.json; regenerate it"),
        ('{"version": 1}', "benchmarks.json: benchmarks.json format 1, expected 2; regenerate it"),
    ],
)
def test_a_bad_file_is_one_error_naming_it_or_a_warning(
    tmp_path: Path, content: str | bytes | None, message: str
) -> None:
    path = tmp_path / "benchmarks.json"
    if isinstance(content, str):
        path.write_text(content)
    elif isinstance(content, bytes):
        path.write_bytes(content)
    with pytest.raises(ResultsError) as caught:
        read_benchmarks_json(path)
    assert str(caught.value).startswith(str(path))
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)
    empty, warning = read_benchmarks_json_or_warn(path)
    assert empty == BenchmarksJson()
    assert warning == f"{caught.value} (track units unknown until then)"


def test_a_good_file_gives_no_warning() -> None:
    found, warning = read_benchmarks_json_or_warn(PVLIB_RESULTS / "benchmarks.json")
    assert warning is None
    assert json.loads((PVLIB_RESULTS / "benchmarks.json").read_text()).keys() - {"version"} == {
        b.name for b in found.benchmarks
    }
