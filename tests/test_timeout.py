"""A workload that runs past its asv timeout fails alone; the rest records.

Real asv (``asv run --python=same`` in this virtualenv, no new environment),
a real git repository made in a temporary folder, and a suite made by
``jaxbench.measure.asvsuite.jax_suite`` whose workload blocks for 60 s inside the
jitted function (``jax.pure_callback``) with a 3 s timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from e2e_repo import git

pytestmark = pytest.mark.e2e

SUITE = textwrap.dedent(
    """
    import time

    import numpy as np

    from jaxbench.measure import Workload, jax_suite
    from jaxbench.measure.workloads import predict_reference


    def _stuck(x, w):
        import jax
        import jax.numpy as jnp

        def sleep(a):
            time.sleep(60)
            return a

        held = jax.pure_callback(sleep, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
        return jnp.tanh(held @ w)


    def _inputs(rng):
        x = rng.normal(size=(64, 32)).astype(np.float32)
        w = rng.normal(size=(32, 16)).astype(np.float32)
        return x, w


    def make_stuck():
        return Workload(
            "stuck", _stuck, _inputs, predict_reference, description="blocks for a minute"
        )


    Stuck, StuckFigures = jax_suite("Stuck", make_stuck)
    Stuck.timeout = 3.0
    Predict, PredictFigures = jax_suite("Predict", "predict")
    """
)


def test_timeout_fails_only_the_stuck_benchmark(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    bench = repo / "benchmarks"
    bench.mkdir(parents=True)
    (bench / "__init__.py").write_text("")
    (bench / "suite.py").write_text(SUITE)
    conf = {
        "version": 1,
        "project": "timeout-check",
        "repo": ".",
        "branches": ["HEAD"],
        "environment_type": "existing",
        "benchmark_dir": "benchmarks",
        "results_dir": "results",
        "html_dir": "html",
        "launch_method": "forkserver",
    }
    (repo / "asv.conf.json").write_text(json.dumps(conf))
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "suite")
    commit = git(repo, "rev-parse", "HEAD")

    asv = [sys.executable, "-m", "asv"]
    subprocess.run(
        [*asv, "machine", "--yes", "--machine", "timeout-check"],
        cwd=repo,
        check=True,
        capture_output=True,
    )
    proc = subprocess.run(
        [
            *asv,
            "run",
            "--python=same",
            "--set-commit-hash",
            commit,
            "--machine",
            "timeout-check",
            "--show-stderr",
            "-b",
            r"\.time_warm$",
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, JAXBENCH_MACHINE="timeout-check"),
    )
    output = proc.stdout + proc.stderr
    assert "timed out (timeout 3.0s)" in output, output[-3000:]

    files = [
        p for p in (repo / "results" / "timeout-check").glob("*.json") if p.name != "machine.json"
    ]
    assert len(files) == 1
    results = json.loads(files[0].read_text())["results"]
    assert results["suite.Stuck.time_warm"][0] is None  # failed: no time recorded
    good = results["suite.Predict.time_warm"][0]
    assert good is not None  # the other suite still measured
    assert good[0] > 0
