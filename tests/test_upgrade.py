"""``jaxbench upgrade``: one commit in two environments of the history (asv's own result files).

Two environments (standing for two jax versions) measured at the same
commits in one run, each warm time with 12 noisy samples: a dependency
that makes one workload 20 % slower in the head environment is named, and
nothing else; two environments whose figures are drawn alike flag nothing
(10 tries); an exact figure that changes (XLA's work) is named; bad input is
one line and exit 2.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from conftest import AsvResultsWriter, commit_hash
from jaxbench.cli import main

OLD, NEW = "virtualenv-py3.11-jax0.9.2", "virtualenv-py3.11-jax0.10.2"
FAST, SLOW = "workloads.Scan.time_warm", "workloads.Step.time_warm"
FLOPS = "workloads.Step.track_work_flops"
COMMITS = [commit_hash(i) for i in range(3)]


def _write(
    writer: AsvResultsWriter, rng: random.Random, slower: float = 1.0, flops: float = 1000.0
) -> None:
    for name, unit in ((FAST, "seconds"), (SLOW, "seconds"), (FLOPS, "flops")):
        writer.add_benchmark(name, unit=unit)
    writer.write_meta()

    def noisy(mean: float) -> list[list[float]]:
        return [[mean * rng.lognormvariate(0.0, 0.03) for _ in range(12)]]

    for i, commit in enumerate(COMMITS):
        for env, factor, work in ((OLD, 1.0, 1000.0), (NEW, slower, flops)):
            values = {FAST: 50e-6, SLOW: 200e-6 * factor, FLOPS: work}
            samples = {FAST: noisy(50e-6), SLOW: noisy(200e-6 * factor)}
            writer.write_result(commit, 1_000 * (i + 1), values, env_name=env, samples=samples)


def _upgrade(
    writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[int, dict[str, Any], str]:
    status = main(
        ["upgrade", "--base-env", "jax0.9.2", "--head-env", "jax0.10.2",
         "--results", str(writer.root), "--format", "json", *extra]
    )  # fmt: skip
    captured = capsys.readouterr()
    return status, json.loads(captured.out) if captured.out.strip() else {}, captured.err


def _flagged(doc: dict[str, Any]) -> list[str]:
    return sorted(r["benchmark"] for r in doc["rows"] if r["category"] is not None)


def test_a_dependency_that_slows_one_workload_is_named_and_nothing_else(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(asv_writer, random.Random(1), slower=1.2)
    status, doc, said = _upgrade(asv_writer, capsys)
    assert status == 1, said
    assert _flagged(doc) == [SLOW]
    assert f"{OLD} -> {NEW} at {COMMITS[-1][:12]}" in said  # the newest commit of both


def test_identical_environments_flag_nothing(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    for seed in range(10):
        writer = AsvResultsWriter(asv_writer.root.parent / f"aa{seed}")
        _write(writer, random.Random(100 + seed))
        status, doc, said = _upgrade(writer, capsys)
        assert (status, _flagged(doc)) == (0, []), (seed, said)


def test_a_change_in_xlas_work_is_named_at_the_commit_asked_for(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    _write(asv_writer, random.Random(2), flops=1500.0)
    status, doc, said = _upgrade(asv_writer, capsys, COMMITS[0][:8])
    assert status == 1, said
    assert _flagged(doc) == [FLOPS]
    assert f"at {COMMITS[0][:12]}" in said


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["--base-env", "jax0.8", "--head-env", "jax0.10.2"],
            "--base-env 'jax0.8': no environment",
        ),
        (["--base-env", "jax0", "--head-env", "jax0.10.2"], "is part of 2 environments' names"),
        (["--base-env", "jax0.9.2", "--head-env", "jax0.9.2"], "are the same environment"),
        (["--base-env", "jax0.9.2", "--head-env", "jax0.10.2", "ffff"], "no results for commit"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str], args: list[str], says: str
) -> None:
    _write(asv_writer, random.Random(3))
    assert main(["upgrade", *args, "--results", str(asv_writer.root)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("jaxbench: error: "), err
    assert says in err[0], err
