"""Run a command and report the peak summed memory of it and every process it starts.

``jaxbench regressions`` parses large histories in forked worker processes
(``jaxbench.jobs.parallel``); the largest resident set of any one process
undercounts their sum, and summing resident sets counts the pages they share
(the parent's, copied on write) once per process. This samples, every
``--every`` seconds, the proportional set size (``Pss`` in
``/proc/PID/smaps_rollup``: each shared page divided among the processes
that map it) of the command and all its descendants, and prints the peak of
the sum. Linux only.

Usage::

    .venv/bin/python bench/tree_memory.py -- \\
        .venv/bin/jaxbench regressions --results HISTORY/results --no-cache --format json
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

PROC = Path("/proc")


def pss_bytes(pid: int) -> int:
    """The process's proportional set size; 0 when it has gone or cannot be read."""
    try:
        with (PROC / str(pid) / "smaps_rollup").open(encoding="ascii") as rollup:
            for line in rollup:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return 0
    return 0


def children() -> dict[int, list[int]]:
    """Parent pid -> child pids, for every process now running."""
    out: dict[int, list[int]] = {}
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        # the command name, in parentheses, may hold spaces: split after it
        fields = stat.rsplit(")", 1)[-1].split()
        out.setdefault(int(fields[1]), []).append(int(entry.name))
    return out


def tree_pss(root: int) -> int:
    """Summed PSS of ``root`` and its descendants."""
    kids = children()
    total, stack, seen = 0, [root], {root}
    while stack:
        pid = stack.pop()
        total += pss_bytes(pid)
        for child in kids.get(pid, []):
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return total


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--every", type=float, default=0.05, help="seconds between samples")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    if not (PROC / "self" / "smaps_rollup").exists():
        parser.error("needs Linux's /proc/PID/smaps_rollup")
    clock = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, tree_pss(proc.pid))
        time.sleep(args.every)
    wall = time.perf_counter() - clock
    print(
        f"wall {wall:.2f} s, peak summed PSS of the command and its processes "
        f"{peak / 2**20:.0f} MiB, exit {proc.returncode}"
    )
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
