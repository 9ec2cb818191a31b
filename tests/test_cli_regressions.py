"""``jaxbench regressions`` through jaxbench.cli.main and one real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PVLIB_RESULTS, AsvResultsWriter, commit_hash
from jaxbench.cli import main
from jaxbench.commands.regressions import format_value

PY38 = "conda-py3.8-ephem-numba-numpy-pandas-pytables-scipy"
DAY = 86_400_000


@pytest.fixture(autouse=True)
def _no_stray_asv_conf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run in an empty directory: an asv.conf.json in the cwd would be read."""
    monkeypatch.chdir(tmp_path)


def _stepped(writer: AsvResultsWriter) -> None:
    writer.add_benchmark("w.W.time_x")
    writer.add_benchmark("w.W.track_work_temp_bytes", unit="bytes")
    writer.write_meta()
    for i in range(30):
        t = (1.0 if i < 15 else 1.5) * 1e-5 * (1 + 0.01 * ((i * 7) % 5 - 2))
        writer.write_result(
            commit_hash(i),
            1_600_000_000_000 + i * DAY,
            {"w.W.time_x": t, "w.W.track_work_temp_bytes": 2048.0 if i < 25 else 4096.0},
        )


def test_text_listing_of_pvlib(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["regressions", "--results", str(PVLIB_RESULTS), "--env", PY38]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0] == "5 regressions in 7 series (newest first):"
    assert lines[1].split()[:6] == ["benchmark", "commits", "before", "after", "ratio", "kind"]
    clearsky1 = next(line for line in lines if "time_detect_clearsky(1) " in line)
    assert "84c76f60..5a21ca46" in clearsky1
    assert "2.47 ms" in clearsky1
    assert "27.9 ms" in clearsky1
    assert "x11.29" in clearsky1
    assert PY38 in clearsky1
    assert "5bdad644" in lines[2]  # newest first
    assert err == ""  # Fuentes' NaN values are asv's "skipped": no warning


def test_json_listing_is_versioned_and_stable(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["regressions", "--results", str(PVLIB_RESULTS), "--format", "json", "--all"]
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert main(argv) == 0
    assert capsys.readouterr().out == first
    doc = json.loads(first)
    assert doc["format"] == 1
    assert doc["warnings"] == []
    entry = next(r for r in doc["regressions"] if r["bad_commit"].startswith("d2c9bcd62"))
    assert entry["benchmark"] == "tracking.SingleAxis.time_singleaxis"
    assert entry["params"] == []
    assert entry["kind"] == "time"
    assert entry["unit"] == "seconds"
    assert entry["fixed_commit"] is not None
    assert set(entry) == {
        "benchmark",
        "params",
        "machine",
        "env_name",
        "version",
        "kind",
        "good_commit",
        "bad_commit",
        "date",
        "before",
        "after",
        "ratio",
        "unit",
        "fixed_commit",
    }
    dates = [r["date"] for r in doc["regressions"]]
    assert dates == sorted(dates, reverse=True)


def test_asv_conf_in_cwd_gives_results_dir_and_thresholds(
    tmp_path: Path,
    asv_writer: AsvResultsWriter,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _stepped(asv_writer)
    monkeypatch.chdir(tmp_path)
    assert main(["regressions"]) == 0  # default ./results
    out = capsys.readouterr().out
    assert out.startswith("2 regressions in 2 series")
    assert "2 KiB" in out
    assert "4 KiB" in out
    assert "10 µs" in out
    assert "work" in out
    (tmp_path / "asv.conf.json").write_text(
        '{"version": 1, // comment\n "results_dir": "results",'
        ' "regressions_thresholds": {"w\\\\.W\\\\.time_x": 0.9}}'
    )
    assert main(["regressions"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1 regression in 2 series")
    assert "time_x" not in out
    (tmp_path / "asv.conf.json").write_text('{"version": 1, "results_dir": "elsewhere"}')
    assert main(["regressions"]) == 2
    assert "elsewhere: no such results directory" in capsys.readouterr().err
    assert main(["regressions", "--results", "results", "--threshold", "0.9"]) == 0
    assert capsys.readouterr().out.startswith("1 regression in 2 series")


def test_no_regressions(asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]) -> None:
    asv_writer.add_benchmark("w.W.time_x")
    asv_writer.write_meta()
    for i in range(5):
        asv_writer.write_result(commit_hash(i), i * DAY, {"w.W.time_x": 1.0})
    assert main(["regressions", "--results", str(asv_writer.root)]) == 0
    assert capsys.readouterr().out == "No regressions in 1 series.\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--results", "/nonexistent/results"], "no such results directory"),
        (["--threshold", "-1"], "--threshold -1.0 must be a number >= 0"),
        (["--config", "/nonexistent/asv.conf.json"], "cannot read"),
        (["--results", str(PVLIB_RESULTS), "--machine", "x"], "no results for machine 'x'"),
    ],
)
def test_bad_input_is_one_line_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["regressions", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("jaxbench: error: ")
    assert message in err
    assert err.count("\n") == 1
    assert "Traceback" not in err


def test_format_value() -> None:
    assert format_value(2.5e-6, "seconds") == "2.5 µs"
    assert format_value(0.0123, "seconds") == "12.3 ms"
    assert format_value(3.0, "seconds") == "3 s"
    assert format_value(4e-9, "seconds") == "4 ns"
    assert format_value(512, "bytes") == "512 B"
    assert format_value(14336, "bytes") == "14 KiB"
    assert format_value(3 * 1024**2, "bytes") == "3 MiB"
    assert format_value(65536, "flops") == "65536 flops"
    assert format_value(1.5, "") == "1.5"


def test_subprocess_never_imports_jax(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from jaxbench.cli import main\n"
        f"rc = main(['regressions', '--results', {str(PVLIB_RESULTS)!r}, '--format', 'json'])\n"
        "leaked = sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib'))\n"
        "print('LEAKED', leaked, file=sys.stderr)\n"
        "sys.exit(rc)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "LEAKED []" in proc.stderr
    assert json.loads(proc.stdout)["format"] == 1
    proc = subprocess.run(
        [sys.executable, "-m", "jaxbench", "regressions", "--results", str(tmp_path / "none")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("jaxbench: error: ")
    assert "Traceback" not in proc.stderr
