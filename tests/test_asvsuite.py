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

import numpy as np
import pytest

from conftest import other_suites_set_aside

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

    # the general contract through asv_runner
    import pathlib
    import jax
    import numpy as np
    from jaxbench.measure import FLOAT64, Golden, Unchecked, Workload

    HERE = pathlib.Path(__file__).parent

    def _predict_with(reference):
        def make():
            return dataclasses.replace(workloads.get("predict"), reference=reference)
        return make

    Unsure, UnsureFigures = jax_suite("Unsure", _predict_with(Unchecked("a sampler")))
    Stale, StaleFigures = jax_suite("Stale", _predict_with(Golden(HERE / "stale.npz")))

    def _step(params, x):
        loss, grad = jax.value_and_grad(lambda p: jnp.mean((x @ p - 1.0) ** 2))(params)
        return params - 0.01 * grad, loss

    def _train():
        return Workload(
            name="train", fn=_step, reference=FLOAT64, donate_argnums=(0,),
            inputs=lambda rng: (np.zeros(8, np.float32),
                                rng.normal(size=(32, 8)).astype(np.float32)),
            carry=lambda args, out: (out[0], args.args[1]), atol=1e-5, rtol=1e-5,
        )

    Train, TrainFigures = jax_suite("Train", _train)
    """
)


@pytest.fixture(scope="module")
def bench_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("benchmarks")
    (root / "__init__.py").write_text("")
    (root / "bad_suites.py").write_text(MODULE)
    from jaxbench.measure import reference

    # a golden file that no longer matches predict: recorded, then predict changed
    (root / "stale.npz").write_bytes(reference.golden_bytes(np.full((64, 16), 0.5, np.float32)))
    with other_suites_set_aside():  # setup_cache measures this module's suites only
        yield root
    for name in [m for m in sys.modules if m == "bad_suites" or m.startswith("benchmarks")]:
        del sys.modules[name]


def _load(bench_dir: Path, name: str, module: str = "bad_suites") -> Any:
    from asv_runner.discovery import get_benchmark_from_name

    return get_benchmark_from_name(str(bench_dir), f"{module}.{name}")


def _run_figure(bench_dir: Path, name: str, module: str = "bad_suites") -> Any:
    """``asv_runner.run._run`` for a setup_cache benchmark: cache, setup, run, teardown."""
    benchmark = _load(bench_dir, name, module)
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
        # what the program does is still counted, as its work: no compile per warm call
        assert _run_figure(bench_dir, f"{suite}Figures.track_compiles_per_call") == 0.0
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


@pytest.mark.slow
def test_an_unchecked_workload_is_timed_and_its_accuracy_skipped_as_unchecked(
    bench_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from asv_runner.benchmarks.mark import SkipNotImplemented

    from jaxbench.store import checks

    # inside an asv run (``--python=same``): where the figures process keeps the reason
    monkeypatch.setenv("JAXBENCH_COMMIT", "abcdef0123456789")
    monkeypatch.setenv("JAXBENCH_ENV_NAME", "existing-py")
    monkeypatch.setenv("JAXBENCH_MACHINE", "box")
    monkeypatch.setenv("JAXBENCH_RESULTS_DIR", str(tmp_path))
    assert len(_run_timed(bench_dir, "Unsure.time_warm")["samples"]) >= 2
    assert _run_figure(bench_dir, "UnsureFigures.track_work_flops") > 0
    with pytest.raises(SkipNotImplemented, match="predict is unchecked: a sampler"):
        _run_figure(bench_dir, "UnsureFigures.track_max_abs_error")
    # recorded explicitly in asv's results: 1 unchecked, 0 checked (a wrong answer too)
    assert _run_figure(bench_dir, "UnsureFigures.track_answer_unchecked") == 1.0
    assert _run_figure(bench_dir, "GoodFigures.track_answer_unchecked") == 0.0
    assert _run_figure(bench_dir, "StaleFigures.track_answer_unchecked") == 0.0
    assert _load(bench_dir, "UnsureFigures.track_answer_unchecked").unit == "unchecked"
    # and the reason beside the results, for the analysing half (no jax there)
    (note,) = checks.read_unchecked(tmp_path)
    assert note == checks.UncheckedNote(
        "box", "abcdef01", "existing-py", "bad_suites.UnsureFigures", (), "a sampler"
    )
    assert not list(tmp_path.rglob("*.json"))  # asv would load (and warn about) any *.json


def test_a_golden_file_that_no_longer_matches_fails_naming_the_leaf(bench_dir: Path) -> None:
    from jaxbench.errors import ReferenceMismatch

    with pytest.raises(ReferenceMismatch, match=r"predict output /: max abs error [\d.]+ exceeds"):
        _run_timed(bench_dir, "Stale.time_warm")
    assert _run_figure(bench_dir, "StaleFigures.track_tolerance_used") > 1.0
    with pytest.raises(ReferenceMismatch, match="predict output /: max abs error"):
        _run_figure(bench_dir, "StaleFigures.track_compile_seconds")


def test_a_donated_step_is_threaded_through_asv_runners_loop(bench_dir: Path) -> None:
    benchmark = _load(bench_dir, "Train.time_warm")
    benchmark.set_cache(None)
    benchmark.repeat, benchmark.number, benchmark.warmup_time = 5, 50, 0.0
    assert not benchmark.do_setup()
    try:
        result = benchmark.do_run()  # samples of 50 calls, each donating the last params
    finally:
        benchmark.do_teardown()
    assert len(result["samples"]) >= 5
    assert _run_figure(bench_dir, "TrainFigures.track_max_abs_error") < 1e-5


def test_workload_memory_tracks(bench_dir: Path) -> None:
    from asv_runner.benchmarks.mark import SkipNotImplemented

    assert _run_figure(bench_dir, "TrainFigures.track_workload_peak_rss_bytes") >= 0
    with pytest.raises(SkipNotImplemented, match="device_peak_bytes is not reported on cpu"):
        _run_figure(bench_dir, "TrainFigures.track_workload_device_peak_bytes")


PLAIN = """
import dataclasses
from jaxbench.measure import workloads
from jaxbench.measure.asvsuite import jax_suite

# called as it is, not through jax.jit: XLA's work cannot be read
Plain, PlainFigures = jax_suite(
    "Plain", lambda: dataclasses.replace(workloads.get("predict"), jit=False)
)
"""


def test_a_workload_xla_cannot_see_skips_its_work_figures_saying_why(tmp_path: Path) -> None:
    from asv_runner.benchmarks.mark import SkipNotImplemented

    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "plain_suite.py").write_text(PLAIN)
    try:
        with other_suites_set_aside():  # setup_cache measures this module's suite only
            with pytest.raises(SkipNotImplemented, match=r"has no \.trace or \.lower"):
                _run_figure(tmp_path, "PlainFigures.track_work_flops", module="plain_suite")
            used = _run_figure(tmp_path, "PlainFigures.track_tolerance_used", module="plain_suite")
            assert 0 <= used <= 1  # the answer is still checked
    finally:
        sys.modules.pop("plain_suite", None)


def test_every_figure_method_is_named_by_kinds_and_has_a_kind() -> None:
    from jaxbench import kinds
    from jaxbench.measure.asvsuite import jax_suite

    timed, figures = jax_suite("KindCheck", "predict")
    methods = {m for m in dir(figures) if m.startswith("track_")}
    expected = (
        set(kinds.COMPILE_STAGES)
        | set(kinds.ACCURACY_TRACKS)
        | {kinds.UNCHECKED_TRACK, kinds.COMPILES_TRACK}
        | {kinds.WORK_PREFIX + f for f in kinds.WORK_FIGURES}
        | set(kinds.WORKLOAD_MEMORY_TRACKS)
    )
    assert methods == expected
    assert kinds.kind_of("s.KindCheckFigures.track_compiles_per_call") is kinds.Kind.WORK
    assert kinds.exact_figure("s.KindCheckFigures.track_compiles_per_call")
    assert kinds.Kind.OTHER not in {kinds.kind_of(f"s.KindCheckFigures.{m}") for m in methods}
    assert kinds.kind_of("s.KindCheckFigures.track_workload_peak_rss_bytes") is kinds.Kind.MEMORY
    assert getattr(timed, "repeat") == kinds.REPEAT  # noqa: B009 (set by jax_suite)


def test_a_raising_workload_shows_the_users_traceback_in_time_warm_only(bench_dir: Path) -> None:
    from jaxbench.errors import WorkloadError

    with pytest.raises(WorkloadError) as timed:
        _run_timed(bench_dir, "Raises.time_warm")
    assert isinstance(timed.value.__cause__, ValueError)  # the user's traceback: here, once
    with pytest.raises(WorkloadError) as other:
        _run_timed(bench_dir, "Raises.peakmem_call")
    assert other.value.__cause__ is None
    assert other.value.__suppress_context__
    assert str(other.value).endswith(
        "broken model code; fix fn, its inputs or their placement "
        "(the traceback: Raises.time_warm's output)"
    )
    with pytest.raises(RuntimeError) as figure:  # every figure: the figures cache's one line
        _run_figure(bench_dir, "RaisesFigures.track_workload_peak_rss_bytes")
    assert figure.value.__cause__ is None
    assert "broken model code" in str(figure.value)
