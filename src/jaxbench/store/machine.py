"""Machine identity: asv's ``machine.json``, written without questions, plus a fingerprint.

asv copies every key of ``results/<machine>/machine.json`` into the
``params`` of each result file, so the file holds only asv's standard fields
(``machine``, ``arch``, ``cpu``, ``num_cpu``, ``os``, ``ram``; ``version`` 1)
and one more, ``fingerprint``: 12 hex digits of a SHA-256 over what decides
the speed of compiled JAX code on a CPU host:

* the CPU model name (``/proc/cpuinfo``'s ``model name``);
* the CPU flags XLA's CPU backend chooses code paths by (:data:`XLA_FLAGS`
  that the CPU has: avx, avx2, avx512*, amx*, fma, f16c, ...);
* the number of logical CPUs;
* the memory, rounded to GiB;
* the OS and kernel release (``platform.system()``, ``platform.release()``);
* the platform jaxlib's wheels are built for (``platform.machine()``).

jaxlib's own version is not part of it: the analysing side never imports jax,
and the benchmarked environments are asv's (their jax version is already in
the environment name). The readable parts go to a sidecar,
``results/<machine>/fingerprint-<hash>.txt`` (JSON text, named ``.txt`` so
that neither asv's results reader, which loads every ``*.json`` file of the
folder, nor jaxbench's takes it for a result file).

``asv run --machine NAME`` reads the machine from ``~/.asv-machine.json``
and writes it back to ``results/<machine>/machine.json``; so the entry is
written there too, as ``asv machine --yes`` does (read with asv's reader,
written in asv's format, but whole and renamed into place: see
:func:`_register`). Never imports jax.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from jaxbench.errors import UsageError
from jaxbench.store.fsio import write_text_atomic

__all__ = [
    "MACHINE_FORMAT",
    "XLA_FLAGS",
    "MachineInfo",
    "fingerprint_of",
    "probe",
    "write_machine",
]

#: asv's machine.json ``version``.
MACHINE_FORMAT = 1
#: Format of the fingerprint sidecar.
SIDECAR_FORMAT = 1

#: CPU flags (``/proc/cpuinfo`` names) that XLA's CPU backend (LLVM's target
#: features) chooses code paths by; an ``*`` is a prefix.
XLA_FLAGS = (
    "sse4_1",
    "sse4_2",
    "avx",
    "avx2",
    "avx512*",
    "avx_vnni",
    "amx*",
    "fma",
    "f16c",
    "bmi1",
    "bmi2",
    "popcnt",
    "asimd",
    "sve*",
    "sme",  # Arm's; not x86's "smep" (a security feature)
    "sme2*",
    "smef*",
    "smei*",
)

_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


@dataclass(frozen=True)
class MachineInfo:
    """What identifies a benchmark host; :attr:`fingerprint` hashes the speed-relevant parts."""

    machine: str
    arch: str
    cpu: str
    num_cpu: int
    os: str
    ram_bytes: int
    cpu_flags: tuple[str, ...]

    @property
    def ram_gib(self) -> int:
        return round(self.ram_bytes / 1024**3)

    @property
    def fingerprint(self) -> str:
        return fingerprint_of(self)

    def machine_json(self) -> dict[str, object]:
        """asv's machine.json: its standard fields (strings, as asv writes them) + fingerprint."""
        return {
            "machine": self.machine,
            "arch": self.arch,
            "cpu": self.cpu,
            "num_cpu": str(self.num_cpu),
            "os": self.os,
            "ram": str(self.ram_bytes),
            "fingerprint": self.fingerprint,
            "version": MACHINE_FORMAT,
        }

    def sidecar(self) -> dict[str, object]:
        """Every part of the fingerprint, for people."""
        return {
            "jaxbench_fingerprint_format": SIDECAR_FORMAT,
            "fingerprint": self.fingerprint,
            "cpu": self.cpu,
            "cpu_flags": list(self.cpu_flags),
            "num_cpu": self.num_cpu,
            "ram_gib": self.ram_gib,
            "os": self.os,
            "platform": self.arch,
            "note": "sha256 of cpu, cpu_flags, num_cpu, ram_gib, os, platform; first 12 hex "
            "digits (jaxbench.store.machine)",
        }


def fingerprint_of(info: MachineInfo) -> str:
    """12 hex digits over the parts listed in the module docstring, order-independent flags."""
    parts = {
        "cpu": info.cpu,
        "cpu_flags": sorted(info.cpu_flags),
        "num_cpu": info.num_cpu,
        "ram_gib": info.ram_gib,
        "os": info.os,
        "platform": info.arch,
    }
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]


def _wanted(flag: str) -> bool:
    return any(flag.startswith(w[:-1]) if w.endswith("*") else flag == w for w in XLA_FLAGS)


def parse_cpuinfo(text: str) -> tuple[str, tuple[str, ...]]:
    """CPU model name and the XLA-relevant flags from ``/proc/cpuinfo`` text (first CPU)."""
    model = ""
    flags: set[str] = set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key in ("model name", "Model", "cpu model") and not model:
            model = " ".join(value.split())
        elif key in ("flags", "Features") and not flags:
            flags = {f for f in value.split() if _wanted(f)}
    return model, tuple(sorted(flags))


def _memory_bytes() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 0


def probe(machine: str, cpuinfo: Path = Path("/proc/cpuinfo")) -> MachineInfo:
    """This host, named ``machine``."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    model, flags = parse_cpuinfo(text)
    uname = platform.uname()
    return MachineInfo(
        machine=machine,
        arch=platform.machine(),
        cpu=model or uname.processor or "unknown",
        num_cpu=os.cpu_count() or 1,
        os=f"{uname.system} {uname.release}",
        ram_bytes=_memory_bytes(),
        cpu_flags=flags,
    )


def check_name(machine: str) -> str:
    if not _NAME.match(machine):
        raise UsageError(
            f"machine name {machine!r}: use letters, digits, '.', '_' or '-' "
            "(it names a folder of the results)"
        )
    return machine


def write_machine(
    info: MachineInfo,
    results_dir: Path,
    *,
    asv_machine_file: Path | None = None,
    register: bool = True,
) -> tuple[Path, Path]:
    """Write machine.json and the fingerprint sidecar (atomically); register with asv.

    ``asv_machine_file`` is asv's per-user machine file (``~/.asv-machine.json``
    by default; None here means that default); the entry is merged with asv's
    :class:`~asv.machine.MachineCollection` so that ``asv run --machine``
    finds it without asking (unless ``register`` is false).
    """
    check_name(info.machine)
    folder = results_dir / info.machine
    machine_json = folder / "machine.json"
    sidecar = folder / f"fingerprint-{info.fingerprint}.txt"
    write_text_atomic(sidecar, json.dumps(info.sidecar(), indent=2) + "\n")
    write_text_atomic(machine_json, json.dumps(info.machine_json(), indent=4) + "\n")
    if register:
        _register(info.machine_json(), asv_machine_file)
    return machine_json, sidecar


def _register(entry: Mapping[str, object], path: Path | None) -> None:
    """Merge ``entry`` into asv's per-user machine file, atomically.

    asv's :meth:`~asv.machine.MachineCollection.save` truncates the file and then
    writes it: interrupted in between (Ctrl-C, a cancelled CI job's ``SIGTERM``,
    which :mod:`jaxbench.cli` raises where the command is), it leaves a file
    that fails every later ``asv run``. So the file is read with asv's reader and
    written whole through a temporary file, in asv's own format (``version`` 1,
    keys sorted, indent 4, as :func:`asv.util.write_json` writes it).
    """
    from asv import util
    from asv.machine import MachineCollection

    target = Path(path) if path is not None else Path(MachineCollection.get_machine_file_path())
    target = target.resolve()  # a link (a dotfiles checkout) keeps pointing at the new file
    fields = {k: v for k, v in entry.items() if k != "version"}
    try:
        machines = util.load_json(str(target)) if target.is_file() else {}
        if not isinstance(machines, dict):
            raise util.UserError(f"{target} holds no JSON object")
    except (OSError, util.UserError) as exc:
        where = path or "~/.asv-machine.json"
        raise UsageError(
            f"cannot record the machine in {where}: {exc}; fix or remove that file"
        ) from None
    machines.pop("version", None)
    machines[str(entry["machine"])] = fields
    machines["version"] = MachineCollection.api_version
    write_text_atomic(target, json.dumps(machines, indent=4, sort_keys=True))
