"""A library API that compiles at every call, declared ``compiles_every_call``.

The suite below has a sampler's ``run`` as numpyro's ``MCMC.run`` is written:
a Python function that builds ``jax.jit`` of a fresh closure (its kernel) at
every call and runs a ``lax.fori_loop`` of it, called as users call it
(``jit=False``). Declared, it is timed whole, compile included, and its
compiles per call are counted: by ``jaxbench report``, by asv_runner's own
loop and figures, by ``jaxbench ab`` and ``jaxbench first-call`` (real worker
processes), and by a real ``asv run``. The same function undeclared fails with
the option named.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import other_suites_set_aside
from e2e_repo import asv_run_same
from jaxbench.errors import UsageError, WorkloadError

SUITE = textwrap.dedent(
    """
    import jax
    import numpy as np
    from jaxbench.measure import Workload
    from jaxbench.measure.asvsuite import jax_suite

    STEPS = 16


    def run(position, momentum):
        # a sampler's run: its kernel is built, and jitted, at every call
        def leapfrog(_, state):
            q, p = state
            p = p - 0.05 * q
            q = q + 0.1 * p
            return q, p - 0.05 * q

        chain = jax.jit(lambda q, p: jax.lax.fori_loop(0, STEPS, leapfrog, (q, p)))
        return chain(position, momentum)


    def run_numpy(position, momentum):
        q, p = position.astype(np.float64), momentum.astype(np.float64)
        for _ in range(STEPS):
            p = p - 0.05 * q
            q = q + 0.1 * p
            p = p - 0.05 * q
        return q.astype(np.float32), p.astype(np.float32)


    def inputs(rng):
        return tuple(rng.normal(size=(64,)).astype(np.float32) for _ in range(2))


    def make(declared=True):
        return Workload(name="run", fn=run, inputs=inputs, reference=run_numpy, jit=False,
                        compiles_every_call=declared, atol=1e-5, rtol=1e-5)


    def undeclared():
        return make(declared=False)


    Run, RunFigures = jax_suite("Run", make, number=1)
    Undeclared, UndeclaredFigures = jax_suite("Undeclared", undeclared, number=1)
    """
)
RUN = "sampler.Run.time_warm"
UNDECLARED = "sampler.Undeclared.time_warm"
OPTION = "Workload(..., jit=False, compiles_every_call=True)"


def _suite(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "sampler.py").write_text(SUITE)
    return root


@pytest.fixture(scope="module")
def bench_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = _suite(tmp_path_factory.mktemp("compiles") / "benchmarks")
    with other_suites_set_aside():  # setup_cache measures this module's suites only
        yield root
    for name in [m for m in sys.modules if m == "sampler"]:
        del sys.modules[name]


def _load(bench_dir: Path, name: str) -> Any:
    from asv_runner.discovery import get_benchmark_from_name

    return get_benchmark_from_name(str(bench_dir), f"sampler.{name}")


def _user_module(bench_dir: Path) -> Any:
    sys.path.insert(0, str(bench_dir))
    try:
        import sampler  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(bench_dir))
    return sampler


def _jaxbench(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jaxbench", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
        check=False,
    )


def test_the_declaration_needs_jit_false_and_number_a_positive_integer() -> None:
    from jaxbench.measure import Workload
    from jaxbench.measure.asvsuite import jax_suite

    with pytest.raises(UsageError, match="run: compiles_every_call times fn as your users"):
        Workload(name="run", fn=abs, inputs=lambda rng: (), reference=abs,
                 compiles_every_call=True)  # fmt: skip
    with pytest.raises(ValueError, match=r"number .* must be a positive integer, got 0"):
        jax_suite("Zero", "predict", number=0)


def test_the_report_times_the_whole_call_and_counts_its_compiles(bench_dir: Path) -> None:
    from jaxbench.measure import protocol
    from jaxbench.measure import report as report_module

    sampler = _user_module(bench_dir)
    measured = protocol.measure(sampler.make(), repeats=4)
    assert measured.compiles_per_call == 1.0  # every timed call compiled its kernel
    assert measured.accuracy is not None
    data = report_module.to_dict(measured)
    assert data["compiles_per_call"] == 1.0
    assert data["call"]["compiles_every_call"] is True
    with pytest.raises(WorkloadError) as caught:
        protocol.measure(sampler.undeclared(), repeats=2)
    message = str(caught.value)
    assert message.startswith("the function recompiled 2 time(s) during warm samples; keep ")
    assert message.endswith(f"declare {OPTION} to time it whole, compile included")


def test_asv_runner_times_it_whole_and_tracks_its_compiles(bench_dir: Path) -> None:
    assert _load(bench_dir, "Run.time_warm").number == 1  # jax_suite(..., number=1)
    timed = _load(bench_dir, "Run.time_warm")
    timed.set_cache(None)
    assert not timed.do_setup()
    timed.repeat, timed.warmup_time = 3, 0.0  # after do_setup, which reloads them
    samples = timed.do_run()["samples"]
    timed.do_teardown()  # compiles during the samples: the declared work, no failure
    assert len(samples) == 3

    figures = _load(bench_dir, "RunFigures.track_compiles_per_call")
    cache = figures.do_setup_cache()
    for name, compiles in (("RunFigures", 1.0), ("UndeclaredFigures", 1.0)):
        track = _load(bench_dir, f"{name}.track_compiles_per_call")
        track.set_cache(cache)
        assert not track.do_setup()
        assert track.do_run() == compiles  # measured, declared or not
        assert track.unit == "compiles/call"

    undeclared = _load(bench_dir, "Undeclared.time_warm")
    undeclared.set_cache(None)
    assert not undeclared.do_setup()
    undeclared.repeat, undeclared.warmup_time = 2, 0.0
    with pytest.raises(WorkloadError) as caught:  # asv_runner's teardown between samples
        undeclared.do_run()
    assert "sampler:Undeclared: jax compiled " in str(caught.value)
    assert OPTION in str(caught.value)


@pytest.mark.slow
def test_ab_and_first_call_time_it_side_by_side(tmp_path: Path) -> None:
    base = _suite(tmp_path / "base" / "benchmarks")
    head = _suite(tmp_path / "head" / "benchmarks")
    sides = ("--base-commit", "a" * 40, "--head-commit", "b" * 40,
             "--base-benchmarks", base, "--head-benchmarks", head,
             "--machine", "m", "--env", "e", "--results", tmp_path / "results")  # fmt: skip
    done = _jaxbench("ab", *sides, "--rounds", "3", "--second-look", "0", "--per-round", "2",
                     cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert OPTION in done.stderr  # the undeclared twin failed, naming the option
    first = _jaxbench("first-call", *sides, "--rounds", "3", "--no-memory", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    for commit in "ab":
        points = {p.key.benchmark: p for p in _points(tmp_path / "results", commit)}
        assert len(points[RUN].samples) == 3 * 2  # every round timed the whole call
        assert points[RUN].number == 1
        assert points[UNDECLARED].failed
        first_call = points["sampler.RunFigures.track_first_call_seconds"]
        assert len(first_call.samples) == 3  # one fresh process a round
        assert all(s > 0 for s in first_call.samples)


def _points(results: Path, commit: str) -> list[Any]:
    from jaxbench.store.results import load_result_file

    return load_result_file(results / "m" / f"{commit * 8}-e.json")


@pytest.mark.e2e
def test_a_real_asv_run_times_it_whole_and_records_its_compiles(tmp_path: Path) -> None:
    import os

    project = tmp_path / "project"
    _suite(project / "benchmarks")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASV")}
    env |= {"HOME": str(tmp_path), "JAX_PLATFORMS": "cpu", "JAXBENCH_MACHINE": "sampler-box"}
    done, results = asv_run_same(
        project, "sampler-box", env, quick=False,
        bench=r"Run\.time_warm|RunFigures\.track_compiles_per_call",
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    (warm,) = results[RUN][0]
    assert warm is not None, output[-3000:]
    assert warm > 0
    samples = results[RUN][-1]  # --record-samples: asv's 4 rounds of 30 one-call samples
    assert len(samples[0]) == 4 * 30, results[RUN]
    assert results["sampler.RunFigures.track_compiles_per_call"][0] == [1.0]
