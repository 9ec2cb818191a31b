"""A suite that starts jax's backend at import, under asv's forkserver: a clear
error at once, never a hang; under spawn it runs.

Real asv (``asv run --python=same`` in this virtualenv, no new environment), a
real git repository made in a temporary folder, and a benchmark module that
makes a jax array at module level, as library code often does. asv's
forkserver imports the module once (the backend starts) and forks each
benchmark from that process; jax's threads do not survive a fork, so a
forked child's first jax call would wait for asv's timeout (180 s here).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from asv.results import Results

from e2e_repo import git

pytestmark = pytest.mark.e2e

SUITE = textwrap.dedent(
    """
    import jax.numpy as jnp

    from jaxbench.measure import jax_suite

    SCALE = jnp.float32(2.0)  # made at import time: jax's backend starts here

    Predict, PredictFigures = jax_suite("Predict", "predict")
    """
)
MACHINE = "fork-guard"
WARM = "suite.Predict.time_warm"
FIRST_CALL = "suite.PredictFigures.track_first_call_seconds"


def _conf(repo: Path, launch_method: str) -> dict[str, Any]:
    conf = {
        "version": 1,
        "project": "fork-guard",
        "repo": ".",
        "branches": ["HEAD"],
        "environment_type": "existing",
        "benchmark_dir": "benchmarks",
        "results_dir": f"results-{launch_method}",
        "html_dir": "html",
        "launch_method": launch_method,
    }
    (repo / "asv.conf.json").write_text(json.dumps(conf))
    return conf


def _run(repo: Path, launch_method: str) -> tuple[str, Results]:
    conf = _conf(repo, launch_method)
    asv = [sys.executable, "-m", "asv"]
    proc = subprocess.run(
        [*asv, "run", "--python=same", "--set-commit-hash", git(repo, "rev-parse", "HEAD"),
         "--machine", MACHINE, "--show-stderr", "--quick",
         "-b", r"Predict\.time_warm|PredictFigures\.track_first_call_seconds"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=170,  # under asv's 180 s benchmark timeout: a hang fails here
        env=dict(os.environ, JAXBENCH_MACHINE=MACHINE),
    )  # fmt: skip
    files = [p for p in (repo / conf["results_dir"] / MACHINE).glob("*.json")
             if p.name != "machine.json"]  # fmt: skip
    assert len(files) == 1, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr, Results.load(str(files[0]))


def _value(results: Results, name: str) -> float | None:
    values = results.get_result_value(name, [])
    value: float | None = values[0]
    return value


def test_forkserver_after_the_backend_started_fails_at_once_and_spawn_runs(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    bench = repo / "benchmarks"
    bench.mkdir(parents=True)
    (bench / "__init__.py").write_text("")
    (bench / "suite.py").write_text(SUITE)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "suite")
    _conf(repo, "spawn")
    subprocess.run(
        [sys.executable, "-m", "asv", "machine", "--yes", "--machine", MACHINE],
        cwd=repo,
        check=True,
        capture_output=True,
    )

    output, results = _run(repo, "forkserver")
    assert "timed out" not in output, output[-3000:]
    assert "ForkAfterBackend" in output, output[-3000:]
    assert 'set "launch_method": "spawn" in asv.conf.json' in output
    assert _value(results, WARM) is None  # failed, no time
    # the figures were measured in setup_cache's own fresh process: still recorded
    assert (_value(results, FIRST_CALL) or 0) > 0

    output, results = _run(repo, "spawn")
    assert "ForkAfterBackend" not in output, output[-3000:]
    assert (_value(results, WARM) or 0) > 0
    assert (_value(results, FIRST_CALL) or 0) > 0
