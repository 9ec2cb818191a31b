"""store/fastjson.py: orjson for result files, exactly as json.loads reads them."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import PVLIB_RESULTS
from jaxbench.store.fastjson import NAN_SENTINEL, loads, restore_nan
from jaxbench.store.results import scan_result_file


def _same(a: Any, b: Any) -> bool:
    """Equal documents, NaN (json.loads) matching NaN or NAN_SENTINEL (fastjson.loads)."""
    if isinstance(b, float) and math.isnan(b):
        return isinstance(a, float) and (math.isnan(a) or a == NAN_SENTINEL)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(type(a) is type(b) and a == b)


@pytest.mark.parametrize(
    ("text", "fast"),
    [
        ('{"v": [1.5, null, NaN], "b": {"c": NaN}}', True),
        ('{"name": "[NaN, 1]", "v": [1.0]}', True),  # only inside a string: orjson as is
        ('{"name": "x NaN y", "v": [NaN]}', False),  # inside a string and out: json.loads
        ('{"name": "say \\"hi\\"", "v": [NaN]}', False),  # an escaped quote: json.loads
        ('{"v": [Infinity, NaN, -Infinity]}', False),  # not orjson's: json.loads
        ('{"v": [-1.7976931348623157e+308, NaN]}', False),  # the sentinel's own text
        ('{"v": []}', True),
    ],
)
def test_loads_reads_what_json_loads_reads(text: str, fast: bool) -> None:
    raw = text.encode()
    got, want = loads(raw), json.loads(raw)
    assert _same(got, want)
    if "NaN" in text.split('"v"')[-1] and "e+308" not in text:
        # the NaN token outside strings: the sentinel when orjson read it, else NaN
        at = next(i for i, v in enumerate(want["v"]) if isinstance(v, float) and math.isnan(v))
        nan_read = got["v"][at]
        assert (nan_read == NAN_SENTINEL) is fast


def test_bad_json_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="Expecting"):
        loads(b'{"a": [1,')


def test_restore_nan() -> None:
    column = np.asarray([1.0, NAN_SENTINEL, 2.0, NAN_SENTINEL])
    assert restore_nan(column) == [1, 3]
    assert math.isnan(column[1])
    assert math.isnan(column[3])
    assert column[0] == 1.0


def test_pvlib_files_scan_the_same_through_orjson() -> None:
    """Real files with asv's NaN (skipped) and null (failed): the same columns."""
    machine_dir = next(p for p in PVLIB_RESULTS.iterdir() if p.is_dir())
    paths = sorted(p for p in machine_dir.glob("*.json") if p.name != "machine.json")
    with_nan = 0
    for path in paths:
        raw = path.read_bytes()
        with_nan += b"NaN" in raw
        fast = scan_result_file(path, None, loads(raw))
        slow = scan_result_file(path, None, json.loads(raw))
        assert fast.rows == slow.rows
        assert fast.non_finite == slow.non_finite
        assert fast.failed == slow.failed
        np.testing.assert_array_equal(fast.keep, slow.keep)
        np.testing.assert_array_equal(fast.values, slow.values)
        np.testing.assert_array_equal(fast.weights, slow.weights)
    assert with_nan > 10  # the files with skipped points were among them


def test_a_nan_in_a_string_is_never_replaced(tmp_path: Path) -> None:
    doc = {"results": {"b.B.time_x": [[1.0, math.nan, None]]}, "note": "NaN in text"}
    raw = json.dumps(doc).encode()
    assert raw.count(b"NaN") == 2
    got = loads(raw)
    assert got["note"] == "NaN in text"
    assert _same(got, json.loads(raw))
