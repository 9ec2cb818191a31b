"""``jaxbench report``: the lesson's JSON benchmark report, measured now."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from jaxbench.commands import positive_int
from jaxbench.errors import UsageError
from jaxbench.store.fsio import write_text_atomic

HELP = "measure workloads now and print the lesson's JSON report"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workload",
        default="predict",
        help="workload name, or 'all' (default: predict; see --list)",
    )
    parser.add_argument("--rows", type=positive_int, help="rows of x (default: 64)")
    parser.add_argument(
        "--devices", type=positive_int, help="logical devices for 'sharded' (default: 1)"
    )
    parser.add_argument("--repeats", type=positive_int, default=7, help="warm samples (default: 7)")
    parser.add_argument(
        "--output",
        type=Path,
        help="write the JSON here (a directory gets <workload label>.json) instead of stdout",
    )
    parser.add_argument("--list", action="store_true", help="list the workloads and exit")


def run(args: argparse.Namespace) -> int:
    # jax is imported here, not at module level: other commands never pay for it.
    from jaxbench.measure import report, workloads
    from jaxbench.measure.protocol import measure

    if args.list:
        for name in workloads.names():
            print(f"{name:12} {workloads.get(name).description}")
        return 0
    names = workloads.names() if args.workload == "all" else (args.workload,)
    chosen = [workloads.get(name, rows=args.rows, devices=_devices(name, args)) for name in names]
    target = _target(args.output, chosen[0].label if len(chosen) == 1 else "all")
    reports = [report.to_dict(measure(w, repeats=args.repeats)) for w in chosen]
    data = reports[0] if len(reports) == 1 else {"format": report.REPORT_FORMAT, "reports": reports}
    text = json.dumps(data, indent=2) + "\n"
    if target is None:
        sys.stdout.write(text)
    else:
        write_text_atomic(target, text)
        print(f"wrote {target}", file=sys.stderr)
    return 0


def _devices(name: str, args: argparse.Namespace) -> int | None:
    if args.devices is None:
        return None
    if name != "sharded" and args.workload == "all":
        return None
    return int(args.devices)


def _target(output: Path | None, label: str) -> Path | None:
    if output is None:
        return None
    path = output / f"{label}.json" if output.is_dir() else output
    if not path.parent.is_dir():
        raise UsageError(f"cannot write {path}: {path.parent} is not a directory; create it first")
    return path
