"""Files jaxbench writes get the user's umask: mode ``0o666 & ~umask``, as any program's.

Atomic writes (:mod:`jaxbench.store.fsio`: results beside asv's, the paired
history, machine files, golden files) went through ``tempfile.mkstemp``,
which makes every file ``0600``: golden files and results the user's group,
a web server or a CI cache could not read. Checked under umask 022 and 002
for the atomic writer itself, every file ``jaxbench init`` writes (and the
directories it makes), and a golden file that ``jaxbench report
--record-golden`` records in a fresh process.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from init_repo import make_src_package
from jaxbench.cli import main
from jaxbench.store.fsio import write_bytes_atomic, write_text_atomic
from test_cli_workload import USER_MODULE, jaxbench

UMASKS = (0o022, 0o002)


@pytest.fixture(params=UMASKS, ids=lambda m: f"umask-{m:03o}")
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    """This process's umask (inherited by the processes it starts) for one test."""
    wanted: int = request.param
    previous = os.umask(wanted)
    try:
        yield wanted
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_an_atomic_write_gets_the_umask_s_mode(umask: int, tmp_path: Path) -> None:
    new = tmp_path / "deep" / "new.json"
    write_text_atomic(new, "{}\n")
    assert mode(new) == 0o666 & ~umask
    assert mode(new.parent) == 0o777 & ~umask
    # a file written 0600 by an earlier jaxbench gets the umask's mode when rewritten
    old = tmp_path / "golden.npz"
    old.write_bytes(b"old")
    old.chmod(0o600)
    write_bytes_atomic(old, b"new")
    assert old.read_bytes() == b"new"
    assert mode(old) == 0o666 & ~umask
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_every_file_init_writes_gets_the_umask_s_mode(
    umask: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_src_package(tmp_path / "tinyjax").root
    before = {p for p in repo.rglob("*") if ".git" not in p.parts}
    status = main(["init", str(repo), "--jax", "0.10.2", "--launch-method", "spawn"])
    assert status == 0, capsys.readouterr().err
    written = sorted(p for p in repo.rglob("*") if ".git" not in p.parts and p not in before)
    files = [p for p in written if p.is_file()]
    assert len(files) >= 8
    assert {str(p.relative_to(repo)): mode(p) for p in files} == {
        str(p.relative_to(repo)): 0o666 & ~umask for p in files
    }
    directories = [p for p in written if p.is_dir()]
    assert directories  # benchmarks/, .github/, .github/workflows/
    assert {mode(p) for p in directories} == {0o777 & ~umask}
    # .gitignore, appended to, was there: rewritten with the umask's mode too
    assert mode(repo / ".gitignore") == 0o666 & ~umask


@pytest.mark.slow
def test_a_recorded_golden_file_gets_the_umask_s_mode(umask: int, tmp_path: Path) -> None:
    (tmp_path / "user_bench.py").write_text(USER_MODULE)
    args = ("--workload", "user_bench:make", "--param", "reference=golden", "--record-golden")
    done = jaxbench(*args, cwd=tmp_path)  # a fresh process: it inherits the umask
    assert done.returncode == 0, done.stderr
    assert mode(tmp_path / "mlp-32.npz") == 0o666 & ~umask
