"""The lockstep worker with the oldest and the newest asv_runner it supports.

The worker reads a few of asv_runner's private names (there is no public API
to take one sample at a time), so it supports the range of asv_runner versions
it is tested with: each end of it is installed here in a real virtualenv of
its own (no system site-packages, no jax), and the worker is driven through
the real coordinator over a throw-away suite of plain-Python benchmarks that
uses what the worker relies on: parameters, ``setup``, ``setup_cache``,
``teardown``, ``number`` given and calibrated, a skip. Base runs the oldest
asv_runner, head the newest, side by side, as ``jaxbench ab`` would run them.
"""

from __future__ import annotations

import re
import statistics
import subprocess
import textwrap
import tomllib
import venv
from pathlib import Path

import pytest

from jaxbench.lockstep import worker
from jaxbench.lockstep.coordinator import Side, list_benchmarks, run_lockstep

REPO = Path(__file__).resolve().parents[1]

SUITE = textwrap.dedent(
    """
    import os
    import time

    LOG = os.environ["WORKER_TEST_LOG"]


    def _log(line):
        with open(LOG, "a") as f:
            f.write(line + "\\n")


    class Sized:
        params = [1, 3]
        param_names = ["ms"]
        number = 4

        def setup(self, ms):
            self.delay = ms / 1000

        def time_sleep(self, ms):
            time.sleep(self.delay)

        def teardown(self, ms):
            _log(f"teardown {ms}")


    class Cached:
        def setup_cache(self):
            return 0.002

        def time_cached(self, delay):
            time.sleep(delay)


    class Auto:
        sample_time = 0.05  # asv's 10 ms is one slow call on a loaded machine

        def time_auto(self):
            time.sleep(0.001)


    class Skipped:
        def setup(self):
            raise NotImplementedError("not on this machine")

        def time_never(self):
            pass


    def track_ignored():
        return 1
    """
)


def _venv_with(root: Path, requirement: str) -> Path:
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(root)
    python = root / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", requirement],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return python


@pytest.fixture(scope="module")
def pythons(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A Python with asv_runner ``version`` and nothing else, per version."""
    root = tmp_path_factory.mktemp("venvs")
    versions = (worker.OLDEST_ASV_RUNNER, worker.NEWEST_ASV_RUNNER, "0.2.1")
    return {v: _venv_with(root / v, f"asv_runner=={v}") for v in versions}


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "benchmarks"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "plain.py").write_text(SUITE)
    monkeypatch.setenv("WORKER_TEST_LOG", str(tmp_path / "log"))
    return root


def _installed(python: Path) -> str:
    code = "import importlib.metadata as m, jax"
    jax = subprocess.run([str(python), "-c", code], capture_output=True, check=False)
    assert jax.returncode != 0, "the virtualenv sees jax: it must hold asv_runner alone"
    out = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('asv_runner'))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def test_pyproject_pins_the_tested_range() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    pins = [d for d in pyproject["project"]["dependencies"] if d.startswith("asv_runner")]
    assert pins == [f"asv_runner>={worker.OLDEST_ASV_RUNNER},<={worker.NEWEST_ASV_RUNNER}"]
    assert pins == [worker.SUPPORTED]
    # the tests and the workflows run the newest
    assert (
        f"asv_runner=={worker.NEWEST_ASV_RUNNER}"
        in pyproject["project"]["optional-dependencies"]["dev"]
    )
    for workflow in sorted((REPO / ".github" / "workflows").glob("*.yml")):
        for pin in re.findall(r"asv_runner==([\w.]+)", workflow.read_text(encoding="utf-8")):
            assert pin == worker.NEWEST_ASV_RUNNER, workflow.name


@pytest.mark.e2e
def test_oldest_and_newest_asv_runner_side_by_side(
    pythons: dict[str, Path], suite: Path, tmp_path: Path
) -> None:
    oldest, newest = pythons[worker.OLDEST_ASV_RUNNER], pythons[worker.NEWEST_ASV_RUNNER]
    assert _installed(oldest) == worker.OLDEST_ASV_RUNNER
    assert _installed(newest) == worker.NEWEST_ASV_RUNNER
    base, head = Side("base", str(oldest), suite), Side("head", str(newest), suite)

    # asv_runner's own listing: time benchmarks only, with asv's names and params
    for side in (base, head):
        listed = {b["name"]: b for b in list_benchmarks(side)}
        assert set(listed) == {
            "plain.Sized.time_sleep",
            "plain.Cached.time_cached",
            "plain.Auto.time_auto",
            "plain.Skipped.time_never",
        }
        assert listed["plain.Sized.time_sleep"]["params"] == [["1", "3"]]

    # parameters reach the timed call: 3 ms against 1 ms, with the given number
    one = run_lockstep(base, head, "plain.Sized.time_sleep", 0, rounds=1, per_round=3)
    three = run_lockstep(base, head, "plain.Sized.time_sleep", 1, rounds=1, per_round=3)
    for short, long in zip(one, three, strict=True):
        assert (short.failure, long.failure) == ("", "")
        assert short.number == long.number == 4
        assert all(s >= 0.001 for s in short.samples), short.samples
        assert all(s >= 0.003 for s in long.samples), long.samples
        assert statistics.median(short.samples) < statistics.median(long.samples) / 1.5
    # teardown got the parameters too (asv's redo_setup runs it between samples)
    log = (tmp_path / "log").read_text().splitlines()
    assert set(log) == {"teardown 1", "teardown 3"}

    # setup_cache's value is the first argument
    for got in run_lockstep(base, head, "plain.Cached.time_cached", None, rounds=1, per_round=2):
        assert got.failure == ""
        assert all(s >= 0.002 for s in got.samples)

    # no number: asv_runner's calibration (a sample lasts sample_time, 50 ms)
    for got in run_lockstep(base, head, "plain.Auto.time_auto", None, rounds=1, per_round=2):
        assert 5 <= got.number <= 60
        assert all(s >= 0.001 for s in got.samples)

    # NotImplementedError in setup: asv's skip, on both versions
    for got in run_lockstep(base, head, "plain.Skipped.time_never", None, rounds=1, per_round=2):
        assert got.samples == ()
        assert "skipped" in got.skip


@pytest.mark.e2e
def test_an_older_asv_runner_is_refused_with_the_fix(pythons: dict[str, Path], suite: Path) -> None:
    old = Side("base", str(pythons["0.2.1"]), suite)
    new = Side("head", str(pythons[worker.NEWEST_ASV_RUNNER]), suite)
    base, head = run_lockstep(old, new, "plain.Auto.time_auto", None, rounds=1, per_round=2)
    assert base.samples == ()
    assert base.failure == (
        "RuntimeError: asv_runner 0.2.1 is older than the oldest the lockstep worker supports "
        f"({worker.OLDEST_ASV_RUNNER}); pip install '{worker.SUPPORTED}' in this environment"
    )
    assert len(head.samples) == 2  # the other side is still measured


def test_version_tuple() -> None:
    assert worker._version_tuple("0.3.2") == (0, 3, 2)
    assert worker._version_tuple("0.10.0rc1") == (0, 10, 0)
    assert worker._version_tuple("1.0.dev0+g1234") == (1, 0, 0)
    assert worker._version_tuple("0.2.5") < worker._version_tuple("0.10.0")
