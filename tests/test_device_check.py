"""``bench/device_check.sh --dry-run``: the accelerator check, on the CPU with tiny sizes.

The same script the device machine runs (the corpus, the report, one A/A and
one planted ``jaxbench ab`` pair through real asv runs in a scratch git
repository), so that it is known to work before device time is spent on it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import machine_alone

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.e2e, pytest.mark.alone]


def _dry_run(tmp_path: Path, steps: str) -> tuple[subprocess.CompletedProcess[str], list[Any]]:
    out = tmp_path / f"table-{steps}.json"
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS" and not k.startswith("ASV")}
    env |= {"HOME": str(tmp_path), "PYTHON": str(ROOT / ".venv" / "bin" / "python")}
    if not Path(env["PYTHON"]).is_file():
        env["PYTHON"] = sys.executable
    done = subprocess.run(
        ["bash", str(ROOT / "bench" / "device_check.sh"), "--dry-run", "--json", str(out),
         "--steps", steps],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows: list[Any] = json.loads(out.read_text())
    return done, rows


def test_the_device_check_dry_run_prints_its_table(tmp_path: Path) -> None:
    """The script's steps in two runs: the two ``ab`` pairs, which assert verdicts of
    two sides timed side by side, with the machine alone; the rest beside other tests."""
    _, first = _dry_run(tmp_path, "corpus,report")
    with machine_alone.handed_over():  # its pairs' verdicts: alone while ab times them
        done, second = _dry_run(tmp_path, "ab")
    steps = {row["step"]: row for row in first + second}
    assert list(steps) == ["corpus", "report", "ab aa", "ab planted"]
    assert all(row["ok"] for row in steps.values())
    assert steps["corpus"]["detail"] == "3 of 3 idioms passed both paths"
    assert steps["ab aa"]["detail"].endswith("regressions: none; exit 0")
    planted = steps["ab planted"]["detail"]  # more flops for certain; the warm time too
    assert planted.endswith("exit 1")
    assert "track_work_flops" in planted
    assert "step" in done.stdout  # the printed table
    assert "ab planted  ok" in done.stdout


def test_an_unknown_step_is_one_line_and_exit_2() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "device_check.py"), "--dry-run", "--steps", "ab,x"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--steps: choose from corpus, report, ab, got 'ab,x'" in done.stderr
