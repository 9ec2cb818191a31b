"""The general workload contract, with real jax on the CPU.

Pytree arguments with integer leaves, static arguments, per-argument
placement and sharding, a donated training step threaded for many calls,
``jit=False`` with known host-side work, each kind of reference (a NumPy
function, float64, a golden file, unchecked), captured constants, and what
the workload adds to memory.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbench.errors import ReferenceMismatch, UsageError, WorkloadError
from jaxbench.measure import FLOAT64, Args, Golden, Unchecked, Workload, protocol, reference, timing
from jaxbench.measure import report as report_module
from jaxbench.measure.timing import synchronized_samples


def mlp(params: dict[str, Any], batch: dict[str, Any]) -> dict[str, Any]:
    hidden = jnp.tanh(batch["x"] @ params["w1"] + params["b1"])
    logits = hidden @ params["w2"]
    return {"logits": logits, "predicted": jnp.argmax(logits, axis=1), "hit": batch["mask"]}


def mlp_reference(params: dict[str, Any], batch: dict[str, Any]) -> dict[str, Any]:
    logits = np.tanh(batch["x"] @ params["w1"] + params["b1"]) @ params["w2"]
    return {"logits": logits, "predicted": np.argmax(logits, axis=1).astype(np.int32),
            "hit": batch["mask"]}  # fmt: skip


def mlp_inputs(rng: np.random.Generator) -> tuple[Any, ...]:
    params = {
        "w1": rng.normal(size=(8, 16)).astype(np.float32),
        "b1": np.zeros(16, np.float32),
        "w2": rng.normal(size=(16, 4)).astype(np.float32),
    }
    batch = {
        "x": rng.normal(size=(32, 8)).astype(np.float32),
        "labels": rng.integers(0, 4, size=32).astype(np.int32),
        "mask": rng.random(32) > 0.5,
    }
    return params, batch


def mlp_workload(**overrides: Any) -> Workload:
    fields: dict[str, Any] = {
        "name": "mlp",
        "fn": mlp,
        "inputs": mlp_inputs,
        "reference": mlp_reference,
        "atol": 1e-5,
        "rtol": 1e-5,
    }
    return Workload(**{**fields, **overrides})


# --- pytrees, integer leaves, static arguments -------------------------------------


def test_a_params_pytree_with_integer_and_bool_leaves_is_measured_and_checked() -> None:
    measurement = protocol.measure(mlp_workload(), repeats=3)
    assert measurement.accuracy is not None
    assert measurement.accuracy.tolerance_used <= 1
    assert measurement.accuracy.leaves == 3
    assert measurement.inputs["/args/1/labels"] == {"shape": [32], "dtype": "int32"}
    assert measurement.inputs["/args/1/mask"] == {"shape": [32], "dtype": "bool"}
    assert measurement.inputs["/args/0/w1"] == {"shape": [8, 16], "dtype": "float32"}
    assert measurement.output_shapes == {"/hit": [32], "/logits": [32, 4], "/predicted": [32]}


def test_an_integer_leaf_is_compared_exactly() -> None:
    def off_by_one(params: dict[str, Any], batch: dict[str, Any]) -> dict[str, Any]:
        out = mlp_reference(params, batch)
        return {**out, "predicted": (out["predicted"] + 1) % 4}

    with pytest.raises(ReferenceMismatch, match=r"mlp output /predicted: \d+ of 32 int32"):
        protocol.measure(mlp_workload(reference=off_by_one), repeats=1)


def power(x: Any, n: int, *, scale: float) -> Any:
    for _ in range(n):  # Python control flow on a static argument
        x = x * x
    return x * scale


def test_static_arguments_by_position_and_by_name() -> None:
    workload = Workload(
        name="power",
        fn=power,
        inputs=lambda rng: Args((rng.random(16).astype(np.float32), 3), {"scale": 2.0}),
        reference=lambda x, n, scale: (x ** (2**n) * scale).astype(np.float32),
        static_argnums=(1,),
        static_argnames=("scale",),
        atol=1e-6,
        rtol=1e-5,
    )
    measurement = protocol.measure(workload, repeats=3)
    assert measurement.accuracy is not None
    assert measurement.inputs["/args/1"] == {"shape": [], "dtype": "int"}
    assert measurement.first_call.backend_compiles >= 1


def test_per_argument_placement_and_sharding_in_a_process_with_4_devices() -> None:
    script = textwrap.dedent(
        """
        import dataclasses, json
        import jax, numpy as np
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
        from jaxbench.measure import Workload, protocol

        def rows(devices):
            return NamedSharding(Mesh(np.array(devices), ("d",)), P("d", None))

        w = Workload(
            name="sharded_mlp", fn=lambda x, p: jax.numpy.tanh(x @ p["w"]) + p["b"],
            inputs=lambda rng: (rng.normal(size=(64, 8)).astype(np.float32),
                                {"w": rng.normal(size=(8, 4)).astype(np.float32),
                                 "b": np.ones(4, np.float32)}),
            reference=lambda x, p: np.tanh(x @ p["w"]) + p["b"],
            placement={0: rows, 1: jax.devices()[2]}, devices=4,
        )
        placed = protocol.place(w)
        x, p = placed.args
        out = {"x": len(x.sharding.device_set), "w": [d.id for d in p["w"].devices()],
               "count": placed.device_count}
        try:  # one argument on one device, one on four: jit refuses, one line
            protocol.measure(w, repeats=1)
        except Exception as exc:
            out["mixed"] = f"{type(exc).__name__}: {exc}"
        def everywhere(devices):
            return NamedSharding(Mesh(np.array(devices), ("d",)), P())
        w = dataclasses.replace(w, placement={0: rows, 1: everywhere})
        m = protocol.measure(w, repeats=2)
        out["err"] = m.accuracy.max_abs_error
        print(json.dumps(out))
        """
    )
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4",
           "JAX_PLATFORMS": "cpu"}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["x"] == 4  # x's rows over the 4 devices
    assert out["w"] == [2]  # w on the device it was given
    assert out["count"] == 4
    assert out["mixed"].startswith("WorkloadError: the first call raised ValueError: ")
    assert "\n" not in out["mixed"]
    assert out["err"] < 1e-5


def test_too_few_devices_names_the_flag() -> None:
    with pytest.raises(WorkloadError, match="xla_force_host_platform_device_count=64"):
        timing.place(mlp_workload(devices=64))


# --- a donated training step, threaded -----------------------------------------------


def sgd_step(params: Any, x: Any, y: Any) -> tuple[Any, Any]:
    def loss_fn(p: Any) -> Any:
        return jnp.mean((x @ p["w"] + p["b"] - y) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads), loss


def sgd_inputs(rng: np.random.Generator) -> tuple[Any, ...]:
    x = rng.normal(size=(64, 4)).astype(np.float32)
    y = (x @ np.arange(1, 5, dtype=np.float32)[:, None]).astype(np.float32)
    return {"w": np.zeros((4, 1), np.float32), "b": np.zeros(1, np.float32)}, x, y


def sgd_workload(**overrides: Any) -> Workload:
    fields: dict[str, Any] = {
        "name": "sgd",
        "fn": sgd_step,
        "inputs": sgd_inputs,
        "reference": FLOAT64,
        "donate_argnums": (0,),
        "carry": lambda args, out: (out[0], *args.args[1:]),
        "atol": 1e-5,
        "rtol": 1e-5,
    }
    return Workload(**{**fields, **overrides})


def test_a_donated_training_step_is_threaded_for_many_calls() -> None:
    prepared = protocol.prepare(sgd_workload(), fresh=True)
    assert prepared.accuracy is not None
    first_loss = float(protocol.host_result(prepared.call()[1]))
    result, samples = synchronized_samples(prepared.call, repeats=300)
    assert len(samples) == 300
    assert float(result[1]) < first_loss / 100  # it trained: the state was threaded
    # the donated buffers were really given away: the placed params are gone
    assert prepared.placed.args[0]["w"].is_deleted()


def test_donation_without_carry_is_refused() -> None:
    with pytest.raises(UsageError, match="donated buffers again; give carry"):
        sgd_workload(carry=None)


# --- jit=False: the call as users make it -----------------------------------------------

HOST_WORK_SECONDS = 0.004


def checked_api(x: Any) -> Any:
    """A library's Python API: checks its argument on the host, then calls a jitted kernel."""
    deadline = time.perf_counter() + HOST_WORK_SECONDS
    while time.perf_counter() < deadline:  # known host-side work, e.g. validation
        pass
    return _kernel(x)


_kernel = jax.jit(lambda x: jnp.sin(x) * 2)


def test_jit_false_measures_the_host_side_work() -> None:
    workload = Workload(
        name="api",
        fn=checked_api,
        inputs=lambda rng: (rng.random(1000).astype(np.float32),),
        reference=lambda x: np.sin(x) * 2,
        jit=False,
        atol=1e-6,
    )
    measurement = protocol.measure(workload, repeats=5)
    assert min(measurement.warm_samples) >= HOST_WORK_SECONDS
    assert measurement.first_call.trace is None  # no AOT stages for a call as users make it
    assert measurement.work is None
    jitted = protocol.measure(Workload(**{**_fields(workload), "jit": True, "fn": _kernel}))
    # the median, not the max: one sample can wait out a preemption on a busy machine
    # (the max failed once in `make test-fast` on the 2-core machine)
    assert statistics.median(jitted.warm_samples) < HOST_WORK_SECONDS


def _fields(workload: Workload) -> dict[str, Any]:
    import dataclasses

    return {f.name: getattr(workload, f.name) for f in dataclasses.fields(workload)}


# --- references ------------------------------------------------------------------------


def test_a_float64_reference_runs_the_function_with_x64_on_the_cpu() -> None:
    measurement = protocol.measure(sgd_workload(), repeats=2)
    assert measurement.accuracy is not None
    assert 0 < measurement.accuracy.max_abs_error < 1e-5
    assert jnp.zeros(1).dtype == jnp.float32  # x64 is off again


class Trajectory(NamedTuple):
    position: Any
    steps: Any  # int32


def nuts_like(state: Trajectory, momentum: Any) -> Any:
    """A NUTS-like extension: a lax.cond keeps the state or takes the trajectory, whose
    step count grows by a count made afresh (int64 under x64, the kept one int32)."""
    new = state.position + 0.1 * momentum
    steps = jnp.sum(jnp.abs(new) < 10.0)
    return jax.lax.cond(
        jnp.sum(new**2) < jnp.sum(state.position**2) + 1.0,
        lambda: Trajectory(new, state.steps + steps),
        lambda: state,
    )


def nuts_inputs(rng: np.random.Generator) -> tuple[Any, ...]:
    position = rng.normal(size=(6,)).astype(np.float32)
    return Trajectory(position, np.int32(3)), rng.normal(size=(6,)).astype(np.float32)


def test_a_float64_reference_of_a_step_with_integer_state_in_a_cond() -> None:
    workload = Workload(
        name="nuts", fn=nuts_like, inputs=nuts_inputs, reference=FLOAT64, atol=1e-6, rtol=1e-6
    )
    expected = protocol.expected_output(workload, workload.host_args())
    assert expected.steps.dtype == np.int64  # run as written for x64: int32 inputs widened
    assert int(expected.steps) == 3 + 6
    assert expected.position.dtype == np.float64
    measurement = protocol.measure(workload, repeats=2)
    assert measurement.accuracy is not None  # int32 output, int64 reference: equal values
    assert measurement.accuracy.leaves == 2


def test_a_float64_reference_that_cannot_run_is_one_line_with_the_fix() -> None:
    def fixed_width(state: Trajectory, momentum: Any) -> Any:
        new = state.position + 0.1 * momentum
        return jax.lax.cond(  # an explicit int32 meets x64's int64 whatever the inputs
            jnp.sum(new) > 0,
            lambda: Trajectory(new, state.steps + jnp.sum(new > 0)),
            lambda: Trajectory(new, jnp.zeros((), jnp.int32)),
        )

    workload = Workload(name="fixed", fn=fixed_width, inputs=nuts_inputs, reference=FLOAT64)
    with pytest.raises(WorkloadError) as caught:
        protocol.measure(workload, repeats=1)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(
        "fixed: the FLOAT64 reference (fn with x64 enabled, on the CPU) raised TypeError: "
    )
    assert "int64[] but the corresponding output of false_fun has type int32[]" in message
    assert message.endswith(
        "fn does not run in float64 as it is: give a NumPy reference function, or a Golden "
        "file recorded once with jaxbench report --workload MODULE:FACTORY --record-golden"
    )


def test_a_golden_file_passes_then_fails_naming_the_leaf(tmp_path: Path) -> None:
    path = tmp_path / "mlp.npz"
    golden = mlp_workload(reference=Golden(path))
    with pytest.raises(UsageError, match="does not exist; record it once"):
        protocol.measure(golden, repeats=1)
    path.write_bytes(reference.golden_bytes(protocol.first_output(golden)))
    assert protocol.measure(golden, repeats=1).accuracy is not None

    def changed(params: dict[str, Any], batch: dict[str, Any]) -> dict[str, Any]:
        return {**mlp(params, batch), "logits": mlp(params, batch)["logits"] * 1.01}

    with pytest.raises(ReferenceMismatch, match=r"mlp output /logits: max abs error [\d.]+"):
        protocol.measure(mlp_workload(fn=changed, reference=Golden(path)), repeats=1)


def test_a_golden_file_of_another_shape_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "mlp.npz"
    path.write_bytes(
        reference.golden_bytes(
            {
                "logits": np.zeros((16, 4), np.float32),
                "predicted": np.zeros(16, np.int32),
                "hit": np.zeros(16, bool),
            }
        )
    )
    with pytest.raises(ReferenceMismatch, match=r"output /hit: shape \(32,\) differs"):
        protocol.measure(mlp_workload(reference=Golden(path)), repeats=1)


def test_an_unchecked_workload_is_reported_as_unchecked() -> None:
    workload = mlp_workload(reference=Unchecked("sampling: no reference yet"))
    data = report_module.to_dict(protocol.measure(workload, repeats=2))
    assert data["reference"] == {"kind": "unchecked", "detail": "sampling: no reference yet"}
    assert data["max_abs_error"] is None
    assert data["tolerance_used"] is None
    with pytest.raises(UsageError, match="needs a reason"):
        Unchecked(" ")


def test_per_leaf_tolerances_and_a_missing_entry() -> None:
    loose = mlp_workload(atol={"/logits": 1e-5, "*": 0.0}, rtol=0.0)
    assert protocol.measure(loose, repeats=1).accuracy is not None
    with pytest.raises(UsageError, match="atol has no entry for output leaf /logits"):
        protocol.measure(mlp_workload(atol={"/other": 1.0}), repeats=1)


# --- warnings and memory ---------------------------------------------------------------


def test_a_function_closing_over_a_large_array_gets_a_warning() -> None:
    table = np.ones((256, 8), np.float32)
    workload = mlp_workload(
        fn=lambda params, batch: mlp(params, {**batch, "x": batch["x"] + jnp.asarray(table)[:32]}),
        reference=lambda params, batch: mlp_reference(params, {**batch, "x": batch["x"] + 1}),
    )
    warnings = protocol.measure(workload, repeats=1).warnings
    assert len(warnings) == 1
    assert "closes over 1 array(s): float32[256, 8] (8192 bytes)" in warnings[0]
    assert "Pass them as arguments" in warnings[0]
    assert protocol.measure(mlp_workload(), repeats=1).warnings == ()


def test_workload_memory_sees_what_the_workload_allocates() -> None:
    big = Workload(
        name="big",
        fn=lambda x: x @ x.T,
        inputs=lambda rng: (rng.random((2048, 2048)).astype(np.float32),),
        reference=Unchecked("a memory test"),
    )
    memory = protocol.workload_memory(big, calls=2)
    assert memory.device_peak_bytes is None  # the CPU reports no memory_stats()
    assert memory.peak_rss_rise_bytes is not None
    assert memory.peak_rss_rise_bytes >= 2 * 2048 * 2048 * 4  # input and output, at least


def test_workload_memory_counts_allocations_into_free_heap_the_process_already_holds() -> None:
    # A measuring process is forked from one whose heap holds free chunks,
    # already resident: what the workload allocated into them raised no RSS,
    # and how much was free depended on the parent (Predict: 10.8 or 13.0 MiB).
    kept: list[bytearray] = []

    def keeps_16_mib_at_trace(x: jax.Array) -> jax.Array:
        kept.extend(bytearray(1024) for _ in range(16 * 1024))  # small chunks: the C heap
        return x + 1

    held = [bytearray(4096) for _ in range(16 * 1024)]  # 64 MiB of heap ...
    pin = bytearray(4096)  # ... whose top stays in use, so free() cannot shrink it
    del held  # free, and still resident
    workload = Workload(
        name="heap",
        fn=keeps_16_mib_at_trace,
        inputs=lambda rng: (np.zeros(4, np.float32),),
        reference=Unchecked("a memory test"),
    )
    memory = protocol.workload_memory(workload, calls=1)
    assert len(pin) == 4096
    assert len(kept) >= 16 * 1024
    assert memory.peak_rss_rise_bytes is not None
    assert memory.peak_rss_rise_bytes >= 16 * 1024 * 1024
