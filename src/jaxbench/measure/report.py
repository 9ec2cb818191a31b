"""The JSON benchmark report (the seed lesson's schema, grown), for any workload.

Format history:

* 1 -- the lesson's keys (``backend, jax, numpy, python, input_shape,
  weight_shape, dtype, boundary, first_call_seconds, warm_samples_seconds,
  warm_median_seconds, max_abs_error``) plus ``format``, ``workload``,
  ``first_call_breakdown_seconds`` (trace, lower, compile, first_execute),
  ``first_call_fresh`` (how freshness was ensured), ``tolerance``,
  ``tolerance_used``, ``output_shapes``, ``device_count``, ``platform``,
  ``jaxlib`` and the labelled ``diagnostic_handle_only_seconds``.
* 2 -- any workload: ``inputs`` (shape and dtype of every input leaf, by
  path ``/args/0/w1``, ``/kwargs/mask``); the lesson's ``input_shape``,
  ``weight_shape`` and ``dtype`` are those of the first two input leaves
  (``weight_shape`` null with one leaf); ``reference`` (``kind``: numpy,
  float64, golden or unchecked, and ``detail``); ``max_abs_error`` and
  ``tolerance_used`` are null for an unchecked workload; ``call`` (jit,
  static and donated arguments, carry); ``params``; ``work`` (XLA's figures,
  null for jit=False); ``warnings`` (e.g. captured constants). A jit=False
  workload's breakdown has null trace, lower and compile.
* 3 -- the lesson's ``input_shape``, ``weight_shape`` and ``dtype`` (x's
  shape, w's shape, x's dtype) only in the report of a lesson workload;
  another workload's inputs are described by ``inputs`` alone (format 2
  gave the shapes of its first two input leaves, in path order, under the
  lesson's names).
* 4 -- ``compiles_per_call``: backend compiles per warm call, counted while
  the warm samples ran (0 unless the workload is declared
  ``compiles_every_call``, whose warm times include its compiles); ``call``
  gains ``compiles_every_call``. A typed PRNG key output leaf's
  ``output_shapes`` entry is the key array's shape.
"""

from __future__ import annotations

import statistics
from typing import Any

from jaxbench.kinds import WORK_FIGURES
from jaxbench.measure.protocol import Measurement, reference_summary
from jaxbench.measure.workloads import is_lesson

__all__ = ["BOUNDARY", "REPORT_FORMAT", "to_dict"]

REPORT_FORMAT = 4
BOUNDARY = "input already placed; call plus output synchronization"


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    return str(value)


def _lesson_keys(inputs: list[dict[str, Any]]) -> dict[str, Any]:
    """The lesson's keys: x (``/args/0``) and w (``/args/1``)."""
    x, w = inputs
    return {"input_shape": x["shape"], "weight_shape": w["shape"], "dtype": x["dtype"]}


def to_dict(measurement: Measurement) -> dict[str, Any]:
    """The report of one measurement, as JSON-ready data."""
    workload = measurement.workload
    stages = measurement.first_call
    samples = list(measurement.warm_samples)
    accuracy = measurement.accuracy
    work = measurement.work
    return {
        "format": REPORT_FORMAT,
        "workload": workload.label,
        "description": workload.description,
        "params": _plain(dict(workload.params)),
        "backend": measurement.backend,
        "platform": measurement.platform,
        "device_count": measurement.device_count,
        "jax": measurement.versions["jax"],
        "jaxlib": measurement.versions["jaxlib"],
        "numpy": measurement.versions["numpy"],
        "python": measurement.versions["python"],
        **(_lesson_keys(list(measurement.inputs.values())) if is_lesson(workload) else {}),
        "inputs": measurement.inputs,
        "call": {
            "jit": workload.jit,
            "static_argnums": list(workload.static_argnums),
            "static_argnames": list(workload.static_argnames),
            "donate_argnums": list(workload.donate_argnums),
            "carry": workload.carry is not None,
            "compiles_every_call": workload.compiles_every_call,
        },
        "boundary": BOUNDARY,
        "first_call_seconds": stages.total,
        "first_call_breakdown_seconds": {
            "trace": stages.trace,
            "lower": stages.lower,
            "compile": stages.compile,
            "first_execute": stages.first_execute,
        },
        "first_call_fresh": stages.freshness,
        "warm_samples_seconds": samples,
        "warm_median_seconds": statistics.median(samples),
        "compiles_per_call": measurement.compiles_per_call,
        "reference": reference_summary(workload),
        "max_abs_error": None if accuracy is None else accuracy.max_abs_error,
        "tolerance": {"atol": _plain(workload.atol), "rtol": _plain(workload.rtol)},
        "tolerance_used": None if accuracy is None else accuracy.tolerance_used,
        "output_shapes": measurement.output_shapes,
        "work": None if work is None else {name: getattr(work, name) for name in WORK_FIGURES},
        "warnings": list(measurement.warnings),
        "diagnostic_handle_only_seconds": measurement.handle_only_diagnostic,
    }
