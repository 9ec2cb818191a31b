"""``jaxbench regressions`` through jaxbench.cli.main and one real subprocess."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PVLIB_RESULTS, AsvResultsWriter, commit_hash
from jaxbench.cli import main

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
    argv = ["regressions", "--results", str(PVLIB_RESULTS), "--env", PY38, "--no-cache"]
    argv += ["--detector", "asv"]  # asv publish's fit: its levels below
    assert main([*argv, "--series"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0] == "5 regressions in 7 series (newest first):"
    assert lines[1].split()[:6] == ["benchmark", "commits", "before", "after", "ratio", "kind"]
    clearsky1 = next(line for line in lines if "time_detect_clearsky(1) " in line)
    assert "84c76f60..5a21ca46" in clearsky1
    assert "2.47 ms" in clearsky1
    assert "27.9 ms" in clearsky1
    assert "11.29x" in clearsky1
    assert PY38 in clearsky1
    assert "5bdad644" in lines[2]  # newest first
    assert err == ""  # Fuentes' NaN values are asv's "skipped": no warning


def test_json_listing_is_versioned_and_stable(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["regressions", "--results", str(PVLIB_RESULTS), "--format", "json", "--all"]
    argv += ["--no-cache", "--detector", "asv"]
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert main(argv) == 0
    assert capsys.readouterr().out == first
    doc = json.loads(first)
    assert doc["format"] == 5
    assert doc["detector"] == "asv"  # the fit that found the steps
    group = doc["failing"][0]
    assert set(group) == {
        "machine",
        "env_name",
        "since_commit",
        "date",
        "last_good_commit",
        "newly",
        "retired",
        "series_measured",
        "whole_result",
        "error",
        "build_error",
        "failed_commits",
        "failures",
    }
    assert set(group["failures"][0]) == {
        "benchmark",
        "params",
        "machine",
        "env_name",
        "version",
        "since_commit",
        "date",
        "last_good_commit",
        "newly",
        "retired",
        "failed_commits",
        "measured_commits",
        "newest_commit",
        "error",
    }
    assert {tuple(r) for r in doc["retired"]} == {
        ("machine", "env_name", "last_commit", "date", "later_commits")
    }
    assert doc["warnings"] == []
    assert doc["unconfirmed"] == []  # pvlib's steps are all confirmed by their commits
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
        "best_after",
        "unit",
        "fingerprint",
        "fixed_commit",
        "evidence",
        "n_before",
        "n_after",
        "p_value",
    }
    assert entry["evidence"] == "confirmed"
    assert (entry["n_before"], entry["n_after"]) == (31, 53)
    assert 0 <= entry["p_value"] < 0.01
    assert all(r["ratio"] > 1 for r in doc["regressions"])
    assert doc["machine_changes"] == []
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
    assert main(["regressions", "--series"]) == 0  # default ./results
    out = capsys.readouterr().out
    assert out.startswith("2 regressions in 2 series")
    assert "2.00 KiB" in out
    assert "4.00 KiB" in out
    assert "10.0 µs" in out
    assert "work" in out
    (tmp_path / "asv.conf.json").write_text(
        '{"version": 1, // comment\n "results_dir": "results",'
        ' "regressions_thresholds": {"w\\\\.W\\\\.time_x": 0.9}}'
    )
    assert main(["regressions", "--series"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1 regression in 2 series")
    assert "time_x" not in out
    (tmp_path / "asv.conf.json").write_text('{"version": 1, "results_dir": "elsewhere"}')
    assert main(["regressions"]) == 2
    assert "elsewhere: no such results directory" in capsys.readouterr().err
    assert main(["regressions", "--results", "results", "--threshold", "0.9", "--series"]) == 0
    assert capsys.readouterr().out.startswith("1 regression in 2 series")


def test_no_regressions(asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]) -> None:
    asv_writer.add_benchmark("w.W.time_x")
    asv_writer.write_meta()
    for i in range(8):
        asv_writer.write_result(commit_hash(i), i * DAY, {"w.W.time_x": 1.0})
    assert main(["regressions", "--results", str(asv_writer.root)]) == 0
    assert capsys.readouterr().out == "No regressions in 1 series.\n"


def test_a_history_too_short_to_test_a_step_says_so_and_what_judges_it(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three commits, the newest 5.5x slower: no step can be tested, and the listing says so."""
    asv_writer.add_benchmark("w.W.time_x")
    asv_writer.write_meta()
    for i, value in enumerate((84e-6, 122e-6, 675e-6)):
        asv_writer.write_result(commit_hash(i), i * DAY, {"w.W.time_x": value})
    for args in ([], ["--series"]):
        assert main(["regressions", "--results", str(asv_writer.root), *args]) == 0
        assert capsys.readouterr().out == (
            "No regressions in 1 series.\n"
            "Too few commits to test a step: 3 commits measured at most, and a step is listed "
            "with 4 on each side; 'jaxbench review BASE HEAD' times two commits side by side.\n"
        )
    assert main(["regressions", "--results", str(asv_writer.root), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["longest_series"] == 3
    assert document["notes"] == [
        "Too few commits to test a step: 3 commits measured at most, and a step is listed "
        "with 4 on each side; 'jaxbench review BASE HEAD' times two commits side by side."
    ]
    asv_writer.write_result(commit_hash(3), 3 * DAY, {"w.W.time_x": None})  # a failed run
    for i, value in enumerate((675e-6,) * 5, start=4):
        asv_writer.write_result(commit_hash(i), i * DAY, {"w.W.time_x": value})
    assert main(["regressions", "--results", str(asv_writer.root), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["longest_series"], document["notes"]) == (8, [])


def test_a_step_at_the_newest_commit_is_named_before_it_can_be_tested(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    """Twelve noisy commits, then one 3x slower: fitted, not yet tested, named in the count."""
    asv_writer.add_benchmark("w.W.time_x")
    asv_writer.add_benchmark("w.W.time_y")
    asv_writer.write_meta()
    noise = [1.00, 1.02, 0.99, 1.01, 0.98, 1.03, 1.00, 0.97, 1.01, 1.02, 0.99, 1.00]
    for i, value in enumerate([*noise, 3.0]):
        values = {"w.W.time_x": value * 1e-3, "w.W.time_y": noise[i % len(noise)] * 1e-3}
        asv_writer.write_result(commit_hash(i), i * DAY, values)
    assert main(["regressions", "--results", str(asv_writer.root)]) == 0
    assert capsys.readouterr().out == (
        "No regressions in 2 series.\n"
        "Not listed: 1 fitted step that the values do not confirm (1 with fewer than 4 commits "
        f"on a side; the largest not yet tested: 3.00x w.W.time_x at {commit_hash(12)[:8]}); "
        "'jaxbench regressions --unconfirmed' lists them.\n"
    )
    assert main(["regressions", "--results", str(asv_writer.root), "--unconfirmed"]) == 0
    assert "w.W.time_x" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--results", "/nonexistent/results"], "no such results directory"),
        (["--threshold", "-1"], "--threshold -1.0 must be a number >= 0"),
        (["--config", "/nonexistent/asv.conf.json"], "cannot read"),
        (["--results", str(PVLIB_RESULTS), "--machine", "x"], "no results for machine 'x'"),
        (["--results", str(PVLIB_RESULTS), "--since", "zzz"], "--since 'zzz' matches no commit"),
        (["--results", str(PVLIB_RESULTS), "--since", "2021-13-45"], "is not a date"),
        (["--results", str(PVLIB_RESULTS), "--benchmark", "("], "not a regular expression"),
        (["--results", str(PVLIB_RESULTS), "--min-ratio", "0.5"], "--min-ratio 0.5 must be"),
        (["--results", str(PVLIB_RESULTS), "--limit", "-1"], "--limit -1 must be >= 0"),
    ],
)
def test_bad_input_is_one_line_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["regressions", "--no-cache", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("jaxbench: error: ")
    assert message in err
    assert err.count("\n") == 1
    assert "Traceback" not in err


def test_subprocess_never_imports_jax(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from jaxbench.cli import main\n"
        f"rc = main(['regressions', '--results', {str(PVLIB_RESULTS)!r}, '--format', 'json',"
        " '--no-cache'])\n"
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
    assert json.loads(proc.stdout)["format"] == 5
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


# --- events ---


@pytest.mark.parametrize("detector", ["binseg", "asv"])
def test_pvlib_events_one_per_documented_regression(
    capsys: pytest.CaptureFixture[str], detector: str
) -> None:
    """Each documented pvlib regression is its own event at its commit; Fuentes is none."""
    argv = ["regressions", "--results", str(PVLIB_RESULTS), "--no-cache", "--format", "json"]
    assert main([*argv, "--all", "--detector", detector]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["detector"] == detector
    events = document["events"]

    def at(commit: str, env_part: str) -> list[dict[str, object]]:
        return [
            e
            for e in events
            if str(e["bad_commit"]).startswith(commit) and env_part in str(e["env_name"])
        ]

    (clearsky36,) = at("5a21ca46c", "py3.6")
    (clearsky38,) = at("5a21ca46c", "py3.8-ephem-numba")
    (aoi,) = at("5bdad6443", "py3.8-ephem-numba")
    (singleaxis,) = at("d2c9bcd62", "py3.6")
    for event, bench in [
        (clearsky36, "detect_clearsky"),
        (clearsky38, "detect_clearsky"),
        (aoi, "aoi_projection"),
        (singleaxis, "time_singleaxis"),
    ]:
        regs = event["regressions"]
        assert isinstance(regs, list)
        assert any(bench in r["benchmark"] for r in regs)
        assert all(r["ratio"] > 1 and r["after"] > r["before"] for r in regs)
        assert event["broad"] is False
    # the three detect_clearsky parameters form ONE event per environment
    assert len(clearsky36["regressions"]) == 3  # type: ignore[arg-type]
    fuentes = [e for e in events for r in e["regressions"] if "Fuentes" in r["benchmark"]]
    assert fuentes == []
    assert not at("1893b20a7", "")


def test_pvlib_default_text_fits_a_screen(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["regressions", "--results", str(PVLIB_RESULTS), "--no-cache"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    # first the benchmarks failing at the newest commit: pvlib's b2eca71b failed
    # everything in two environments (asv wrote null for each benchmark there), the
    # last commit either was measured in: one line each, retired, not news
    assert lines[0] == (
        "14 benchmarks fail at the newest commit (0 newly failing, 0 failing at every "
        "commit measured, 14 on retired environments), worst first; --failing lists each:"
    )
    start = next(i for i, line in enumerate(lines) if line.startswith("6 events"))
    failing = lines[1:start]
    assert len(failing) == 4
    assert sum(line.startswith("failing since b2eca71b (last value at") for line in failing) == 2
    assert sum(" (retired): every benchmark failed" in line for line in failing) == 2
    assert failing[2].startswith("Retired (newer commits measured only on other machines")
    assert failing[-1].startswith("No error text: asv keeps none in its result files")
    lines = lines[start:]
    assert lines[0].startswith("6 events (11 regressed series of 129), worst first")
    assert lines[1].startswith("1. 84c76f60..5a21ca46  2021-01-05  3 of ")
    assert len(lines) <= 40
    # fitted levels: a regression never reads below 1 (no "0.63x")
    assert re.search(r"\b0\.\d+x", out) is None


def test_filters(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["regressions", "--results", str(PVLIB_RESULTS), "--no-cache", "--format", "json"]
    assert main([*base, "--since", "2021-05-01"]) == 0
    regs = json.loads(capsys.readouterr().out)["regressions"]
    assert regs
    assert all(r["date"] >= 1619827200000 for r in regs)
    assert main(base) == 0
    unfiltered = json.loads(capsys.readouterr().out)["regressions"]
    at = next(r["date"] for r in unfiltered if r["bad_commit"].startswith("5bdad6443"))
    assert main([*base, "--since", "5bdad6443"]) == 0
    regs = json.loads(capsys.readouterr().out)["regressions"]
    assert "5bdad6443" in {r["bad_commit"][:9] for r in regs}
    assert regs == [r for r in unfiltered if r["date"] >= at]
    assert len(regs) < len(unfiltered)
    assert main([*base, "--benchmark", "clearsky.*\\(1\\)"]) == 0
    regs = json.loads(capsys.readouterr().out)["regressions"]
    assert len(regs) == 2
    assert all(r["params"] == ["1"] for r in regs)
    assert main([*base, "--min-ratio", "3"]) == 0
    regs = json.loads(capsys.readouterr().out)["regressions"]
    assert regs
    assert all(r["ratio"] >= 3 for r in regs)
    assert main(["regressions", "--results", str(PVLIB_RESULTS), "--no-cache", "--limit", "1"]) == 0
    out = capsys.readouterr().out
    assert "showing 1 (--limit 0: all)" in out
    assert "\n2. " not in out


def _broad(writer: AsvResultsWriter, fingerprints: list[str | None] | None = None) -> None:
    for j in range(12):
        writer.add_benchmark(f"w.W{j:02d}.time_x")
    writer.write_meta()
    for i in range(30):
        values = {}
        for j in range(12):
            step = 1.4 if (i >= 15 and (fingerprints is not None or j < 8)) else 1.0
            values[f"w.W{j:02d}.time_x"] = (
                step * (1 + j) * 1e-5 * (1 + 0.01 * ((i * 7 + j) % 5 - 2))
            )
        writer.write_result(commit_hash(i), 1_600_000_000_000 + i * DAY, values)
        if fingerprints is not None:
            path = next(writer.root.glob(f"{writer.machine}/{commit_hash(i)[:8]}-*.json"))
            doc = json.loads(path.read_text())
            if fingerprints[i] is not None:
                doc["params"]["fingerprint"] = fingerprints[i]
            path.write_text(json.dumps(doc))


def test_broad_event_is_labelled(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    _broad(asv_writer)
    assert main(["regressions", "--results", str(asv_writer.root)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1 event (8 regressed series of 12), worst first:")
    assert "broad: likely an environment, machine or core change" in out
    assert "... and 5 more series" in out
    assert main(["regressions", "--results", str(asv_writer.root), "--format", "json"]) == 0
    (event,) = json.loads(capsys.readouterr().out)["events"]
    assert event["broad"] is True
    assert event["bad_commit"] == commit_hash(15)
    assert event["good_commit"] == commit_hash(14)


def test_fingerprint_change_is_no_regression(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every series x1.4 exactly where the host changed: a machine change, no regression."""
    _broad(asv_writer, fingerprints=[None] * 5 + ["aaaa1111"] * 10 + ["bbbb2222"] * 15)
    assert main(["regressions", "--results", str(asv_writer.root)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == [
        "No regressions in 12 series.",
        f"machine changed at {commit_hash(5)[:8]} (m1): 12 series restarted",
        f"machine changed at {commit_hash(15)[:8]} (m1): 12 series restarted",
    ] or out.splitlines() == [
        "No regressions in 12 series.",
        f"machine changed at {commit_hash(15)[:8]} (m1): 12 series restarted",
        f"machine changed at {commit_hash(5)[:8]} (m1): 12 series restarted",
    ]
    assert main(["regressions", "--results", str(asv_writer.root), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["regressions"] == []
    assert doc["events"] == []
    change = next(c for c in doc["machine_changes"] if c["commit"] == commit_hash(15))
    assert (change["before"], change["after"], change["series"]) == ("aaaa1111", "bbbb2222", 12)


def test_html_regressions_page_lists_events_and_machine_changes(
    asv_writer: AsvResultsWriter,
) -> None:
    from jaxbench.analyse.detect import scan
    from jaxbench.analyse.events import group_events
    from jaxbench.render import html
    from jaxbench.store.series_table import load_series_table

    _broad(asv_writer)
    table = load_series_table(asv_writer.root, use_cache=False)
    found, _fits = scan(table)
    events = group_events(found.regressions, found.series_at)
    page = html.render_regressions_page(
        found.regressions,
        html.summarize_table(table),
        env_params={},
        param_names={},
        events=events,
        machine_changes=found.machine_changes,
    )
    assert page.count('<li class="event broad"') == 1
    assert f'data-commit="{commit_hash(15)}"' in page
    assert "broad: likely an environment, machine or core change" in page
    assert "8 of 12 series" in page
    assert "and 3 more series" in page  # 5 shown of 8
    (summary,) = html.summarize_table(table)
    assert (summary.commits, summary.series, summary.failed_points) == (30, 12, 0)
