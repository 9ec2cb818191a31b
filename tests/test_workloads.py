"""Workload records: names, labels, shapes, seeded inputs, and each checked for real."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest

from jaxbench.errors import UsageError
from jaxbench.measure import reference, workloads


def test_names_are_stable() -> None:
    assert workloads.names() == ("predict", "energy", "structured", "sharded")


def test_default_is_the_lessons_contract() -> None:
    predict = workloads.get("predict")
    assert predict.label == "predict"
    x, w = predict.host_inputs()
    assert (x.shape, w.shape) == ((64, 32), (32, 16))
    assert x.dtype == w.dtype == np.float32
    assert (predict.atol, predict.rtol) == (2e-5, 2e-5)


def test_host_inputs_are_the_lessons_seeded_draws() -> None:
    x, w = workloads.get("predict").host_inputs()
    rng = np.random.default_rng(4)
    np.testing.assert_array_equal(x, rng.normal(size=(64, 32)).astype(np.float32))
    np.testing.assert_array_equal(w, rng.normal(size=(32, 16)).astype(np.float32))
    assert x.dtype == w.dtype == np.float32


@pytest.mark.parametrize(
    ("name", "rows", "devices", "label", "input_shape"),
    [
        ("predict", 96, None, "predict-96rows", (96, 32)),
        ("energy", 64, None, "energy", (64, 32)),
        ("sharded", None, None, "sharded-1dev", (64, 32)),
        ("sharded", None, 2, "sharded-2dev", (64, 32)),
        ("sharded", 96, 4, "sharded-96rows-4dev", (96, 32)),
    ],
)
def test_label_changes_whenever_the_contract_does(
    name: str, rows: int | None, devices: int | None, label: str, input_shape: tuple[int, int]
) -> None:
    workload = workloads.get(name, rows=rows, devices=devices)
    assert workload.label == label
    x, w = workload.host_inputs()
    assert x.shape == input_shape
    assert w.shape == (32, 16)


def test_more_rows_keep_the_features_and_extend_the_draw() -> None:
    x96, w96 = workloads.get("predict", rows=96).host_inputs()
    assert x96.shape == (96, 32)
    assert w96.shape == (32, 16)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "nope"}, "unknown workload 'nope'; choose one of: predict, energy"),
        ({"name": "predict", "rows": 0}, "rows must be a positive integer, got 0"),
        ({"name": "predict", "rows": -3}, "rows must be a positive integer, got -3"),
        ({"name": "predict", "devices": 2}, "is not sharded"),
        ({"name": "sharded", "devices": 0}, "devices must be at least 1"),
        ({"name": "sharded", "devices": 3}, "cannot be split over 3 devices"),
        ({"name": "sharded", "devices": 2, "rows": 65}, "use a multiple of 2"),
    ],
)
def test_bad_choices_are_usage_errors(kwargs: dict[str, object], message: str) -> None:
    name = str(kwargs.pop("name"))
    with pytest.raises(UsageError, match=message):
        workloads.get(name, **kwargs)  # type: ignore[arg-type]


def test_workloads_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        workloads.get("predict").seed = 5  # type: ignore[misc]


def reference_of(workload: workloads.Workload) -> Callable[..., Any]:
    """The lesson workloads' references are NumPy functions (not FLOAT64, Golden or Unchecked)."""
    assert callable(workload.reference)
    return workload.reference


@pytest.mark.parametrize("name", workloads.names())
def test_every_function_matches_its_reference(name: str) -> None:
    workload = workloads.get(name)
    x, w = workload.host_inputs()
    output = jax.tree_util.tree_map(np.asarray, jax.jit(workload.fn)(x, w))
    accuracy = reference.check(
        workload.label,
        output,
        reference_of(workload)(x, w),
        atol=workload.atol,
        rtol=workload.rtol,
        dtype="float32",
    )
    assert accuracy.tolerance_used <= 1.0


def test_output_shapes_of_the_transfer_workloads() -> None:
    x, w = workloads.get("energy").host_inputs()
    assert np.shape(workloads.energy(x, w)) == (64,)
    out = workloads.structured(x, w)
    assert sorted(out) == ["mean", "prediction"]
    assert np.shape(out["prediction"]) == (64, 16)
    assert np.shape(out["mean"]) == ()
