"""``jaxbench report``: real runs, in this process and in fresh ones, and bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jaxbench import cli
from jaxbench.measure import workloads


def jaxbench(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m jaxbench ...`` in a fresh process."""
    base = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    return subprocess.run(
        [sys.executable, "-m", "jaxbench", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**base, "JAX_PLATFORMS": "cpu", **(env or {})},
        check=False,
    )


def test_first_call_is_slower_than_warm_calls_in_a_fresh_process(tmp_path: Path) -> None:
    done = jaxbench("report", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["workload"] == "predict"
    assert data["input_shape"] == [64, 32]
    assert len(data["warm_samples_seconds"]) == 7
    # ~tens of milliseconds of tracing and compiling against ~tens of microseconds
    assert data["first_call_seconds"] > data["warm_median_seconds"]
    assert data["first_call_breakdown_seconds"]["compile"] > data["warm_median_seconds"]
    assert list(tmp_path.iterdir()) == []


def test_output_dir_keeps_one_file_per_label(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["report", "--repeats", "2", "--output", str(tmp_path)]) == 0
    first = (tmp_path / "predict.json").read_bytes()
    assert cli.main(["report", "--rows", "96", "--repeats", "2", "--output", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["predict-96rows.json", "predict.json"]
    assert (tmp_path / "predict.json").read_bytes() == first
    assert json.loads(first)["input_shape"] == [64, 32]
    rows96 = json.loads((tmp_path / "predict-96rows.json").read_text())
    assert rows96["workload"] == "predict-96rows"
    assert rows96["input_shape"] == [96, 32]
    captured = capsys.readouterr()
    assert captured.out == ""
    demo = (
        "jaxbench report: timing the built-in demo workload 'predict' "
        "(time yours with --workload module:factory --param NAME=VALUE)"
    )
    assert captured.err.splitlines() == [
        demo,
        f"wrote {tmp_path / 'predict.json'}",
        demo,
        f"wrote {tmp_path / 'predict-96rows.json'}",
    ]


def test_without_workload_it_says_first_that_it_times_the_demo(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The default is named on stderr before anything else; stdout stays JSON."""
    assert cli.main(["report", "--repeats", "1"]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines()[0].startswith(
        "jaxbench report: timing the built-in demo workload 'predict'"
    )
    assert json.loads(captured.out)["workload"] == "predict"
    assert cli.main(["report", "--repeats", "1", "--workload", "predict"]) == 0
    assert capsys.readouterr().err == ""  # named, so nothing to say


def test_help_says_what_it_times_and_marks_the_demo_only_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        cli.main(["report", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "else the built-in demo workload 'predict'" in text
    assert "(default: the demo workload predict)" in text
    demo_only = text[text.index("the built-in demo workloads only:") :]
    assert all(option in demo_only for option in ("--rows", "--devices", "--list"))
    assert "--param" not in demo_only


def test_output_file_is_written_as_named(tmp_path: Path) -> None:
    target = tmp_path / "energy-report.json"
    assert (
        cli.main(["report", "--workload", "energy", "--repeats", "1", "--output", str(target)]) == 0
    )
    assert json.loads(target.read_text())["output_shapes"] == {"/": [64]}


def test_all_reports_every_workload(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["report", "--workload", "all", "--repeats", "2"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["format"] == 4
    assert [r["workload"] for r in data["reports"]] == [
        "predict", "energy", "structured", "sharded-1dev",
    ]  # fmt: skip
    assert all(len(r["warm_samples_seconds"]) == 2 for r in data["reports"])


def test_list_names_every_workload(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["report", "--list"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == list(workloads.names())


def test_sharded_over_two_logical_devices(tmp_path: Path) -> None:
    done = jaxbench(
        "report", "--workload", "sharded", "--devices", "2", "--repeats", "2",
        cwd=tmp_path, env={"XLA_FLAGS": "--xla_force_host_platform_device_count=2"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["workload"] == "sharded-2dev"
    assert data["device_count"] == 2
    assert data["tolerance_used"] <= 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--repeats", "0"], "argument --repeats: must be at least 1, got 0"),
        (["--repeats", "many"], "argument --repeats: 'many' is not an integer"),
        (["--workload", "nope"], "unknown workload 'nope'; choose one of: predict"),
        (["--rows", "0"], "argument --rows: must be at least 1, got 0"),
        (["--rows", "-3"], "argument --rows: must be at least 1, got -3"),
        (["--workload", "predict", "--devices", "2"], "is not sharded"),
        (["--workload", "sharded", "--devices", "2"], "set XLA_FLAGS="),
        (["--output", "/proc/nope/x.json"], "cannot write /proc/nope/x.json"),
        (["--output", "missing/x.json"], "missing is not a directory; create it first"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else "",
)
def test_bad_input_is_one_line_exit_2_and_nothing_written(
    args: list[str], message: str, tmp_path: Path
) -> None:
    done = jaxbench("report", *args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert lines[0].startswith("jaxbench")
    assert ": error: " in lines[0]
    assert message in lines[0]
    assert list(tmp_path.iterdir()) == []
