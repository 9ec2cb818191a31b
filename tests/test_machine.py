"""``jaxbench machine``: asv's machine.json without questions, and a hardware fingerprint."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from jaxbench.errors import UsageError
from jaxbench.store.machine import (
    MachineInfo,
    fingerprint_of,
    parse_cpuinfo,
    probe,
    write_machine,
)

CPUINFO = """\
processor\t: 0
model name\t: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz
flags\t\t: fpu sse sse2 ssse3 fma sse4_1 sse4_2 avx f16c avx2 avx512f avx512bw amx_tile foo_bar smep

processor\t: 1
model name\t: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz
flags\t\t: fpu sse
"""


def _info(**change: object) -> MachineInfo:
    base = {
        "machine": "box",
        "arch": "x86_64",
        "cpu": "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz",
        "num_cpu": 2,
        "os": "Linux 6.1.0",
        "ram_bytes": 8 * 1024**3,
        "cpu_flags": ("avx", "avx2", "fma"),
    }
    base.update(change)
    return MachineInfo(**base)  # type: ignore[arg-type]


def test_cpuinfo_gives_the_model_and_the_flags_xla_uses() -> None:
    model, flags = parse_cpuinfo(CPUINFO)
    assert model == "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz"
    assert flags == (
        "amx_tile", "avx", "avx2", "avx512bw", "avx512f", "f16c", "fma", "sse4_1", "sse4_2",
    )  # fmt: skip


def test_fingerprint_changes_with_each_part_and_only_with_them() -> None:
    same = fingerprint_of(_info())
    assert len(same) == 12
    assert int(same, 16) >= 0
    assert fingerprint_of(_info(machine="other-name")) == same  # the name is not the host
    assert fingerprint_of(_info(cpu_flags=("fma", "avx2", "avx"))) == same  # order-free
    assert fingerprint_of(_info(ram_bytes=8 * 1024**3 + 10 * 1024**2)) == same  # GiB-rounded
    for change in (
        {"cpu": "AMD EPYC 7763 64-Core Processor"},
        {"cpu_flags": ("avx", "avx2", "avx512f", "fma")},
        {"num_cpu": 4},
        {"ram_bytes": 16 * 1024**3},
        {"os": "Linux 6.8.0"},
        {"arch": "aarch64"},
    ):
        assert fingerprint_of(_info(**change)) != same, change


def test_this_host_is_probed() -> None:
    info = probe("here")
    assert info.num_cpu >= 1
    assert info.ram_gib >= 1
    assert info.os.startswith("Linux")
    assert info.cpu


def test_machine_writes_asvs_file_the_sidecar_and_asvs_user_entry(tmp_path: Path) -> None:
    user_file = tmp_path / "asv-machine.json"
    done = subprocess.run(
        [sys.executable, "-m", "jaxbench", "machine", "--machine", "box", "--results",
         "results", "--asv-machine-file", str(user_file)],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    machine = json.loads((tmp_path / "results" / "box" / "machine.json").read_text())
    assert set(machine) == {
        "machine", "arch", "cpu", "num_cpu", "os", "ram", "fingerprint", "version",
    }  # fmt: skip
    assert machine["machine"] == "box"
    assert machine["version"] == 1
    fingerprint = machine["fingerprint"]
    sidecar = tmp_path / "results" / "box" / f"fingerprint-{fingerprint}.txt"
    details = json.loads(sidecar.read_text())
    assert details["fingerprint"] == fingerprint
    assert isinstance(details["cpu_flags"], list)
    assert fingerprint in done.stdout

    # asv itself: the user entry is what 'asv run --machine box' loads, and the
    # results folder reads as a machine (the sidecar is no result file)
    from asv import util
    from asv.machine import Machine
    from asv.results import iter_results_paths

    loaded = Machine.load(machine_name="box", _path=str(user_file))
    assert loaded.fingerprint == fingerprint
    assert loaded.cpu == machine["cpu"]
    assert util.load_json(str(tmp_path / "results" / "box" / "machine.json"), api_version=1)
    assert list(iter_results_paths(str(tmp_path / "results"))) == []


def test_a_bad_machine_name_is_one_line_exit_2(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "jaxbench", "machine", "--machine", "../x", "--asv-machine-file",
         str(tmp_path / "u.json")],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert "machine name '../x'" in done.stderr
    assert not (tmp_path / "results").exists()


def test_the_user_entry_is_merged_into_asvs_file_by_a_rename_in_asvs_format(
    tmp_path: Path,
) -> None:
    """asv's own save truncates the file and then writes it (an interrupted write breaks
    every later ``asv run``); jaxbench writes a whole new file and renames it."""
    from asv.machine import MachineCollection

    user_file = tmp_path / "asv-machine.json"
    MachineCollection.save("other", {"machine": "other", "cpu": "x"}, _path=str(user_file))
    inode = user_file.stat().st_ino
    write_machine(_info(machine="box"), tmp_path / "results", asv_machine_file=user_file)
    assert user_file.stat().st_ino != inode  # a new file, renamed over the old one
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("asv-machine")] == [
        "asv-machine.json"
    ]  # no temporary file left
    assert MachineCollection.load("other", _path=str(user_file)) == {"machine": "other", "cpu": "x"}
    assert MachineCollection.load("box", _path=str(user_file))["machine"] == "box"
    # byte for byte what asv's own writer makes of the same machines
    from asv import util

    machines = json.loads(user_file.read_text())
    del machines["version"]
    util.write_json(str(tmp_path / "by-asv.json"), machines, MachineCollection.api_version)
    assert user_file.read_bytes() == (tmp_path / "by-asv.json").read_bytes()


@pytest.mark.parametrize("content", ['{"box": {"mach', "[1, 2]"])
def test_an_unreadable_user_file_is_named_and_left_as_it_was(tmp_path: Path, content: str) -> None:
    user_file = tmp_path / "asv-machine.json"
    user_file.write_text(content)
    with pytest.raises(UsageError, match=r"cannot record the machine in .*fix or remove that file"):
        write_machine(_info(machine="box"), tmp_path / "results", asv_machine_file=user_file)
    assert user_file.read_text() == content


def test_a_linked_user_file_is_written_where_the_link_points(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "asv-machine.json"
    real.parent.mkdir()
    real.write_text('{"other": {"machine": "other"}, "version": 1}')
    link = tmp_path / "asv-machine.json"
    link.symlink_to(real)
    write_machine(_info(machine="box"), tmp_path / "results", asv_machine_file=link)
    assert link.is_symlink()
    assert set(json.loads(real.read_text())) == {"other", "box", "version"}
