"""Tests for jaxbench.analyse.hlo: op counts, normalisation and diffs of real optimized HLO."""

# The captured HLO below is kept verbatim, and XLA writes long lines.
# ruff: noqa: E501

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jaxbench.analyse.hlo import (
    BOOKKEEPING_OPS,
    counted_ops,
    fusion_count,
    hlo_diff,
    normalise,
    op_histogram,
)

# ``jax.jit(predict).lower(x, w).compile().as_text()`` for ``tanh(x @ w)``,
# x f32[64,32], w f32[32,16], captured from jax 0.10.2 on the CPU.
DATA = Path(__file__).parent / "data"
PREDICT_HLO = (DATA / "predict.hlo").read_text(encoding="utf-8")

# Compiles variants of predict with jax in a fresh process and prints their HLO
# as JSON. ``argv[1]`` names the set: "a" and "b" differ only in Python names
# and jit wrappers, so their programs are the same.
_CAPTURE = textwrap.dedent(
    """
    import functools, json, sys
    import jax, jax.numpy as jnp
    from jax import lax

    if sys.argv[1] == "x64":
        jax.config.update("jax_enable_x64", True)

    def predict(x, w):
        return jnp.tanh(x @ w)

    def forward_pass(inputs, weights):
        hidden = jnp.dot(inputs, weights)
        return jnp.tanh(hidden)

    def extra(x, w):
        return jnp.tanh((x @ w) @ (w.T @ w))

    def loop(x, w):
        return lax.fori_loop(0, 3, lambda i, y: jnp.tanh(y @ w.T @ w), x @ w)

    dtype = jnp.float64 if sys.argv[1] == "x64" else jnp.float32
    x, w = jnp.ones((64, 32), dtype), jnp.ones((32, 16), dtype)
    if sys.argv[1] == "b":
        # The same program as predict, under other names and a partial wrapper.
        same = jax.jit(functools.partial(forward_pass))
        _ = jax.jit(extra).lower(x, w).compile()  # compile something else first
    else:
        same = jax.jit(predict)
    out = {"predict": same.lower(x, w).compile().as_text()}
    if sys.argv[1] == "a":
        out["extra"] = jax.jit(extra).lower(x, w).compile().as_text()
        out["loop"] = jax.jit(loop).lower(x, w).compile().as_text()
    print(json.dumps(out))
    """
)


def _capture(which: str, tmp: Path) -> dict[str, str]:
    # A script file of its own, so source-location tables name different files.
    script = tmp / f"capture_{which}.py"
    script.write_text(_CAPTURE)
    done = subprocess.run(
        [sys.executable, str(script), which],
        capture_output=True,
        text=True,
        check=True,
        env={"JAX_PLATFORMS": "cpu", "PATH": ""},
    )
    result: dict[str, str] = json.loads(done.stdout)
    return result


@pytest.fixture(scope="module")
def real_hlo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """HLO texts from three separate jax processes."""
    tmp = tmp_path_factory.mktemp("hlo")
    a, b, x64 = (_capture(which, tmp) for which in ("a", "b", "x64"))
    return {**a, "predict_renamed": b["predict"], "predict_f64": x64["predict"]}


def _instruction_lines(text: str) -> int:
    return sum(bool(re.match(r"\s*(ROOT\s+)?%\S+ = ", line)) for line in text.splitlines())


def test_histogram_of_captured_predict() -> None:
    histogram = op_histogram(PREDICT_HLO)
    assert histogram == {"dot": 1, "fusion": 2, "parameter": 5, "tanh": 1}
    assert counted_ops(histogram) == 4
    assert fusion_count(histogram) == 2


def test_histogram_counts_every_instruction_of_a_loop(real_hlo: dict[str, str]) -> None:
    text = real_hlo["loop"]
    histogram = op_histogram(text)
    # Tuple-typed instructions (the loop state) are parsed too.
    assert histogram["while"] == 1
    assert histogram["get-tuple-element"] >= 1
    assert sum(histogram.values()) == _instruction_lines(text)
    assert all(re.fullmatch(r"[a-z][a-z0-9\-_]*", op) for op in histogram)
    assert counted_ops(histogram) == sum(
        n for op, n in histogram.items() if op not in BOOKKEEPING_OPS
    )


def test_normalise_strips_locations_and_names() -> None:
    text = normalise(PREDICT_HLO)
    for gone in ("metadata=", "FileNames", "StackFrames", "jit_predict", "%x.1", "%ynn_fusion"):
        assert gone not in text
    assert "ENTRY %main.0 (parameter.3: f32[64,32], parameter.4: f32[32,16])" in text
    assert "%fusion.1 = f32[64,16]{1,0} fusion(%fusion.0), kind=kLoop" in text
    assert "calls=%wrapped_tanh_computation.0" in text
    assert normalise(text) == text


def test_normalise_ignores_consistent_renaming() -> None:
    renamed = (
        PREDICT_HLO.replace("%ynn_fusion", "%my_fusion.77")
        .replace("x.1", "inputs.3")
        .replace("%fused_computation", "%fused_computation.9")
        .replace("jit_predict", "jit_forward")
        .replace("stack_frame_id=2", "stack_frame_id=7")
    )
    assert renamed != PREDICT_HLO
    assert normalise(renamed) == normalise(PREDICT_HLO)


def test_normalise_keeps_backend_config_but_hides_addresses() -> None:
    text = normalise(
        PREDICT_HLO.replace('"outer_dimension', '"ptr":"0x7f3a12cd5678","outer_dimension')
    )
    assert '"fusion_config":{"kind":"__ynn_fusion"}' in text
    assert '"ptr":"0x?"' in text


def test_metadata_with_braces_in_strings_is_dropped_whole() -> None:
    line = '  %t = f32[2]{0} tanh(%p), metadata={op_name="a}{b" source_file="x.py"}, sharding={replicated}'
    text = normalise(line)
    assert "metadata" not in text
    assert text.strip().endswith("tanh(%p), sharding={replicated}")


def test_same_program_from_other_processes_and_names_is_equal(real_hlo: dict[str, str]) -> None:
    a, b = real_hlo["predict"], real_hlo["predict_renamed"]
    assert a != b  # file names, function names and ids differ
    assert normalise(a) == normalise(b)
    diff = hlo_diff(a, b)
    assert diff.identical
    assert diff.op_changes == ()
    assert diff.diff_lines == ()


def test_extra_matmul_shows_in_histogram_and_diff(real_hlo: dict[str, str]) -> None:
    diff = hlo_diff(real_hlo["predict"], real_hlo["extra"])
    assert not diff.identical
    base_dots = op_histogram(real_hlo["predict"])["dot"]
    assert diff.histogram_change["dot"] == (base_dots, base_dots + 2)
    assert diff.head_ops > diff.base_ops
    assert any(line.startswith("+") and " dot(" in line for line in diff.diff_lines)


def test_float64_shows(real_hlo: dict[str, str]) -> None:
    diff = hlo_diff(real_hlo["predict"], real_hlo["predict_f64"])
    assert not diff.identical
    assert diff.op_changes == ()  # same ops, other dtype
    assert any(line.startswith("+") and "f64[" in line for line in diff.diff_lines)
    assert any(line.startswith("-") and "f32[" in line for line in diff.diff_lines)


def test_diff_is_truncated_with_a_count(real_hlo: dict[str, str]) -> None:
    full = hlo_diff(real_hlo["predict"], real_hlo["extra"], max_lines=10_000)
    short = hlo_diff(real_hlo["predict"], real_hlo["extra"], max_lines=5)
    assert full.omitted_lines == 0
    assert len(short.diff_lines) == 5
    assert short.diff_lines == full.diff_lines[:5]
    assert short.omitted_lines == len(full.diff_lines) - 5 > 0


def test_context_widens_the_diff(real_hlo: dict[str, str]) -> None:
    narrow = hlo_diff(real_hlo["predict"], real_hlo["extra"], context=0, max_lines=10_000)
    wide = hlo_diff(real_hlo["predict"], real_hlo["extra"], context=5, max_lines=10_000)
    assert len(wide.diff_lines) > len(narrow.diff_lines)
    assert all(not line.startswith(" ") for line in narrow.diff_lines)


def test_bad_limits_are_refused() -> None:
    with pytest.raises(ValueError, match="max_lines"):
        hlo_diff(PREDICT_HLO, PREDICT_HLO, max_lines=0)
