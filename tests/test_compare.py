"""``jaxbench compare`` on real asv result files written with asv's own code."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import ONE_RUN_START, PVLIB_MACHINE, AsvResultsWriter, commit_hash
from jaxbench.analyse.compare import Settings, WarmTest, compare_points, parse_fail_on
from jaxbench.analyse.paired_history import flagged_in_pair
from jaxbench.analyse.stats import Verdict
from jaxbench.cli import main
from jaxbench.errors import ResultsError, UsageError
from jaxbench.kinds import Kind
from jaxbench.store.paired import load_paired
from jaxbench.store.results import Point, load_history, load_result_file

BASE, HEAD = commit_hash(1), commit_hash(2)
TIME = "workloads.Predict.time_warm"
FIRST = "workloads.Predict.track_first_call_seconds"
TOL = "workloads.Predict.track_tolerance_used"
ERR = "workloads.Predict.track_max_abs_error"
FLOPS = "workloads.Predict.track_work_flops"
MEM = "workloads.Predict.peakmem_call"
ROWS = [["'64'", "'96'"]]

BASELINE: dict[str, list[float | None]] = {
    TIME: [10e-6, 20e-6],
    FIRST: [0.5, 0.7],
    TOL: [0.1, 0.1],
    ERR: [1e-7, 1e-7],
    FLOPS: [65536.0, 98304.0],
    MEM: [1e8, 1e8],
}


def _suite(writer: AsvResultsWriter) -> AsvResultsWriter:
    units = {
        TIME: "seconds",
        FIRST: "seconds",
        TOL: "unitless",
        ERR: "unitless",
        FLOPS: "flops",
        MEM: "bytes",
    }
    for name, unit in units.items():
        writer.add_benchmark(name, params=ROWS, unit=unit)
    writer.write_meta()
    return writer


def _write_pair(
    writer: AsvResultsWriter, head_changes: dict[str, list[float | None]] | None = None
) -> Path:
    _suite(writer)
    # 12 samples a side: enough for the review's family-wise level (Holm).
    # First call and peak memory: one value a side, as 'asv run' records them.
    single = frozenset({FIRST, MEM})
    writer.write_result(BASE, 1_000, BASELINE, n_samples=12, single=single)
    head = {**BASELINE, **(head_changes or {})}
    writer.write_result(HEAD, 2_000, head, n_samples=12, single=single)
    return writer.root


def _compare(root: Path, *extra: str) -> int:
    return main(["compare", BASE[:8], HEAD[:8], "--results", str(root), *extra])


def _json(
    root: Path, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[int, dict[str, Any]]:
    status = _compare(root, "--format", "json", *extra)
    return status, json.loads(capsys.readouterr().out)


def _verdicts(doc: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {(r["benchmark"], r["params"][0]): r["verdict"] for r in doc["rows"]}


# -- verdicts by kind ----------------------------------------------------------


def test_no_change_exits_zero(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    status, doc = _json(_write_pair(asv_writer), capsys)
    assert status == 0
    assert doc["summary"] == "12 unchanged"
    assert doc["machine"] == "m1"
    assert doc["base_commit"] == BASE


def test_warm_time_slowdown_is_a_regression(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _write_pair(asv_writer, {TIME: [13e-6, 20e-6]})
    status, doc = _json(root, capsys)
    assert status == 1
    assert _verdicts(doc)[(TIME, "'64'")] == "regression"
    assert _verdicts(doc)[(TIME, "'96'")] == "not significant"
    assert doc["summary"].startswith("1 regression (1 warm time)")
    assert _compare(root, "--fail-on", "none") == 0
    assert _compare(root, "--fail-on", "compile,accuracy") == 0
    assert _compare(root, "--fail-on", "time") == 1


def test_single_first_call_values_are_shown_untested_and_never_fail(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    # +100 ms (1.2x) is within first call's measured spread; +1.2 s (2.71x) is beyond it
    root = _write_pair(asv_writer, {FIRST: [0.6, 1.9]})
    status, doc = _json(root, capsys)
    assert _verdicts(doc)[(FIRST, "'64'")] == "unchanged"
    assert _verdicts(doc)[(FIRST, "'96'")] == "moved, not tested"
    # never counted as a change: its own line, with the command that tests it
    assert doc["summary"] == "11 unchanged"
    command = f"jaxbench first-call --base-commit {BASE[:12]} --head-commit {HEAD[:12]}"
    assert doc["not_tested"] == (
        "Not tested: 1 first-call figure moved beyond the measured spread, one value a side "
        f"(2.71x): {command} --machine m1 --env virtualenv-py3.11 times it in fresh processes "
        "side by side."
    )
    assert status == 0
    # asv's factor-only rule, on request:
    status, doc = _json(root, capsys, "--fail-untested")
    assert _verdicts(doc)[(FIRST, "'96'")] == "regression"
    assert doc["summary"].startswith("1 regression (1 compile time)")
    assert status == 1
    assert _compare(root, "--fail-untested", "--fail-on", "time") == 0


def _write_first_call_pairs(writer: AsvResultsWriter, base: list[float], head: list[float]) -> Path:
    """First-call values of fresh processes, pair i of base beside pair i of head."""
    from asv.results import Results
    from asv.runner import BenchmarkResult

    _suite(writer)
    for commit, date, values in ((BASE, 1_000, base), (HEAD, 2_000, head)):
        path = writer.write_result(commit, date, BASELINE, single=frozenset({FIRST, MEM}))
        results = Results.load(str(path), writer.machine)
        result = BenchmarkResult(
            result=[sorted(values)[len(values) // 2]] * 2,
            samples=[values, values],
            number=[None, None],
            errcode=0,
            stderr="",
            profile=None,
        )
        results.add_result(writer.benchmarks[FIRST], result, record_samples=True)
        results.save(str(writer.root))
    return writer.root


def test_side_by_side_first_call_is_tested_pair_by_pair(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    noise = [1.0, 1.04, 0.97, 1.02, 0.99, 1.05, 0.96, 1.01, 1.03, 0.98]
    base = [0.5 * n for n in noise]
    # The head is 20 % slower in every process, with its own noise on top.
    head = [0.6 * n * m for n, m in zip(noise, reversed(noise), strict=True)]
    status, doc = _json(_write_first_call_pairs(asv_writer, base, head), capsys)
    row = next(r for r in doc["rows"] if r["benchmark"] == FIRST)
    assert row["verdict"] == "regression"
    assert "paired t over 10 fresh-process pairs" in row["reason"]
    assert row["p_family"] < 0.01
    assert status == 1


def test_side_by_side_first_call_noise_is_not_a_regression(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    noise = [1.0, 1.04, 0.97, 1.02, 0.99, 1.05, 0.96, 1.01, 1.03, 0.98]
    base = [0.5 * n for n in noise]
    head = [0.5 * n for n in reversed(noise)]  # same processes' spread, no change
    status, doc = _json(_write_first_call_pairs(asv_writer, base, head), capsys)
    row = next(r for r in doc["rows"] if r["benchmark"] == FIRST)
    assert row["verdict"] == "not significant"
    assert status == 0


def test_any_work_change_is_reported(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    status, doc = _json(_write_pair(asv_writer, {FLOPS: [65537.0, 98304.0]}), capsys)
    row = next(r for r in doc["rows"] if r["benchmark"] == FLOPS and r["params"] == ["'64'"])
    assert (row["verdict"], row["reason"]) == ("regression", "work changed")
    assert row["category"] == "work"
    assert status == 1


def test_broken_tolerance_is_not_hidden_by_a_speedup(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _write_pair(asv_writer, {TIME: [5e-6, 20e-6], TOL: [3.0, 0.1], ERR: [5e-5, 1e-7]})
    status, doc = _json(root, capsys)
    verdicts = _verdicts(doc)
    assert verdicts[(TOL, "'64'")] == "regression"
    assert verdicts[(TIME, "'64'")] == "improvement"
    assert verdicts[(ERR, "'64'")] == "changed"
    speedup = next(r for r in doc["rows"] if r["benchmark"] == TIME and r["params"] == ["'64'"])
    assert "breaks its tolerance" in speedup["reason"]
    assert doc["summary"].startswith("1 regression (1 correctness), 1 improvement (1 warm time)")
    assert status == 1
    assert _compare(root, "--fail-on", "time") == 0
    assert _compare(root, "--fail-on", "accuracy") == 1


def test_benchmark_that_now_fails_and_one_that_is_fixed(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    _suite(asv_writer)
    asv_writer.write_result(BASE, 1_000, {**BASELINE, MEM: [None, 1e8]})
    asv_writer.write_result(HEAD, 2_000, {**BASELINE, TIME: [None, 20e-6]})
    status, doc = _json(asv_writer.root, capsys)
    verdicts = _verdicts(doc)
    assert verdicts[(TIME, "'64'")] == "failed"
    assert verdicts[(MEM, "'64'")] == "fixed"
    assert doc["summary"].startswith("1 now failing, 1 fixed")
    assert status == 1
    assert _compare(asv_writer.root, "--fail-on", "time,compile,accuracy,work,memory") == 0


def test_new_and_removed_benchmarks(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    _suite(asv_writer)
    asv_writer.write_result(BASE, 1_000, {k: v for k, v in BASELINE.items() if k != MEM})
    asv_writer.write_result(HEAD, 2_000, {k: v for k, v in BASELINE.items() if k != FLOPS})
    status, doc = _json(asv_writer.root, capsys)
    # The fixture gives first calls 5 samples a side here: tested, not significant.
    assert doc["counts"] == {"new": 2, "not significant": 4, "removed": 2, "unchanged": 4}
    assert status == 0


def test_new_and_removed_benchmarks_that_asv_skipped_read_skipped_not_failed(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    # asv writes NaN for a skipped combination (setup raised NotImplementedError), None
    # for a failed one; jumanji-benchmarks' real renamed benchmark showed "failed" for both.
    _suite(asv_writer)
    base = {k: v for k, v in BASELINE.items() if k != MEM}
    head = {k: v for k, v in BASELINE.items() if k != FLOPS}
    base[FLOPS] = [math.nan, None]
    head[MEM] = [math.nan, None]
    asv_writer.write_result(BASE, 1_000, base)
    asv_writer.write_result(HEAD, 2_000, head)
    assert _compare(asv_writer.root) == 0
    cells = {
        (line.split()[0], line.split()[1]): line.split()[2:4]
        for line in capsys.readouterr().out.splitlines()
        if line.startswith(("new ", "removed "))
    }
    assert cells == {
        ("new", f"{MEM}('64')"): ["-", "skipped"],
        ("new", f"{MEM}('96')"): ["-", "failed"],
        ("removed", f"{FLOPS}('64')"): ["skipped", "-"],
        ("removed", f"{FLOPS}('96')"): ["failed", "-"],
    }
    assert _compare(asv_writer.root, "--format", "markdown") == 0
    markdown = capsys.readouterr().out
    assert f"| new | {MEM} | '64' | - | skipped |" in markdown
    assert f"| removed | {FLOPS} | '64' | skipped | - |" in markdown


def test_environments_are_matched_not_mixed(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    _suite(asv_writer)
    for env, scale in (("virtualenv-py3.11-jax0.9.2", 1.0), ("virtualenv-py3.11-jax0.10.2", 3.0)):
        slow = {TIME: [10e-6 * scale, 20e-6 * scale]}
        asv_writer.write_result(BASE, 1_000, {**BASELINE, **slow}, env_name=env)
        asv_writer.write_result(HEAD, 2_000, {**BASELINE, **slow}, env_name=env)
    status, doc = _json(asv_writer.root, capsys)
    assert status == 0
    assert len(doc["env_names"]) == 2
    assert doc["counts"] == {"not significant": 8, "unchanged": 16}
    assert doc["summary"] == "24 unchanged"
    status, doc = _json(asv_writer.root, capsys, "--env", "virtualenv-py3.11-jax0.9.2")
    assert doc["env_names"] == ["virtualenv-py3.11-jax0.9.2"]


def test_two_result_files_can_be_compared_directly(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    _suite(asv_writer)
    base = asv_writer.write_result(BASE, 1_000, BASELINE, n_samples=12)
    head = asv_writer.write_result(HEAD, 2_000, {**BASELINE, TIME: [13e-6, 20e-6]}, n_samples=12)
    assert main(["compare", str(base), str(head), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert _verdicts(doc)[(TIME, "'64'")] == "regression"
    assert next(r["unit"] for r in doc["rows"] if r["benchmark"] == TIME) == "seconds"


def test_output_file_and_text_format(asv_writer: AsvResultsWriter, tmp_path: Path) -> None:
    root = _write_pair(asv_writer, {TIME: [13e-6, 20e-6]})
    out = tmp_path / "out" / "comment.md"
    assert _compare(root, "--format", "markdown", "--output", str(out)) == 1
    assert out.read_text().splitlines()[2] == "**1 regression** (1 warm time), 11 unchanged"
    text_out = tmp_path / "table.txt"
    assert _compare(root, "--output", str(text_out)) == 1
    lines = text_out.read_text().splitlines()
    assert lines[1] == "1 regression (1 warm time), 11 unchanged"
    assert lines[3] == "== virtualenv-py3.11"  # one environment: its name, once
    assert lines[4] == "base and head measured in one run"
    assert lines[5].split()[:3] == ["verdict", "benchmark", "base"]
    assert lines[6].startswith("time regression  workloads.Predict.time_warm('64')")
    assert lines[7].lstrip().startswith("Mann-Whitney p=")  # its reason, under it
    assert lines[-1] == (
        "Warm times: 2 in one run: Welch t on log round medians (or Mann-Whitney), "
        "ratio beyond 1.05."
    )


def test_real_pvlib_history_across_runs(
    pvlib_results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Format-1 files without samples: the documented tracking step (PR #465) at d2c9bcd6.
    # Each commit was measured in its own run: the spread between runs comes
    # from the series' 390 other commits, and the step stands out of it.
    env = "conda-py3.6-ephem3.7.6.0-numba0.36.1-numpy1.12.0-pandas0.22.0-pytables3.6.1-scipy1.2.0"
    history = load_history(pvlib_results, env_name=env)
    commits = history.commits()
    head = next(c for c in commits if c.startswith("d2c9bcd6"))
    base = commits[commits.index(head) - 1]
    status = main(
        [
            "compare",
            base[:10],
            head[:10],
            "--results",
            str(pvlib_results),
            "--env",
            env,
            "--format",
            "json",
        ]
    )
    doc = json.loads(capsys.readouterr().out)
    row = next(r for r in doc["rows"] if r["benchmark"] == "tracking.SingleAxis.time_singleaxis")
    assert row["verdict"] == "regression"
    assert row["warm_test"] == "across runs"
    assert row["reason"].startswith("across runs: t on the log ratio, spread of 390 other commits")
    assert doc["one_run"] == {env: False}
    assert doc["machine"] == PVLIB_MACHINE
    assert status == 1


def test_renamed_benchmark_keeps_its_units(capsys: pytest.CaptureFixture[str]) -> None:
    # jumanji-benchmarks' real results of a benchmark its benchmarks.json no longer lists
    results = Path(__file__).resolve().parent / "data" / "jumanji" / "results"
    # Two commits, each measured in its own run, and no other history: the
    # slowdowns (1.7x to 3.7x) are shown, not tested and not counted as changes,
    # with the command that tests them, said once.
    assert main(["compare", "02c8bec2", "32ec5aec", "--results", str(results)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[1] == "47 skipped, 0 unchanged"
    assert lines[2].startswith(
        "Not tested: 13 warm times in separate runs with fewer than 6 other commits of history, "
        "all moved (1.74x to 3.71x):"
    )
    row = next(line for line in lines if "time_rollout_run(0, 100000, 0, False)" in line)
    assert row.split()[8:12] == ["132", "ms", "229", "ms"], row
    flat = " ".join(out.split())
    assert flat.count("jaxbench ab --base-commit 02c8bec2f423 --head-commit 32ec5aecf813") == 1
    assert not re.search(r"\bchanged\b", out)


def test_text_counts_rows_skipped_at_base_and_head_instead_of_listing_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # jumanji-benchmarks: 47 of 60 parameter combinations are skipped (NaN) in every run
    results = Path(__file__).resolve().parent / "data" / "jumanji" / "results"
    assert main(["compare", "02c8bec2", "32ec5aec", "--results", str(results)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert sum(line.startswith("time moved, not tested ") for line in lines) == 13
    listed = "not listed: 47 skipped at base and head ('--format json' lists every row)"
    assert not any("skipped at base and head" in line for line in lines if line != listed)
    assert listed in lines
    main(["compare", "02c8bec2", "32ec5aec", "--results", str(results), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert sum(r["verdict"] == "skipped" for r in doc["rows"]) == 47


# -- bad input: exit 2, one line ----------------------------------------------


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("jaxbench: error: ")
    return err[0]


def test_unknown_base_commit(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _write_pair(asv_writer)
    assert main(["compare", "deadbeef", HEAD[:8], "--results", str(root)]) == 2
    assert "no results for commit 'deadbeef'" in _one_line_error(capsys)


def test_missing_results_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "a", "b", "--results", str(tmp_path / "nope")]) == 2
    assert "no such results directory" in _one_line_error(capsys)


def test_corrupt_result_file(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    _suite(asv_writer)
    base = asv_writer.write_result(BASE, 1_000, BASELINE)
    head = asv_writer.write_result(HEAD, 2_000, BASELINE)
    head.write_text(head.read_text()[:200])
    assert main(["compare", str(base), str(head)]) == 2
    line = _one_line_error(capsys)
    assert str(head) in line
    assert "not valid JSON" in line


def test_results_from_another_machine_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = []
    for machine, commit in (("laptop", BASE), ("ci-runner", HEAD)):
        writer = _suite(AsvResultsWriter(tmp_path / machine / "results", machine=machine))
        files.append(str(writer.write_result(commit, 1_000, BASELINE)))
    assert main(["compare", *files]) == 2
    assert "results from different machines: ci-runner, laptop" in _one_line_error(capsys)


def test_several_machines_need_machine_option(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _write_pair(asv_writer)
    other = _suite(AsvResultsWriter(root, machine="m2"))
    other.write_result(BASE, 1_000, BASELINE)
    assert _compare(root) == 2
    line = _one_line_error(capsys)
    assert "several machines (m1, m2)" in line
    assert "--machine" in line
    assert _compare(root, "--machine", "m1") == 0


def test_time_without_samples_or_interval(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _write_pair(asv_writer)
    path = root / "m1" / f"{HEAD[:8]}-virtualenv-py3.11.json"
    data = json.loads(path.read_text())
    keep = data["result_columns"].index("version") + 1
    data["results"] = {k: v[:keep] for k, v in data["results"].items()}
    path.write_text(json.dumps(data))
    assert _compare(root) == 2
    line = _one_line_error(capsys)
    assert f"m1/{HEAD[:8]}-virtualenv-py3.11.json" in line
    assert "--record-samples" in line


def test_bad_options(asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]) -> None:
    root = _write_pair(asv_writer)
    assert _compare(root, "--fail-on", "speed") == 2
    assert "unknown category speed" in _one_line_error(capsys)
    with pytest.raises(SystemExit) as exit_info:
        _compare(root, "--factor", "0.9")
    assert exit_info.value.code == 2
    assert "must be a number >= 1" in capsys.readouterr().err
    assert main(["compare", str(root / "x.json"), HEAD[:8]]) == 2
    assert "both be commits or both be result files" in _one_line_error(capsys)


# -- the pure core -------------------------------------------------------------


def test_compare_points_refuses_mixed_machines(
    asv_writer: AsvResultsWriter, tmp_path: Path
) -> None:
    _suite(asv_writer)
    base = load_result_file(asv_writer.write_result(BASE, 1_000, BASELINE))
    other = _suite(AsvResultsWriter(tmp_path / "other", machine="m2"))
    head = load_result_file(other.write_result(HEAD, 2_000, BASELINE))
    with pytest.raises(ResultsError, match="results from different machines: m1, m2"):
        compare_points(base, head)
    with pytest.raises(ResultsError, match="no base results"):
        compare_points([], head)


def test_rows_carry_kinds_and_settings(asv_writer: AsvResultsWriter) -> None:
    _suite(asv_writer)
    base = load_result_file(asv_writer.write_result(BASE, 1_000, BASELINE))
    head = load_result_file(asv_writer.write_result(HEAD, 2_000, {**BASELINE, MEM: [1.5e8, 1e8]}))
    report = compare_points(base, head, Settings(memory_factor=1.5))
    kinds = {row.benchmark: row.kind for row in report.rows}
    assert kinds[MEM] is Kind.MEMORY
    assert kinds[FLOPS] is Kind.WORK
    assert all(
        row.verdict is Verdict.UNCHANGED or row.verdict is Verdict.NOT_SIGNIFICANT
        for row in report.rows
    )
    strict = compare_points(base, head, Settings(memory_factor=1.1))
    assert [r.category for r in strict.rows if r.category] == []  # one value a side: untested
    assert [r.verdict for r in strict.rows if r.kind is Kind.MEMORY] == [
        Verdict.UNTESTED,
        Verdict.UNCHANGED,
    ]
    failing = compare_points(base, head, Settings(memory_factor=1.1, fail_untested=True))
    assert [r.category for r in failing.rows if r.category] == ["memory"]


def test_parse_fail_on() -> None:
    assert parse_fail_on("none") == frozenset()
    assert parse_fail_on("time, work") == {"time", "work"}
    assert "other" in parse_fail_on("all")
    with pytest.raises(UsageError, match="unknown category"):
        parse_fail_on("time,speed")


def test_compare_does_not_import_jax(asv_writer: AsvResultsWriter) -> None:
    root = _write_pair(asv_writer)
    code = (
        "import sys; from jaxbench.cli import main; "
        f"status = main(['compare', '{BASE[:8]}', '{HEAD[:8]}', '--results', {str(root)!r}, "
        "'--format', 'markdown']); "
        "assert 'jax' not in sys.modules, 'jax imported'; sys.exit(status)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


# -- warm times are tested per round (per process) -----------------------------


def _rounds_file(
    root: Path, commit: str, date: int, levels: list[float], per_round: int = 30
) -> Path:
    """A real asv result file of TIME whose samples are rounds of ``per_round``, one level each."""
    from asv import util
    from asv.results import Results
    from asv.runner import BenchmarkResult

    samples = [level * (1 + 0.001 * (k % 7)) for level in levels for k in range(per_round)]
    results = Results({"machine": "box", "python": "3.11"}, {}, commit, date, "3.11", "env", {})
    bench = {"name": TIME, "params": [], "param_names": [], "version": "1", "unit": "seconds"}
    result = BenchmarkResult(
        result=[sorted(samples)[len(samples) // 2]],
        samples=[samples],
        number=[50],
        errcode=0,
        stderr="",
        profile=None,
    )
    # both sides measured in one run (their rows started at one time)
    results.add_result(bench, result, started_at=ONE_RUN_START, duration=1.0, record_samples=True)
    results.save(str(root))
    machine = {
        "machine": "box",
        "arch": "x86_64",
        "cpu": "t",
        "num_cpu": "2",
        "os": "L",
        "ram": "1",
    }
    util.write_json(str(root / "box" / "machine.json"), machine, api_version=1)
    return root / "box" / f"{commit[:8]}-env.json"


def test_process_levels_are_not_a_regression_but_a_shift_of_every_process_is(
    tmp_path: Path,
) -> None:
    # Unchanged code on a busy machine: every process (round) runs at its own
    # speed. Pooled, the 120 samples a side look "significant"; per round they are not.
    base = load_result_file(_rounds_file(tmp_path, BASE, 1, [10e-6, 14e-6, 11e-6, 13e-6]))
    head = load_result_file(_rounds_file(tmp_path, HEAD, 2, [13e-6, 15e-6, 12e-6, 14e-6]))
    settings = Settings(round_size=30)
    per_round = compare_points(base, head, settings).rows[0].comparison
    assert per_round.verdict is Verdict.NOT_SIGNIFICANT
    assert "round medians (4 and 4 rounds)" in per_round.reason
    pooled = compare_points(base, head, Settings(round_size=None)).rows[0].comparison
    assert pooled.verdict is Verdict.REGRESSION
    # A slowdown that every process shows is found per round too.
    slower = load_result_file(
        _rounds_file(tmp_path / "slow", HEAD, 2, [15e-6, 15.2e-6, 15.1e-6, 15.3e-6])
    )
    flat = load_result_file(
        _rounds_file(tmp_path / "flat", BASE, 1, [10e-6, 10.1e-6, 10.2e-6, 10.05e-6])
    )
    assert compare_points(flat, slower, settings).rows[0].verdict is Verdict.REGRESSION


@pytest.mark.parametrize(("repeat", "rounds"), [(10, "12 and 12"), (None, "4 and 4"), (0, None)])
def test_round_size_is_read_from_benchmarks_json(
    tmp_path: Path, repeat: int | None, rounds: str | None
) -> None:
    from asv import util

    levels = [10e-6 * (1 + 0.01 * (i % 3)) for i in range(12)]
    _rounds_file(tmp_path, BASE, 1, levels, per_round=10)
    _rounds_file(tmp_path, HEAD, 2, [v * 1.3 for v in levels], per_round=10)
    info: dict[str, object] = {"name": TIME, "type": "time", "unit": "seconds", "version": "1"}
    if repeat is not None:
        info["repeat"] = repeat
    util.write_json(str(tmp_path / "benchmarks.json"), {TIME: info}, api_version=2)
    done = subprocess.run(
        [sys.executable, "-m", "jaxbench", "compare", BASE, HEAD, "--results", str(tmp_path),
         "--format", "json"],
        capture_output=True, text=True,
    )  # fmt: skip
    [row] = json.loads(done.stdout)["rows"]
    if rounds is None:  # repeat chosen by asv: rounds cannot be split back
        assert "Mann-Whitney" in row["reason"]
    else:  # 120 samples: rounds of 10 as the suite declares, else the default 30
        assert f"round medians ({rounds} rounds)" in row["reason"]
    assert row["verdict"] == "regression"


def test_default_round_size_is_the_suites_repeat() -> None:
    """compare's default round size is the repeat of the classes jax_suite makes (one
    constant, in the bottom vocabulary module both halves import)."""
    from jaxbench.kinds import REPEAT
    from jaxbench.measure.asvsuite import jax_suite

    timed, _figures = jax_suite("RoundSize", "predict")
    assert timed.repeat == REPEAT  # type: ignore[attr-defined]
    assert Settings().round_size == REPEAT


def test_text_output_shows_units_spread_and_one_ratio_precision(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _write_pair(asv_writer, {TIME: [13e-6, 20e-6]})
    assert _compare(root) == 1
    lines = capsys.readouterr().out.splitlines()
    slower = next(line for line in lines if "time_warm('64')" in line)
    assert "10.0±0.05µs" in slower  # below the last digit: one digit of the spread
    assert "13.0±0.06µs" in slower
    assert slower.endswith(" 1.30x")
    same = next(line for line in lines if "time_warm('96')" in line)
    assert same.endswith(" 1.00x")
    first = next(line for line in lines if "track_first_call_seconds('64')" in line)
    assert "500 ms" in first  # one value a side: no spread to show


# -- a workload declared Unchecked(reason) ------------------------------------------

NOISE = "programs.NoiseFigures"
NOISE_TRACKS = {
    f"{NOISE}.track_max_abs_error": "abs error",
    f"{NOISE}.track_tolerance_used": "fraction of tolerance",
    f"{NOISE}.track_answer_unchecked": "unchecked",
}


def _write_unchecked(writer: AsvResultsWriter, base_checked: bool) -> Path:
    from jaxbench.store import checks

    for name, unit in NOISE_TRACKS.items():
        writer.add_benchmark(name, params=[["256"]], unit=unit)
    writer.write_meta()
    nan = float("nan")  # asv's "skipped"
    checked = {f"{NOISE}.track_max_abs_error": 1e-7, f"{NOISE}.track_tolerance_used": 0.1}
    unchecked = {f"{NOISE}.track_max_abs_error": nan, f"{NOISE}.track_tolerance_used": nan}
    base = {**(checked if base_checked else unchecked)}
    base[f"{NOISE}.track_answer_unchecked"] = 0.0 if base_checked else 1.0
    head = {**unchecked, f"{NOISE}.track_answer_unchecked": 1.0}
    writer.write_result(BASE, 1_000, base, single=frozenset(base))
    writer.write_result(HEAD, 2_000, head, single=frozenset(head))
    environ = {
        "JAXBENCH_COMMIT": HEAD,
        "JAXBENCH_ENV_NAME": "virtualenv-py3.11",
        "JAXBENCH_MACHINE": "m1",
        "JAXBENCH_RESULTS_DIR": str(writer.root),
    }
    checks.save_unchecked(NOISE, ("256",), "random bits have no twin", environ=environ)
    return writer.root


@pytest.mark.parametrize("base_checked", [False, True])
def test_an_unchecked_workload_is_shown_unchecked_with_its_reason_not_skipped(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str], base_checked: bool
) -> None:
    root = _write_unchecked(asv_writer, base_checked)
    status, doc = _json(root, capsys)
    assert status == 0  # declared, not a failure
    rows = {r["benchmark"].rsplit(".", 1)[-1]: r for r in doc["rows"]}
    assert {r["verdict"] for r in rows.values()} == {"unchecked"}
    assert "skipped" not in doc["summary"]
    assert doc["summary"].startswith("3 unchecked")
    for name in ("track_max_abs_error", "track_tolerance_used"):
        assert rows[name]["reason"] == "unchecked: random bits have no twin"
    flag = rows["track_answer_unchecked"]["reason"]
    if base_checked:
        assert flag.startswith("checked at base, unchecked at head: the workload's reference")
    else:
        assert flag == "unchecked at base and head; random bits have no twin"
    assert _compare(root, "--format", "text") == 0
    text = capsys.readouterr().out
    assert "unchecked" in text
    assert "skipped" not in text
    assert _compare(root, "--format", "markdown") == 0  # the pull-request review
    review = capsys.readouterr().out
    assert "3 unchecked" in review
    assert "skipped" not in review


# -- base and head measured in separate runs (issue 29) ----------------------------

#: One commit's level in its own run: the machine's load moves it by a few percent.
RUN_LEVELS = [1.00, 1.02, 0.99, 1.01, 0.98, 1.03, 1.00, 0.99, 1.02, 1.01]


def _separate_runs(
    writer: AsvResultsWriter, base_level: float, head_level: float, *, history: int = 10
) -> tuple[str, str]:
    """``history`` commits, then base and head, each measured in its own run an hour apart.

    Four rounds of 30 samples a side, tight within the run (+-1 %): the
    within-run test sees no spread between runs at all.
    """
    import datetime

    writer.add_benchmark(TIME, params=ROWS, unit="seconds")
    writer.write_meta()
    levels = [*RUN_LEVELS[:history], base_level, head_level]
    for i, level in enumerate(levels):
        writer.write_result(
            commit_hash(10 + i),
            1_000 * (i + 1),
            {TIME: [10e-6 * level, 20e-6 * level]},
            n_samples=120,
            started_at=ONE_RUN_START + datetime.timedelta(hours=i),
        )
    return commit_hash(10 + history), commit_hash(11 + history)


def _warm_rows(root: Path, base: str, head: str) -> list[Any]:
    history = load_history(root)
    points = {c: [p for p in history.points if p.commit == c] for c in (base, head)}
    report = compare_points(points[base], points[head], history=history.points)
    assert report.one_run == (("virtualenv-py3.11", False),)
    return [r for r in report.rows if r.kind is Kind.TIME]


def test_identical_code_in_separate_runs_is_not_a_change(asv_writer: AsvResultsWriter) -> None:
    # Base measured while the machine was busier (8 % slower): the within-run
    # Welch test calls that a significant improvement; across runs it is noise.
    base, head = _separate_runs(asv_writer, 1.08, 1.00)
    history = load_history(asv_writer.root)
    points = {c: [p for p in history.points if p.commit == c] for c in (base, head)}
    welch = compare_points(points[base], points[head])  # no history: as before issue 29
    for row in _warm_rows(asv_writer.root, base, head):
        assert row.warm_test is WarmTest.ACROSS_RUNS
        assert row.verdict is Verdict.NOT_SIGNIFICANT, row.comparison.reason
        assert row.comparison.reason.startswith(
            "across runs: t on the log ratio, spread of 10 other commits "
            "and of each side's rounds (4 and 4) p="
        )
        assert row.comparison.p_value is not None
        assert row.comparison.p_value > 0.01
    # The same samples judged as one run (rows started together): "improvements".
    import dataclasses

    same_time = {
        c: [dataclasses.replace(p, started_at=0, duration=1.0) for p in points[c]]
        for c in (base, head)
    }
    one_run = compare_points(same_time[base], same_time[head], history=history.points)
    assert [r.warm_test for r in one_run.rows] == [WarmTest.ONE_RUN] * 2
    assert [r.verdict for r in one_run.rows] == [Verdict.IMPROVEMENT] * 2
    assert [r.warm_test for r in welch.rows] == [WarmTest.NOT_TESTED] * 2


AA_LOADED = Path(__file__).resolve().parent / "data" / "aa_loaded"


def _as_one_run(points: list[Point]) -> list[Point]:
    """The points as if every row had started together (one run)."""
    import dataclasses

    return [dataclasses.replace(p, started_at=0, duration=1.0) for p in points]


def test_real_aa_history_half_loaded_is_not_a_change() -> None:
    # A real A/A history (tests/data/aa_loaded/PROVENANCE.md): 16 commits of
    # identical code, each in its own asv run, half of them with another
    # process spinning on one CPU. Across runs nothing is a change; the
    # within-run Welch test on the same rows calls loaded against quiet one.
    import itertools

    history = load_history(AA_LOADED / "results")
    loaded = dict(json.loads((AA_LOADED / "runs.json").read_text(encoding="utf-8")))
    commits = history.commits()
    assert len(commits) == 16
    assert sum(loaded.values()) == 8
    tested = flagged_as_one_run = 0
    for base, head in itertools.pairwise(commits):
        base_side, head_side = ([p for p in history.points if p.commit == c] for c in (base, head))
        report = compare_points(base_side, head_side, history=history.points)
        warm = [r for r in report.rows if r.kind is Kind.TIME]
        assert len(warm) == 10
        for row in warm:
            assert row.warm_test is WarmTest.ACROSS_RUNS, row.comparison.reason
            assert row.verdict is Verdict.NOT_SIGNIFICANT, (base, head, row.comparison.reason)
        tested += len(warm)
        as_one_run = compare_points(_as_one_run(base_side), _as_one_run(head_side))
        flagged_as_one_run += sum(
            r.verdict in (Verdict.REGRESSION, Verdict.IMPROVEMENT) for r in as_one_run.rows
        )
    assert tested == 150
    assert flagged_as_one_run >= 5  # the rule before issue 29 would have flagged these


def test_a_slowdown_beyond_the_spread_between_runs_is_found(
    asv_writer: AsvResultsWriter,
) -> None:
    base, head = _separate_runs(asv_writer, 1.00, 1.30)
    rows = _warm_rows(asv_writer.root, base, head)
    assert [r.verdict for r in rows] == [Verdict.REGRESSION] * 2
    assert all("Holm p=" in r.comparison.reason for r in rows)


#: A run loaded for part of the time it measured (another job started): its
#: four rounds of 30 disagree, 1.2x to 4x the quiet level.
DISTURBED = [level for level in (1.2, 2.0, 3.0, 4.0) for _ in range(30)]


def _disturbed_rows(
    asv_writer: AsvResultsWriter, base: float | list[float], head: float | list[float]
) -> list[Any]:
    """Warm rows of base and head after RUN_LEVELS' quiet history, each its own run:
    a side is a quiet level, or the levels its samples were recorded at (value their median).
    """
    import datetime

    asv_writer.add_benchmark(TIME, params=ROWS, unit="seconds")
    asv_writer.write_meta()
    for i, level in enumerate([*RUN_LEVELS, base, head]):
        samples = None
        if isinstance(level, list):
            samples = {TIME: [[10e-6 * x for x in level], [20e-6 * x for x in level]]}
        value = sorted(level)[len(level) // 2] if isinstance(level, list) else level
        asv_writer.write_result(
            commit_hash(10 + i),
            1_000 * (i + 1),
            {TIME: [10e-6 * value, 20e-6 * value]},
            n_samples=120,
            samples=samples,
            started_at=ONE_RUN_START + datetime.timedelta(hours=i),
        )
    return _warm_rows(asv_writer.root, commit_hash(20), commit_hash(21))


def test_a_run_disturbed_while_it_measured_is_not_read_as_a_change(
    asv_writer: AsvResultsWriter,
) -> None:
    # Identical code. The base's run was loaded for part of it: its median is
    # 2.5x the head's. The history's spread alone calls that a significant
    # improvement; the base's own rounds say how little it knows.
    from jaxbench.analyse.stats import cross_run_p_value, round_medians

    rows = _disturbed_rows(asv_writer, DISTURBED, 1.00)
    assert [r.verdict for r in rows] == [Verdict.NOT_SIGNIFICANT] * 2, [
        r.comparison.reason for r in rows
    ]
    for row in rows:
        assert row.comparison.p_value is not None
        assert row.comparison.p_value > 0.01
        assert "and of each side's rounds (4 and 4)" in row.comparison.reason
    # without the base's rounds, the history's spread alone flags it
    history = [[10e-6 * level for level in RUN_LEVELS]]
    alone = cross_run_p_value(25e-6, 10e-6, history)
    assert alone < 1e-6
    with_rounds = cross_run_p_value(
        25e-6, 10e-6, history, base_rounds=round_medians([10e-6 * x for x in DISTURBED], 30)
    )
    assert with_rounds > 0.01


def test_two_runs_both_disturbed_are_not_read_as_a_change(
    asv_writer: AsvResultsWriter,
) -> None:
    # Identical code, base and head each measured while other jobs loaded the
    # machine (a fresh clone's make bench beside two review benches: Noise(256)
    # read 747 -> 371 us, 0.50x at p=0.0005, against a history measured quiet).
    # Both runs' rounds disagree alike, so neither stands for a typical run:
    # the history's own runs say what a typical run knows.
    from jaxbench.analyse.stats import cross_run_p_value, round_medians, rounds_variance

    half = [level / 2 for level in DISTURBED]  # the same disorder, half the level
    rows = _disturbed_rows(asv_writer, DISTURBED, half)
    assert [r.verdict for r in rows] == [Verdict.NOT_SIGNIFICANT] * 2, [
        r.comparison.reason for r in rows
    ]
    assert all(r.comparison.p_value is not None and r.comparison.p_value > 0.01 for r in rows)
    # the quieter side standing for a typical run (no typical rounds known) flags it
    history = [[10e-6 * level for level in RUN_LEVELS]]
    b_rounds = round_medians([10e-6 * x for x in DISTURBED], 30)
    h_rounds = round_medians([10e-6 * x for x in half], 30)
    assert b_rounds is not None
    assert h_rounds is not None
    quieter = cross_run_p_value(30e-6, 15e-6, history, base_rounds=b_rounds, head_rounds=h_rounds)
    assert quieter < 1e-4
    typical = rounds_variance([10e-6 * level for level in (1.00, 1.01, 0.99, 1.00)])
    both = cross_run_p_value(
        30e-6, 15e-6, history, base_rounds=b_rounds, head_rounds=h_rounds, typical_rounds=typical
    )
    assert both > 0.01
    # a typical run as disordered as these two adds nothing: never less strict than before
    assert (
        cross_run_p_value(
            30e-6, 15e-6, history, base_rounds=b_rounds, head_rounds=h_rounds, typical_rounds=1.0
        )
        == quieter
    )


def test_too_little_history_gives_no_p_value_but_the_command_that_does(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    base, head = _separate_runs(asv_writer, 1.00, 1.30, history=5)  # 5 < MIN_HISTORY
    rows = _warm_rows(asv_writer.root, base, head)
    assert [r.verdict for r in rows] == [Verdict.UNTESTED] * 2
    assert all(r.comparison.p_value is None for r in rows)
    assert rows[0].comparison.reason == (
        "beyond factor 1.05; separate runs, 5 other commits of history (6 needed): not tested"
    )
    assert main(["compare", base[:8], head[:8], "--results", str(asv_writer.root)]) == 0
    out = capsys.readouterr().out
    assert "base and head in separate runs" in out
    lines = out.splitlines()
    # moved, not tested: never counted as a change; its own line, said once, with the command
    assert lines[1] == "0 unchanged"
    command = (
        f"jaxbench ab --base-commit {base[:12]} --head-commit {head[:12]} --machine m1 "
        "--env virtualenv-py3.11"
    )
    assert (
        " ".join(out.split()).count(
            "Not tested: 2 warm times in separate runs with fewer than 6 other commits of history, "
            f"all moved (1.30x): {command} times them side by side."
        )
        == 1
    )
    assert "Warm times:" not in out  # none tested: the line above says it all
    assert out.count("jaxbench ab") == 1
    assert not re.search(r"\bchanged\b", out)


def _each_line_once(text: str) -> None:
    """No line of a compare's output is said twice (table rows aside)."""
    said = [line for line in text.splitlines() if line.strip() and not line.startswith(("|", " "))]
    assert len(said) == len(set(said)), [line for line in said if said.count(line) > 1]


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_each_thing_is_said_once(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    # separate runs with too little history: every warm time untested, some moved;
    # one first call moved beyond its measured spread
    base, head = _separate_runs(asv_writer, 1.00, 1.30, history=2)
    assert main(["compare", base[:8], head[:8], "--results", str(asv_writer.root),
                 "--format", fmt]) == 0  # fmt: skip
    out = capsys.readouterr().out
    _each_line_once(out)
    flat = " ".join(out.split())
    assert flat.count("jaxbench ab --base-commit") == 1
    assert flat.count("fewer than 6") == 1
    assert flat.count("Mann-Whitney") <= 1


def test_committed_history_table_fits_120_columns(capsys: pytest.CaptureFixture[str]) -> None:
    # This project's own results: two environments with 103-character names,
    # every commit measured in its own window (no two overlap).
    results = Path(__file__).resolve().parents[1] / "results"
    history = load_history(results)
    base, head = history.commits()[-2:]
    assert main(["compare", base[:8], head[:8], "--results", str(results)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 120
    long_env = max(history.env_names(), key=len)
    assert len(long_env) > 100
    assert sum(long_env in line for line in lines) == 1  # the full name once, as a header
    assert "== jax0.10.2 == virtualenv-py3.11-" in out
    assert "base and head in separate runs" in out
    main(["compare", base[:8], head[:8], "--results", str(results), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert long_env in doc["env_names"]
    assert {r["env_name"] for r in doc["rows"]} == set(doc["env_names"])
    assert doc["env_aliases"][long_env] == "jax0.10.2"
    assert doc["one_run"] == {env: False for env in doc["env_names"]}
    warm = [r for r in doc["rows"] if r["kind"] == "time" and r["warm_test"]]
    assert warm
    # the two commits were also timed side by side (results/<machine>/paired/)
    assert {r["warm_test"] for r in warm} == {"paired history"}


# -- the paired history (jaxbench pair-history) ----------------------------------


def _pair_file(
    root: Path,
    base: str,
    head: str,
    ratios: dict[str, float],
    *,
    env: str = "virtualenv-py3.11",
    seed: int = 0,
    noise: float = 0.002,
) -> None:
    """A paired file of ``base`` and ``head``, as ``jaxbench pair-history`` writes it:
    10 rounds of 5 samples a side, head / base of each ``params`` of TIME at ``ratios``."""
    import random

    from jaxbench.analyse.paired_history import estimate_pair
    from jaxbench.analyse.stats import DEFAULT_ALPHA, PAIRED_FACTOR
    from jaxbench.store.paired import PairedRun, write_paired

    rng = random.Random(seed)
    estimates = []
    for params, ratio in ratios.items():
        b = [10e-6 * (1 + rng.gauss(0, noise)) for _ in range(50)]
        h = [x * ratio * (1 + rng.gauss(0, noise)) for x in b]
        estimate = estimate_pair(TIME, (params,), b, h, per_round=5)
        assert estimate is not None
        estimates.append(estimate)
    run = PairedRun(
        machine="m1",
        env_name=env,
        base_commit=base,
        head_commit=head,
        per_round=5,
        factor=PAIRED_FACTOR,
        alpha=DEFAULT_ALPHA,
        date=0,
        estimates=tuple(estimates),
    )
    write_paired(root, run)


def _paired_doc(
    root: Path, base: str, head: str, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[int, dict[str, Any]]:
    status = main(
        ["compare", base[:8], head[:8], "--results", str(root), "--format", "json", *extra]
    )
    return status, json.loads(capsys.readouterr().out)


def test_a_pair_on_file_gives_the_verdict_not_the_separate_runs(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    # Identical code measured in separate runs with too little history: 1.30x
    # apart (the "3 changed (not tested)", 1.21x-1.35x). The paired
    # history timed the same two commits side by side: 1.00x.
    base, head = _separate_runs(asv_writer, 1.00, 1.30, history=2)
    _pair_file(asv_writer.root, base, head, {"'64'": 1.00, "'96'": 1.00}, noise=0.01)
    status, doc = _paired_doc(asv_writer.root, base, head, capsys)
    assert status == 0
    assert doc["summary"] == "2 unchanged"
    assert doc["not_tested"] is None
    assert doc["warm_tests"] == {"paired history": 2}
    for row in doc["rows"]:
        assert row["verdict"] == "not significant"
        interval = r"\[(0\.99|1\.00)x, (1\.00|1\.01)x\]"
        assert re.match(
            rf"paired history: 1\.00x {interval}, 10 rounds side by side", row["reason"]
        )
        assert "over the pair's 2 series; separate runs read 1.30x" in row["reason"]
        assert row["ratio"] == pytest.approx(1.0, abs=0.01)
        assert row["p_family"] >= row["p_value"]
    # the same two commits the other way round: the pair read backwards
    status, doc = _paired_doc(asv_writer.root, head, base, capsys)
    assert doc["warm_tests"] == {"paired history": 2}
    assert {r["verdict"] for r in doc["rows"]} == {"not significant"}
    assert "separate runs read 0.77x" in doc["rows"][0]["reason"]
    # text: the rows say where their verdict comes from, the footer how, once
    main(["compare", base[:8], head[:8], "--results", str(asv_writer.root)])
    out = capsys.readouterr().out
    assert out.splitlines()[1] == "2 unchanged"
    assert " ".join(out.split()).count("from the paired history") == 1
    assert "Not tested" not in out


def test_a_regression_the_pair_flagged_is_a_regression_with_the_pairs_holm_p(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    # Separate runs read no change (1.00x); side by side the head is 1.10x.
    base, head = _separate_runs(asv_writer, 1.00, 1.00, history=2)
    _pair_file(asv_writer.root, base, head, {"'64'": 1.10, "'96'": 1.00})
    runs = load_paired(asv_writer.root)
    (flagged,) = flagged_in_pair(runs[0])  # what the paired history's listing flags
    status, doc = _paired_doc(asv_writer.root, base, head, capsys)
    assert status == 1
    assert doc["summary"] == "1 regression (1 warm time), 1 unchanged"
    rows = {r["params"][0]: r for r in doc["rows"]}
    assert flagged.params == ("'64'",)
    assert rows["'64'"]["verdict"] == "regression"
    assert rows["'64'"]["category"] == "time"
    # the pair's own family (2 series), not compare's: p_family = 2 x the smaller p
    assert rows["'64'"]["p_family"] == pytest.approx(2 * rows["'64'"]["p_value"])
    assert "< 0.01 over the pair's 2 series and ratio beyond 1.02" in rows["'64'"]["reason"]
    assert rows["'96'"]["verdict"] == "not significant"
    # backwards, the flagged step is an improvement
    status, doc = _paired_doc(asv_writer.root, head, base, capsys)
    assert status == 0
    assert doc["summary"].startswith("1 improvement (1 warm time)")


def test_the_review_keeps_its_own_rounds(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    # compare --paired (after jaxbench ab): the rows are tested on their own
    # side-by-side rounds, whatever the paired history holds
    _write_pair(asv_writer)
    _pair_file(asv_writer.root, BASE, HEAD, {"'64'": 1.50, "'96'": 1.50})
    status, doc = _paired_doc(asv_writer.root, BASE, HEAD, capsys, "--paired", "6")
    assert status == 0
    warm = [r for r in doc["rows"] if r["kind"] == "time"]
    assert {r["warm_test"] for r in warm} == {"side by side"}
    assert not any("paired history" in r["reason"] for r in doc["rows"])
    # without --paired the pair on file decides
    status, doc = _paired_doc(asv_writer.root, BASE, HEAD, capsys)
    assert status == 1
    assert {r["warm_test"] for r in doc["rows"] if r["kind"] == "time"} == {"paired history"}


def test_a_pair_of_another_environment_or_series_is_not_used(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    base, head = _separate_runs(asv_writer, 1.00, 1.30, history=2)
    _pair_file(asv_writer.root, base, head, {"'64'": 1.00, "'96'": 1.00}, env="conda-py3.11")
    _, doc = _paired_doc(asv_writer.root, base, head, capsys)
    assert doc["warm_tests"] == {"not side by side": 2}
    # a pair that timed one series only (the other added to the suite later)
    shutil.rmtree(asv_writer.root / "m1" / "paired")
    _pair_file(asv_writer.root, base, head, {"'64'": 1.00})
    _, doc = _paired_doc(asv_writer.root, base, head, capsys)
    warm = {r["params"][0]: r["warm_test"] for r in doc["rows"]}
    assert warm == {"'64'": "paired history", "'96'": "not side by side"}
    assert doc["not_tested"].startswith(
        "Not tested: 1 warm time in separate runs with fewer than 6 other commits of history, "
        "it moved (1.30x): jaxbench ab"
    )


def test_a_chain_of_pairs_is_evidence_never_a_verdict(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    # commits 1..4 in separate runs; pairs (1,2), (2,3), (3,4) on file.
    first, *_ = _separate_runs(asv_writer, 1.00, 1.30, history=2)
    c = [commit_hash(10 + i) for i in range(4)]
    assert first == c[2]
    _pair_file(asv_writer.root, c[0], c[1], {"'64'": 1.00, "'96'": 1.10}, seed=1)
    _pair_file(asv_writer.root, c[1], c[2], {"'64'": 1.00, "'96'": 1.10}, seed=2)
    _pair_file(asv_writer.root, c[2], c[3], {"'64'": 1.00, "'96'": 1.10}, seed=3)
    status, doc = _paired_doc(asv_writer.root, c[0], c[3], capsys)
    rows = {r["params"][0]: r for r in doc["rows"]}
    assert doc["warm_tests"] == {"chained": 2}
    assert all(r["p_value"] is None for r in rows.values())  # no test, no verdict
    # 1.10 x 1.10 x 1.10 = 1.33x, its interval beyond the gate: moved, not tested
    assert rows["'96'"]["verdict"] == "moved, not tested"
    assert rows["'96'"]["ratio"] == pytest.approx(1.331, rel=0.01)
    assert rows["'96'"]["reason"].startswith("paired history: 1.33x [")
    assert "chained over 3 pairs: its interval lies beyond the gate 1.02" in rows["'96'"]["reason"]
    # 1.00x with a tight interval: within the gate
    assert rows["'64'"]["verdict"] == "unchanged", rows["'64'"]["reason"]
    assert status == 0  # nothing tested, nothing fails
    assert "regression" not in doc["summary"]
    assert doc["not_tested"].startswith(
        "Not tested: 2 warm times in separate runs with fewer than 6 other commits of history "
        "(2 with the paired history's chained ratio, evidence only), 1 of them moved (1.33x):"
    )
    # the interval of a chain: the steps' log half-widths in quadrature
    runs = load_paired(asv_writer.root)
    steps = [e for r in runs for e in r.estimates if e.params == ("'96'",)]
    half = math.sqrt(sum(((math.log(e.high) - math.log(e.low)) / 2) ** 2 for e in steps))
    product = math.prod(e.ratio for e in steps)
    main(["compare", c[0][:8], c[3][:8], "--results", str(asv_writer.root), "--format", "json"])
    row = next(r for r in json.loads(capsys.readouterr().out)["rows"] if r["params"] == ["'96'"])
    assert row["ratio"] == pytest.approx(product)
    low, high = (math.exp(math.log(product) + s * half) for s in (-1, 1))
    assert f"[{low:.2f}x, {high:.2f}x]" in row["reason"]
    # backwards: the inverse
    _, doc = _paired_doc(asv_writer.root, c[3], c[0], capsys)
    back = next(r for r in doc["rows"] if r["params"] == ["'96'"])
    assert back["ratio"] == pytest.approx(1 / product)
    # a gap (no pair (2,3)): no chain
    (asv_writer.root / "m1" / "paired" / f"{c[1][:8]}-{c[2][:8]}-virtualenv-py3.11.paired").unlink()
    _, doc = _paired_doc(asv_writer.root, c[0], c[3], capsys)
    assert doc["warm_tests"] == {"not side by side": 2}


def test_a_chain_too_wide_to_tell_is_inconclusive(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    c = [commit_hash(10 + i) for i in range(3)]
    _separate_runs(asv_writer, 1.00, 1.30, history=1)
    _pair_file(asv_writer.root, c[0], c[1], {"'64'": 1.00, "'96'": 1.00}, noise=0.05)
    _pair_file(asv_writer.root, c[1], c[2], {"'64'": 1.00, "'96'": 1.00}, seed=1, noise=0.05)
    _, doc = _paired_doc(asv_writer.root, c[0], c[2], capsys)
    for row in doc["rows"]:
        assert row["verdict"] == "inconclusive", row["reason"]
        assert "its interval reaches both sides of the gate 1.02" in row["reason"]
    assert doc["summary"] == "2 inconclusive, 0 unchanged"


def test_a_damaged_paired_file_is_one_line_exit_2(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    base, head = _separate_runs(asv_writer, 1.00, 1.30, history=2)
    _pair_file(asv_writer.root, base, head, {"'64'": 1.00, "'96'": 1.00})
    (path,) = (asv_writer.root / "m1" / "paired").iterdir()
    path.write_text(path.read_text()[:100])
    assert main(["compare", base[:8], head[:8], "--results", str(asv_writer.root)]) == 2
    line = _one_line_error(capsys)
    assert str(path) in line
    assert "run 'jaxbench pair-history' for that pair again" in line
