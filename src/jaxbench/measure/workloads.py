"""The workload contract: what is computed, on what, checked against what.

A :class:`Workload` is one record a benchmark is made of:

* ``fn``: the code to time, called as users call it;
* ``inputs``: a seeded builder, ``inputs(numpy.random.Generator)``, that
  returns the arguments as host values: a tuple of positional arguments, or
  :class:`Args` with keyword arguments too. Any pytree jax knows (dicts,
  tuples, NamedTuples, registered dataclasses, equinox modules), arrays of any
  shape and dtype, PRNG keys, Python scalars;
* ``reference``: a NumPy function of the same host inputs, :data:`FLOAT64`
  (the same ``fn`` run with x64 enabled on the CPU), a :class:`Golden` file
  recorded once, or :class:`Unchecked` with the reason;
* how it is called: ``static_argnums``/``static_argnames`` and
  ``donate_argnums`` (given to ``jax.jit``), ``placement`` of each argument,
  ``jit`` (``False``: ``fn`` is timed exactly as given, its host-side work
  included), ``carry`` (a training step's state threaded into the next call),
  ``compiles_every_call`` (a library API that compiles at every call, a
  sampler's ``run``: timed whole, compile included, its compiles per call
  counted);
* ``atol``/``rtol``: one number, or a mapping from output leaf path (``/loss``,
  ``/0/w1``) to a number, ``"*"`` for the rest.

The demo workloads, from the seed lesson this project grew from (:func:`get`:
predict, energy, structured, sharded), are
ordinary instances. The references are pure NumPy.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeAlias

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from jaxbench.errors import UsageError, WorkloadError

__all__ = [
    "DEFAULT_ROWS",
    "FEATURES",
    "FLOAT64",
    "OUTPUTS",
    "Args",
    "Golden",
    "Unchecked",
    "Workload",
    "as_args",
    "get",
    "names",
]

FEATURES = 32
OUTPUTS = 16
DEFAULT_ROWS = 64
SEED = 4

#: ``reference=FLOAT64``: the same function, run with x64 enabled on the CPU.
FLOAT64: Final = "float64"


@dataclass(frozen=True)
class Args:
    """Positional and keyword arguments of one call."""

    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)


def as_args(built: object, where: str = "inputs") -> Args:
    """``built`` as :class:`Args`: a plain tuple is the positional arguments."""
    if isinstance(built, Args):
        return Args(tuple(built.args), dict(built.kwargs))
    if type(built) is tuple:
        return Args(built, {})
    raise WorkloadError(
        f"{where} returned {type(built).__name__}, not the call's arguments; "
        "return a tuple of positional arguments, e.g. (params, batch), "
        "or Args(args=(...), kwargs={...})"
    )


@dataclass(frozen=True)
class Golden:
    """A recorded output (``.npz``, one array per leaf path), checked on later commits.

    Record it once with ``jaxbench report --workload module:factory --record-golden``.
    """

    path: str | Path


@dataclass(frozen=True)
class Unchecked:
    """No reference, declared: the benchmark is recorded and shown as unchecked."""

    reason: str

    def __post_init__(self) -> None:
        if not self.reason.strip():
            raise UsageError("Unchecked needs a reason, e.g. Unchecked('random output')")


Reference: TypeAlias = Callable[..., Any] | str | Golden | Unchecked
Tolerance: TypeAlias = float | Mapping[str, float]
#: One argument's placement: a device, a Sharding, or a function of the
#: workload's devices returning either; ``None`` is the default device.
PlacementSpec: TypeAlias = Any
#: Every argument alike, or per argument: a sequence (positional) or a mapping
#: from position (int) or keyword (str) to a spec.
Placement: TypeAlias = Any


def _label(name: str, params: Mapping[str, Any]) -> str:
    return "-".join([name, *(f"{k}={v}" for k, v in params.items())])


@dataclass(frozen=True)
class Workload:
    """One benchmark contract (see the module docstring)."""

    name: str
    fn: Callable[..., Any]
    inputs: Callable[[np.random.Generator], Any]
    reference: Reference
    description: str = ""
    static_argnums: tuple[int, ...] = ()
    static_argnames: tuple[str, ...] = ()
    donate_argnums: tuple[int, ...] = ()
    placement: Placement = None
    #: Devices the placement needs; placement functions get the first ones.
    devices: int = 1
    jit: bool = True
    carry: Callable[[Args, Any], Any] | None = None
    #: ``fn`` compiles at every call (a library API that jits a fresh kernel
    #: inside, such as a sampler's ``run``): each warm call is timed whole,
    #: compile included, and its compiles are counted, not refused. Needs
    #: ``jit=False``.
    compiles_every_call: bool = False
    atol: Tolerance = 2e-5
    rtol: Tolerance = 2e-5
    seed: int = 0
    #: The parameters that name this workload (its label is name-k=v-...).
    params: Mapping[str, Any] = field(default_factory=dict)
    #: A label other than the default ``name-k=v...``.
    label: str = ""

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", _label(self.name, self.params))
        for attr in ("static_argnums", "donate_argnums", "static_argnames"):
            value = getattr(self, attr)
            object.__setattr__(
                self, attr, (value,) if isinstance(value, int | str) else tuple(value)
            )
        if self.donate_argnums and self.carry is None:
            raise UsageError(
                f"{self.label}: donate_argnums without carry would pass donated buffers "
                "again; give carry=(args, output) -> next args that threads the state"
            )
        if not self.jit and (self.static_argnums or self.static_argnames or self.donate_argnums):
            raise UsageError(
                f"{self.label}: static and donated arguments apply to jax.jit; with jit=False "
                "pass fn already jitted with them (jax.jit(fn, static_argnums=...))"
            )
        if self.compiles_every_call and self.jit:
            raise UsageError(
                f"{self.label}: compiles_every_call times fn as your users call it, its "
                "compiles included; give jit=False too (with jit=True jaxbench compiles fn "
                "once and the compiles inside it are traced away)"
            )
        if self.devices < 1:
            raise UsageError(f"{self.label}: devices must be at least 1, got {self.devices}")

    @property
    def reference_kind(self) -> str:
        """``numpy`` (a function), ``float64``, ``golden`` or ``unchecked``."""
        if isinstance(self.reference, Golden):
            return "golden"
        if isinstance(self.reference, Unchecked):
            return "unchecked"
        if isinstance(self.reference, str):
            if self.reference != FLOAT64:
                raise UsageError(
                    f"{self.label}: reference {self.reference!r} is not known; use a NumPy "
                    f"function, {FLOAT64!r}, Golden(path) or Unchecked(reason)"
                )
            return "float64"
        return "numpy"

    def host_args(self) -> Args:
        """The seeded host inputs, built afresh."""
        try:
            built = self.inputs(np.random.default_rng(self.seed))
        except (WorkloadError, UsageError):
            raise
        except Exception as exc:
            raise WorkloadError(
                f"{self.label}: the inputs builder raised {type(exc).__name__}: {exc}; "
                "fix inputs(rng) so that it returns the call's arguments"
            ) from None
        return as_args(built, f"{self.label}: inputs")

    def host_inputs(self) -> tuple[Any, ...]:
        """The positional host inputs (the lesson's ``(x, w)``)."""
        return self.host_args().args


# --- the demo workloads -----------------------------------------------------


def predict(x: Any, w: Any) -> Any:
    return jnp.tanh(x @ w)


def energy(x: Any, w: Any) -> Any:
    return jnp.sum((x @ w) ** 2, axis=1)


def structured(x: Any, w: Any) -> Any:
    prediction = jnp.tanh(x @ w)
    return {"prediction": prediction, "mean": jnp.mean(prediction)}


def predict_reference(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    prediction: np.ndarray = np.tanh(x @ w)
    return prediction


def energy_reference(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    energies: np.ndarray = np.sum((x @ w) ** 2, axis=1)
    return energies


def structured_reference(x: np.ndarray, w: np.ndarray) -> dict[str, np.ndarray]:
    prediction = np.tanh(x @ w)
    return {"prediction": prediction, "mean": np.asarray(prediction.mean(), dtype=prediction.dtype)}


def _lesson_inputs(rows: int) -> Callable[[np.random.Generator], tuple[np.ndarray, np.ndarray]]:
    def build(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        x = rng.normal(size=(rows, FEATURES)).astype(np.float32)
        w = rng.normal(size=(FEATURES, OUTPUTS)).astype(np.float32)
        return x, w

    return build


def rows_sharded(devices: Sequence[jax.Device]) -> NamedSharding:
    """x's rows split over ``devices`` (a one-axis ``Mesh``)."""
    return NamedSharding(Mesh(np.array(devices), ("rows",)), PartitionSpec("rows", None))


def replicated(devices: Sequence[jax.Device]) -> NamedSharding:
    """The whole array on every one of ``devices``."""
    return NamedSharding(Mesh(np.array(devices), ("rows",)), PartitionSpec())


_LESSON: dict[str, tuple[str, Callable[..., Any], Callable[..., Any], float, bool]] = {
    "predict": ("tanh(x @ w)", predict, predict_reference, 2e-5, False),
    "energy": (
        "row-wise sum of squared predictions, output (rows,)",
        energy,
        energy_reference,
        2e-3,
        False,
    ),
    "structured": (
        'the {"prediction", "mean"} pytree, every leaf checked',
        structured,
        structured_reference,
        2e-5,
        False,
    ),
    "sharded": (
        "tanh(x @ w) with x's rows sharded over logical devices (Mesh + NamedSharding)",
        predict,
        predict_reference,
        2e-5,
        True,
    ),
}


def lesson(name: str, rows: int = DEFAULT_ROWS, devices: int = 1) -> Workload:
    """One of the lesson's workloads: ``(x, w)``, x (rows, 32), w (32, 16), float32."""
    description, fn, ref, atol, sharded = _LESSON[name]
    label = name if rows == DEFAULT_ROWS else f"{name}-{rows}rows"
    params: dict[str, Any] = {"rows": rows}
    if sharded:
        label, params = f"{label}-{devices}dev", {**params, "devices": devices}
    return Workload(
        name=name,
        fn=fn,
        inputs=_lesson_inputs(rows),
        reference=ref,
        description=description,
        placement=(rows_sharded, replicated) if sharded else None,
        devices=devices,
        atol=atol,
        seed=SEED,
        params=params,
        label=label,
    )


def is_lesson(workload: Workload) -> bool:
    """Whether ``workload`` is one of the lesson's: its inputs are the lesson's (x, w)."""
    entry = _LESSON.get(workload.name)
    return entry is not None and workload.fn is entry[1]


def names() -> tuple[str, ...]:
    """The lesson's workload names, in a stable order."""
    return tuple(_LESSON)


def get(name: str, *, rows: int | None = None, devices: int | None = None) -> Workload:
    """The named lesson workload, optionally with other rows or devices.

    Raises :class:`UsageError` for an unknown name, rows or devices.
    """
    if name not in _LESSON:
        raise UsageError(f"unknown workload {name!r}; choose one of: {', '.join(names())}")
    sharded = _LESSON[name][4]
    rows = DEFAULT_ROWS if rows is None else rows
    if rows < 1:
        raise UsageError(f"rows must be a positive integer, got {rows}; pass --rows 64 or more")
    if devices is not None and not sharded:
        raise UsageError(f"workload {name!r} is not sharded; --devices applies to 'sharded'")
    devices = 1 if devices is None else devices
    if devices < 1:
        raise UsageError(f"devices must be at least 1, got {devices}")
    if rows % devices:
        raise UsageError(
            f"{name}: {rows} rows cannot be split over {devices} devices; "
            f"use a multiple of {devices}"
        )
    return lesson(name, rows, devices)
