"""Bad workloads inside asv's benchmark API, driven by asv_runner's own machinery.

A throw-away benchmark directory holds one module that builds several suites
with :func:`jaxbench.measure.asvsuite.jax_suite`: one good, the others with a bad
function. Each benchmark is loaded with ``asv_runner.discovery.
get_benchmark_from_name`` (what asv's benchmark process calls) and run with
the benchmark object's ``do_setup_cache`` / ``set_cache`` / ``do_setup`` /
``do_run`` / ``do_teardown``, in the order ``asv_runner.run._run`` uses. A bad
suite must fail with a message naming its cause, and must not break the good
suite of the same module (the figures cache keeps per-suite errors as text).
"""

from __future__ import annotations

import contextlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

MODULE = textwrap.dedent(
    """
    import dataclasses
    import jax.numpy as jnp
    from jaxbench.measure import workloads
    from jaxbench.measure.asvsuite import jax_suite

    def _with(fn):
        def make():
            return dataclasses.replace(workloads.get("predict"), fn=fn)
        return make

    def _raises(x, w):
        raise ValueError("broken model code")

    Good, GoodFigures = jax_suite("Good", _with(lambda x, w: jnp.tanh(x @ w)))
    NanOut, NanOutFigures = jax_suite("NanOut", _with(lambda x, w: jnp.tanh(x @ w) * jnp.nan))
    InfOut, InfOutFigures = jax_suite("InfOut", _with(lambda x, w: jnp.tanh(x @ w) / 0.0))
    Shape, ShapeFigures = jax_suite("Shape", _with(lambda x, w: jnp.tanh(x @ w)[:, :3]))
    Off, OffFigures = jax_suite("Off", _with(lambda x, w: jnp.tanh(x @ w) + 0.01))
    Raises, RaisesFigures = jax_suite("Raises", _with(_raises))
    """
)


@pytest.fixture(scope="module")
def bench_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("benchmarks")
    (root / "__init__.py").write_text("")
    (root / "bad_suites.py").write_text(MODULE)
    yield root
    for name in [m for m in sys.modules if m == "bad_suites" or m.startswith("benchmarks")]:
        del sys.modules[name]


def _load(bench_dir: Path, name: str) -> Any:
    from asv_runner.discovery import get_benchmark_from_name

    return get_benchmark_from_name(str(bench_dir), f"bad_suites.{name}")


def _run_figure(bench_dir: Path, name: str) -> Any:
    """``asv_runner.run._run`` for a setup_cache benchmark: cache, setup, run, teardown."""
    benchmark = _load(bench_dir, name)
    benchmark.set_cache(benchmark.do_setup_cache())
    skip = benchmark.do_setup()
    try:
        return None if skip else benchmark.do_run()
    finally:
        benchmark.do_teardown()


def _run_timed(bench_dir: Path, name: str) -> Any:
    """``_run`` for a timed benchmark: asv_runner's own timing loop (tiny repeat)."""
    benchmark = _load(bench_dir, name)
    benchmark.set_cache(None)
    benchmark.repeat, benchmark.number, benchmark.warmup_time = 2, 1, 0.0
    assert not benchmark.do_setup()
    try:
        return benchmark.do_run()
    finally:
        benchmark.do_teardown()


def test_good_suite_runs_through_asv_runner(bench_dir: Path) -> None:
    result = _run_timed(bench_dir, "Good.time_warm")
    assert len(result["samples"]) >= 2
    assert all(s > 0 for s in result["samples"])
    assert _run_figure(bench_dir, "GoodFigures.track_tolerance_used") <= 1.0
    assert _run_figure(bench_dir, "GoodFigures.track_work_flops") > 0


@pytest.mark.parametrize(
    ("suite", "cause"),
    [
        ("NanOut", "non-finite"),
        ("InfOut", "non-finite"),
        ("Shape", "shape"),
        ("Off", "tolerance"),
        ("Raises", "broken model code"),
    ],
)
def test_bad_workload_fails_naming_its_cause(bench_dir: Path, suite: str, cause: str) -> None:
    from jaxbench.errors import JaxbenchError

    with pytest.raises((JaxbenchError, ValueError, RuntimeError)) as timed:
        _run_timed(bench_dir, f"{suite}.time_warm")
    assert cause in str(timed.value).lower() or cause in repr(timed.value).lower()
    if suite == "Off":  # a finite wrong answer is measured: tolerance used > 1 fails compare
        assert _run_figure(bench_dir, f"{suite}Figures.track_tolerance_used") > 1.0
    else:
        with pytest.raises((JaxbenchError, ValueError, RuntimeError)) as figure:
            _run_figure(bench_dir, f"{suite}Figures.track_tolerance_used")
        assert cause in str(figure.value).lower()
    # the good suite of the same module still measures, from the same cache
    assert _run_figure(bench_dir, "GoodFigures.track_max_abs_error") < 1e-4


def test_recompilation_during_warm_samples_fails_in_teardown(bench_dir: Path) -> None:
    import jax
    import jax.numpy as jnp

    from jaxbench.errors import WorkloadError

    benchmark = _load(bench_dir, "Good.time_warm")
    benchmark.set_cache(None)
    assert not benchmark.do_setup()
    benchmark.func()  # first call: prepares (compiles) inside asv's warm-up
    # The compile counter is per process; asv gives every benchmark its own, but
    # here earlier tests compiled in this one: the first teardown may report them.
    with contextlib.suppress(WorkloadError):
        benchmark.do_teardown()
    benchmark.func()
    benchmark.do_teardown()  # nothing compiled since: fine
    benchmark.func()
    # a warm sample that compiles (here: a new shape reaching jit)
    jax.block_until_ready(jax.jit(lambda v: v * 3)(jnp.zeros((7, 5))))
    with pytest.raises(WorkloadError, match=r"Good: jax compiled \d+ time\(s\) during warm"):
        benchmark.do_teardown()


def test_timeouts_are_read_by_asv_runner(bench_dir: Path) -> None:
    # asv's benchmark process reads ``timeout`` per benchmark (asv kills it past that)
    assert _load(bench_dir, "Good.time_warm").timeout == 180.0
    assert _load(bench_dir, "GoodFigures.track_work_flops").timeout == 300.0
