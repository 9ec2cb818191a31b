"""The conformance corpus (``tests/corpus/idioms.py``) through both measuring paths, as a table.

For every idiom:

* **report**: ``jaxbench report --workload idioms:make --param idiom=NAME``
  (the CLI's ``main``, in this process): warm median, first call, reference
  kind, whether XLA's work figures are in the report, compiles per warm
  call, its warnings;
* **asv**: the figures class through asv_runner's ``do_setup_cache`` /
  ``set_cache`` / ``do_setup`` / ``do_run`` (``track_first_call_seconds``,
  ``track_tolerance_used``, ``track_work_flops``, ``track_compiles_per_call``)
  and the timed class's ``time_warm`` through asv_runner's own timing loop (a
  few samples; one call each for an idiom whose suite asks for one).

Compiles per warm call must be 0, except for an idiom declared
``compiles_every_call`` (a sampler's ``run``), whose calls each compile.

An idiom listed in ``FAILS`` must fail in both paths with its one-line
message. The sharded idiom needs 4 devices: on the CPU this script sets
``XLA_FLAGS=--xla_force_host_platform_device_count=4`` before jax starts.

Run: ``.venv/bin/python bench/corpus_table.py [--json FILE] [--only a,b] [--paths
report]``; exit 0 when every idiom passed (both paths, or the report's alone with
``--paths report``: the tests check asv's path in a real ``asv run`` of the corpus
instead), 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "corpus"
FIGURE_TRACKS = (
    "track_first_call_seconds",
    "track_tolerance_used",
    "track_work_flops",
    "track_compiles_per_call",
)


def _report(idiom: str, repeats: int) -> dict[str, Any]:
    from jaxbench import cli

    err = io.StringIO()
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "report.json"
        argv = ["report", "--workload", "idioms:make", "--param", f"idiom={idiom}",
                "--repeats", str(repeats), "--output", str(target)]  # fmt: skip
        with contextlib.redirect_stderr(err):
            status = cli.main(argv)
        data = json.loads(target.read_text()) if status == 0 else None
    return {"status": status, "data": data, "stderr": err.getvalue()}


def _asv(idiom: str, cache: Any) -> dict[str, Any]:
    import idioms
    from asv_runner.discovery import get_benchmark_from_name

    suite = idioms.suite_name(idiom)
    out: dict[str, Any] = {}
    for track in FIGURE_TRACKS:
        benchmark = get_benchmark_from_name(str(CORPUS), f"idioms.{suite}Figures.{track}")
        benchmark.set_cache(cache)
        try:
            skip = benchmark.do_setup()
            out[track] = None if skip else benchmark.do_run()
        except Exception as exc:  # recorded per figure, as asv records a failed benchmark
            out[track] = f"{type(exc).__name__}: {exc}"
        finally:
            benchmark.do_teardown()
    timed = get_benchmark_from_name(str(CORPUS), f"idioms.{suite}.time_warm")
    timed.set_cache(None)
    timed.repeat, timed.number, timed.warmup_time = 3, idioms.NUMBER.get(idiom, 5), 0.0
    try:
        timed.do_setup()
        result = timed.do_run()
        out["time_warm"] = statistics.median(result["samples"])
        timed.do_teardown()
    except Exception as exc:
        out["time_warm"] = f"{type(exc).__name__}: {exc}"
    return out


def _figures_cache() -> Any:
    import idioms
    from asv_runner.discovery import get_benchmark_from_name

    first = idioms.suite_name(next(iter(idioms.IDIOMS)))
    benchmark = get_benchmark_from_name(str(CORPUS), f"idioms.{first}Figures.track_work_flops")
    return benchmark.do_setup_cache()


def _seconds(value: Any) -> str:
    from jaxbench.render.units import format_value

    return format_value(value, "seconds") if isinstance(value, float) else "-"


def _count(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else "-"


def run(only: list[str], repeats: int, asv_path: bool = True) -> list[dict[str, Any]]:
    sys.path.insert(0, str(CORPUS))
    import idioms

    names = [*idioms.IDIOMS, *idioms.FAILS]
    names = [n for n in names if not only or n in only]
    # the suite's setup_cache measures every idiom's figures (about 20 s on 2 CPUs); a
    # few idioms (--only) look theirs up in an empty cache, which measures each here
    cache = _figures_cache() if asv_path and not only else {}
    rows = []
    for name in names:
        report = _report(name, repeats)
        asv = _asv(name, cache) if asv_path else None
        data = report["data"] or {}
        row: dict[str, Any] = {
            "idiom": name,
            "report_status": report["status"],
            "report_stderr": report["stderr"].strip(),
            "warm": data.get("warm_median_seconds"),
            "first_call": data.get("first_call_seconds"),
            "reference": (data.get("reference") or {}).get("kind"),
            "work": data.get("work") is not None,
            "compiles_per_call": data.get("compiles_per_call"),
            "warnings": data.get("warnings", []),
            "asv": asv,
        }
        row["passed"] = _passed(row, idioms)
        rows.append(row)
    return rows


def _passed(row: dict[str, Any], idioms: Any) -> bool:
    """The report's path passed and, where it ran, asv's."""
    name, asv = row["idiom"], row["asv"]
    if not _report_passed(row, idioms):
        return False
    if asv is None:  # --paths report
        return True
    if name in idioms.FAILS:
        return all(idioms.FAILS[name][1] in str(v) for v in asv.values())
    if row.get("skipped"):  # too few devices: asv skips every figure too
        return all(v is None or str(v).startswith("SkipNotImplemented") for v in asv.values())
    skipped = asv["time_warm"] is None  # too few devices: asv records a skip
    declared = idioms.make(name).compiles_every_call
    compiles = asv["track_compiles_per_call"]
    compiles_ok = skipped or (
        isinstance(compiles, float) and (compiles >= 1 if declared else compiles == 0)
    )
    return (
        compiles_ok
        and (skipped or isinstance(asv["time_warm"], float))
        and isinstance(asv["track_first_call_seconds"], float)
        and isinstance(asv["track_tolerance_used"], float)
        and asv["track_tolerance_used"] <= 1.0
        and isinstance(asv["track_work_flops"], float) == (name not in idioms.NO_WORK)
    )


def _report_passed(row: dict[str, Any], idioms: Any) -> bool:
    """``jaxbench report`` measured the idiom (or failed it with its one line)."""
    name = row["idiom"]
    if name in idioms.FAILS:
        return (
            row["report_status"] == 2
            and idioms.FAILS[name][1] in row["report_stderr"]
            and "Traceback" not in row["report_stderr"]
        )
    if "devices," in row["report_stderr"] and "available" in row["report_stderr"]:
        row["skipped"] = True  # too few devices here (the sharded idiom on one GPU)
        return bool(row["report_status"] == 2)
    compiles = row["compiles_per_call"]
    declared = idioms.make(name).compiles_every_call
    return (
        row["report_status"] == 0
        and row["work"] == (name not in idioms.NO_WORK)
        and isinstance(compiles, float)
        and (compiles >= 1 if declared else compiles == 0)
    )


def table(rows: list[dict[str, Any]]) -> str:
    head = ("idiom", "warm", "first call", "reference", "work", "compiles/call", "asv warm",
            "asv", "result")  # fmt: skip
    lines = [head]
    for row in rows:
        asv = row["asv"] or {}
        failed = sum(isinstance(v, str) and not v.startswith("SkipNotImplemented")
                     for v in asv.values())  # fmt: skip
        skipped = sum(v is None or str(v).startswith("SkipNotImplemented") for v in asv.values())
        asv_state = "failed" if failed else f"ok, {skipped} skipped" if skipped else "ok"
        if row["asv"] is None:
            asv_state = "not run"
        lines.append((
            row["idiom"],
            _seconds(row["warm"]),
            _seconds(row["first_call"]),
            row["reference"] or "-",
            "yes" if row["work"] else "no",
            _count(row["compiles_per_call"]),
            _seconds(asv.get("time_warm")),
            asv_state,
            ("skip" if row.get("skipped") else "pass") if row["passed"] else "FAIL",
        ))  # fmt: skip
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(head))]
    return "\n".join(
        "  ".join(str(cell).ljust(width) for cell, width in zip(line, widths, strict=True))
        for line in lines
    )


def main() -> int:
    os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--only", default="", help="comma-separated idioms (default: all)")
    parser.add_argument("--repeats", type=int, default=5, help="the report's warm samples")
    parser.add_argument(
        "--paths",
        choices=("both", "report"),
        default="both",
        help="report: the report's path alone (asv's in a real asv run elsewhere)",
    )
    args = parser.parse_args()
    rows = run([n for n in args.only.split(",") if n], args.repeats, args.paths == "both")
    print(table(rows))
    for row in rows:
        for line in row["warnings"]:
            print(f"{row['idiom']}: warning: {line}")
        if row["idiom"] in {"same_array_twice_donated"}:
            print(f"{row['idiom']}: {row['report_stderr']}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2, default=str) + "\n")
    return 0 if all(row["passed"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
