"""The lesson's JSON report: schema and values, from real measurements on the CPU."""

from __future__ import annotations

import dataclasses
import json
import statistics
from typing import Any

import numpy as np
import pytest

from jaxbench.measure import Workload, protocol, report, workloads

LESSON_KEYS = {
    "backend", "jax", "numpy", "python", "input_shape", "weight_shape", "dtype", "boundary",
    "first_call_seconds", "warm_samples_seconds", "warm_median_seconds", "max_abs_error",
}  # fmt: skip
OUR_KEYS = {
    "format", "workload", "description", "platform", "device_count", "jaxlib",
    "first_call_breakdown_seconds", "first_call_fresh", "tolerance", "tolerance_used",
    "output_shapes", "diagnostic_handle_only_seconds",
    # format 2: any workload
    "params", "inputs", "call", "reference", "work", "warnings",
    # format 4: compiles per warm call
    "compiles_per_call",
}  # fmt: skip


class FakeClock:
    """Readings 0, 1, 3, 6, 10, ...: reading k is k seconds after reading k-1."""

    def __init__(self) -> None:
        self.reads = 0

    def __call__(self) -> float:
        value = self.reads * (self.reads + 1) / 2
        self.reads += 1
        return float(value)


def test_default_report_has_the_lessons_contract() -> None:
    data = report.to_dict(protocol.measure(workloads.get("predict")))
    assert set(data) == LESSON_KEYS | OUR_KEYS
    assert data["format"] == report.REPORT_FORMAT == 4
    assert data["compiles_per_call"] == 0.0  # warm: counted while the samples ran
    assert data["call"]["compiles_every_call"] is False
    assert data["workload"] == "predict"
    assert data["input_shape"] == [64, 32]
    assert data["weight_shape"] == [32, 16]
    assert data["dtype"] == "float32"
    assert data["inputs"] == {
        "/args/0": {"shape": [64, 32], "dtype": "float32"},
        "/args/1": {"shape": [32, 16], "dtype": "float32"},
    }
    assert data["reference"] == {"kind": "numpy", "detail": "predict_reference"}
    assert data["work"]["flops"] > 0
    assert data["warnings"] == []
    assert data["boundary"] == "input already placed; call plus output synchronization"
    assert data["platform"] == "cpu"
    samples = data["warm_samples_seconds"]
    assert len(samples) == 7
    assert all(s >= 0 for s in samples)
    assert data["warm_median_seconds"] == statistics.median(samples)
    assert 0 <= data["max_abs_error"] < 2e-5
    assert data["tolerance"] == {"atol": 2e-5, "rtol": 2e-5}
    assert 0 <= data["tolerance_used"] <= 1
    stages = data["first_call_breakdown_seconds"]
    assert list(stages) == ["trace", "lower", "compile", "first_execute"]
    assert all(v >= 0 for v in stages.values())
    assert sum(stages.values()) == pytest.approx(data["first_call_seconds"], rel=1e-12)
    assert "backend compile" in data["first_call_fresh"]
    assert data["output_shapes"] == {"/": [64, 16]}
    assert data["diagnostic_handle_only_seconds"] >= 0
    assert json.loads(json.dumps(data)) == data


def test_report_values_come_from_the_clock_at_the_boundaries() -> None:
    # reads 0-4: the AOT stages; 5-10: three samples; 11-12: handle-only.
    data = report.to_dict(protocol.measure(workloads.get("predict"), repeats=3, clock=FakeClock()))
    assert data["first_call_breakdown_seconds"] == {
        "trace": 1.0, "lower": 2.0, "compile": 3.0, "first_execute": 4.0,
    }  # fmt: skip
    assert data["first_call_seconds"] == 10.0
    assert data["warm_samples_seconds"] == [6.0, 8.0, 10.0]
    assert data["warm_median_seconds"] == 8.0
    assert data["diagnostic_handle_only_seconds"] == 12.0


def test_more_rows_is_another_labelled_contract() -> None:
    data = report.to_dict(protocol.measure(workloads.get("predict", rows=96), repeats=2))
    assert data["workload"] == "predict-96rows"
    assert data["input_shape"] == [96, 32]
    assert data["weight_shape"] == [32, 16]
    assert data["output_shapes"] == {"/": [96, 16]}
    assert len(data["warm_samples_seconds"]) == 2


def test_a_user_workload_has_no_lesson_shapes_its_inputs_describe_it() -> None:
    # the README's predict(params, x): params' leaves sort first (/args/0/b1, /args/0/w1)
    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        params = {"w1": rng.normal(size=(32, 64)).astype(np.float32),
                  "b1": np.zeros(64, np.float32)}  # fmt: skip
        return params, rng.normal(size=(256, 32)).astype(np.float32)

    workload = Workload(
        name="user", fn=lambda p, x: x @ p["w1"] + p["b1"], inputs=inputs,
        reference=lambda p, x: x @ p["w1"] + p["b1"], atol=1e-4, rtol=1e-4,
    )  # fmt: skip
    data = report.to_dict(protocol.measure(workload, repeats=2))
    assert set(data) == (LESSON_KEYS | OUR_KEYS) - {"input_shape", "weight_shape", "dtype"}
    assert data["inputs"] == {
        "/args/0/b1": {"shape": [64], "dtype": "float32"},
        "/args/0/w1": {"shape": [32, 64], "dtype": "float32"},
        "/args/1": {"shape": [256, 32], "dtype": "float32"},
    }
    # the lesson's own, with another fn, is a user workload too
    other = dataclasses.replace(workloads.get("predict"), fn=workloads.energy)
    assert not workloads.is_lesson(other)
    assert workloads.is_lesson(workloads.get("sharded"))


@pytest.mark.parametrize(
    ("name", "shapes"),
    [("energy", {"/": [64]}), ("structured", {"/mean": [], "/prediction": [64, 16]})],
)
def test_output_shapes_of_other_workloads(name: str, shapes: dict[str, list[int]]) -> None:
    data = report.to_dict(protocol.measure(workloads.get(name), repeats=2))
    assert data["output_shapes"] == shapes
    assert data["tolerance_used"] <= 1
