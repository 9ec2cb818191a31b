"""``jaxbench machine``: record this host for asv, without questions, with a fingerprint.

Writes ``results/<machine>/machine.json`` (asv's fields and a ``fingerprint``),
a readable ``results/<machine>/fingerprint-<hash>.txt`` and the entry asv's
``asv run --machine NAME`` reads from ``~/.asv-machine.json``: what
``asv machine --yes`` does, plus the fingerprint
(:mod:`jaxbench.store.machine`). Never imports jax.
"""

from __future__ import annotations

import argparse
import os
import platform
from pathlib import Path

from jaxbench.store.machine import check_name, probe, write_machine

__all__ = ["HELP", "add_arguments", "run"]

HELP = "record this host's machine.json for asv (no questions) with a hardware fingerprint"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--machine",
        default=None,
        help="machine name (default: $JAXBENCH_MACHINE, else the host name, as asv)",
    )
    parser.add_argument(
        "--results", type=Path, default=Path("results"), help="asv results dir (default: results)"
    )
    parser.add_argument(
        "--asv-machine-file",
        type=Path,
        default=None,
        help="asv's per-user machine file to update (default: ~/.asv-machine.json)",
    )


def run(args: argparse.Namespace) -> int:
    name = args.machine or os.environ.get("JAXBENCH_MACHINE") or platform.uname().node
    info = probe(check_name(name))
    machine_json, sidecar = write_machine(
        info, args.results, asv_machine_file=args.asv_machine_file
    )
    flags = " ".join(info.cpu_flags) or "none listed"
    print(
        f"jaxbench machine: {info.machine} fingerprint {info.fingerprint}: {info.cpu}, "
        f"{info.num_cpu} CPUs, {info.ram_gib} GiB, {info.os}; flags {flags}\n"
        f"jaxbench machine: wrote {machine_json} and {sidecar}"
    )
    return 0
