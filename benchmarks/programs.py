"""Real JAX programs in this project's own suite, each checked and with its work figures.

* ``TrainStep``: one optax adam step of a two-layer MLP (``value_and_grad``),
  params and optimizer state donated and threaded from call to call;
* ``EqxForward``: the forward pass of an equinox ``MLP`` over a batch;
* ``ScanRnn``: an Elman RNN over 64 steps with ``lax.scan``;
* ``Noise``: a function of a PRNG key, checked against a golden file.

Every factory is cheap and starts no jax backend (asv's forkserver imports
this module once); inputs are built, and jax started, when a benchmark runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxbench.measure import FLOAT64, Args, Golden, Workload, jax_suite

HERE = Path(__file__).resolve().parent

# --- an optax training step -----------------------------------------------------

FEATURES, HIDDEN, CLASSES = 32, 64, 10
OPTIMIZER = optax.adam(1e-3)


def init_mlp(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """A two-layer MLP's parameters, as host float32 arrays."""

    def normal(*shape: int) -> np.ndarray:
        values: np.ndarray = (rng.normal(size=shape) / np.sqrt(shape[0])).astype(np.float32)
        return values

    return {
        "w1": normal(FEATURES, HIDDEN),
        "b1": np.zeros(HIDDEN, np.float32),
        "w2": normal(HIDDEN, CLASSES),
        "b2": np.zeros(CLASSES, np.float32),
    }


def mlp_loss(params: dict[str, Any], x: Any, labels: Any) -> Any:
    hidden = jax.nn.relu(x @ params["w1"] + params["b1"])
    logits = hidden @ params["w2"] + params["b2"]
    return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()


def train_step(params: Any, opt_state: Any, x: Any, labels: Any) -> tuple[Any, Any, Any]:
    loss, grads = jax.value_and_grad(mlp_loss)(params, x, labels)
    updates, opt_state = OPTIMIZER.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


def train_step_workload(batch: int = 64) -> Workload:
    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        params = init_mlp(rng)
        opt_state = jax.tree_util.tree_map(np.asarray, OPTIMIZER.init(params))
        x = rng.normal(size=(batch, FEATURES)).astype(np.float32)
        labels = rng.integers(0, CLASSES, size=batch).astype(np.int32)
        return params, opt_state, x, labels

    return Workload(
        name="train_step",
        description=f"optax adam step of a {FEATURES}-{HIDDEN}-{CLASSES} MLP, batch {batch}",
        fn=train_step,
        inputs=inputs,
        reference=FLOAT64,
        donate_argnums=(0, 1),
        # the next call trains on the new params and optimizer state
        carry=lambda args, out: (out[0], out[1], *args.args[2:]),
        # per output leaf: the loss (/2) tighter than params and optimizer state
        atol={"/2": 1e-6, "*": 1e-5},
        rtol=1e-4,
        params={"batch": batch},
    )


# --- an equinox model's forward pass ------------------------------------------------


def eqx_model(rng: np.random.Generator) -> eqx.nn.MLP:
    key = jax.random.key(int(rng.integers(2**31)))
    model = eqx.nn.MLP(in_size=FEATURES, out_size=CLASSES, width_size=HIDDEN, depth=2, key=key)
    host: eqx.nn.MLP = jax.tree_util.tree_map(
        lambda v: np.asarray(v) if eqx.is_array(v) else v, model
    )
    return host


def eqx_forward_workload(batch: int = 128) -> Workload:
    # equinox's pattern: the arrays are the argument, the rest is static.
    static = eqx.filter(eqx_model(np.random.default_rng(0)), eqx.is_array, inverse=True)

    def forward(arrays: Any, x: Any) -> Any:
        return jax.vmap(eqx.combine(arrays, static))(x)

    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        arrays = eqx.filter(eqx_model(rng), eqx.is_array)
        return arrays, rng.normal(size=(batch, FEATURES)).astype(np.float32)

    def reference(arrays: Any, x: np.ndarray) -> np.ndarray:
        for i, layer in enumerate(arrays.layers):
            x = x @ layer.weight.T + layer.bias
            if i < len(arrays.layers) - 1:
                x = np.maximum(x, 0)
        return x

    return Workload(
        name="eqx_forward",
        description=f"equinox MLP {FEATURES}-{HIDDEN}-{HIDDEN}-{CLASSES} forward, batch {batch}",
        fn=forward,
        inputs=inputs,
        reference=reference,
        atol=1e-5,
        rtol=1e-5,
        params={"batch": batch},
    )


# --- a lax.scan program -----------------------------------------------------------

STEPS, RNN_BATCH, RNN_IN, RNN_HIDDEN = 64, 8, 16, 32


class RnnParams(NamedTuple):
    wx: Any
    wh: Any
    b: Any


def rnn(params: RnnParams, xs: Any) -> Any:
    def step(h: Any, x: Any) -> tuple[Any, Any]:
        h = jnp.tanh(x @ params.wx + h @ params.wh + params.b)
        return h, h

    h0 = jnp.zeros((xs.shape[1], params.wh.shape[0]), xs.dtype)
    _, hs = jax.lax.scan(step, h0, xs)
    return hs


def rnn_reference(params: RnnParams, xs: np.ndarray) -> np.ndarray:
    h = np.zeros((xs.shape[1], params.wh.shape[0]), xs.dtype)
    hs = []
    for x in xs:
        h = np.tanh(x @ params.wx + h @ params.wh + params.b)
        hs.append(h)
    return np.stack(hs)


def scan_rnn_workload(steps: int = STEPS) -> Workload:
    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        params = RnnParams(
            wx=(rng.normal(size=(RNN_IN, RNN_HIDDEN)) / 4).astype(np.float32),
            wh=(rng.normal(size=(RNN_HIDDEN, RNN_HIDDEN)) / 6).astype(np.float32),
            b=np.zeros(RNN_HIDDEN, np.float32),
        )
        return params, rng.normal(size=(steps, RNN_BATCH, RNN_IN)).astype(np.float32)

    return Workload(
        name="scan_rnn",
        description=f"Elman RNN, lax.scan over {steps} steps, batch {RNN_BATCH}",
        fn=rnn,
        inputs=inputs,
        reference=rnn_reference,
        atol=1e-4,
        rtol=1e-4,
        params={"steps": steps},
    )


# --- a function of a PRNG key ---------------------------------------------------------


def noisy(key: Any, x: Any, rate: float) -> Any:
    keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
    return jnp.where(keep, x / (1.0 - rate), 0.0) + 0.01 * jax.random.normal(key, x.shape)


def noise_workload(rows: int = 256) -> Workload:
    def inputs(rng: np.random.Generator) -> Args:
        key = jax.random.key(int(rng.integers(2**31)))
        return Args((key, rng.normal(size=(rows, 64)).astype(np.float32)), {"rate": 0.25})

    return Workload(
        name="noise",
        description=f"dropout and Gaussian noise from a PRNG key, ({rows}, 64)",
        fn=noisy,
        inputs=inputs,
        # random bits have no NumPy twin: the output recorded once is the reference
        reference=Golden(HERE / "golden" / f"noise-{rows}.npz"),
        static_argnames=("rate",),
        atol=1e-6,
        rtol=1e-6,
        params={"rows": rows},
    )


TrainStep, TrainStepFigures = jax_suite("TrainStep", train_step_workload, params={"batch": [64]})
EqxForward, EqxForwardFigures = jax_suite(
    "EqxForward", eqx_forward_workload, params={"batch": [128]}
)
ScanRnn, ScanRnnFigures = jax_suite("ScanRnn", scan_rnn_workload, params={"steps": [64]})
Noise, NoiseFigures = jax_suite("Noise", noise_workload, params={"rows": [256]})
