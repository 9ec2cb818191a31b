"""``$JAXBENCH_QUIET_LOCK`` (jaxbench.lockstep.quiet), with real processes and real flock."""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from jaxbench.errors import UsageError
from jaxbench.lockstep.quiet import QUIET_LOCK, FileLock, file_lock, quiet, timed_quietly

#: Other work: holds the file in MODE, says so, waits for its release file, leaves.
HOLDER = """
import pathlib, sys, time
from jaxbench.lockstep.quiet import file_lock
lock_file, mode, said, release = sys.argv[1:]
file_lock(lock_file).set(getattr(__import__("fcntl"), mode))
pathlib.Path(said).write_text("in")
while not pathlib.Path(release).exists():
    time.sleep(0.01)
"""


@pytest.fixture
def lock_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "quiet.lock"
    monkeypatch.setenv(QUIET_LOCK, str(path))
    return path


@pytest.fixture
def holders() -> Iterator[list[subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        proc.kill()
        proc.wait(timeout=30)


def _hold(procs: list[subprocess.Popen[str]], lock: Path, mode: str, name: str) -> Path:
    said, release = lock.parent / f"{name}.in", lock.parent / f"{name}.release"
    procs.append(
        subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(lock), mode, str(said), str(release)], text=True
        )
    )
    end = time.monotonic() + 30
    while not said.exists():
        assert time.monotonic() < end, f"{name} did not take the lock within 30 s"
        time.sleep(0.01)
    return release


def test_unset_it_holds_nothing_and_waits_for_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(QUIET_LOCK, raising=False)
    with quiet() as waited:
        assert waited == 0.0


def test_it_waits_for_other_work_to_end_and_keeps_new_work_out(
    lock_file: Path, holders: list[subprocess.Popen[str]]
) -> None:
    release = _hold(holders, lock_file, "LOCK_SH", "build")
    # the build ends in a second: the timing starts after it, and says how long it waited
    ends = f"import time, pathlib; time.sleep(1); pathlib.Path({str(release)!r}).touch()"
    holders.append(subprocess.Popen([sys.executable, "-c", ends], text=True))
    with quiet() as waited:
        assert waited >= 0.9
        assert file_lock(str(lock_file)).held == fcntl.LOCK_EX
        probe = subprocess.run(
            [sys.executable, "-c", "import fcntl, sys; f = open(sys.argv[1], 'a'); "
             "fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)", str(lock_file)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert probe.returncode != 0  # new work waits
        assert "BlockingIOError" in probe.stderr
    assert file_lock(str(lock_file)).held == fcntl.LOCK_UN
    assert holders[0].wait(timeout=30) == 0


def test_the_wait_moves_a_timings_deadline(
    lock_file: Path, holders: list[subprocess.Popen[str]]
) -> None:
    """A review's budget is for measuring: the rounds' deadline moves by the wait."""

    @timed_quietly
    def rounds(*, deadline: float | None) -> tuple[float | None, int]:
        return deadline, file_lock(str(lock_file)).held

    assert rounds(deadline=None) == (None, fcntl.LOCK_EX)
    release = _hold(holders, lock_file, "LOCK_SH", "build")
    ends = f"import time, pathlib; time.sleep(1); pathlib.Path({str(release)!r}).touch()"
    holders.append(subprocess.Popen([sys.executable, "-c", ends], text=True))
    deadline, held = rounds(deadline=100.0)
    assert deadline is not None
    assert deadline >= 100.9
    assert held == fcntl.LOCK_EX
    assert file_lock(str(lock_file)).held == fcntl.LOCK_UN


def test_a_timing_inside_a_timing_holds_it_once(lock_file: Path) -> None:
    with quiet() as outer:
        with quiet() as inner:  # a review's steps, each timing
            assert inner < 0.5
        assert file_lock(str(lock_file)).held == fcntl.LOCK_EX  # still the outer's
    assert outer < 0.5
    assert file_lock(str(lock_file)).held == fcntl.LOCK_UN


def test_a_file_that_cannot_be_opened_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(QUIET_LOCK, str(tmp_path / "no-such-folder" / "quiet.lock"))
    with pytest.raises(UsageError) as caught, quiet():
        pass  # pragma: no cover - never entered
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"${QUIET_LOCK}={tmp_path}/no-such-folder/quiet.lock: ")
    assert "unset it" in message


def _open_files() -> set[str]:
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            found.add(os.readlink(f"/proc/self/fd/{fd}"))
    return found


def test_a_turnstile_that_cannot_be_opened_leaves_no_file_open(tmp_path: Path) -> None:
    lock = tmp_path / "quiet.lock"
    (tmp_path / "quiet.lock.turnstile").mkdir()  # a folder there: it cannot be opened
    with pytest.raises(IsADirectoryError):
        FileLock(lock)
    assert lock.is_file()  # the lock file was opened first ...
    assert str(lock) not in _open_files()  # ... and closed again
