"""``jaxbench report``: one workload measured now, as a JSON report.

``--workload`` is your own, ``module:factory`` (imported from the current
directory, as asv imports a suite): ``factory(**params)`` returns a
:class:`jaxbench.measure.Workload`, with ``--param name=value`` for each
parameter (values read as Python literals, else as strings). Without it,
``report`` times the built-in demo workload ``predict`` and says so first.
The demo workloads (``predict``, ``energy``, ``structured``, ``sharded``;
``all``; ``--list``) are the seed this project grew from, a lesson on timing
JAX code correctly; ``--rows``, ``--devices`` and ``--list`` apply to them only.
``--record-golden`` writes the output of a workload whose reference is
``Golden(path)`` to that path, once.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import sys
from pathlib import Path
from typing import Any

from jaxbench.commands import positive_int
from jaxbench.errors import UsageError, WorkloadError
from jaxbench.store.fsio import write_bytes_atomic, write_text_atomic

HELP = (
    "time a workload now and print its JSON report: yours with --workload module:factory, "
    "else the built-in demo workload 'predict'"
)
#: What ``report`` times without ``--workload``.
DEMO_DEFAULT = "predict"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workload",
        help=(
            "your workload as module:factory, or a built-in demo workload's name "
            f"('all' for every one; see --list) (default: the demo workload {DEMO_DEFAULT})"
        ),
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a parameter of module:factory (repeat for more; VALUE as a Python literal)",
    )
    demo = parser.add_argument_group(
        "the built-in demo workloads only", "options of predict, energy, structured and sharded"
    )
    demo.add_argument("--rows", type=positive_int, help="rows of x (default: 64)")
    demo.add_argument(
        "--devices", type=positive_int, help="logical devices for 'sharded' (default: 1)"
    )
    demo.add_argument("--list", action="store_true", help="list the demo workloads and exit")
    parser.add_argument("--repeats", type=positive_int, default=7, help="warm samples (default: 7)")
    parser.add_argument(
        "--output",
        type=Path,
        help="write the JSON here (a directory gets <workload label>.json) instead of stdout",
    )
    parser.add_argument(
        "--record-golden",
        action="store_true",
        help="write the output of a Golden(path) workload to its path, then report",
    )


def run(args: argparse.Namespace) -> int:
    # jax is imported here, not at module level: other commands never pay for it.
    from jaxbench.measure import report, workloads
    from jaxbench.measure.protocol import measure

    if args.list:
        from jaxbench.render.text import format_listing

        names = workloads.names()
        print(format_listing((n, workloads.get(n).description) for n in names), end="")
        return 0
    demo_default = args.workload is None
    if demo_default:
        args.workload = DEMO_DEFAULT
    if ":" in args.workload:
        chosen = [load_workload(args.workload, parse_params(args.param))]
    else:
        if args.param:
            raise UsageError("--param applies to module:factory workloads; use --rows/--devices")
        names = workloads.names() if args.workload == "all" else (args.workload,)
        chosen = [
            workloads.get(name, rows=args.rows, devices=_devices(name, args)) for name in names
        ]
    target = _target(args.output, chosen[0].label if len(chosen) == 1 else "all")
    if args.record_golden:
        _record_golden(chosen)
    if demo_default:
        print(
            f"jaxbench report: timing the built-in demo workload {DEMO_DEFAULT!r} "
            "(time yours with --workload module:factory --param NAME=VALUE)",
            file=sys.stderr,
        )
    reports = [report.to_dict(measure(w, repeats=args.repeats)) for w in chosen]
    for data in reports:
        for line in data.get("warnings", []):
            print(f"jaxbench: warning: {line}", file=sys.stderr)
    data = reports[0] if len(reports) == 1 else {"format": report.REPORT_FORMAT, "reports": reports}
    text = json.dumps(data, indent=2) + "\n"
    if target is None:
        sys.stdout.write(text)
    else:
        write_text_atomic(target, text)
        print(f"wrote {target}", file=sys.stderr)
    return 0


def parse_params(items: list[str]) -> dict[str, Any]:
    """``["rows=64", "name=mlp"]`` -> ``{"rows": 64, "name": "mlp"}``."""
    params: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name.isidentifier():
            raise UsageError(f"--param {item!r} is not NAME=VALUE; write e.g. --param rows=64")
        try:
            params[name] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            params[name] = text
    return params


def load_workload(spec: str, params: dict[str, Any]) -> Any:
    """``module:factory`` called with ``params``; every failure is one :class:`UsageError`."""
    from jaxbench.measure.workloads import Workload

    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise UsageError(f"--workload {spec!r} is not module:factory; write e.g. my_bench:make")
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))  # as asv imports a suite: from where you are
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise UsageError(
            f"--workload {spec}: cannot import {module_name} ({type(exc).__name__}: {exc}); "
            "run from the directory that holds it, or fix the error it raises"
        ) from None
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise UsageError(
            f"--workload {spec}: {module_name} has no callable {attr!r}; "
            "name the function that returns your Workload"
        )
    try:
        made = factory(**params)
    except TypeError as exc:
        raise UsageError(
            f"--workload {spec}: calling {attr}({_kwargs(params)}) failed ({exc}); "
            "give one --param NAME=VALUE per parameter it takes"
        ) from None
    except (UsageError, WorkloadError):
        raise
    except Exception as exc:
        raise UsageError(
            f"--workload {spec}: {attr}({_kwargs(params)}) raised {type(exc).__name__}: {exc}; "
            "fix the factory"
        ) from None
    if not isinstance(made, Workload):
        raise UsageError(
            f"--workload {spec}: {attr} returned {type(made).__name__}, not a Workload; "
            "return jaxbench.measure.Workload(...)"
        )
    return made


def _kwargs(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in params.items())


def _record_golden(chosen: list[Any]) -> None:
    from jaxbench.measure import reference
    from jaxbench.measure.protocol import first_output
    from jaxbench.measure.workloads import Golden

    for workload in chosen:
        if not isinstance(workload.reference, Golden):
            raise UsageError(
                f"{workload.label}: --record-golden needs reference=Golden(path), "
                f"not a {workload.reference_kind} reference"
            )
        path = Path(workload.reference.path)
        if not path.parent.is_dir():
            raise UsageError(f"cannot write {path}: {path.parent} is not a directory")
        write_bytes_atomic(path, reference.golden_bytes(first_output(workload)))
        print(f"recorded {path}", file=sys.stderr)


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
