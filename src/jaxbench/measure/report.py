"""The lesson's JSON benchmark report.

Format history:

* 1 -- the lesson's keys (``backend, jax, numpy, python, input_shape,
  weight_shape, dtype, boundary, first_call_seconds, warm_samples_seconds,
  warm_median_seconds, max_abs_error``) plus ``format``, ``workload``,
  ``first_call_breakdown_seconds`` (trace, lower, compile, first_execute),
  ``first_call_fresh`` (how freshness was ensured), ``tolerance``,
  ``tolerance_used``, ``output_shapes``, ``device_count``, ``platform``,
  ``jaxlib`` and the labelled ``diagnostic_handle_only_seconds``.
"""

from __future__ import annotations

import statistics
from typing import Any

from jaxbench.measure.protocol import Measurement

__all__ = ["BOUNDARY", "REPORT_FORMAT", "to_dict"]

REPORT_FORMAT = 1
BOUNDARY = "input already placed; call plus output synchronization"


def to_dict(measurement: Measurement) -> dict[str, Any]:
    """The report of one measurement, as JSON-ready data."""
    workload = measurement.workload
    stages = measurement.first_call
    samples = list(measurement.warm_samples)
    return {
        "format": REPORT_FORMAT,
        "workload": workload.label,
        "description": workload.description,
        "backend": measurement.backend,
        "platform": measurement.platform,
        "device_count": measurement.device_count,
        "jax": measurement.versions["jax"],
        "jaxlib": measurement.versions["jaxlib"],
        "numpy": measurement.versions["numpy"],
        "python": measurement.versions["python"],
        "input_shape": list(workload.input_shape),
        "weight_shape": list(workload.weight_shape),
        "dtype": workload.dtype,
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
        "max_abs_error": measurement.accuracy.max_abs_error,
        "tolerance": {"atol": workload.atol, "rtol": workload.rtol},
        "tolerance_used": measurement.accuracy.tolerance_used,
        "output_shapes": measurement.output_shapes,
        "diagnostic_handle_only_seconds": measurement.handle_only_diagnostic,
    }
