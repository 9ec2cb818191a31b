"""A conformance corpus: real JAX code as its libraries' users write it, no workaround.

Each idiom is a factory ``name() -> Workload`` in :data:`IDIOMS`; the suites at
the bottom (one :func:`jax_suite` pair per idiom) make it an asv benchmark
module, so the same file is measured by ``jaxbench report``
(``--workload idioms:make --param idiom=NAME``), by asv_runner's loop and by a
real ``asv run``. :data:`FAILS` are idioms that must fail, with the message.

Inputs are built as users build them: ``optimizer.init(params)`` on device
arrays, an ``eqx.nn.MLP`` with its activation functions, ``model.init`` of a
flax.linen model, an nnx module, arrays already sharded. The sharded idiom
needs 4 devices (``XLA_FLAGS=--xla_force_host_platform_device_count=4``); with
fewer it is skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import equinox as eqx
import flax.linen as linen
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from jaxbench.measure import FLOAT64, Args, Workload, jax_suite
from jaxbench.measure.asvsuite import NUMBER as CALLS_PER_SAMPLE

#: Small sizes by default; bench/device_check.sh passes larger ones (JAXBENCH_CORPUS_SCALE).
SCALE = 1


def _scale() -> int:
    import os

    return max(int(os.environ.get("JAXBENCH_CORPUS_SCALE", SCALE)), 1)


def _relu(x: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.maximum(x, 0)
    return out


# --- equinox ------------------------------------------------------------------------


def _eqx_mlp(seed: int, features: int = 16) -> eqx.nn.MLP:
    # as equinox's users build it: jax arrays, jax.nn.relu (a custom_jvp) and the identity
    return eqx.nn.MLP(features, 4, 32, depth=2, key=jax.random.key(seed))


def _eqx_numpy(model: Any, x: np.ndarray) -> np.ndarray:
    for i, layer in enumerate(model.layers):
        x = x @ np.asarray(layer.weight).T + np.asarray(layer.bias)
        if i < len(model.layers) - 1:
            x = _relu(x)
    return x


def _eqx_inputs(rng: np.random.Generator) -> tuple[Any, ...]:
    x = rng.normal(size=(64 * _scale(), 16)).astype(np.float32)
    return _eqx_mlp(int(rng.integers(2**31))), x


def eqx_module() -> Workload:
    def forward(model: eqx.nn.MLP, x: Any) -> Any:
        return jax.vmap(model)(x)

    return Workload(
        name="eqx_module",
        fn=forward,
        inputs=_eqx_inputs,
        reference=_eqx_numpy,
        atol=1e-5,
        rtol=1e-5,
    )


def eqx_filter_jit() -> Workload:
    @eqx.filter_jit
    def forward(model: eqx.nn.MLP, x: Any) -> Any:
        return jax.vmap(model)(x)

    return Workload(
        name="eqx_filter_jit",
        fn=forward,
        inputs=_eqx_inputs,
        reference=_eqx_numpy,
        jit=False,
        atol=1e-5,
        rtol=1e-5,
    )


# --- optax ----------------------------------------------------------------------------

OPTIMIZER = optax.adam(1e-3)


def _loss(params: Any, x: Any, y: Any) -> Any:
    return jnp.mean((x @ params["w"] + params["b"] - y) ** 2)


def train_step(params: Any, opt_state: Any, x: Any, y: Any) -> tuple[Any, Any, Any]:
    loss, grads = jax.value_and_grad(_loss)(params, x, y)
    updates, opt_state = OPTIMIZER.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


def optax_step() -> Workload:
    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        params = {
            "w": jnp.asarray(rng.normal(size=(16, 1)).astype(np.float32)),
            "b": jnp.zeros(1, jnp.float32),
        }
        x = rng.normal(size=(64 * _scale(), 16)).astype(np.float32)
        y = rng.normal(size=(64 * _scale(), 1)).astype(np.float32)
        return params, OPTIMIZER.init(params), x, y

    return Workload(
        name="optax_step",
        fn=train_step,
        inputs=inputs,
        reference=FLOAT64,
        donate_argnums=(0, 1),
        carry=lambda args, out: (out[0], out[1], *args.args[2:]),
        atol={"/2": 1e-6, "*": 1e-5},
        rtol=1e-4,
    )


# --- flax -------------------------------------------------------------------------------


class LinenMLP(linen.Module):
    hidden: int = 32

    @linen.compact
    def __call__(self, x: Any) -> Any:
        x = linen.relu(linen.Dense(self.hidden)(x))
        return linen.Dense(4)(x)


LINEN_MODEL = LinenMLP()


def linen_params() -> Workload:
    def forward(variables: Any, x: Any) -> Any:
        return LINEN_MODEL.apply(variables, x)

    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        x = rng.normal(size=(64 * _scale(), 16)).astype(np.float32)
        variables = LINEN_MODEL.init(jax.random.key(int(rng.integers(2**31))), x)
        return variables, x

    def reference(variables: Any, x: np.ndarray) -> np.ndarray:
        p = variables["params"]
        hidden = _relu(x @ p["Dense_0"]["kernel"] + p["Dense_0"]["bias"])
        out: np.ndarray = hidden @ p["Dense_1"]["kernel"] + p["Dense_1"]["bias"]
        return out

    return Workload(
        name="linen_params", fn=forward, inputs=inputs, reference=reference, atol=1e-5, rtol=1e-5
    )


class NnxMLP(nnx.Module):
    def __init__(self, rngs: nnx.Rngs) -> None:
        self.hidden = nnx.Linear(16, 32, rngs=rngs)
        self.out = nnx.Linear(32, 4, rngs=rngs)

    def __call__(self, x: Any) -> Any:
        return self.out(nnx.relu(self.hidden(x)))


def _nnx_numpy(model: Any, x: np.ndarray) -> np.ndarray:
    hidden = _relu(x @ np.asarray(model.hidden.kernel[...]) + np.asarray(model.hidden.bias[...]))
    out: np.ndarray = hidden @ np.asarray(model.out.kernel[...]) + np.asarray(model.out.bias[...])
    return out


def nnx_jit() -> Workload:
    @nnx.jit
    def forward(model: NnxMLP, x: Any) -> Any:
        return model(x)

    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        x = rng.normal(size=(64 * _scale(), 16)).astype(np.float32)
        return NnxMLP(nnx.Rngs(int(rng.integers(2**31)))), x

    return Workload(
        name="nnx_jit",
        fn=forward,
        inputs=inputs,
        reference=_nnx_numpy,
        jit=False,
        atol=1e-5,
        rtol=1e-5,
    )


def nnx_split() -> Workload:
    def forward(graphdef: Any, state: Any, x: Any) -> Any:
        return nnx.merge(graphdef, state)(x)

    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        x = rng.normal(size=(64 * _scale(), 16)).astype(np.float32)
        graphdef, state = nnx.split(NnxMLP(nnx.Rngs(int(rng.integers(2**31)))))
        return graphdef, state, x

    def reference(graphdef: Any, state: Any, x: np.ndarray) -> np.ndarray:
        return _nnx_numpy(nnx.merge(graphdef, state), x)

    return Workload(
        name="nnx_split", fn=forward, inputs=inputs, reference=reference, atol=1e-5, rtol=1e-5
    )


# --- plain jax, as people write it ---------------------------------------------------------


def _predict(params: Any, x: Any) -> Any:
    return jnp.tanh(x @ params["w"] + params["b"])


def _predict_numpy(params: Any, x: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.tanh(x @ params["w"] + params["b"])
    return out


def jax_arrays() -> Workload:
    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        params = {"w": jnp.asarray(rng.normal(size=(16, 8)), jnp.float32), "b": jnp.zeros(8)}
        return params, jax.device_put(rng.normal(size=(64 * _scale(), 16)).astype(np.float32))

    return Workload(
        name="jax_arrays", fn=_predict, inputs=inputs, reference=_predict_numpy, atol=1e-5
    )


def none_and_scalars() -> Workload:
    def scaled(params: Any, x: Any, scale: float, *, shift: Any = None) -> Any:
        y = x @ params["w"] * scale
        if params["b"] is not None:
            y = y + params["b"]
        return y if shift is None else y + shift

    def reference(params: Any, x: np.ndarray, scale: float, *, shift: Any = None) -> np.ndarray:
        out: np.ndarray = (x @ params["w"] * np.float32(scale)).astype(np.float32)
        return out

    def inputs(rng: np.random.Generator) -> Args:
        params = {"w": rng.normal(size=(16, 8)).astype(np.float32), "b": None}
        x = rng.normal(size=(64 * _scale(), 16)).astype(np.float32)
        return Args((params, x, 0.5), {"shift": None})

    return Workload(
        name="none_and_scalars", fn=scaled, inputs=inputs, reference=reference, atol=1e-5
    )


def bfloat16() -> Workload:
    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        x = rng.normal(size=(64 * _scale(), 32)).astype(jnp.bfloat16)
        w = (rng.normal(size=(32, 16)) / 6).astype(jnp.bfloat16)
        return x, w

    return Workload(
        name="bfloat16",
        fn=lambda x, w: jnp.tanh(x @ w),
        inputs=inputs,
        reference=FLOAT64,  # the same function in float64: bfloat16 keeps ~3 digits
        atol=2e-2,
        rtol=2e-2,
    )


def integer_labels() -> Workload:
    def loss(logits: Any, labels: Any) -> Any:
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

    def reference(logits: np.ndarray, labels: np.ndarray) -> np.ndarray:
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        return np.asarray(-log_p[np.arange(len(labels)), labels].mean(), np.float32)

    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        n = 64 * _scale()
        return rng.normal(size=(n, 10)).astype(np.float32), rng.integers(0, 10, n).astype(np.int32)

    return Workload(name="integer_labels", fn=loss, inputs=inputs, reference=reference, atol=1e-5)


def typed_keys() -> Workload:
    def noisy(key: Any, x: Any) -> Any:
        return x + 0.1 * jax.random.normal(key, x.shape)

    def reference(key: Any, x: np.ndarray) -> np.ndarray:
        # the random bits are jax's own; the reference checks what fn does with them
        out: np.ndarray = x + 0.1 * np.asarray(jax.random.normal(key, x.shape))
        return out

    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        key = jax.random.key(int(rng.integers(2**31)))
        return key, rng.normal(size=(64 * _scale(), 16)).astype(np.float32)

    return Workload(name="typed_keys", fn=noisy, inputs=inputs, reference=reference, atol=1e-5)


# --- samplers: a PRNG key in and out, as blackjax and numpyro users write them -----------


class SamplerState(NamedTuple):
    """A Langevin (MALA) sampler's state, as blackjax keeps it."""

    position: Any
    logdensity: Any
    logdensity_grad: Any
    accepted: Any  # int32: accepted proposals so far


STEP_SIZE = 0.3
CHAIN_LENGTH = 8


def _logdensity(x: Any) -> Any:
    return -0.5 * jnp.sum(x**2)  # a standard normal target


def _sampler_init(position: Any) -> SamplerState:
    logdensity, grad = jax.value_and_grad(_logdensity)(position)
    return SamplerState(position, logdensity, grad, jnp.zeros((), jnp.int32))


def _mala_kernel(key: Any, state: SamplerState) -> Any:
    """One Metropolis-adjusted Langevin step (blackjax's ``mala`` kernel)."""
    key_noise, key_accept = jax.random.split(key)
    x, grad = state.position, state.logdensity_grad
    noise = jax.random.normal(key_noise, x.shape)
    proposal = x + STEP_SIZE * grad + jnp.sqrt(2 * STEP_SIZE) * noise
    logdensity, new_grad = jax.value_and_grad(_logdensity)(proposal)
    forward = -jnp.sum((proposal - x - STEP_SIZE * grad) ** 2) / (4 * STEP_SIZE)
    backward = -jnp.sum((x - proposal - STEP_SIZE * new_grad) ** 2) / (4 * STEP_SIZE)
    log_ratio = logdensity - state.logdensity + backward - forward
    accept = jnp.log(jax.random.uniform(key_accept)) < log_ratio
    moved = SamplerState(proposal, logdensity, new_grad, state.accepted + 1)
    return jax.tree.map(lambda new, old: jnp.where(accept, new, old), moved, state)


def sampler_step_fn(key: Any, state: SamplerState) -> tuple[Any, SamplerState]:
    """The user's loop body: split the key, step, hand the next key on."""
    key, subkey = jax.random.split(key)
    return key, _mala_kernel(subkey, state)


def _mala_numpy(key: Any, state: SamplerState) -> SamplerState:
    """The same step in NumPy (float64), on jax's own random bits."""
    key_noise, key_accept = jax.random.split(key)
    x = np.asarray(state.position, np.float64)
    grad = np.asarray(state.logdensity_grad, np.float64)
    noise = np.asarray(jax.random.normal(key_noise, x.shape), np.float64)
    proposal = x + STEP_SIZE * grad + np.sqrt(2 * STEP_SIZE) * noise
    logdensity, new_grad = -0.5 * np.sum(proposal**2), -proposal
    forward = -np.sum((proposal - x - STEP_SIZE * grad) ** 2) / (4 * STEP_SIZE)
    backward = -np.sum((x - proposal - STEP_SIZE * new_grad) ** 2) / (4 * STEP_SIZE)
    log_ratio = logdensity - float(state.logdensity) + backward - forward
    if np.log(float(jax.random.uniform(key_accept))) < log_ratio:
        return SamplerState(proposal, logdensity, new_grad, int(state.accepted) + 1)
    return SamplerState(x, float(state.logdensity), grad, int(state.accepted))


def _as_state32(state: SamplerState) -> SamplerState:
    return SamplerState(
        np.asarray(state.position, np.float32),
        np.asarray(state.logdensity, np.float32),
        np.asarray(state.logdensity_grad, np.float32),
        np.asarray(state.accepted, np.int32),
    )


def _sampler_step_numpy(key: Any, state: SamplerState) -> tuple[Any, SamplerState]:
    key, subkey = jax.random.split(key)
    return key, _as_state32(_mala_numpy(subkey, state))


def _chain_numpy(key: Any, state: SamplerState, length: int) -> tuple[Any, SamplerState, Any]:
    positions = []
    for _ in range(length):
        key, subkey = jax.random.split(key)
        state = _mala_numpy(subkey, state)
        positions.append(state.position)
    return key, _as_state32(state), np.asarray(positions, np.float32)


def _sampler_state(rng: np.random.Generator) -> SamplerState:
    position = rng.normal(size=(8 * _scale(),)).astype(np.float32)
    return SamplerState(position, np.float32(-0.5 * np.sum(position**2)), -position, np.int32(0))


def sampler_step() -> Workload:
    """``(key, state) -> (key, state)`` with a typed key, the state threaded by ``carry``."""

    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        return jax.random.key(int(rng.integers(2**31))), _sampler_state(rng)

    return Workload(
        name="sampler_step",
        fn=sampler_step_fn,
        inputs=inputs,
        reference=_sampler_step_numpy,
        carry=lambda args, out: out,
        atol=1e-5,
        rtol=1e-5,
    )


def scan_chain() -> Workload:
    """A ``lax.scan`` chain carrying the key, the positions stacked (a raw ``PRNGKey``)."""

    def chain(key: Any, state: SamplerState) -> tuple[Any, SamplerState, Any]:
        def body(carry: Any, _: Any) -> tuple[Any, Any]:
            key, state = sampler_step_fn(*carry)
            return (key, state), state.position

        (key, state), positions = jax.lax.scan(body, (key, state), None, length=CHAIN_LENGTH)
        return key, state, positions

    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        return jax.random.PRNGKey(int(rng.integers(2**31))), _sampler_state(rng)

    return Workload(
        name="scan_chain",
        fn=chain,
        inputs=inputs,
        reference=lambda key, state: _chain_numpy(key, state, CHAIN_LENGTH),
        carry=lambda args, out: out[:2],
        atol=1e-4,
        rtol=1e-4,
    )


def both_key_kinds() -> Workload:
    """A function of a typed key and a raw ``PRNGKey``, returning the next of each."""

    def jitter(typed: Any, raw: Any, x: Any) -> tuple[Any, Any, Any]:
        typed, typed_sub = jax.random.split(typed)
        raw, raw_sub = jax.random.split(raw)
        noise = jax.random.normal(typed_sub, x.shape) + jax.random.uniform(raw_sub, x.shape)
        return typed, raw, x + 0.1 * noise

    def reference(typed: Any, raw: Any, x: np.ndarray) -> tuple[Any, Any, np.ndarray]:
        typed, typed_sub = jax.random.split(typed)
        raw, raw_sub = jax.random.split(raw)
        noise = np.asarray(jax.random.normal(typed_sub, x.shape)) + np.asarray(
            jax.random.uniform(raw_sub, x.shape)
        )
        return typed, raw, (x + 0.1 * noise).astype(np.float32)

    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        seed = int(rng.integers(2**31))
        x = rng.normal(size=(64 * _scale(), 16)).astype(np.float32)
        return jax.random.key(seed), jax.random.PRNGKey(seed + 1), x

    return Workload(name="both_key_kinds", fn=jitter, inputs=inputs, reference=reference, atol=1e-5)


def sampler_run() -> Workload:
    """A sampler's ``run``, as numpyro's ``MCMC.run`` is: it jits a fresh kernel at every call.

    Declared ``compiles_every_call`` and called as users call it (``jit=False``):
    each timed call is the whole run, its compile included.
    """

    def run(key: Any, position: Any) -> Any:
        state = _sampler_init(position)

        @jax.jit
        def one_chain(key: Any, state: SamplerState) -> Any:
            return jax.lax.fori_loop(
                0, CHAIN_LENGTH, lambda _, carry: sampler_step_fn(*carry), (key, state)
            )

        return one_chain(key, state)

    def reference(key: Any, position: np.ndarray) -> tuple[Any, SamplerState]:
        state = SamplerState(position, -0.5 * np.sum(position**2), -position, 0)
        key, state, _ = _chain_numpy(key, state, CHAIN_LENGTH)
        return key, state

    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        return jax.random.key(int(rng.integers(2**31))), _sampler_state(rng).position

    return Workload(
        name="sampler_run",
        fn=run,
        inputs=inputs,
        reference=reference,
        jit=False,
        compiles_every_call=True,
        atol=1e-4,
        rtol=1e-4,
    )


# --- FLOAT64 on integer state -------------------------------------------------------------


class HMCState(NamedTuple):
    position: Any
    logdensity: Any
    steps: Any  # int32: integration steps of the accepted trajectories


def hmc_integer_state() -> Workload:
    """An HMC transition, NUTS-like: a ``lax.cond`` keeps the state or takes the trajectory,
    whose step count (an int32 leaf) grows by a count made afresh (``jnp.sum``).

    Checked against ``FLOAT64``: with x64 the fresh count is int64, the kept
    one int32, so the reference runs the step with its int32 inputs widened too.
    """

    def transition(state: HMCState, momentum: Any, log_u: Any) -> Any:
        def leapfrog(carry: Any, _: Any) -> tuple[Any, Any]:
            q, p = carry
            p = p + 0.5 * STEP_SIZE * jax.grad(_logdensity)(q)
            q = q + STEP_SIZE * p
            p = p + 0.5 * STEP_SIZE * jax.grad(_logdensity)(q)
            return (q, p), _logdensity(q) - 0.5 * jnp.sum(p**2)

        start = state.logdensity - 0.5 * jnp.sum(momentum**2)
        (q, _), energies = jax.lax.scan(leapfrog, (state.position, momentum), None, length=8)
        steps = jnp.sum(jnp.abs(energies - start) < 1000.0)  # the non-divergent steps
        accepted = HMCState(q, _logdensity(q), state.steps + steps)
        return jax.lax.cond(log_u < energies[-1] - start, lambda: accepted, lambda: state)

    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        position = rng.normal(size=(8 * _scale(),)).astype(np.float32)
        state = HMCState(position, np.float32(-0.5 * np.sum(position**2)), np.int32(0))
        momentum = rng.normal(size=position.shape).astype(np.float32)
        return state, momentum, np.float32(np.log(rng.uniform()))

    return Workload(
        name="hmc_integer_state",
        fn=transition,
        inputs=inputs,
        reference=FLOAT64,
        carry=lambda args, out: (out, *args.args[1:]),
        atol=1e-4,
        rtol=1e-4,
    )


@dataclass(frozen=True)
class Config:
    activation: str = "tanh"
    residual: bool = True


def static_config() -> Workload:
    def block(params: Any, x: Any, config: Config) -> Any:
        act = {"tanh": jnp.tanh, "relu": jax.nn.relu}[config.activation]
        y = act(x @ params["w"])
        return x + y if config.residual else y

    def reference(params: Any, x: np.ndarray, config: Config) -> np.ndarray:
        y = np.tanh(x @ params["w"])
        out: np.ndarray = x + y
        return out

    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        params = {"w": (rng.normal(size=(16, 16)) / 4).astype(np.float32)}
        return params, rng.normal(size=(64 * _scale(), 16)).astype(np.float32), Config()

    return Workload(name="static_config", fn=block, inputs=inputs, reference=reference, atol=1e-5)


def loops() -> Workload:
    def newton_sqrt(a: Any) -> Any:
        def cond(state: Any) -> Any:
            x, i = state
            return (i < 50) & (jnp.max(jnp.abs(x * x - a)) > 1e-5)

        def body(state: Any) -> Any:
            x, i = state
            return 0.5 * (x + a / x), i + 1

        x, _ = jax.lax.while_loop(cond, body, (jnp.ones_like(a), 0))
        # and a fori_loop: ten steps of a damped update, back to the root
        return jax.lax.fori_loop(0, 10, lambda i, v: 0.5 * (v + a / v), x)

    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        return (rng.uniform(1, 100, size=(64 * _scale(),)).astype(np.float32),)

    return Workload(
        name="loops",
        fn=newton_sqrt,
        inputs=inputs,
        reference=lambda a: np.sqrt(a),
        atol=1e-5,
        rtol=1e-5,
    )


def dict_with_static_outputs() -> Workload:
    def model(params: Any, x: Any) -> dict[str, Any]:
        return {"y": _predict(params, x), "units": "volts", "activation": jnp.tanh, "layers": 1}

    def reference(params: Any, x: np.ndarray) -> dict[str, Any]:
        return {"y": _predict_numpy(params, x), "units": "volts", "activation": jnp.tanh,
                "layers": np.int32(1)}  # fmt: skip

    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        params = {"w": rng.normal(size=(16, 8)).astype(np.float32), "b": np.zeros(8, np.float32)}
        return params, rng.normal(size=(64 * _scale(), 16)).astype(np.float32)

    return Workload(
        name="dict_with_static_outputs", fn=model, inputs=inputs, reference=reference, atol=1e-5
    )


def vmapped_model() -> Workload:
    def per_example(params: Any, x: Any) -> Any:
        return jnp.tanh(params["w"].T @ x + params["b"])

    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        params = {"w": rng.normal(size=(16, 8)).astype(np.float32), "b": np.zeros(8, np.float32)}
        return params, rng.normal(size=(64 * _scale(), 16)).astype(np.float32)

    return Workload(
        name="vmapped_model",
        fn=jax.vmap(per_example, in_axes=(None, 0)),
        inputs=inputs,
        reference=_predict_numpy,
        atol=1e-5,
    )


def sharded() -> Workload:
    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        mesh = Mesh(np.array(jax.devices()[:4]), ("batch",))
        x = rng.normal(size=(64 * _scale(), 16)).astype(np.float32)
        params = {"w": rng.normal(size=(16, 8)).astype(np.float32), "b": np.zeros(8, np.float32)}
        # as users shard: the batch split over the mesh, the params replicated
        x = jax.device_put(x, NamedSharding(mesh, PartitionSpec("batch", None)))
        params = jax.device_put(params, NamedSharding(mesh, PartitionSpec()))
        return params, x

    return Workload(
        name="sharded",
        fn=_predict,
        inputs=inputs,
        reference=_predict_numpy,
        devices=4,
        atol=1e-5,
    )


def library_api() -> Workload:
    """``jit=False`` on a plain Python function: timed, its work figures skipped with a warning."""
    inner = jax.jit(_predict)

    def api(params: Any, x: Any) -> Any:
        if x.ndim != 2:  # host-side argument checking, as library APIs do
            raise ValueError("x must be 2-D")
        return inner(params, x)

    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        params = {"w": rng.normal(size=(16, 8)).astype(np.float32), "b": np.zeros(8, np.float32)}
        return params, rng.normal(size=(64 * _scale(), 16)).astype(np.float32)

    return Workload(
        name="library_api", fn=api, inputs=inputs, reference=_predict_numpy, jit=False, atol=1e-5
    )


def same_array_twice_donated() -> Workload:
    def step(a: Any, b: Any) -> tuple[Any, Any]:
        return a + b, a * b

    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        x = jnp.asarray(rng.normal(size=(8,)).astype(np.float32))
        return x, x

    return Workload(
        name="same_array_twice_donated",
        fn=step,
        inputs=inputs,
        reference=FLOAT64,
        donate_argnums=(0, 1),
        carry=lambda args, out: out,
    )


IDIOMS: dict[str, Callable[[], Workload]] = {
    "eqx_module": eqx_module,
    "eqx_filter_jit": eqx_filter_jit,
    "optax_step": optax_step,
    "linen_params": linen_params,
    "nnx_jit": nnx_jit,
    "nnx_split": nnx_split,
    "jax_arrays": jax_arrays,
    "none_and_scalars": none_and_scalars,
    "bfloat16": bfloat16,
    "integer_labels": integer_labels,
    "typed_keys": typed_keys,
    "static_config": static_config,
    "loops": loops,
    "dict_with_static_outputs": dict_with_static_outputs,
    "vmapped_model": vmapped_model,
    "sharded": sharded,
    "library_api": library_api,
    "sampler_step": sampler_step,
    "scan_chain": scan_chain,
    "both_key_kinds": both_key_kinds,
    "sampler_run": sampler_run,
    "hmc_integer_state": hmc_integer_state,
}

#: Idioms that must fail, and a piece of the one-line message they fail with.
FAILS: dict[str, tuple[Callable[[], Workload], str]] = {
    "same_array_twice_donated": (
        same_array_twice_donated,
        "inputs /args/0 and /args/1 are the same array and donate_argnums=(0, 1) donates it",
    ),
}

#: Idioms whose XLA work figures cannot be had, and why (the warning says it).
NO_WORK: dict[str, str] = {
    "library_api": "has no .trace or .lower",
    "sampler_run": "has no .trace or .lower",
}

#: Calls per timed sample where not ``jax_suite``'s default: a run that
#: compiles at every call takes long, so each sample is one call.
NUMBER: dict[str, int] = {"sampler_run": 1}


def make(idiom: str) -> Workload:
    """The idiom's workload (``jaxbench report --workload idioms:make --param idiom=NAME``)."""
    factory = IDIOMS.get(idiom) or FAILS[idiom][0]
    return factory()


def suite_name(idiom: str) -> str:
    return "".join(part.title() for part in idiom.split("_"))


for _idiom, _factory in {**IDIOMS, **{k: v[0] for k, v in FAILS.items()}}.items():
    globals()[suite_name(_idiom)], globals()[f"{suite_name(_idiom)}Figures"] = jax_suite(
        suite_name(_idiom), _factory, number=NUMBER.get(_idiom, CALLS_PER_SAMPLE)
    )
