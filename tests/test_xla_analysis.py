"""Tests for jaxbench.measure.xla_analysis on real jax (CPU, small shapes)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap
from typing import Any, cast

import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from jaxbench.analyse.hlo import op_histogram  # noqa: E402
from jaxbench.measure.xla_analysis import (  # noqa: E402
    PEAK_FROM_PARTS,
    PEAK_REPORTED,
    WorkFigures,
    hlo_text,
    work_figures,
)


def predict(x: Any, w: Any) -> Any:
    return jnp.tanh(x @ w)


def predict_redundant(x: Any, w: Any) -> Any:
    # (w.T @ w) is extra work the result does not need to be right.
    return jnp.tanh((x @ w) @ (w.T @ w))


def _compile(fn: Any) -> Any:
    x = jnp.ones((64, 32), jnp.float32)
    w = jnp.ones((32, 16), jnp.float32)
    return jax.jit(fn).trace(x, w).lower().compile()


@pytest.fixture(scope="module")
def predict_figures() -> WorkFigures:
    return work_figures(_compile(predict))


def test_predict_figures(predict_figures: WorkFigures) -> None:
    f = predict_figures
    # 64*16 outputs x 32 multiply-adds x 2; one tanh per output.
    assert f.flops == 65_536
    assert f.transcendentals == 1_024
    # x (8 KiB) + w (2 KiB) read, out (4 KiB) written, plus the dot's output re-read.
    assert f.bytes_accessed == 22_528
    assert f.argument_bytes == 64 * 32 * 4 + 32 * 16 * 4
    assert f.output_bytes == 64 * 16 * 4
    assert f.peak_memory_bytes == 14_336
    assert f.peak_memory_source in (PEAK_REPORTED, PEAK_FROM_PARTS)
    assert f.op_histogram["dot"] == 1
    assert f.op_histogram["tanh"] == 1
    assert f.hlo_fusions == f.op_histogram["fusion"] >= 1
    assert f.hlo_ops == sum(
        n
        for op, n in f.op_histogram.items()
        if op not in ("parameter", "constant", "tuple", "get-tuple-element")
    )
    assert f.backend == "cpu"
    assert f.jax_version == jax.__version__


def test_figures_are_identical_on_recompile(predict_figures: WorkFigures) -> None:
    jax.clear_caches()
    again = work_figures(_compile(predict))
    assert again == predict_figures


def test_hlo_text_is_the_optimized_module() -> None:
    compiled = _compile(predict)
    text = hlo_text(compiled)
    assert text.startswith("HloModule ")
    assert "ENTRY" in text
    assert op_histogram(text) == dict(work_figures(compiled).op_histogram)


def test_redundant_matmul_raises_flops_and_ops(predict_figures: WorkFigures) -> None:
    worse = work_figures(_compile(predict_redundant))
    assert worse.flops is not None
    assert predict_figures.flops is not None
    # x@w, then (64x16)@(16x16), plus w.T@w (16x16x32x2).
    assert worse.flops == predict_figures.flops + 64 * 16 * 16 * 2 + 16 * 16 * 32 * 2
    assert worse.hlo_ops > predict_figures.hlo_ops
    assert worse.op_histogram["dot"] == predict_figures.op_histogram["dot"] + 2


class _OlderJaxCompiled:
    """The real Compiled, seen as older jax and other backends show it.

    Before jax 0.4.30 ``cost_analysis()`` returned a list with one dict;
    some backends return ``None`` from ``memory_analysis()``. Everything else
    is the real compiled program.
    """

    def __init__(self, compiled: Any) -> None:
        self._compiled = compiled
        self.input_shardings = compiled.input_shardings

    def cost_analysis(self) -> list[dict[str, float]]:
        return [self._compiled.cost_analysis()]

    def memory_analysis(self) -> None:
        return None

    def as_text(self) -> str:
        return str(self._compiled.as_text())


def test_list_cost_analysis_and_missing_memory(predict_figures: WorkFigures) -> None:
    # a duck-typed stand-in for the Compiled of an older jax
    f = work_figures(cast(Any, _OlderJaxCompiled(_compile(predict))))
    assert (f.flops, f.transcendentals, f.bytes_accessed) == (
        predict_figures.flops,
        predict_figures.transcendentals,
        predict_figures.bytes_accessed,
    )
    # Not reported is None, never 0.
    assert f.peak_memory_bytes is None
    assert f.peak_memory_source is None
    assert (f.temp_bytes, f.argument_bytes, f.output_bytes) == (None, None, None)
    assert f.hlo_ops == predict_figures.hlo_ops


_FLOAT64 = textwrap.dedent(
    """
    import dataclasses, json
    import jax, jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    from jaxbench.measure.xla_analysis import work_figures
    x, w = jnp.ones((64, 32), jnp.float64), jnp.ones((32, 16), jnp.float64)
    compiled = jax.jit(lambda x, w: jnp.tanh(x @ w)).trace(x, w).lower().compile()
    figures = dataclasses.asdict(work_figures(compiled))
    print(json.dumps(figures))
    """
)


def test_float64_doubles_the_bytes_not_the_flops(predict_figures: WorkFigures) -> None:
    # jax_enable_x64 is process-wide: measure float64 in a process of its own.
    done = subprocess.run(
        [sys.executable, "-c", _FLOAT64], capture_output=True, text=True, check=True
    )
    f64 = json.loads(done.stdout)
    f32 = dataclasses.asdict(predict_figures)
    assert f64["flops"] == f32["flops"]
    assert f64["bytes_accessed"] == 2 * f32["bytes_accessed"]
    assert f64["peak_memory_bytes"] == 2 * f32["peak_memory_bytes"]
    assert f64["op_histogram"] == dict(f32["op_histogram"])


def test_on_the_cpu_xlas_peak_leaves_the_temporaries_out() -> None:
    # docs/timing.md "XLA's memory figures": the figures are XLA's own, and on the
    # CPU peak_memory_in_bytes is argument + output - alias, temp not in it
    x = jnp.ones((256, 256), jnp.float32)
    chain = jax.jit(lambda x, w: jnp.tanh(jnp.tanh(x @ w) @ w) @ w.T).trace(x, x)
    step = jax.jit(lambda x, w: (x - 0.1 * jnp.tanh(x @ w) @ w, jnp.sum(x)), donate_argnums=0)
    for traced in (chain, step.trace(x, x)):
        compiled = traced.lower().compile()
        memory = compiled.memory_analysis()
        figures = work_figures(compiled)
        assert figures.peak_memory_source == PEAK_REPORTED
        assert figures.temp_bytes == memory.temp_size_in_bytes > 0
        parts = memory.argument_size_in_bytes + memory.output_size_in_bytes
        assert figures.peak_memory_bytes == parts - memory.alias_size_in_bytes
    assert memory.alias_size_in_bytes > 0  # the donating step reuses its input
