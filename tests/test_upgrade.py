"""``jaxbench upgrade``: one commit in two environments of the matrix.

``--from-history`` on asv's own result files: two environments (standing
for two jax versions) measured at the same commits in one run, each warm
time with 12 noisy samples: a dependency that makes one workload 20 %
slower in the head environment is named, and nothing else; two
environments whose figures are drawn alike flag nothing (10 tries); an
exact figure that changes (XLA's work) is named; bad input is one line and
exit 2.

Measured (``bench/bench_upgrade.py``'s project: a copy of this project whose
suite runs one workload through a local dependency, ``jxb-slowdep``, in three
versions): 1.0 -> 1.1 (two more layers, 20 % more work, the answer kept)
names that workload only; 1.0 -> 2.0 (the same code) flags nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import machine_alone
from conftest import AsvResultsWriter, commit_hash
from jaxbench.cli import main
from jaxbench.errors import UsageError
from jaxbench.jobs.upgrade import (
    NothingToCompare,
    Pin,
    changed_packages,
    parse_pin,
    pinned_matrix,
)
from jaxbench.render.env_names import envs_compared
from jaxbench.render.upgrades import UPGRADES_PAGE
from jaxbench.store.asv_env import AsvEnv
from jaxbench.store.upgrades import UpgradeRecord, load_upgrades, write_upgrade

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import bench_upgrade

import e2e_repo
import test_browser

#: some tests take the machine alone while they time (tests/machine_alone.py)
pytestmark = pytest.mark.alone

#: A measured upgrade of the tests' size: its rounds bend to it (the steps are as a real
#: upgrade's).
BUDGET = "30s"

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
        ["upgrade", "--from-history", "--base-env", "jax0.9.2", "--head-env", "jax0.10.2",
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
    assert main(["upgrade", "--from-history", *args, "--results", str(asv_writer.root)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("jaxbench: error: "), err
    assert says in err[0], err


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--base-env", "jax0.9.2", "--head-env", "jax0.10.2"], "no such file"),
        (
            ["--from-history", "-b", "Step", "--base-env", "jax0.9.2", "--head-env", "jax0.10.2"],
            "with --from-history every benchmark is read",
        ),
        (["--base-env", "a", "--head-env", "b", "--budget", "soon"], "is not a duration"),
    ],
)
def test_bad_input_to_the_measured_upgrade_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], says: str
) -> None:
    config = tmp_path / "asv.conf.json"
    with pytest.raises(SystemExit) if "--budget" in args else contextlib.nullcontext():
        status = main(["upgrade", *args, "--config", str(config)])
        assert status == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 or "usage:" in err[0], err
    assert says in err[-1], err
    assert not (tmp_path / ".asv").exists()  # nothing written


# --- measured: a real project, real asv environments, a dependency in two versions ------


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> bench_upgrade.UpgradeRepo:
    repo = bench_upgrade.make_upgrade_repo(tmp_path_factory.mktemp("upgrade") / "project")
    # asv builds the matrix's environments (jxb-slowdep 1.0, 1.1, 2.0) here, beside the
    # other test process: the upgrades below find them built and take the machine
    # alone only to measure
    e2e_repo.asv_setup(repo.root, timeout=900, environ=repo.environ())
    return repo


@dataclasses.dataclass(frozen=True)
class Measured:
    """The planted upgrade (jxb-slowdep 1.0 -> 1.1), what it left, and the A/A one (1.0 -> 2.0)."""

    planted: bench_upgrade.Try
    planted_comment: str
    #: the project's files under results/ after the planted upgrade, and its verdicts kept
    planted_kept: tuple[Path, ...]
    planted_records: tuple[UpgradeRecord, ...]
    aa: bench_upgrade.Try


@pytest.fixture(scope="module")
def measured(project: bench_upgrade.UpgradeRepo) -> Measured:
    # both time two environments side by side: the machine theirs alone while they time
    with machine_alone.handed_over():
        planted = bench_upgrade.upgrade(
            project, "--base-env", "slowdep1.0", "--head", "jxb-slowdep==1.1", budget=BUDGET,
            kind="test",
        )  # fmt: skip
        comment = (project.root / ".asv" / "upgrade" / "comment.md").read_text(encoding="utf-8")
        results = project.root / "results"
        kept = tuple(p.relative_to(project.root) for p in results.rglob("*") if p.is_file())
        records = tuple(load_upgrades(results))
        aa = bench_upgrade.upgrade(
            project, "--base-env", "slowdep1.0", "--head-env", "slowdep2.0", budget=BUDGET,
            kind="test",
        )  # fmt: skip
    return Measured(planted, comment, kept, records, aa)


@pytest.mark.e2e
def test_a_dependency_s_new_version_that_slows_one_workload_is_named_and_nothing_else(
    project: bench_upgrade.UpgradeRepo, measured: Measured
) -> None:
    """``--head PACKAGE==VERSION``: the base environment with the dependency at 1.1."""
    done = measured.planted
    assert done.status == 1, done.stderr[-4000:]
    assert done.flagged, done.document.get("summary")
    assert all(name.startswith("dep.Deep") for name in done.flagged), done.flagged
    # XLA's work is exact (the warm time's +20 % needs more rounds than the tests' budget)
    assert "dep.DeepFigures.track_work_flops" in done.flagged
    flops = next(r for r in done.document["rows"] if r["benchmark"].endswith("track_work_flops")
                 and r["benchmark"].startswith("dep.Deep"))  # fmt: skip
    assert flops["head"] / flops["base"] == pytest.approx(1.2, rel=0.01), flops
    assert done.document["head_env_name"].endswith(
        "slowdep1.1-XLA_FLAGS--xla_force_host_platform_device_count=4"
    )
    warm = next(r for r in done.document["rows"] if r["benchmark"] == "dep.Deep.time_warm")
    assert "paired t over" in warm["reason"], warm  # timed side by side
    comment = measured.planted_comment
    title = r"^### jaxbench: slowdep1\.0 \(base\) vs slowdep1\.1 \(head\) at [0-9a-f]{12}$"
    assert re.search(title, comment, re.MULTILINE), comment[:600]
    assert re.search(r"HLO diff .*: 1 of 2 benchmarks changed", comment), comment[-2000:]
    # asv's history is left alone; the verdict is kept for the published site
    kept = measured.planted_kept
    assert [p.parent for p in kept] == [Path("results/upgrade/upgrades")], kept
    (record,) = measured.planted_records
    assert (record.title, record.status) == ("jxb-slowdep 1.0 -> 1.1", 1)
    assert not list(project.root.glob(".asv.conf.*.json"))  # its copies of the config are gone


@pytest.mark.e2e
def test_two_environments_of_identical_code_flag_nothing(measured: Measured) -> None:
    """1.0 -> 2.0: another version of the same code (an A/A upgrade)."""
    done = measured.aa
    assert (done.status, done.flagged) == (0, ()), done.stderr[-4000:]
    warm = [r for r in done.document["rows"] if r["benchmark"].endswith(".time_warm")]
    assert len(warm) == 2, done.document["summary"]
    assert all("paired t over" in r["reason"] for r in warm), warm  # tested, side by side


def test_the_same_version_as_the_base_is_nothing_to_compare(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A scheduled try of the newest jax when the matrix already pins it: exit 0, said."""
    root = tmp_path / "p"
    root.mkdir()
    conf = {"version": 1, "project": "p", "repo": ".", "environment_type": "virtualenv",
            "pythons": ["3.11"], "matrix": {"req": {"jax": ["0.10.2"]}}}  # fmt: skip
    (root / "asv.conf.json").write_text(json.dumps(conf), encoding="utf-8")
    status = main(["upgrade", "--head", "jax==0.10.2", "--config", str(root / "asv.conf.json")])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert "already has jax==0.10.2: nothing to compare" in captured.out
    assert not list(root.glob(".asv.conf.*.json"))


# --- the pure parts of --head PACKAGE==VERSION ---------------------------------------------


def _config(root: Path) -> Path:
    matrix = {
        "req": {"jax": ["0.9.2", "0.10.2"], "optax": ["0.2.8"]},
        "env": {"XLA_FLAGS": ["--xla_force_host_platform_device_count=4"]},
    }
    conf = {"version": 1, "project": "p", "repo": ".", "environment_type": "virtualenv",
            "pythons": ["3.11"], "env_dir": ".asv/env", "matrix": matrix}  # fmt: skip
    root.mkdir(parents=True, exist_ok=True)
    (root / "asv.conf.json").write_text(json.dumps(conf), encoding="utf-8")
    return root / "asv.conf.json"


def test_a_pin_is_one_package_at_one_version() -> None:
    assert parse_pin(" jax==0.11.0 ", "--head") == Pin("jax", "0.11.0")
    assert str(parse_pin("jax-metal==0.1.1.post2", "--head")) == "jax-metal==0.1.1.post2"
    for bad in ("jax", "jax>=0.10", "jax==0.10,<1", "==0.10", "jax==0.10 jaxlib==0.10"):
        with pytest.raises(UsageError, match="give one package pinned to one version"):
            parse_pin(bad, "--head")


def test_the_head_is_the_newest_jax_s_environment_with_the_package_pinned_anew(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path / "p")
    with pinned_matrix(config, Pin("jax", "0.11.0"), None, None) as (copy, base, head):
        assert copy.parent == config.parent
        assert copy.is_file()
        matrix = json.loads(copy.read_text(encoding="utf-8"))["matrix"]
        assert matrix["req"] == {"jax": ["0.10.2", "0.11.0"], "optax": ["0.2.8"]}
        assert "jax0.10.2" in base
        assert "optax0.2.8" in base
        assert "XLA_FLAGS" in base
        assert head == base.replace("jax0.10.2", "jax0.11.0")
    assert not copy.exists()
    with pinned_matrix(config, Pin("jax", "0.11.0"), Pin("jax", "0.8.0"), "jax0.9.2") as (
        copy,
        base,
        head,
    ):
        assert "jax0.8.0" in base
        assert "jax0.11.0" in head


@pytest.mark.parametrize(
    ("head", "base", "base_env", "says"),
    [
        ("optax==0.3.0", "jax==0.9.2", None, "pin different packages"),
        ("equinox==0.13.0", None, None, "does not pin equinox; give the version"),
        ("jax==0.10.2", "jax==0.10.2", None, "base and head both pin jax==0.10.2"),
        ("jax==0.11.0", None, "jax0.8", "no environment of asv.conf.json's matrix"),
    ],
)
def test_pins_that_cannot_be_compared_are_one_line(
    tmp_path: Path, head: str, base: str | None, base_env: str | None, says: str
) -> None:
    config = _config(tmp_path / "p")
    pins = parse_pin(head, "--head"), None if base is None else parse_pin(base, "--base")
    with pytest.raises(UsageError, match=says), pinned_matrix(config, *pins, base_env):
        pass
    assert [p.name for p in config.parent.iterdir()] == ["asv.conf.json"]


def test_the_base_s_own_version_is_nothing_to_compare(tmp_path: Path) -> None:
    config = _config(tmp_path / "p")
    with (
        pytest.raises(NothingToCompare, match=re.escape("already has jax==0.10.2")),
        pinned_matrix(config, Pin("jax", "0.10.2"), None, None),
    ):
        pass


@pytest.mark.parametrize(
    ("base", "head", "expected"),
    [
        ("virtualenv-py3.11-jax0.9.2-optax0.2.8", "virtualenv-py3.11-jax0.10.2-optax0.2.8",
         ("jax0.9.2", "jax0.10.2")),
        ("a-x", "a-x-b", ("a-x", "a-x-b")),  # "" beside "b": no alias tells them apart
    ],
)  # fmt: skip
def test_two_environments_are_named_by_what_the_other_lacks(
    base: str, head: str, expected: tuple[str, str]
) -> None:
    assert envs_compared(base, head) == expected


# --- the verdict kept for the published history ----------------------------------------


def _record(commit: str, doc: dict[str, Any], status: int) -> UpgradeRecord:
    return UpgradeRecord(
        machine="gha-upgrade",
        commit=commit,
        base_env=OLD,
        head_env=NEW,
        changed=(("jax", "0.9.2", "0.10.2"), ("jaxlib", "0.9.2", "0.10.2")),
        date=1_780_000_000_000,
        status=status,
        compare=doc,
    )


def test_a_kept_verdict_reads_back_as_written(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _write(asv_writer, random.Random(1), slower=1.2)
    status, doc, _ = _upgrade(asv_writer, capsys)
    record = _record(COMMITS[-1], doc, status)
    path = write_upgrade(tmp_path / "results", record)
    assert path.parent == tmp_path / "results" / "gha-upgrade" / "upgrades"
    assert load_upgrades(tmp_path / "results") == [record]
    assert record.title == "jax 0.9.2 -> 0.10.2, jaxlib 0.9.2 -> 0.10.2"
    # the same commit and environments measured again replace the file
    assert write_upgrade(tmp_path / "results", dataclasses.replace(record, status=0)) == path
    assert [r.status for r in load_upgrades(tmp_path / "results")] == [0]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: "{not json", "not a readable upgrade file"),
        (lambda d: json.dumps(dict(d, jaxbench_upgrade_format=9)), "newer than this jaxbench"),
        (lambda d: json.dumps({k: v for k, v in d.items() if k != "commit"}), "field 'commit'"),
        (lambda d: json.dumps(dict(d, changed=[["jax", 1]])), "field 'changed'"),
    ],
)
def test_a_bad_kept_verdict_stops_publish_in_one_line(
    tmp_path: Path, edit: Any, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    history = test_browser.make_history(tmp_path)
    path = write_upgrade(tmp_path / "results", _record(history.commits[-1], {"rows": []}, 0))
    path.write_text(edit(json.loads(path.read_text())))
    assert main(["publish", "--config", str(history.config)]) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert str(path) in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert not history.html_dir.exists()  # nothing half-written


def test_the_packages_that_differ_name_the_upgrade() -> None:
    base = AsvEnv("a", "", None, requirements=(("jax", "0.9.2"), ("optax", "0.2.8")))
    head = AsvEnv("b", "", None, requirements=(("jax", "0.10.2"), ("optax", "0.2.8"), ("x", "")))
    assert changed_packages(base, head) == (("jax", "0.9.2", "0.10.2"),)
    assert changed_packages(base, base) == ()


@pytest.mark.browser
def test_a_kept_verdict_has_its_page_in_the_published_history(
    asv_writer: AsvResultsWriter, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A page of the published site: "jax 0.9.2 -> 0.10.2 at <commit>", the regression first."""
    _write(asv_writer, random.Random(1), slower=1.2)
    status, doc, _ = _upgrade(asv_writer, capsys)
    assert status == 1
    history = test_browser.make_history(tmp_path)
    commit = history.commits[-1]
    write_upgrade(tmp_path / "results", _record(commit, doc, status))
    assert main(["regressions", "--results", str(tmp_path / "results")]) == 0  # left alone
    assert main(["publish", "--config", str(history.config)]) == 0
    index = (history.html_dir / "index.html").read_text(encoding="utf-8")
    assert f'<a href="{UPGRADES_PAGE}">Upgrades (jaxbench)</a>' in index
    if not test_browser.CHROMIUM.exists():
        pytest.skip(f"no {test_browser.CHROMIUM}: install it with 'apt-get install -y chromium'")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(test_browser.CHROMIUM), args=test_browser.CHROMIUM_ARGS
        )
        try:
            tab = browser.new_page()
            errors: list[str] = []
            tab.on("pageerror", lambda exc: errors.append(str(exc)))
            tab.goto((history.html_dir / UPGRADES_PAGE).as_uri())
            title = tab.locator("section.upgrade h2")
            assert title.count() == 1
            assert title.inner_text() == (
                f"jax 0.9.2 -> 0.10.2, jaxlib 0.9.2 -> 0.10.2 at {commit[:8]}"
            )
            first = tab.locator("section.upgrade tbody tr").first
            cells = first.locator("td").all_inner_texts()
            slow = next(r for r in doc["rows"] if r["benchmark"] == SLOW)
            assert (cells[0], cells[5]) == (SLOW, "regression"), cells
            assert cells[4] == f"{slow['ratio']:.2f}x", cells
            headers = tab.locator("section.upgrade thead th").all_inner_texts()
            assert headers[2:4] == ["jax0.9.2", "jax0.10.2"], headers
            assert errors == []
        finally:
            browser.close()


def _cmdlines() -> list[str]:
    lines = []
    for proc in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            lines.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode())
    return lines


def _asv_runs(root: Path) -> bool:
    """An ``asv run`` of a configuration beside ``root``'s asv.conf.json is running."""
    return any(" -m asv run " in c and f"--config {root}/.asv.conf." in c for c in _cmdlines())


@pytest.mark.slow
def test_sigterm_stops_the_measurement_and_removes_its_copy_of_the_config(tmp_path: Path) -> None:
    """A cancelled CI job (SIGTERM): exit 143, one line, no copy of asv.conf.json left
    beside it, no asv process left running."""
    config = _config(tmp_path / "p")
    root = config.parent
    (root / "benchmarks").mkdir()
    (root / "benchmarks" / "__init__.py").write_text("")
    (root / "benchmarks" / "suite.py").write_text("def time_sum():\n    sum(range(9))\n")
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "one"]):
        e2e_repo.git(root, *args)
    proc = subprocess.Popen(
        [sys.executable, "-m", "jaxbench", "upgrade", "--base-env", "jax0.9.2",
         "--head", "jax==0.10.1", "--budget", "1m"],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not _asv_runs(root):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "asv run of the copy never started"
            time.sleep(0.2)
        (copy,) = root.glob(".asv.conf.upgrade-*.json")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 143, err[-2000:]
    assert err.strip().splitlines()[-1] == "jaxbench: terminated", err[-2000:]
    assert not copy.exists()
    assert not _asv_runs(root)  # asv was stopped with it
