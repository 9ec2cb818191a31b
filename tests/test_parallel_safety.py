"""The test processes stay apart: a HOME of their own, and long tests handed out first.

``make test`` runs pytest in three processes (pytest-xdist). asv and
``jaxbench machine`` rewrite ``~/.asv-machine.json`` whole, so each process
has a HOME of its own (tests/conftest.py) that keeps the user's caches.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import cost_rank, private_home_environ
from e2e_repo import ASV_BIN


def test_asv_machine_writes_this_processes_home_not_the_users(private_home: Path) -> None:
    assert os.environ["HOME"] == str(private_home)
    assert Path.home() == private_home
    done = subprocess.run(
        [str(ASV_BIN), "machine", "--yes", "--machine", "parallel-safety"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    machines = (private_home / ".asv-machine.json").read_text(encoding="utf-8")
    assert '"parallel-safety"' in machines


def test_jaxbench_machine_defaults_to_this_processes_home(
    private_home: Path, tmp_path: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "jaxbench", "machine", "--machine", "parallel-safety-2"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert '"parallel-safety-2"' in (private_home / ".asv-machine.json").read_text("utf-8")


def test_theprivate_home_keeps_the_users_caches_and_git_config(tmp_path: Path) -> None:
    user = tmp_path / "user"
    user.mkdir()
    environ = {"HOME": str(user), "PIP_CACHE_DIR": "/somewhere/pip"}
    got = private_home_environ(tmp_path / "private", environ)
    assert got["HOME"] == str(tmp_path / "private")
    assert got["PIP_CACHE_DIR"] == "/somewhere/pip"  # the user's choice is kept
    assert got["XDG_CACHE_HOME"] == str(user / ".cache")
    assert got["XDG_DATA_HOME"] == str(user / ".local" / "share")  # virtualenv's app data
    assert "GIT_CONFIG_GLOBAL" not in got  # the user has none
    (user / ".gitconfig").write_text("[user]\n\tname = someone\n", encoding="utf-8")
    got = private_home_environ(tmp_path / "private", {**environ, "XDG_CACHE_HOME": "/c"})
    assert got["GIT_CONFIG_GLOBAL"] == str(user / ".gitconfig")
    assert got["XDG_CACHE_HOME"] == "/c"


def test_pip_keeps_the_users_wheel_cache(private_home: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pip", "cache", "dir"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:  # pip's cache is disabled here (PIP_NO_CACHE_DIR)
        pytest.skip(done.stderr.strip())
    assert not Path(done.stdout.strip()).is_relative_to(private_home)


@pytest.mark.parametrize(
    "rank",
    [pytest.param(0, marks=pytest.mark.e2e), pytest.param(1, marks=pytest.mark.slow), 2],
)
def test_cost_rank_puts_end_to_end_then_slow_tests_first(
    rank: int, request: pytest.FixtureRequest
) -> None:
    assert cost_rank(request.node) == rank


def test_a_parallel_worker_hands_out_modules_long_first_and_alone_ones_spread(
    request: pytest.FixtureRequest,
) -> None:
    """Module by module (loadfile), the costliest first; in each rank a module marked
    ``alone`` is never handed out right after another while modules that are not wait."""
    if not hasattr(request.config, "workerinput"):
        pytest.skip("not a pytest-xdist worker: a serial run keeps the files' order")
    items = request.session.items
    paths = [item.path for item in items]
    firsts: dict[Path, pytest.Item] = {}
    for item in items:
        firsts.setdefault(item.path, item)
    assert len([p for p, _ in itertools.groupby(paths)]) == len(firsts)  # each module whole
    modules = list(firsts.values())
    ranks = [cost_rank(m) for m in modules]
    assert ranks == sorted(ranks)
    alone = [m.get_closest_marker("alone") is not None for m in modules]
    for i in range(1, len(modules)):
        later_others = any(
            not alone[j] and ranks[j] == ranks[i] for j in range(i + 1, len(modules))
        )
        same_rank = ranks[i - 1] == ranks[i]
        assert not (alone[i] and alone[i - 1] and same_rank and later_others), modules[i]


_INNER_TESTS = """
import json, subprocess, sys
from pathlib import Path

def test_a_writes_a_machine():
    path = Path.home() / ".asv-machine.json"
    path.write_text(json.dumps({"box": {"machine": "box"}, "version": 1}))

def test_b_breaks_the_machine_file():
    (Path.home() / ".asv-machine.json").write_text('{"box": {"mach')

def test_c_sees_it_as_before():
    assert json.loads((Path.home() / ".asv-machine.json").read_text())["version"] == 1

def test_d_a_command_fails():
    code = "import sys; print('said-on-stdout'); sys.stderr.write('said-on-stderr'); sys.exit(3)"
    subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
"""


def test_a_broken_machine_file_names_its_test_and_a_failed_command_shows_its_output(
    tmp_path: Path,
) -> None:
    """The conftest's guards, in a pytest run of their own: the test that leaves
    ``~/.asv-machine.json`` unreadable fails by name and the next sees the file as
    it was; a ``check=True`` command that fails shows what it printed."""
    (tmp_path / "test_inner.py").write_text(_INNER_TESTS, encoding="utf-8")
    tests = Path(__file__).resolve().parent
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider",
         "-p", "no:randomly", "-q", "-n", "0", "--basetemp", str(tmp_path / "base"),
         "--rootdir", str(tmp_path), "-c", "/dev/null", str(tmp_path / "test_inner.py")],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tests)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )  # fmt: skip
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "1 failed, 3 passed, 1 error" in out, out  # test_b passes, then errs at teardown
    assert "ERROR at teardown of test_b_breaks_the_machine_file" in out, out
    assert ".asv-machine.json unreadable" in out, out
    assert "put back as it was" in out, out
    assert "test_c_sees_it_as_before" not in out.split("short test summary", 1)[-1], out
    assert "output of the failed command" in out, out
    assert "said-on-stdout" in out, out
    assert "said-on-stderr" in out, out
