"""The reference gate: a wrong answer is never timed as if it were right."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import jax.numpy as jnp
import numpy as np
import pytest

from jaxbench.errors import ReferenceMismatch
from jaxbench.measure import protocol, reference, workloads

PREDICT = workloads.get("predict")
X, W = PREDICT.host_inputs()
EXPECTED = np.tanh(X @ W)


def check(result: Any, expected: Any = EXPECTED) -> reference.Accuracy:
    return reference.check("predict", result, expected, atol=2e-5, rtol=2e-5, dtype="float32")


def test_a_right_answer_passes_with_its_error_recorded() -> None:
    result = EXPECTED + np.float32(1e-6)
    accuracy = check(result)
    assert accuracy.max_abs_error == pytest.approx(1e-6, rel=0.1)
    assert 0 < accuracy.tolerance_used <= 1
    assert accuracy.leaves == 1


@pytest.mark.parametrize(
    "changed",
    [lambda x, w: jnp.tanh(x @ w) * 1.001, lambda x, w: jnp.sin(x @ w)],
    ids=["scaled-by-1.001", "sin-instead-of-tanh"],
)
def test_a_changed_function_is_refused_by_the_protocol(changed: Any) -> None:
    wrong = dataclasses.replace(PREDICT, fn=changed)
    with pytest.raises(ReferenceMismatch) as caught:
        protocol.measure(wrong, repeats=1)
    message = str(caught.value)
    assert message.startswith("predict output /: max abs error ")
    assert "exceeds the tolerance (atol=2e-05, rtol=2e-05" in message
    assert "\n" not in message


def test_a_float64_reference_catches_an_error_a_float32_one_would_round_away() -> None:
    reference64 = np.tanh(X.astype(np.float64) @ W.astype(np.float64))
    close = EXPECTED  # float32 computation: within tolerance of the float64 truth
    assert check(close, reference64).tolerance_used <= 1
    off = (reference64 + 5e-4).astype(np.float32)
    with pytest.raises(ReferenceMismatch, match=r"max abs error 0\.0005\d* exceeds"):
        check(off, reference64)


def test_measure_reports_without_raising_and_check_raises_at_the_same_point() -> None:
    off = EXPECTED + np.float32(1e-3)
    accuracy = reference.measure("predict", off, EXPECTED, atol=2e-5, rtol=2e-5, dtype="float32")
    assert accuracy.tolerance_used > 1
    with pytest.raises(ReferenceMismatch):
        check(off)


def test_a_wrong_shape_is_refused() -> None:
    with pytest.raises(ReferenceMismatch, match=r"shape \(64, 8\) differs from the reference's"):
        check(EXPECTED[:, :8])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_output_is_refused(bad: float) -> None:
    result = EXPECTED.copy()
    result[3, 5] = bad
    with pytest.raises(ReferenceMismatch, match=r"1 non-finite value\(s\)"):
        check(result)


def test_a_different_structure_is_refused() -> None:
    expected = {"prediction": EXPECTED, "mean": EXPECTED.mean()}
    with pytest.raises(ReferenceMismatch, match="output leaves"):
        check({"prediction": EXPECTED}, expected)


def test_every_leaf_is_checked() -> None:
    expected = {"prediction": EXPECTED, "mean": np.float32(EXPECTED.mean())}
    assert check(dict(expected), expected).leaves == 2
    with pytest.raises(ReferenceMismatch, match="output /mean"):
        check({"prediction": EXPECTED, "mean": np.float64(EXPECTED.mean())}, expected)


def test_leaves_are_sorted_paths() -> None:
    tree = {"b": [1, 2], "a": {"z": 3}}
    assert list(reference.leaves(tree)) == [("/a/z", 3), ("/b/0", 1), ("/b/1", 2)]
    assert list(reference.leaves(5)) == [("/", 5)]


X64_SCRIPT = textwrap.dedent(
    """
    import dataclasses, json
    import jax.numpy as jnp
    from jaxbench.measure import protocol
    from jaxbench.measure import workloads
    from jaxbench.errors import ReferenceMismatch

    predict = workloads.get("predict")
    out = {"x64": bool(jnp.zeros(1, dtype=jnp.float64).dtype == jnp.float64)}
    out["predict"] = protocol.measure(predict, repeats=1).accuracy.tolerance_used
    widened = dataclasses.replace(
        predict, fn=lambda x, w: jnp.tanh(x.astype(jnp.float64) @ w.astype(jnp.float64))
    )
    try:
        protocol.measure(widened, repeats=1)
        out["widened"] = "passed"
    except ReferenceMismatch as exc:
        out["widened"] = str(exc)
    print(json.dumps(out))
    """
)


def test_float64_by_mistake_is_refused_under_x64() -> None:
    env = {**os.environ, "JAX_ENABLE_X64": "1", "JAX_PLATFORMS": "cpu"}
    done = subprocess.run(
        [sys.executable, "-c", X64_SCRIPT], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["x64"] is True
    assert out["predict"] <= 1  # float32 inputs stay float32 under x64
    assert out["widened"].startswith("predict output /: dtype float64 differs from the reference's")
