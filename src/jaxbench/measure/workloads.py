"""The lesson's workloads: a JAX function, its NumPy reference and its inputs.

Each :class:`Workload` is one record: the function to benchmark, an
independent NumPy reference of the same float32 computation, a seeded input
builder (``numpy.random.default_rng(4)``, as in the lesson), shapes, dtype and
tolerances. Every workload takes ``(x, w)`` with x of shape (rows, 32) and w
of shape (32, 16).

This module imports jax (for the functions); the references are pure NumPy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import jax.numpy as jnp
import numpy as np

from jaxbench.errors import UsageError

__all__ = ["DEFAULT_ROWS", "FEATURES", "OUTPUTS", "Workload", "get", "names"]

FEATURES = 32
OUTPUTS = 16
DEFAULT_ROWS = 64
SEED = 4


@dataclass(frozen=True)
class Workload:
    """One benchmark contract: what is computed, on what, checked against what."""

    name: str
    description: str
    fn: Callable[..., Any]
    reference: Callable[[np.ndarray, np.ndarray], Any]
    rows: int = DEFAULT_ROWS
    dtype: str = "float32"
    atol: float = 2e-5
    rtol: float = 2e-5
    #: Logical devices the input rows are sharded over; 0 = not sharded.
    devices: int = 0
    seed: int = SEED

    @property
    def label(self) -> str:
        """A name that differs whenever the contract does (rows, devices)."""
        label = self.name if self.rows == DEFAULT_ROWS else f"{self.name}-{self.rows}rows"
        return f"{label}-{self.devices}dev" if self.devices else label

    @property
    def input_shape(self) -> tuple[int, int]:
        return (self.rows, FEATURES)

    @property
    def weight_shape(self) -> tuple[int, int]:
        return (FEATURES, OUTPUTS)

    def host_inputs(self) -> tuple[np.ndarray, np.ndarray]:
        """Seeded host inputs, as in the lesson: x first, then w, from one generator."""
        rng = np.random.default_rng(self.seed)
        x = rng.normal(size=self.input_shape).astype(self.dtype)
        w = rng.normal(size=self.weight_shape).astype(self.dtype)
        return x, w

    def with_rows(self, rows: int) -> Workload:
        if rows < 1:
            raise UsageError(f"rows must be a positive integer, got {rows}; pass --rows 64 or more")
        if self.devices and rows % self.devices:
            raise UsageError(
                f"{self.name}: {rows} rows cannot be split over {self.devices} devices; "
                f"use a multiple of {self.devices}"
            )
        return replace(self, rows=rows)

    def with_devices(self, devices: int) -> Workload:
        if devices < 1:
            raise UsageError(f"devices must be at least 1, got {devices}")
        return replace(self, devices=devices).with_rows(self.rows)


# --- the JAX functions -------------------------------------------------------


def predict(x: Any, w: Any) -> Any:
    return jnp.tanh(x @ w)


def energy(x: Any, w: Any) -> Any:
    return jnp.sum((x @ w) ** 2, axis=1)


def structured(x: Any, w: Any) -> Any:
    prediction = jnp.tanh(x @ w)
    return {"prediction": prediction, "mean": jnp.mean(prediction)}


# --- independent NumPy references (same float32 inputs) ----------------------


def predict_reference(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    prediction: np.ndarray = np.tanh(x @ w)
    return prediction


def energy_reference(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    energies: np.ndarray = np.sum((x @ w) ** 2, axis=1)
    return energies


def structured_reference(x: np.ndarray, w: np.ndarray) -> dict[str, np.ndarray]:
    prediction = np.tanh(x @ w)
    return {"prediction": prediction, "mean": np.asarray(prediction.mean(), dtype=prediction.dtype)}


_REGISTRY: dict[str, Workload] = {
    "predict": Workload("predict", "tanh(x @ w)", predict, predict_reference),
    "energy": Workload(
        "energy",
        "row-wise sum of squared predictions, output (rows,)",
        energy,
        energy_reference,
        atol=2e-3,
    ),
    "structured": Workload(
        "structured",
        'the {"prediction", "mean"} pytree, every leaf checked',
        structured,
        structured_reference,
    ),
    "sharded": Workload(
        "sharded",
        "tanh(x @ w) with x's rows sharded over logical devices (Mesh + NamedSharding)",
        predict,
        predict_reference,
        devices=1,
    ),
}


def names() -> tuple[str, ...]:
    """The workload names, in a stable order."""
    return tuple(_REGISTRY)


def get(name: str, *, rows: int | None = None, devices: int | None = None) -> Workload:
    """The named workload, optionally with other rows or devices.

    Raises :class:`UsageError` for an unknown name, rows or devices.
    """
    try:
        workload = _REGISTRY[name]
    except KeyError:
        raise UsageError(
            f"unknown workload {name!r}; choose one of: {', '.join(names())}"
        ) from None
    if devices is not None:
        if not workload.devices:
            raise UsageError(f"workload {name!r} is not sharded; --devices applies to 'sharded'")
        workload = workload.with_devices(devices)
    if rows is not None:
        workload = workload.with_rows(rows)
    return workload
