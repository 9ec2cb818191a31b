"""The tests' machine lock (tests/machine_alone.py), with real processes and real flock."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import machine_alone

HERE = Path(__file__).resolve().parent

#: A test process: takes the lock in MODE, says so, waits for its release file, leaves.
HOLDER = """
import pathlib, sys, time
sys.path.insert(0, {here!r})
import machine_alone
mode, said, release = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
with getattr(machine_alone, mode)():
    said.write_text("in")
    while not release.exists():
        time.sleep(0.01)
"""


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[str]]]:
    """The holder processes a test starts, killed at its end, pass or fail."""
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        proc.kill()
        proc.wait(timeout=30)


def _start(
    started: list[subprocess.Popen[str]], tmp_path: Path, mode: str, name: str, code: str = ""
) -> Path:
    """A holder named ``name`` taking the lock in ``mode``; its release file."""
    said, release = tmp_path / f"{name}.in", tmp_path / f"{name}.release"
    started.append(
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                code or HOLDER.format(here=str(HERE)),
                mode,
                str(said),
                str(release),
            ],
            env={**os.environ, machine_alone.LOCK_VARIABLE: str(tmp_path / "machine.lock")},
            text=True,
        )
    )
    return release


def _entered(tmp_path: Path, name: str, within: float) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        if (tmp_path / f"{name}.in").exists():
            return True
        time.sleep(0.01)
    return False


def test_alone_waits_for_the_running_test_and_then_keeps_new_ones_out(
    started: list[subprocess.Popen[str]], tmp_path: Path
) -> None:
    release_reader = _start(started, tmp_path, "shared", "reader")
    assert _entered(tmp_path, "reader", 30)
    release_second = _start(started, tmp_path, "shared", "second")
    assert _entered(tmp_path, "second", 30)  # tests share the machine
    release_writer = _start(started, tmp_path, "alone", "writer")
    assert not _entered(tmp_path, "writer", 1)  # two tests still run
    release_late = _start(started, tmp_path, "shared", "late")
    assert not _entered(tmp_path, "late", 1)  # the turnstile: no new test while it waits
    release_reader.touch()
    release_second.touch()
    assert _entered(tmp_path, "writer", 30)
    assert not _entered(tmp_path, "late", 1)  # alone means alone
    release_writer.touch()
    assert _entered(tmp_path, "late", 30)
    release_late.touch()
    assert [proc.wait(timeout=30) for proc in started] == [0, 0, 0, 0]


def test_two_that_want_it_alone_from_inside_their_tests_take_turns(
    started: list[subprocess.Popen[str]], tmp_path: Path
) -> None:
    """Each holds it shared (its test) and then asks for it alone: no deadlock."""
    code = HOLDER.format(here=str(HERE)).replace(
        "with getattr(machine_alone, mode)():",
        "with machine_alone.shared(), machine_alone.alone():",
    )
    for name in ("one", "two"):
        _start(started, tmp_path, "alone", name, code)
    first = _first_in(tmp_path, ("one", "two"))
    other = "two" if first == "one" else "one"
    assert not _entered(tmp_path, other, 1)
    (tmp_path / f"{first}.release").touch()
    assert _entered(tmp_path, other, 30)
    (tmp_path / f"{other}.release").touch()
    assert [proc.wait(timeout=30) for proc in started] == [0, 0]


#: A jaxbench command's stand-in: times (holds $JAXBENCH_QUIET_LOCK) until told to stop.
TIMING = """
import pathlib, sys, time
from jaxbench.lockstep.quiet import quiet
said, release = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
with quiet():
    said.write_text("in")
    while not release.exists():
        time.sleep(0.01)
"""


def test_a_handed_over_command_builds_beside_other_tests_and_times_alone(
    started: list[subprocess.Popen[str]], tmp_path: Path
) -> None:
    """A test that hands the lock to its command (a review): the command starts while
    another test runs (asv builds), then times only once that test is done, and no new
    test starts until it has timed."""
    timing = str(tmp_path / "timing.in")
    handing = (
        HOLDER.format(here=str(HERE))
        .replace(
            "with getattr(machine_alone, mode)():",
            "with machine_alone.shared(), machine_alone.handed_over():",
        )
        .replace(
            "    while not release.exists():\n        time.sleep(0.01)\n",
            "    import subprocess\n"
            f"    subprocess.run([sys.executable, '-c', {TIMING!r}, {timing!r}, str(release)],"
            " check=True)\n",
        )
        # the variable named the lock for the block's processes only
        + "import os\nassert os.environ.get('JAXBENCH_QUIET_LOCK') is None\n"
    )
    release_reader = _start(started, tmp_path, "shared", "reader")
    assert _entered(tmp_path, "reader", 30)
    release_command = _start(started, tmp_path, "alone", "command", handing)
    assert _entered(tmp_path, "command", 30)  # beside the other test: not timing yet
    assert not _entered(tmp_path, "timing", 1)  # it times only with the machine alone
    release_late = _start(started, tmp_path, "shared", "late")
    assert not _entered(tmp_path, "late", 1)  # the turnstile: no new test while it waits
    release_reader.touch()
    assert _entered(tmp_path, "timing", 30)
    assert not _entered(tmp_path, "late", 1)  # alone while it times
    release_command.touch()
    assert _entered(tmp_path, "late", 30)
    release_late.touch()
    assert [proc.wait(timeout=30) for proc in started] == [0, 0, 0]


def _first_in(tmp_path: Path, names: tuple[str, ...]) -> str:
    end = time.monotonic() + 30
    while time.monotonic() < end:
        for name in names:
            if (tmp_path / f"{name}.in").exists():
                return name
        time.sleep(0.01)
    pytest.fail(f"none of {names} took the machine alone within 30 s")


@pytest.fixture(scope="module")
def held_in_module_setup() -> int:
    return machine_alone.held()


def test_a_module_fixture_is_set_up_with_the_machine_shared(held_in_module_setup: int) -> None:
    """Module fixtures run asv (the end-to-end repositories): they count as the test's."""
    assert held_in_module_setup == fcntl.LOCK_SH
    assert machine_alone.held() == fcntl.LOCK_SH
    with machine_alone.alone():
        assert machine_alone.held() == fcntl.LOCK_EX
    assert machine_alone.held() == fcntl.LOCK_SH
