"""``jaxbench first-call``: real worker processes over a tiny asv suite (no jax needed).

The suite's ``setup_cache`` stands in for the figures process: it sleeps
``DELAY`` seconds and reports how long that took, as a first call would
report its compile time. Base and head differ only in ``DELAY``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import machine_alone
from jaxbench.commands.first_call import kept_values, paired_values

#: some tests take the machine alone while they time (tests/machine_alone.py)
pytestmark = pytest.mark.alone

SUITE = """\
import os
import random
import time

DELAY = {delay}
MEMORY = {memory}
WRONG = {wrong}


class ToyFigures:
    params = [[1, 2]]
    param_names = ["n"]

    def setup_cache(self):
        start = time.perf_counter()
        time.sleep(DELAY)
        return time.perf_counter() - start

    def setup(self, cache, n):
        if WRONG:  # as a jaxbench suite's figures whose answer check fails
            raise ValueError("the answer is outside its tolerance")
        self.value = cache * n

    def track_compile_seconds(self, cache, n):
        return self.value

    def track_trace_seconds(self, cache, n):
        if n == 2:
            raise NotImplementedError("no trace stage at n=2")
        return self.value / 10

    def track_max_abs_error(self, cache, n):  # not a first-call figure: left alone
        return 0.0

    def track_workload_peak_rss_bytes(self, cache, n):
        # what a workload adds to a fresh process: pages of noise around MEMORY;
        # asked for, the worker marks this process as a figures process
        assert os.environ["JAXBENCH_FIGURES_PROCESS"].endswith("benchmarks")
        return float(MEMORY + random.randrange(64) * 4096)
"""


MiB = 1024 * 1024


def _suite(root: Path, delay: float, memory: int, wrong: bool = False) -> Path:
    root.mkdir(parents=True)
    (root / "__init__.py").write_text("", encoding="utf-8")
    toy = SUITE.format(delay=delay, memory=memory, wrong=wrong)
    (root / "toy.py").write_text(toy, encoding="utf-8")
    return root


def _jaxbench(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jaxbench", *(str(a) for a in args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _review(
    tmp_path: Path,
    base_delay: float,
    head_delay: float,
    base_memory: int = 6 * MiB,
    head_memory: int = 6 * MiB,
    head_wrong: bool = False,
) -> tuple[int, dict[str, Any]]:
    base = _suite(tmp_path / "base" / "benchmarks", base_delay, base_memory)
    head = _suite(tmp_path / "head" / "benchmarks", head_delay, head_memory, head_wrong)
    results = tmp_path / "results"
    with machine_alone.alone():  # it times two sides whose verdict the test asserts
        done = _jaxbench(
            "first-call", "--base-commit", "a" * 40, "--head-commit", "b" * 40,
            "--base-benchmarks", base, "--head-benchmarks", head, "--machine", "m", "--env", "e",
            "--results", results, "--rounds", "5", cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "3 benchmark(s), 5 rounds a side" in done.stderr
    files = [results / "m" / f"{c * 8}-e.json" for c in "ab"]
    done = _jaxbench("compare", *files, "--format", "json", cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def _rows(doc: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["benchmark"].rsplit(".", 1)[-1], r["params"][0]): r for r in doc["rows"]}


@pytest.mark.slow
def test_a_slower_first_call_is_caught_pair_by_pair(tmp_path: Path) -> None:
    status, doc = _review(tmp_path, 0.02, 0.06)
    rows = _rows(doc)
    compile_1 = rows[("track_compile_seconds", "1")]
    assert compile_1["verdict"] == "regression"
    assert compile_1["category"] == "compile"
    assert compile_1["n_base"] == compile_1["n_head"] == 5
    assert "paired t over 5 fresh-process pairs" in compile_1["reason"]
    assert compile_1["ratio"] == pytest.approx(3.0, rel=0.3)
    assert rows[("track_trace_seconds", "2")]["verdict"] == "skipped"
    assert status == 1


@pytest.mark.slow
def test_more_memory_is_caught_pair_by_pair_and_a_page_of_noise_is_not(tmp_path: Path) -> None:
    status, doc = _review(tmp_path, 0.02, 0.02, 6 * MiB, 38 * MiB)
    rows = _rows(doc)
    for n in ("1", "2"):
        memory = rows[("track_workload_peak_rss_bytes", n)]
        assert memory["verdict"] == "regression", memory
        assert memory["category"] == "memory"
        assert "paired t over 5 fresh-process pairs" in memory["reason"]
        assert "median difference beyond 1 MiB" in memory["reason"]
    assert status == 1
    # 768 KiB more (noise: 0 to 252 KiB a process): significant pair by pair,
    # but the difference never reaches the 1 MiB resolution
    status, doc = _review(tmp_path / "small", 0.02, 0.02, 6 * MiB, 6 * MiB + 192 * 4096)
    memory = _rows(doc)[("track_workload_peak_rss_bytes", "1")]
    assert memory["verdict"] == "not significant", memory
    assert "but median difference or ratio within" in memory["reason"], memory
    assert status == 0


def test_a_head_that_fails_every_round_leaves_the_base_values_standing(tmp_path: Path) -> None:
    status, doc = _review(tmp_path, 0.02, 0.02, head_wrong=True)
    rows = _rows(doc)
    for key in [("track_compile_seconds", "1"), ("track_workload_peak_rss_bytes", "2")]:
        row = rows[key]
        # the head failed, the base did not: "now failing" with the base's value
        # kept (before: both sides written as failed, "still failing")
        assert row["verdict"] == "failed", row
        assert row["base"] is not None, row
        assert row["base"] > 0, row
        assert row["head"] is None, row
    assert rows[("track_compile_seconds", "1")]["base"] == pytest.approx(0.02, rel=0.5)
    assert status == 1
    base_file = json.loads((tmp_path / "results" / "m" / f"{'a' * 8}-e.json").read_text())
    compile_result = base_file["results"]["toy.ToyFigures.track_compile_seconds"]
    assert compile_result[0][0] is not None  # asv's result column: the base's value stands


@pytest.mark.slow
def test_identical_suites_pass(tmp_path: Path) -> None:
    status, doc = _review(tmp_path, 0.03, 0.03)
    assert status == 0, doc["summary"]
    for row in doc["rows"]:
        assert row["verdict"] in ("not significant", "skipped"), row


def test_a_suite_of_plain_time_benchmarks_stops_after_one_round_in_one_line(
    tmp_path: Path,
) -> None:
    """No first-call benchmark (an asv suite not written with jax_suite): one round
    shows it, then one line and exit 2, nothing written."""
    suites = []
    for side in ("base", "head"):
        root = tmp_path / side / "benchmarks"
        root.mkdir(parents=True)
        (root / "__init__.py").write_text("", encoding="utf-8")
        (root / "plain.py").write_text("def time_sum():\n    sum(range(100))\n", "utf-8")
        suites.append(root)
    done = _jaxbench(
        "first-call", "--base-commit", "a" * 40, "--head-commit", "b" * 40,
        "--base-benchmarks", suites[0], "--head-benchmarks", suites[1], "--machine", "m",
        "--env", "e", "--results", tmp_path / "results", "--rounds", "5", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    said = done.stderr.strip().splitlines()
    assert said[-1].startswith("jaxbench: error: no first-call benchmark"), said
    assert "is it a jaxbench suite (jax_suite)?" in said[-1]
    assert "round 1/1 (100 %)" in done.stderr, done.stderr  # one round, not five
    assert not (tmp_path / "results").exists()


def test_pairs_drop_a_round_that_failed_on_either_side() -> None:
    nan = float("nan")
    assert paired_values([1.0, None, 3.0, 4.0], [1.5, 2.0, nan, 4.5]) == (
        [1.0, 4.0],
        [1.5, 4.5],
        "",
    )
    assert paired_values([nan, nan], [nan, nan]) == ([], [], "skip")
    assert paired_values([None, None], [1.0, 2.0]) == ([], [], "failed")


def test_a_side_that_failed_every_round_leaves_the_other_sides_values_alone() -> None:
    assert kept_values([0.1, 0.2, None], [None, None, None]) == ([0.1, 0.2], [], "failed")
    assert kept_values([None, None], [0.3, 0.4]) == ([], [0.3, 0.4], "failed")
    # both sides gave values, never in the same round: no pair, and no side to blame
    assert kept_values([0.1, None], [None, 0.3]) == ([], [], "failed")
    assert kept_values([1.0, 2.0], [1.5, None]) == ([1.0], [1.5], "")


def test_a_missing_benchmark_directory_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = _jaxbench(
        "first-call",
        "--base-commit",
        "a" * 40,
        "--head-commit",
        "b" * 40,
        "--benchmarks",
        tmp_path / "nowhere",
        "--machine",
        "m",
        "--env",
        "e",
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "no such benchmark directory" in done.stderr


def _sequential(tmp_path: Path, base_delay: float, head_delay: float) -> str:
    base = _suite(tmp_path / "base" / "benchmarks", base_delay, 6 * MiB)
    head = _suite(tmp_path / "head" / "benchmarks", head_delay, 6 * MiB)
    with machine_alone.alone():  # it times two sides and the test asserts when they settle
        done = _jaxbench(
            "first-call", "--base-commit", "a" * 40, "--head-commit", "b" * 40,
            "--base-benchmarks", base, "--head-benchmarks", head, "--machine", "m", "--env", "e",
            "--results", tmp_path / "results", "--rounds", "7", "--min-rounds", "3", cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stderr


@pytest.mark.slow
def test_rounds_stop_once_every_figure_is_settled_and_a_change_gets_them_all(
    tmp_path: Path,
) -> None:
    """Identical sides stop before the 7 rounds (at the first look where every figure is
    settled: 3 rounds on a quiet machine, a later look when the other test process's
    bursts widen the first); a change runs every round."""
    said = _sequential(tmp_path / "same", 0.03, 0.03)
    settled = re.search(r"(\d+) rounds a side \(every figure settled after \1 rounds\)", said)
    assert settled is not None, said
    assert 3 <= int(settled.group(1)) < 7, said
    said = _sequential(tmp_path / "slower", 0.02, 0.06)
    assert "7 rounds a side in" in said, said


def test_min_rounds_below_the_paired_tests_least_is_one_line_and_exit_2(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "benchmarks", 0.01, 6 * MiB)
    done = _jaxbench(
        "first-call", "--base-commit", "a" * 40, "--head-commit", "b" * 40,
        "--benchmarks", suite, "--machine", "m", "--env", "e", "--min-rounds", "2", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "--min-rounds 2: the paired test needs 3 rounds" in done.stderr
