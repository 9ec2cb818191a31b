"""Shared fixtures: the real pvlib history in tests/data, and a writer of real asv results.

``AsvResultsWriter`` writes benchmarks.json, machine.json and result files
with asv's own code (``asv.results.Results.add_result`` + ``save`` and
``asv.util.write_json``), so the files are exactly what ``asv run`` writes.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import machine_alone

#: pvlib's public asv history, trimmed to five benchmarks (tests/data/pvlib/PROVENANCE.md)
PVLIB_RESULTS = Path(__file__).resolve().parent / "data" / "pvlib" / "results"
PVLIB_MACHINE = "pvlib-asv.forecasting.energy.arizona.edu"

#: value(s) of one benchmark in one result file: a float, None (failed), or
#: one entry per parameter combination.
Value = float | None | Sequence[float | None]

#: When :class:`AsvResultsWriter` says every benchmark started, unless told
#: otherwise: all its files then read as measured in one run
#: (:mod:`jaxbench.analyse.runs`), as with ``asv run --interleave-rounds``.
ONE_RUN_START = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


@dataclass
class AsvResultsWriter:
    """Writes a real asv (format 2) results directory under ``root``."""

    root: Path
    machine: str = "m1"
    benchmarks: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add_benchmark(
        self,
        name: str,
        *,
        params: Sequence[Sequence[str]] = (),
        unit: str = "seconds",
        version: str = "v1",
    ) -> None:
        """Declare a benchmark (written to benchmarks.json by :meth:`write_meta`)."""
        kind = name.rsplit(".", 1)[-1].split("_", 1)[0]
        self.benchmarks[name] = {
            "name": name,
            "params": [list(p) for p in params],
            "param_names": [f"p{i}" for i in range(len(params))],
            "type": {"time": "time", "peakmem": "peakmemory"}.get(kind, "track"),
            "unit": unit,
            "version": version,
        }

    def write_meta(self) -> None:
        """benchmarks.json and <machine>/machine.json, as asv writes them."""
        from asv import util

        util.write_json(str(self.root / "benchmarks.json"), self.benchmarks, api_version=2)
        machine = {
            "machine": self.machine,
            "arch": "x86_64",
            "cpu": "test",
            "num_cpu": "2",
            "os": "Linux",
            "ram": "1",
        }
        util.write_json(str(self.root / self.machine / "machine.json"), machine, api_version=1)

    def write_result(
        self,
        commit: str,
        date: int,
        values: Mapping[str, Value],
        *,
        env_name: str = "virtualenv-py3.11",
        versions: Mapping[str, str] | None = None,
        spread: float = 0.01,
        n_samples: int = 5,
        single: frozenset[str] = frozenset(),
        samples: Mapping[str, Sequence[Sequence[float]]] | None = None,
        started_at: datetime.datetime = ONE_RUN_START,
        duration: float = 1.0,
    ) -> Path:
        """One result file; each value becomes ``n_samples`` samples around it (+-spread).

        ``samples``: the recorded samples of a benchmark, one list per
        parameter combination, instead of the made-up ones. Each benchmark
        row gets ``started_at`` and ``duration`` (seconds), as asv records
        when its last round started and how long its rounds took: by
        default every file of the writer is one run; files whose rows start
        apart by more than their durations are separate runs.
        """
        from asv.results import Results
        from asv.runner import BenchmarkResult

        results = Results(
            {"machine": self.machine, "python": "3.11"}, {}, commit, date, "3.11", env_name, {}
        )
        for name, raw in values.items():
            bench = dict(self.benchmarks[name])
            if versions and name in versions:
                bench["version"] = versions[name]
            per_param: list[float | None] = (
                [raw] if raw is None or isinstance(raw, int | float) else list(raw)
            )
            recorded: list[list[float] | None] = [
                None
                if v is None or name in single
                else [v * (1 + spread * (2 * k / (n_samples - 1) - 1)) for k in range(n_samples)]
                for v in per_param
            ]
            if samples and name in samples:
                recorded = [list(given) for given in samples[name]]
            numbers = [None if v is None or name in single else 1 for v in per_param]
            result = BenchmarkResult(
                result=per_param,
                samples=recorded,
                number=numbers,
                errcode=0,
                stderr="",
                profile=None,
            )
            results.add_result(
                bench, result, started_at=started_at, duration=duration, record_samples=True
            )
        results.save(str(self.root))
        return self.root / self.machine / f"{commit[:8]}-{env_name}.json"


def commit_hash(i: int) -> str:
    """A distinct, full-length fake commit hash."""
    return f"{i:08x}" + "ab" * 16


@pytest.fixture
def asv_writer(tmp_path: Path) -> AsvResultsWriter:
    """A writer of a real asv results directory in ``tmp_path / 'results'``."""
    return AsvResultsWriter(tmp_path / "results")


@pytest.fixture
def pvlib_results() -> Path:
    """The real pvlib asv history (format-1 result files, 1059 of them)."""
    return PVLIB_RESULTS


# --- one HOME per test process ---------------------------------------------------------


def private_home_environ(home: Path, environ: Mapping[str, str]) -> dict[str, str]:
    """The variables that give a process the private HOME ``home`` and keep the user's caches.

    asv keeps its machines in ``~/.asv-machine.json`` and every ``asv machine``
    or ``jaxbench machine`` reads and rewrites it whole: two test processes
    (pytest-xdist workers) writing it at once lose each other's entries or read
    half a file. With its own HOME each process has its own machine file,
    and the tests never touch the user's. pip's wheel cache, virtualenv's app
    data and git's configuration stay the user's (the same cache for every
    virtualenv built, warm or not).
    """
    from platformdirs import user_cache_dir

    user = Path(environ.get("HOME") or Path.home())
    kept = {
        "PIP_CACHE_DIR": environ.get("PIP_CACHE_DIR") or user_cache_dir("pip", appauthor=False),
        "XDG_CACHE_HOME": environ.get("XDG_CACHE_HOME") or str(user / ".cache"),
        "XDG_DATA_HOME": environ.get("XDG_DATA_HOME") or str(user / ".local" / "share"),
        "XDG_CONFIG_HOME": environ.get("XDG_CONFIG_HOME") or str(user / ".config"),
    }
    gitconfig = environ.get("GIT_CONFIG_GLOBAL") or str(user / ".gitconfig")
    if Path(gitconfig).is_file():
        kept["GIT_CONFIG_GLOBAL"] = gitconfig
    return {"HOME": str(home), **kept}


@pytest.fixture(scope="session", autouse=True)
def private_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """This test process's own HOME (see :func:`private_home_environ`), for the session."""
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        for name, value in private_home_environ(home, os.environ).items():
            patch.setenv(name, value)
        yield home


@pytest.fixture(autouse=True)
def machine_file_kept(private_home: Path) -> Iterator[None]:
    """A test that leaves this process's ``~/.asv-machine.json`` unreadable fails, by name,
    and the file is put back as it was: asv rewrites it whole (not atomically) at
    every ``asv run`` and ``asv machine``, and a broken file fails the next test
    of the process that runs asv, far from its cause."""
    path = private_home / ".asv-machine.json"
    before = path.read_bytes() if path.is_file() else None
    yield
    if not path.is_file():
        return
    after = path.read_bytes()
    try:
        json.loads(after)
    except ValueError as exc:
        if before is None:
            path.unlink()
        else:
            path.write_bytes(before)
        pytest.fail(
            f"this test left {path} unreadable ({exc}; {len(after)} bytes: {after[:200]!r}); "
            "put back as it was before the test"
        )


# --- parallel runs (pytest-xdist) ----------------------------------------------------------

#: The folder of the run's machine lock, where this process made it.
_LOCK_FOLDER = pytest.StashKey[str]()
#: pip's constraints for every environment the tests build (asv's virtualenvs too).
PIP_CONSTRAINTS = Path(__file__).resolve().parent / "pip-constraints.txt"


def pytest_configure(config: pytest.Config) -> None:
    """The run's machine lock (:mod:`machine_alone`), named before xdist starts its
    processes, and :data:`PIP_CONSTRAINTS` for pip, unless ``PIP_CONSTRAINT`` is set."""
    os.environ.setdefault("PIP_CONSTRAINT", str(PIP_CONSTRAINTS))
    if not hasattr(config, "workerinput") and machine_alone.LOCK_VARIABLE not in os.environ:
        folder = tempfile.mkdtemp(prefix="jaxbench-tests-")
        config.stash[_LOCK_FOLDER] = folder
        os.environ[machine_alone.LOCK_VARIABLE] = os.path.join(folder, "machine.lock")


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = config.stash.get(_LOCK_FOLDER, None)
    if folder is not None:
        os.environ.pop(machine_alone.LOCK_VARIABLE, None)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    """Every test shares the machine (a part that times two sides takes it alone), from
    its setup to its teardown: module fixtures that run asv are set up and torn down
    inside the protocol of the first and last test that uses them."""
    if item.get_closest_marker("shapes") is not None:
        return (yield)  # the shapes tier shares the machine freely (tests/test_shapes.py)
    with machine_alone.shared():
        return (yield)


#: The order in which a parallel run (``--dist loadfile``: a module's tests on
#: one worker, so a module-scoped fixture runs once) hands out its modules: the
#: long ones first (end-to-end, then slow unit tests), so that no worker starts
#: one while the other is finishing.
COST_ORDER = ("e2e", "slow")


#: The per-process registries of jaxbench.measure.asvsuite: every jax_suite()
#: call of this process, and what its first calls prepared.
_SUITE_REGISTRIES = ("_REGISTRY", "_REGISTRY_MODULES", "_PREPARED")


def _suite_registries() -> list[dict[Any, Any]]:
    """The registries, or none before jaxbench.measure.asvsuite is imported."""
    module = sys.modules.get("jaxbench.measure.asvsuite")
    return [] if module is None else [getattr(module, n) for n in _SUITE_REGISTRIES]


@contextlib.contextmanager
def _suite_registries_restored() -> Iterator[None]:
    """The registries as they were before, afterwards (empty if not yet imported)."""
    saved = [dict(r) for r in _suite_registries()]
    yield
    for i, registry in enumerate(_suite_registries()):
        registry.clear()
        registry.update(saved[i] if i < len(saved) else {})


@pytest.fixture(scope="module", autouse=True)
def suites_of_this_module_only() -> Iterator[None]:
    """Forget, after each test module, the suites its tests registered in this process.

    asv's ``setup_cache`` measures every suite registered in its process; in a
    pytest process that has run other modules' suites first (one xdist worker
    serves many modules), an in-process ``setup_cache`` measured all of theirs
    too (a test of 1 s took 25 s).
    """
    with _suite_registries_restored():
        yield


def _suite_key(key: Any) -> str:
    return str(key[0] if isinstance(key, tuple) else key)  # _PREPARED: (suite, params)


@contextlib.contextmanager
def other_suites_set_aside(keep: str = "") -> Iterator[None]:
    """An in-process ``setup_cache`` that measures only the suites registered inside
    (and those named ``keep``, e.g. ``":Starter"``): the process's other suites (the
    corpus, registered at collection; other modules' tests) set aside."""
    import jaxbench.measure.asvsuite  # noqa: F401  (its registries exist from here)

    with _suite_registries_restored():
        for registry in _suite_registries():
            for key in [k for k in registry if not (keep and _suite_key(k).endswith(keep))]:
                del registry[key]
        yield


def cost_rank(item: pytest.Item) -> int:
    """0 for end-to-end tests, 1 for slow ones, 2 for the rest (see :data:`COST_ORDER`)."""
    return next(
        (rank for rank, name in enumerate(COST_ORDER) if item.get_closest_marker(name)),
        len(COST_ORDER),
    )


#: In each rank of :data:`COST_ORDER`, the modules are handed out as one marked
#: ``alone`` (some of its tests take the machine alone while they time), then
#: ``ALONE_EVERY - 1`` that are not, and so on: the processes that are not
#: waiting for a turn alone keep the cores busy (``make test`` runs one process
#: more than this 2-core machine's cores).
ALONE_EVERY = 3


def handout_order(items: Sequence[pytest.Item]) -> list[pytest.Item]:
    """The items module by module: the modules by their costliest test's
    :func:`cost_rank`, within a rank those marked ``alone`` spread among the others
    (:data:`ALONE_EVERY`); a module's tests keep their order, the costlier first."""
    modules: dict[Path, list[pytest.Item]] = {}
    for item in sorted(items, key=cost_rank):  # stable
        modules.setdefault(item.path, []).append(item)
    ranked: dict[int, tuple[list[list[pytest.Item]], list[list[pytest.Item]]]] = {}
    for tests in modules.values():
        alone, others = ranked.setdefault(cost_rank(tests[0]), ([], []))
        (alone if any(t.get_closest_marker("alone") for t in tests) else others).append(tests)
    order: list[pytest.Item] = []
    for _rank, (alone, others) in sorted(ranked.items()):
        while alone or others:
            if alone:
                order.extend(alone.pop(0))
            for tests in others[: ALONE_EVERY - 1]:
                order.extend(tests)
            del others[: ALONE_EVERY - 1]
    return order


@pytest.hookimpl(trylast=True)  # after -m and -k have deselected theirs
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a pytest-xdist worker, the items in :func:`handout_order`.

    xdist sends the modules in the order its workers collected them (``make
    test`` passes ``--no-loadscope-reorder``: its own reordering counts tests,
    not their cost). A plain, serial run keeps the files' order."""
    if hasattr(config, "workerinput"):
        items[:] = handout_order(items)


# --- browser tests: a skip is loud, and a failure under CI ----------------------------

#: What a skipped browser test means, and how to make it run.
BROWSER_SKIP_HELP = (
    "browser tests did not run: install Chromium at /usr/bin/chromium "
    "('apt-get install -y chromium') or point JAXBENCH_CHROMIUM at one"
)


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Under ``CI=true`` a skipped ``browser`` test is a failure: a green run in CI
    must have driven a real browser. A test that fails at ``subprocess.run(...,
    check=True)`` (or its timeout) shows what the command printed: pytest's report
    names only the command and its status, and a failure seen once in CI must be
    readable from that run's log alone."""
    report = yield
    failed = call.excinfo.value if call.excinfo is not None else None
    if isinstance(failed, subprocess.CalledProcessError | subprocess.TimeoutExpired):
        report.sections.append(("output of the failed command", _process_output(failed)))
    if report.skipped and _in_ci() and item.get_closest_marker("browser") is not None:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = (
            f"CI=true and this browser test was skipped ({reason}); {BROWSER_SKIP_HELP}"
        )
    return report


def _process_output(failed: subprocess.CalledProcessError | subprocess.TimeoutExpired) -> str:
    """What a failed command printed (its last 6,000 characters a stream)."""
    parts = []
    for name, stream in (("stdout", failed.stdout), ("stderr", failed.stderr)):
        text = stream.decode(errors="replace") if isinstance(stream, bytes) else stream or ""
        parts.append(f"--- {name} ---\n{text[-6000:] if text else '(nothing)'}")
    return "\n".join(parts)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One loud line at the end when browser tests were skipped."""
    skipped = [
        r
        for r in terminalreporter.stats.get("skipped", [])
        if "browser" in getattr(r, "keywords", {})
    ]
    if skipped:
        terminalreporter.section("browser tests skipped", sep="!", red=True, bold=True)
        terminalreporter.write_line(
            f"{len(skipped)} {BROWSER_SKIP_HELP} (under CI=true they fail)", red=True, bold=True
        )
