"""``jaxbench report --workload module:factory``: a user's workload, and bad input.

Every run is a fresh ``python -m jaxbench`` process in a directory that holds
the user's module, as a user runs it from their repository.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

USER_MODULE = textwrap.dedent(
    """
    import jax.numpy as jnp
    import numpy as np
    from jaxbench.measure import Golden, Unchecked, Workload

    def mlp(params, x):
        return jnp.tanh(x @ params["w1"] + params["b1"]) @ params["w2"]

    def mlp_np(params, x):
        return np.tanh(x @ params["w1"] + params["b1"]) @ params["w2"]

    def inputs_for(batch):
        def inputs(rng):
            params = {"w1": rng.normal(size=(8, 16)).astype(np.float32),
                      "b1": np.zeros(16, np.float32),
                      "w2": rng.normal(size=(16, 4)).astype(np.float32)}
            return params, rng.normal(size=(batch, 8)).astype(np.float32)
        return inputs

    def make(batch=32, reference="numpy"):
        ref = {"numpy": mlp_np, "golden": Golden(f"mlp-{batch}.npz"),
               "unchecked": Unchecked("no reference yet"),
               "wrong_structure": lambda p, x: {"out": mlp_np(p, x)}}[reference]
        return Workload(name="mlp", fn=mlp, inputs=inputs_for(batch), reference=ref,
                        atol=1e-5, rtol=1e-5, params={"batch": batch})

    def broken_builder():
        def inputs(rng):
            raise KeyError("w3")
        return Workload(name="broken", fn=mlp, inputs=inputs, reference=mlp_np)

    def not_a_workload():
        return 42

    # a sampler's step: the next key out, a NamedTuple state threaded by carry
    from typing import Any, NamedTuple
    import jax

    class Walk(NamedTuple):
        position: Any
        moves: Any

    def walk_step(key, state):
        key, subkey = jax.random.split(key)
        # int32 bits: the same draw with x64 enabled (the FLOAT64 reference)
        jump = jax.random.randint(subkey, state.position.shape, -2, 3, dtype=jnp.int32)
        return key, Walk(state.position + 0.1 * jump.astype(state.position.dtype),
                         state.moves + 1)

    def walk_np(key, state):
        key, subkey = jax.random.split(key)
        jump = np.asarray(jax.random.randint(subkey, state.position.shape, -2, 3,
                                             dtype=jnp.int32))
        return key, Walk((state.position + 0.1 * jump).astype(np.float32),
                         np.int32(state.moves + 1))

    def walk(reference="golden", seed=0, raw=False):
        ref = {"numpy": walk_np, "float64": "float64", "golden": Golden("walk.npz"),
               "unchecked": Unchecked("a random walk")}[reference]
        def inputs(rng):
            key = jax.random.PRNGKey(seed) if raw else jax.random.key(seed)
            return key, Walk(rng.normal(size=(16,)).astype(np.float32), np.int32(0))
        return Workload(name="walk", fn=walk_step, inputs=inputs, reference=ref,
                        carry=lambda args, out: out, atol=1e-5, rtol=1e-5)
    """
)


def jaxbench(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    return subprocess.run(
        [sys.executable, "-m", "jaxbench", "report", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**env, "JAX_PLATFORMS": "cpu"},
        check=False,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "user_bench.py").write_text(USER_MODULE)
    return tmp_path


def test_a_user_workload_with_parameters_is_reported(project: Path) -> None:
    done = jaxbench("--workload", "user_bench:make", "--param", "batch=48", cwd=project)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["workload"] == "mlp-batch=48"
    assert data["params"] == {"batch": 48}
    assert data["inputs"] == {
        "/args/0/b1": {"shape": [16], "dtype": "float32"},
        "/args/0/w1": {"shape": [8, 16], "dtype": "float32"},
        "/args/0/w2": {"shape": [16, 4], "dtype": "float32"},
        "/args/1": {"shape": [48, 8], "dtype": "float32"},
    }
    assert data["output_shapes"] == {"/": [48, 4]}
    assert data["reference"]["kind"] == "numpy"
    assert 0 <= data["tolerance_used"] <= 1
    assert data["work"]["flops"] > 0


@pytest.mark.slow
def test_golden_is_recorded_once_then_checked(project: Path) -> None:
    args = ("--workload", "user_bench:make", "--param", "reference=golden")
    missing = jaxbench(*args, cwd=project)
    assert missing.returncode == 2
    assert "golden file mlp-32.npz does not exist; record it once" in missing.stderr
    recorded = jaxbench(*args, "--record-golden", cwd=project)
    assert recorded.returncode == 0, recorded.stderr
    assert (project / "mlp-32.npz").is_file()
    checked = jaxbench(*args, cwd=project)
    assert checked.returncode == 0, checked.stderr
    assert json.loads(checked.stdout)["reference"] == {"kind": "golden", "detail": "mlp-32.npz"}
    # the same golden file against a workload of another batch: another shape
    (project / "mlp-64.npz").write_bytes((project / "mlp-32.npz").read_bytes())
    other = jaxbench(*args, "--param", "batch=64", cwd=project)
    assert other.returncode == 2
    assert other.stderr.strip().splitlines() == [
        "jaxbench: error: mlp-batch=64 output /: shape (64, 4) differs from the reference's "
        "(32, 4); the benchmark would time a different computation"
    ]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("raw", "references", "changed_leaf"),
    [
        (False, ("unchecked", "numpy", "float64"), "2 of 2 key data word(s) differ from the "
         "reference (PRNG keys are compared exactly, through jax.random.key_data)"),
        (True, ("float64",), "2 of 2 uint32 value(s) differ from the reference (integer and "
         "bool leaves are compared exactly)"),
    ],
    ids=["typed-key", "raw-PRNGKey"],
)  # fmt: skip
def test_a_step_returning_its_next_key_passes_every_reference_kind(
    project: Path, raw: bool, references: tuple[str, ...], changed_leaf: str
) -> None:
    kind = ("--param", f"raw={raw}")
    for reference in references:
        done = jaxbench("--workload", "user_bench:walk", "--param", f"reference={reference}",
                        *kind, cwd=project)  # fmt: skip
        assert done.returncode == 0, (reference, done.stderr)
        data = json.loads(done.stdout)
        assert data["reference"]["kind"] == reference
        assert data["inputs"]["/args/0"]["dtype"] == ("uint32" if raw else "key<fry>")
        assert data["output_shapes"]["/0"] == ([2] if raw else [])
    args = ("--workload", "user_bench:walk", *kind)
    recorded = jaxbench(*args, "--record-golden", cwd=project)
    assert recorded.returncode == 0, recorded.stderr
    with np.load(project / "walk.npz") as golden:  # the key's data, and its impl to reload it
        assert golden["/0"].dtype == np.uint32
        assert ("key_impl:/0" in golden.files) == (not raw)
    checked = jaxbench(*args, cwd=project)
    assert checked.returncode == 0, checked.stderr
    assert json.loads(checked.stdout)["tolerance_used"] == 0.0
    # another seed: another answer, refused in one line naming the key leaf
    changed = jaxbench(*args, "--param", "seed=1", cwd=project)
    assert changed.returncode == 2
    assert changed.stderr.strip().splitlines() == [
        f"jaxbench: error: walk output /0: {changed_leaf}"
    ]


def test_an_unchecked_workload_says_so(project: Path) -> None:
    done = jaxbench("--workload", "user_bench:make", "--param", "reference=unchecked", cwd=project)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["reference"] == {"kind": "unchecked", "detail": "no reference yet"}
    assert data["max_abs_error"] is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--workload", "no_such_module:make"],
            "cannot import no_such_module (ModuleNotFoundError",
        ),
        (["--workload", "user_bench:nothing"], "user_bench has no callable 'nothing'"),
        (
            ["--workload", "user_bench:make", "--param", "depth=3"],
            "calling make(depth=3) failed",
        ),
        (["--workload", "user_bench:make", "--param", "batch"], "is not NAME=VALUE"),
        (["--workload", "user_bench:not_a_workload"], "returned int, not a Workload"),
        (
            ["--workload", "user_bench:broken_builder"],
            "broken: the inputs builder raised KeyError: 'w3'; fix inputs(rng)",
        ),
        (
            ["--workload", "user_bench:make", "--param", "reference=wrong_structure"],
            "output leaves ['/'] differ from the reference's ['/out']",
        ),
    ],
)
def test_bad_input_is_one_line_exit_2_nothing_written(
    project: Path, args: list[str], message: str
) -> None:
    target = project / "report.json"
    done = jaxbench(*args, "--output", str(target), cwd=project)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("jaxbench: error: ")
    assert message in lines[0]
    assert not target.exists()
    assert sorted(p.name for p in project.iterdir() if not p.name.startswith("__")) == [
        "user_bench.py"
    ]
