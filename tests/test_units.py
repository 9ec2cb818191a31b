"""The one value formatter, ratio formatter and graph URL builder shared by every page."""

from __future__ import annotations

import math
from typing import Any
from urllib.parse import unquote

import pytest

from jaxbench.render.links import encode_component, graph_url
from jaxbench.render.units import format_ratio, format_spread, format_value


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [
        (2.6e-05, "seconds", "26.0 µs"),  # three digits, trailing zeros kept
        (37e-6, "seconds", "37.0 µs"),
        (0.0123, "seconds", "12.3 ms"),
        (3e-10, "seconds", "0.300 ns"),
        (1500.0, "seconds", "1500 s"),  # never 1.5e+03
        (1023.0 * 1024, "bytes", "1023 KiB"),
        (999.96e-6, "seconds", "1.00 ms"),  # the unit follows the value as shown
        (0.99996, "seconds", "1.00 s"),
        (999.4e-6, "seconds", "999 µs"),
        (1023.9 * 1024, "bytes", "1.00 MiB"),
        (2.0, "seconds", "2.00 s"),
        (4e-9, "seconds", "4.00 ns"),
        (3 * 1024**2, "bytes", "3.00 MiB"),
        (14336.0, "bytes", "14.0 KiB"),
        (191 * 2**20, "bytes", "191 MiB"),
        (512.0, "bytes", "512 B"),
        (98305.0, "flops", "98305 flops"),  # a count off by one must show
        (1.5, "unitless", "1.5"),
        (2.5e-7, "abs error", "2.5e-07 abs error"),
        (None, "seconds", "failed"),
        (math.inf, "seconds", "inf seconds"),
    ],
)
def test_format_value(value: float | None, unit: str, text: str) -> None:
    assert format_value(value, unit) == text


def test_format_spread_reads_like_asv_compare() -> None:
    samples = [36.6e-6, 36.8e-6, 37.0e-6, 37.2e-6, 37.4e-6]
    assert format_spread(37.0e-6, samples, "seconds") == "37.0±0.2µs"
    assert format_spread(0.0675, [0.06, 0.065, 0.07, 0.08], "seconds") == "67.5±4.4ms"
    assert format_spread(37.0e-6, [37.0e-6], "seconds") == "37.0 µs"  # one sample: no spread
    assert format_spread(2.0, [1.0, 2.0, 3.0], "ops") == "2.00±0.50 ops"


@pytest.mark.parametrize(
    ("ratio", "kwargs", "text"),
    [
        (1.002161, {}, "1.00x"),
        (0.9995059, {}, "1.00x"),
        (1.0, {}, "1.00x"),
        (1.2, {}, "1.20x"),
        (0.7, {}, "0.70x"),
        (1.00001, {"exact": True}, "1.00001x"),  # a work count that changed
        (1.0, {"exact": True}, "1.00x"),
        (1.021, {"gate": 1.02}, "1.021x"),  # beyond the gate, though it reads 1.02
        (1.019, {"gate": 1.02}, "1.019x"),
        (1.05, {"gate": 1.02}, "1.05x"),
        (None, {}, ""),
        (math.inf, {}, "inf"),
    ],
)
def test_format_ratio_has_one_precision(
    ratio: float | None, kwargs: dict[str, Any], text: str
) -> None:
    assert format_ratio(ratio, **kwargs) == text


def test_graph_url_is_asv_hash_format_and_inert_in_markdown_and_html() -> None:
    url = graph_url(
        "../index.html",
        "w.P.time_warm",
        env_params=[("machine", "ci box")],
        param_names=("rows", "dtype"),
        params=("64", "'f32'"),
        commits=("0123456789", "ABCDEF0123"),
    )
    assert url == (
        "../index.html#w.P.time_warm?machine=ci%20box&p-rows=64&p-dtype=%27f32%27"
        "&commits=01234567-abcdef01"
    )
    assert graph_url("i", "b", commits=(None, "f" * 40), hash_length=12) == (
        "i#b?commits=ffffffffffff"
    )
    hostile = "a)(b'c\"d<e>f&g=h#i"
    encoded = encode_component(hostile)
    assert not set(encoded) & set(")('\"<>&=#")
    assert unquote(encoded) == hostile  # decodeURIComponent reads it back
