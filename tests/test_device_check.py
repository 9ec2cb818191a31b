"""``bench/device_check.sh --dry-run``: the accelerator check, on the CPU with tiny sizes.

The same script the device machine runs (the corpus, the report, one A/A and
one planted ``jaxbench ab`` pair through real asv runs in a scratch git
repository), so that it is known to work before device time is spent on it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import machine_alone

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.e2e


def test_the_device_check_dry_run_prints_its_table(tmp_path: Path) -> None:
    out = tmp_path / "table.json"
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS" and not k.startswith("ASV")}
    env |= {"HOME": str(tmp_path), "PYTHON": str(ROOT / ".venv" / "bin" / "python")}
    if not Path(env["PYTHON"]).is_file():
        import sys

        env["PYTHON"] = sys.executable
    with machine_alone.alone():  # its A/A and planted pairs assert verdicts
        done = subprocess.run(
            ["bash", str(ROOT / "bench" / "device_check.sh"), "--dry-run", "--json", str(out)],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    steps = {row["step"]: row for row in json.loads(out.read_text())}
    assert list(steps) == ["corpus", "report", "ab aa", "ab planted"]
    assert all(row["ok"] for row in steps.values())
    assert steps["corpus"]["detail"] == "3 of 3 idioms passed both paths"
    assert steps["ab aa"]["detail"].endswith("regressions: none; exit 0")
    planted = steps["ab planted"]["detail"]  # more flops for certain; the warm time too
    assert planted.endswith("exit 1")
    assert "track_work_flops" in planted
    assert "step" in done.stdout  # the printed table
    assert "ab planted  ok" in done.stdout
