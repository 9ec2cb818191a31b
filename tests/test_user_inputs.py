"""The user's inputs as they come: their buffers stay theirs, non-array leaves are static.

Real jax on the CPU. Each test is one of issue 25's failures: donated device
arrays deleted under the figures path, an equinox module refused by
``jax.jit``, outputs with a string leaf, a ``jit=False`` function without
work figures, the same array donated twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from jaxbench.errors import WorkloadError
from jaxbench.measure import FLOAT64, Workload, protocol, pytrees, timing

OPTIMIZER = optax.adam(1e-3)


def _step(params: Any, opt_state: Any, x: Any) -> tuple[Any, Any, Any]:
    loss, grads = jax.value_and_grad(lambda p: jnp.mean((x @ p["w"]) ** 2))(params)
    updates, opt_state = OPTIMIZER.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


def _training(kept: list[Any]) -> Workload:
    """The README's training step: ``optimizer.init(params)`` returns device arrays."""

    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        params = {"w": jnp.asarray(rng.normal(size=(8, 1)).astype(np.float32))}
        built = (params, OPTIMIZER.init(params), rng.normal(size=(16, 8)).astype(np.float32))
        kept.append(built)
        return built

    return Workload(
        name="train", fn=_step, inputs=inputs, reference=FLOAT64, donate_argnums=(0, 1),
        carry=lambda args, out: (out[0], out[1], args.args[2]), atol=1e-5, rtol=1e-4,
    )  # fmt: skip


def _alive(tree: Any) -> bool:
    return not any(
        leaf.is_deleted() for leaf in jax.tree_util.tree_leaves(tree) if isinstance(leaf, jax.Array)
    )


def test_the_figures_path_never_deletes_the_users_device_arrays() -> None:
    kept: list[Any] = []
    measured = protocol.figures(_training(kept))  # was: Array has been deleted (count)
    assert measured.failure == ""
    assert measured.accuracy is not None
    assert measured.accuracy.tolerance_used <= 1
    (built,) = kept
    assert _alive(built)
    before = jax.tree_util.tree_map(np.array, built)
    prepared = protocol.prepare(_training(kept))
    for _ in range(5):
        prepared.block(prepared.call())  # donating, carried calls
    assert _alive(kept[-1])
    after = jax.tree_util.tree_map(np.array, kept[-1])
    jax.tree_util.tree_map(np.testing.assert_array_equal, after, before)


def test_one_array_placed_is_copied_once_and_the_reference_gets_its_own() -> None:
    shared = np.arange(4, dtype=np.float32)
    device = jnp.arange(4, dtype=jnp.float32)

    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        return {"a": shared, "b": shared, "d": device}, device

    def mutating_reference(tree: Any, d: np.ndarray) -> np.ndarray:
        tree["a"] *= 100  # a NumPy reference that writes into its inputs
        return np.asarray(tree["a"] + tree["b"] + d)

    workload = Workload(name="w", fn=lambda t, d: t["a"] + t["b"] + d, inputs=inputs,
                        reference=mutating_reference)  # fmt: skip
    placed = timing.place(workload)
    tree = placed.args[0]
    assert tree["a"] is tree["b"]  # one array, one buffer, as the user built it
    assert tree["d"] is placed.args[1]
    assert tree["d"].unsafe_buffer_pointer() != device.unsafe_buffer_pointer()
    assert isinstance(placed.host.args[0]["d"], np.ndarray)
    assert placed.host.args[0]["a"] is not shared
    protocol.expected_output(workload, placed.host)
    np.testing.assert_array_equal(shared, np.arange(4))  # the user's array untouched
    np.testing.assert_array_equal(np.asarray(tree["a"]), np.arange(4))  # the timed one too


def test_the_same_array_donated_twice_is_one_line_naming_the_leaves() -> None:
    x = jnp.ones(3)
    workload = Workload(
        name="twice", fn=lambda a, b: (a + b, a * b), inputs=lambda rng: ({"p": x}, x),
        reference=FLOAT64, donate_argnums=(0,), carry=lambda args, out: out,
    )  # fmt: skip
    with pytest.raises(WorkloadError) as caught:
        protocol.prepare(workload)
    message = str(caught.value)
    assert message == (
        "twice: inputs /args/0/p and /args/1 are the same array and donate_argnums=(0,) "
        "donates it: XLA cannot donate a buffer that the same call gets twice; return a "
        "copy for one of them (x.copy())"
    )
    assert not x.is_deleted()


def test_an_equinox_module_is_an_input_as_it_comes() -> None:
    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        model = eqx.nn.MLP(4, 2, 8, depth=1, key=jax.random.key(0))  # relu: a custom_jvp
        return model, rng.normal(size=(5, 4)).astype(np.float32)

    def reference(model: Any, x: np.ndarray) -> np.ndarray:
        (first, last) = model.layers
        hidden = np.maximum(x @ first.weight.T + first.bias, 0)
        out: np.ndarray = hidden @ last.weight.T + last.bias
        return out

    workload = Workload(name="mlp", fn=lambda m, x: jax.vmap(m)(x), inputs=inputs,
                        reference=reference, atol=1e-5, rtol=1e-5)  # fmt: skip
    measured = protocol.measure(workload, repeats=2)  # was: TypeError at path model.activation
    assert measured.accuracy is not None
    assert measured.accuracy.tolerance_used <= 1
    assert measured.work is not None
    assert measured.work.flops > 0
    assert measured.inputs["/args/0/activation"]["dtype"] == "custom_jvp"


def test_static_outputs_are_kept_and_compared() -> None:
    def fn(x: Any) -> dict[str, Any]:
        return {"y": 2 * x, "units": "volts"}

    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        return (np.ones(3, np.float32),)

    right = Workload(name="s", fn=fn, inputs=inputs,
                     reference=lambda x: {"y": 2 * x, "units": "volts"})  # fmt: skip
    measured = protocol.measure(right, repeats=2)  # was: 'str' is not a valid JAX type
    assert measured.output_shapes == {"/units": [], "/y": [3]}
    wrong = Workload(name="s", fn=fn, inputs=inputs,
                     reference=lambda x: {"y": 2 * x, "units": "amperes"})  # fmt: skip
    with pytest.raises(WorkloadError, match="s output /units: 'volts' differs from the ref"):
        protocol.prepare(wrong)


@dataclass
class Mutable:  # eq=True without frozen: not hashable
    scale: float = 2.0


def test_an_unhashable_static_leaf_is_named() -> None:
    workload = Workload(
        name="cfg", fn=lambda x, c: x * c.scale, reference=lambda x, c: x * c.scale,
        inputs=lambda rng: (np.ones(3, np.float32), Mutable()),
    )  # fmt: skip
    with pytest.raises(WorkloadError, match=r"cfg: input /args/1 \(Mutable\).*must be hashable"):
        protocol.prepare(workload)


def test_jit_false_gets_work_figures_from_the_library_jit_or_says_why_not() -> None:
    def inputs(rng: np.random.Generator) -> tuple[Any, ...]:
        return eqx.nn.Linear(4, 2, key=jax.random.key(1)), np.ones((3, 4), np.float32)

    def reference(layer: Any, x: np.ndarray) -> np.ndarray:
        out: np.ndarray = x @ layer.weight.T + layer.bias
        return out

    def forward(m: Any, x: Any) -> Any:
        return jax.vmap(m)(x)

    filtered = Workload(name="f", fn=eqx.filter_jit(forward), inputs=inputs,
                        reference=reference, jit=False, atol=1e-5)  # fmt: skip
    measured = protocol.measure(filtered, repeats=2)
    assert measured.work is not None
    assert measured.work.flops > 0
    assert measured.warnings == ()
    plain = Workload(name="p", fn=lambda m, x: jax.vmap(m)(x), inputs=inputs,
                     reference=reference, jit=False, atol=1e-5)  # fmt: skip
    measured = protocol.measure(plain, repeats=2)
    assert measured.work is None
    (warning,) = measured.warnings
    assert "jit=False and fn" in warning
    assert "has no .trace or .lower" in warning


def test_a_function_that_donates_its_own_arguments_needs_carry() -> None:
    step = jax.jit(lambda x: x * 2, donate_argnums=0)
    workload = Workload(name="d", fn=step, inputs=lambda rng: (np.ones(4, np.float32),),
                        reference=lambda x: x * 2, jit=False)  # fmt: skip
    with pytest.raises(
        WorkloadError, match=r"d: the first call deleted input /args/0 .*give carry"
    ):
        protocol.prepare(workload)


def test_filtered_jit_matches_eqx_filter_jit() -> None:
    model = eqx.nn.MLP(3, 2, 4, depth=1, key=jax.random.key(2))
    x = jnp.ones((5, 3))
    ours = pytrees.FilteredJit(lambda m, v: jax.vmap(m)(v))
    theirs = eqx.filter_jit(lambda m, v: jax.vmap(m)(v))
    np.testing.assert_array_equal(np.asarray(ours(model, x)), np.asarray(theirs(model, x)))
    arrays, static = pytrees.partition(model)
    assert pytrees.combine(arrays, static) == model
    assert not pytrees.has_static_leaves(arrays)
