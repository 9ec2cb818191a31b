"""The corpus of project shapes, end to end, as a table (issue 40, item 7).

Runs the shapes tier (``tests/test_shapes.py``: each shape of a JAX project
adopts jaxbench: ``jaxbench init``, ``make bench-check``, ``make bench`` with
its paired history, the review's steps on an A/A pull request, a failing
benchmark named) and prints one row per shape:

    shape, init, bench-check, make bench time, pairs timed / pairs, A/A review, failing named

Usage: ``.venv/bin/python bench/bench_shapes.py [--workers N] [-k EXPR]``; the
pytest run's own summary line is printed last. Its times are this machine's
at that moment (shared, noisy): read the table for what passed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COLUMNS = (
    ("shape", "shape"),
    ("init", "init"),
    ("bench-check", "bench_check"),
    ("make bench", "make_bench_seconds"),
    ("pairs timed / pairs", "pairs"),
    ("A/A review", "review"),
    ("failing named", "failing_named"),
)


def _cell(row: dict[str, object], key: str) -> str:
    if key == "make_bench_seconds":
        seconds = float(str(row[key]))
        return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"
    if key == "pairs":
        return f"{row['pairs_timed']} / {row['pairs']}"
    return str(row[key])


def table(rows: list[dict[str, object]]) -> str:
    """A markdown table of the rows, in the corpus' order."""
    head = "| " + " | ".join(name for name, _ in COLUMNS) + " |"
    rule = "|" + "---|" * len(COLUMNS)
    body = ["| " + " | ".join(_cell(r, key) for _, key in COLUMNS) + " |" for r in rows]
    return "\n".join([head, rule, *body])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=1, help="pytest-xdist workers (default 1)")
    parser.add_argument("-k", dest="select", help="pytest -k expression (e.g. one shape)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="jaxbench-shapes-") as tmp:
        rows_file = Path(tmp) / "rows.jsonl"
        command = [
            sys.executable, "-m", "pytest", "-q", "-m", "shapes", "tests/test_shapes.py",
            "-n", str(args.workers), "--dist", "load", "-p", "no:cacheprovider",
        ]  # fmt: skip
        if args.select:
            command += ["-k", args.select]
        done = subprocess.run(
            command,
            cwd=ROOT,
            env={**os.environ, "JAXBENCH_SHAPES_TABLE": str(rows_file)},
            capture_output=True,
            text=True,
            check=False,
        )
        rows = [
            json.loads(line)
            for line in (rows_file.read_text().splitlines() if rows_file.exists() else [])
        ]
    order = {name: i for i, name in enumerate(_shape_names())}
    rows.sort(key=lambda r: order.get(str(r["shape"]), len(order)))
    print(table(rows))
    lines = (done.stdout + done.stderr).strip().splitlines()
    failed = [line for line in lines if line.startswith(("FAILED", "ERROR"))]
    for line in failed:
        print(line)
    print(lines[-1] if lines else f"pytest printed nothing (exit {done.returncode})")
    return done.returncode


def _shape_names() -> list[str]:
    sys.path.insert(0, str(ROOT / "tests"))
    from shapes import HISTORIES

    return [h.name for h in HISTORIES]


if __name__ == "__main__":
    sys.exit(main())
