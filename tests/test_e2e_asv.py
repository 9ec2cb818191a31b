"""End to end: real asv over a throw-away git repository of this project.

One module-scoped fixture (:func:`run`) makes the repository of
``tests/e2e_repo.py`` (c1 as is, c2 slower by real extra work, c3 a no-op,
c4 a wrong answer), creates one asv virtualenv (jax 0.10.2; ~70 s, paid
once) and runs ``asv run --record-samples`` over the four commits. The tests
then read what asv wrote, with asv's own reader and with jaxbench's commands.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from asv.results import Results

from e2e_repo import ASV_BIN, ENV_NAME, MACHINE, E2eRepo, asv, asv_environ, make_repo, write_conf

pytestmark = pytest.mark.e2e

PROJECT = Path(__file__).resolve().parents[1]
PREDICT = "workloads.Predict"
FIGURES = "workloads.PredictFigures"
PARAMS = [["64"]]
FIRST_CALL = [
    "track_first_call_seconds",
    "track_trace_seconds",
    "track_lower_seconds",
    "track_compile_seconds",
    "track_first_execute_seconds",
]
ACCURACY = ["track_max_abs_error", "track_tolerance_used", "track_answer_unchecked"]
WORK = [
    "track_work_flops",
    "track_work_transcendentals",
    "track_work_bytes_accessed",
    "track_work_peak_memory_bytes",
    "track_work_temp_bytes",
    "track_work_argument_bytes",
    "track_work_output_bytes",
    "track_work_hlo_ops",
    "track_work_hlo_fusions",
]
#: What the workload adds to memory; the CPU reports no device statistics,
#: so asv records the device figure as skipped (NaN).
MEMORY = ["track_workload_peak_rss_bytes", "track_workload_device_peak_bytes"]
SKIPPED_ON_CPU = f"{FIGURES}.track_workload_device_peak_bytes"
ALL_BENCHMARKS = [
    f"{PREDICT}.time_warm",
    f"{PREDICT}.peakmem_call",
    *(f"{FIGURES}.{name}" for name in FIRST_CALL + ACCURACY + WORK + MEMORY),
    f"{FIGURES}.track_compiles_per_call",
]
UNITS = {
    "time_warm": "seconds",
    "peakmem_call": "bytes",
    "track_max_abs_error": "abs error",
    "track_tolerance_used": "fraction of tolerance",
    "track_answer_unchecked": "unchecked",
    "track_work_flops": "flops",
    "track_work_transcendentals": "ops",
    "track_work_hlo_ops": "ops",
    "track_work_hlo_fusions": "fusions",
    "track_compiles_per_call": "compiles/call",
    **{name: "seconds" for name in FIRST_CALL},
    **{name: "bytes" for name in WORK + MEMORY if "bytes" in name},
}
#: asv run over four commits: one environment (~70 s) plus ~10-30 s a commit.
RUN_TIMEOUT = 900


@dataclass(frozen=True)
class E2eRun:
    repo: E2eRepo
    benchmarks: dict[str, Any]
    asv_output: str

    def result(self, index: int) -> Results:
        return Results.load(str(self.repo.result_file(self.repo.commits[index])))

    def value(self, index: int, benchmark: str) -> float | None:
        values = self.result(index).get_result_value(benchmark, PARAMS)
        assert values is not None, benchmark
        assert len(values) == 1, (benchmark, values)
        value: float | None = values[0]
        return value


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> E2eRun:
    repo = make_repo(tmp_path_factory.mktemp("e2e") / "repo")
    hashes = repo.root / ".asv" / "hashes.txt"
    hashes.parent.mkdir()
    hashes.write_text("\n".join(repo.commits) + "\n", encoding="utf-8")
    asv(repo.root, ["machine", "--yes", "--machine", MACHINE], timeout=120)
    done = asv(
        repo.root,
        ["run", "--machine", MACHINE, "--record-samples", "--show-stderr", f"HASHFILE:{hashes}"],
        timeout=RUN_TIMEOUT,
        ok=(0, 2),  # 2: some benchmark failed (c4's wrong answer, on purpose)
    )
    benchmarks = json.loads((repo.results / "benchmarks.json").read_text(encoding="utf-8"))
    return E2eRun(repo, benchmarks, done.stdout + done.stderr)


def jaxbench(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed ``jaxbench`` command, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "jaxbench", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


# --- what asv recorded ---------------------------------------------------------------


def test_every_commit_has_a_results_file(run: E2eRun) -> None:
    for commit in run.repo.commits:
        path = run.repo.result_file(commit)
        assert path.is_file(), f"no results for {commit[:8]}:\n{run.asv_output[-4000:]}"
        assert Results.load(str(path)).commit_hash == commit


def test_c1_has_every_benchmark_with_units_and_samples(run: E2eRun) -> None:
    for name in ALL_BENCHMARKS:
        info = run.benchmarks[name]
        assert info["params"] == PARAMS
        assert info["unit"] == UNITS[name.rsplit(".", 1)[1]], name
        value = run.value(0, name)
        assert value is not None, name
        if name == SKIPPED_ON_CPU:
            assert math.isnan(value)
            continue
        assert math.isfinite(value), (name, value)
    assert run.value(0, f"{FIGURES}.track_answer_unchecked") == 0.0  # checked against NumPy
    assert run.value(0, f"{FIGURES}.track_compiles_per_call") == 0.0  # warm: no compile
    assert run.value(0, f"{PREDICT}.time_warm") > 0  # type: ignore[operator]
    assert run.value(0, f"{PREDICT}.peakmem_call") > 1e6  # type: ignore[operator]
    # the workload's own rise is far below the whole process's peak
    rise = run.value(0, f"{FIGURES}.track_workload_peak_rss_bytes")
    assert 0 <= rise < run.value(0, f"{PREDICT}.peakmem_call") / 4  # type: ignore[operator]
    samples = run.result(0).get_result_samples(f"{PREDICT}.time_warm", PARAMS)
    assert samples[0] is not None
    assert len(samples[0]) >= 10
    assert all(s > 0 for s in samples[0])


def test_wrong_answer_records_failures_never_a_time(run: E2eRun) -> None:
    assert run.value(3, f"{PREDICT}.time_warm") is None
    assert run.value(3, f"{PREDICT}.peakmem_call") is None
    for name in FIRST_CALL:
        assert run.value(3, f"{FIGURES}.{name}") is None, name
    tolerance_used = run.value(3, f"{FIGURES}.track_tolerance_used")
    assert tolerance_used is not None
    assert tolerance_used > 1
    samples = run.result(3).get_result_samples(f"{PREDICT}.time_warm", PARAMS)
    assert not any(samples)
    # the work figures are still measured: a wrong answer is not a build failure
    assert run.value(3, f"{FIGURES}.track_work_flops") is not None


def test_first_call_is_slower_than_a_warm_call(run: E2eRun) -> None:
    first = run.value(0, f"{FIGURES}.track_first_call_seconds")
    warm = run.value(0, f"{PREDICT}.time_warm")
    assert first is not None
    assert warm is not None
    assert first > warm


def test_extra_work_is_kept_by_xla(run: E2eRun) -> None:
    flops = [run.value(i, f"{FIGURES}.track_work_flops") for i in range(3)]
    assert flops[1] > 100 * flops[0]  # type: ignore[operator]
    assert flops[2] == flops[1]


# --- jaxbench on the recorded history -------------------------------------------------


def compare(run: E2eRun, base: int, head: int, *options: str) -> tuple[int, dict[str, Any]]:
    done = jaxbench(
        run.repo.root,
        "compare",
        run.repo.commits[base][:10],
        run.repo.commits[head][:10],
        "--format",
        "json",
        *options,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def rows_by_benchmark(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["benchmark"]: row for row in document["rows"]}


def test_compare_flags_the_slower_commit(run: E2eRun) -> None:
    status, document = compare(run, 0, 1)
    rows = rows_by_benchmark(document)
    assert status == 1
    warm = rows[f"{PREDICT}.time_warm"]
    assert warm["ratio"] > 2
    # One asv run over the four commits: whether c1's and c2's measuring
    # intervals overlap (jaxbench.analyse.runs) depends on how asv ordered
    # their rounds; either way the verdict follows the rule.
    if document["one_run"][ENV_NAME]:
        assert warm["warm_test"] == "one run"
        assert warm["verdict"] == "regression"
        assert warm["category"] == "time"
    else:  # separate runs, 2 other commits of history: no p-value, the command instead
        assert warm["warm_test"] == "not side by side"
        assert warm["verdict"] == "moved, not tested"
        assert "jaxbench ab --base-commit" in document["not_tested"]
        assert "moved" not in document["summary"]  # never counted as a change
    assert rows[f"{FIGURES}.track_work_flops"]["verdict"] == "regression"
    assert rows[f"{FIGURES}.track_work_flops"]["category"] == "work"


def test_compare_of_a_no_op_change_finds_no_regression(run: E2eRun) -> None:
    # c2 -> c3 changes the README only. With the default --fail-on (every
    # kind), nothing may fail: first-call figures have one value a side from
    # asv run, and warm times measured in separate runs with too little history
    # to know the spread between runs are not tested (docs/separate-runs.md),
    # so both are shown as "moved, not tested" at most.
    status, document = compare(run, 1, 2)
    assert status == 0, document["summary"]
    assert document["failing"] == 0
    for row in document["rows"]:
        assert row["verdict"] not in ("regression", "improvement", "failed"), row
        if row["verdict"] == "moved, not tested":
            assert row["kind"] in ("compile", "memory", "time"), row
        if row["kind"] == "time" and row["warm_test"] != "one run":
            assert row["p_value"] is None, row  # across runs: no p-value without history
    # the work figures are identical: no false alarm is possible there
    for name in WORK:
        row = rows_by_benchmark(document)[f"{FIGURES}.{name}"]
        assert row["verdict"] == "unchanged", row
        assert row["base"] == row["head"], row


def test_compare_flags_the_wrong_answer(run: E2eRun) -> None:
    status, document = compare(run, 2, 3)
    rows = rows_by_benchmark(document)
    assert status == 1
    assert rows[f"{PREDICT}.time_warm"]["verdict"] == "failed"
    assert rows[f"{FIGURES}.track_tolerance_used"]["verdict"] == "regression"
    assert rows[f"{FIGURES}.track_tolerance_used"]["category"] == "accuracy"


def test_regressions_names_the_slower_commit(run: E2eRun) -> None:
    done = jaxbench(
        run.repo.root,
        "regressions",
        "--results",
        str(run.repo.results),
        "--all",
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)["regressions"]
    c2 = run.repo.commits[1]
    # time_warm has only 3 measured points here (c4 fails): asv's weighted L1
    # fit (weights 2 / width of the 99 % interval) sometimes explains them by
    # one level when c1's interval is narrow, and then reports nothing even
    # for a 7x step. Seen both ways on this box; when it reports, c2 is named.
    warm = {r["bad_commit"] for r in found if r["benchmark"] == f"{PREDICT}.time_warm"}
    assert not warm or c2 in warm, warm
    work_at_c2 = {r["benchmark"] for r in found if r["bad_commit"] == c2 and r["kind"] == "work"}
    assert f"{FIGURES}.track_work_flops" in work_at_c2
    assert f"{FIGURES}.track_work_hlo_ops" in work_at_c2
    # c3 changed nothing the compiler sees
    c3 = run.repo.commits[2]
    assert not [r for r in found if r["bad_commit"] == c3 and r["kind"] == "work"]


def test_regressions_names_what_fails_at_c4_with_its_error(run: E2eRun, tmp_path: Path) -> None:
    """c4's wrong answer: asv wrote null for the warm time and the first-call figures;
    the listing groups them by cause, newly failing since c4, with the error line that
    ``asv run --show-stderr`` printed (--failing: every one), and --fail-on
    newly-failing exits 1."""
    log = tmp_path / "asv-run.log"
    log.write_text(run.asv_output, encoding="utf-8")
    argv = ["regressions", "--results", str(run.repo.results), "--asv-log", str(log)]
    done = jaxbench(run.repo.root, *argv, "--fail-on", "newly-failing")
    assert done.returncode == 1, done.stdout + done.stderr
    c3, c4 = run.repo.commits[2][:8], run.repo.commits[3][:8]
    lines = done.stdout.splitlines()
    # time_warm, peakmem_call, the five first-call figures and the workload's peak RSS
    assert lines[0].startswith("8 benchmarks fail at the newest commit (8 newly failing"), lines
    assert lines[1].startswith(f"newly failing since {c4} (last value at {c3})"), lines
    assert "ReferenceMismatch" in done.stdout  # the cause, on the group's line
    done = jaxbench(run.repo.root, *argv, "--failing")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    warm = next(line for line in lines if line.startswith(f"   {PREDICT}.time_warm(64)  "))
    assert "failed at 1 of 4 commits: jaxbench.errors.ReferenceMismatch: predict output" in warm
    for name in FIRST_CALL:
        assert any(line.startswith(f"   {FIGURES}.{name}(64)  failed at 1 of 4") for line in lines)
    assert "no error text" not in done.stdout  # asv cuts long names ("...oads.Predict..."): found


def test_hlo_diff_shows_the_extra_dot(run: E2eRun) -> None:
    c1, c2, c3, _c4 = run.repo.commits
    done = jaxbench(run.repo.root, "hlo-diff", c1, c2, "--results", str(run.repo.results))
    assert done.returncode == 0, done.stderr
    assert "1 of 1 benchmarks changed" in done.stdout
    histogram = {
        line.split()[0]: line.split()[1:]
        for line in done.stdout.splitlines()
        if line.startswith("  ") and "->" in line and len(line.split()) == 4
    }
    assert histogram["dot"] == ["1", "->", "2"]

    same = jaxbench(run.repo.root, "hlo-diff", c2, c3, "--results", str(run.repo.results))
    assert same.returncode == 0, same.stderr
    assert "0 of 1 benchmarks changed" in same.stdout
    assert "no HLO change" in same.stdout


def test_publish_writes_the_site_and_our_regressions_page(run: E2eRun) -> None:
    done = jaxbench(run.repo.root, "publish")
    assert done.returncode == 0, done.stdout + done.stderr
    html = run.repo.root / "html"
    assert (html / "index.html").is_file()
    page = (html / "jaxbench" / "regressions.html").read_text(encoding="utf-8")
    assert run.repo.commits[1][:8] in page
    assert "track_work_flops" in page  # the work step at c2 (time_warm: see above)


def test_asv_check_passes_on_the_projects_benchmarks() -> None:
    done = subprocess.run(
        [str(ASV_BIN), "check", "--python=same"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No problems found" in done.stdout


# --- an interrupted run ------------------------------------------------------------------


def _wait_for(predicate: Any, proc: subprocess.Popen[str], log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if proc.poll() is not None:
            pytest.fail(f"asv ended before the interruption:\n{log.read_text()[-4000:]}")
        if time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail(f"timed out waiting:\n{log.read_text()[-4000:]}")
        time.sleep(0.2)


def test_killed_run_leaves_earlier_results_intact_and_resumes(run: E2eRun) -> None:
    """SIGKILL asv in the middle of a commit; the results on disk are left as they were, and
    --skip-existing then measures only that commit."""
    root = run.repo.root
    conf = root / ".asv-interrupt.conf.json"
    # a results dir of its own, the environments of the main run
    write_conf(conf, results_dir="results-interrupt", env_dir=".asv/env")
    results = root / "results-interrupt"
    first, second = run.repo.commits[0], run.repo.commits[2]
    # an earlier run's results: the first commit as the main run measured it
    (results / MACHINE).mkdir(parents=True)
    shutil.copy2(run.repo.results / "benchmarks.json", results / "benchmarks.json")
    for measured in (run.repo.result_file(first), run.repo.results / MACHINE / "machine.json"):
        shutil.copy2(measured, results / MACHINE / measured.name)
    first_file = run.repo.result_file(first, results)
    before = first_file.read_bytes()
    mtime = first_file.stat().st_mtime_ns
    hashes = root / ".asv" / "two.txt"
    hashes.write_text(f"{first}\n{second}\n", encoding="utf-8")
    command = [
        str(ASV_BIN),
        "--config",
        str(conf),
        "run",
        "--machine",
        MACHINE,
        "--record-samples",
        "--skip-existing",
    ]
    log = root / ".asv" / "interrupted.log"
    with log.open("w", encoding="utf-8") as out:
        proc = subprocess.Popen(
            [*command, f"HASHFILE:{hashes}"],
            cwd=root,
            env=asv_environ(),
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its own process group, killed whole below
        )
        try:
            header = f"commit {second[:8]}"

            def measuring_second() -> bool:
                text = log.read_text(encoding="utf-8")
                return header in text and PREDICT in text.split(header, 1)[1]

            _wait_for(measuring_second, proc, log, timeout=300)
            os.killpg(proc.pid, signal.SIGKILL)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert f"commit {first[:8]}" not in log.read_text(encoding="utf-8")  # on disk: skipped

    second_file = run.repo.result_file(second, results)
    assert first_file.read_bytes() == before
    json.loads(before)
    assert not second_file.exists()  # asv saves a commit's file only when it is done

    done = subprocess.run(
        [*command, f"HASHFILE:{hashes}"],
        cwd=root,
        env=asv_environ(),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"commit {first[:8]}" not in done.stdout  # nothing measured again
    assert first_file.read_bytes() == before
    assert first_file.stat().st_mtime_ns == mtime
    resumed = Results.load(str(second_file))
    assert set(resumed.get_all_result_keys()) == set(ALL_BENCHMARKS)
    for name in ALL_BENCHMARKS:
        assert resumed.get_result_value(name, PARAMS)[0] is not None, name
    shutil.rmtree(results)
