"""The reference gate: a wrong answer is never timed as if it were right."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbench.errors import ReferenceMismatch, WorkloadError
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
    from jaxbench.errors import ReferenceMismatch, WorkloadError

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


# --- PRNG keys and other extended dtypes ------------------------------------------------


def _keys(check_kw: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"atol": 1e-6, "rtol": 1e-6, **(check_kw or {})}


def test_a_typed_key_reaches_the_host_as_its_key_data_and_impl() -> None:
    keys = jax.random.split(jax.random.key(7), 3)
    host = reference.host_leaf(keys, "step output /0")
    assert isinstance(host, reference.HostKey)
    assert host.impl == "threefry2x32"
    assert host.shape == (3,) == np.shape(host)
    np.testing.assert_array_equal(host.data, np.asarray(jax.random.key_data(keys)))
    np.testing.assert_array_equal(jax.random.key_data(host.wrap()), jax.random.key_data(keys))


def test_a_key_leaf_equals_the_references_when_its_key_data_is_equal() -> None:
    key = jax.random.key(0)
    state = np.ones(2, np.float32)
    got = protocol.host_result((key, state), "step")
    assert reference.check("step", got, protocol.host_result((jax.random.key(0), state)), **_keys())
    # a reference may give the key's data: a raw PRNGKey, a uint32 array
    assert reference.check("step", got, (np.asarray(jax.random.key_data(key)), state), **_keys())
    other = protocol.host_result((jax.random.key(1), state))
    with pytest.raises(ReferenceMismatch) as caught:
        reference.check("step", got, other, **_keys())
    assert str(caught.value) == (
        "step output /0: 1 of 2 key data word(s) differ from the reference "
        "(PRNG keys are compared exactly, through jax.random.key_data)"
    )


def test_keys_of_another_impl_or_shape_or_kind_are_refused() -> None:
    data = np.asarray(jax.random.key_data(jax.random.key(0, impl="rbg")))
    rbg, unsafe = reference.HostKey(data, "rbg"), reference.HostKey(data, "unsafe_rbg")
    with pytest.raises(ReferenceMismatch, match=r"implementation rbg differs from .* unsafe_rbg"):
        reference.check("s", {"k": rbg}, {"k": unsafe}, **_keys())
    fry = reference.host_leaf(jax.random.key(0), "s")
    with pytest.raises(ReferenceMismatch, match=r"key<threefry2x32>\[\]\) where the reference "
                       r"has a PRNG key \(key<rbg>\[\]\)"):  # fmt: skip
        reference.check("s", {"k": fry}, {"k": rbg}, **_keys())
    with pytest.raises(ReferenceMismatch, match=r"where the reference has float32\[2\]"):
        reference.check("s", {"k": fry}, {"k": np.zeros(2, np.float32)}, **_keys())


def test_a_golden_file_keeps_a_keys_data_and_impl_and_reloads_it(tmp_path: Path) -> None:
    keys = jax.random.split(jax.random.key(7, impl="rbg"), 3)
    output = protocol.host_result({"key": keys, "count": np.int32(4)}, "chain")
    path = tmp_path / "chain.npz"
    path.write_bytes(reference.golden_bytes(output))
    with np.load(path, allow_pickle=False) as stored:  # plain arrays: no pickle needed
        assert sorted(stored.files) == ["/count", "/key", "key_impl:/key"]
    loaded = reference.load_golden(path, "chain")
    key = loaded.leaves["/key"]
    assert isinstance(key, reference.HostKey)
    assert key.impl == "rbg"
    np.testing.assert_array_equal(jax.random.key_data(key.wrap()), jax.random.key_data(keys))
    assert reference.check("chain", output, loaded, **_keys()).leaves == 2


def test_a_leaf_of_another_extended_dtype_is_one_line_naming_it() -> None:
    from jax.experimental import primal_tangent_dtype

    # no public jax API gives a concrete array of a non-key extended dtype on
    # the CPU; a ShapeDtypeStruct carries a real one
    leaf = jax.ShapeDtypeStruct((3,), primal_tangent_dtype(jnp.float32, jnp.float32))
    with pytest.raises(WorkloadError) as caught:
        protocol.host_result({"state": {"aux": leaf}}, "sampler")
    assert str(caught.value) == (
        "sampler output /state/aux: dtype PrimalTangentDType{f32/f32} is an extended dtype "
        "with no host value to check or record; return its underlying data as an ordinary "
        "array (as jax.random.key_data does for a key), or leave it out of the output"
    )
