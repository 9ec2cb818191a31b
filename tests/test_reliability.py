"""Bad results input for every analysing command: one matrix, fault x command.

Each fault damages a copy of one real asv results directory (written with
asv's own code, for commits of a real git repository, with HLO stored beside
it), then each command runs as users run it, ``python -m jaxbench ...`` in a
subprocess. For every cell:

* the exit status is one the command documents (compare 0/1/2, regressions,
  publish and hlo-diff 0/2), and the one this fault calls for where it matters;
* stderr holds no traceback, and every line of it is one ``jaxbench:
  warning:`` or ``jaxbench: error:`` line; an error names a path, a commit or
  the problem;
* nothing is half-written: compare's ``--output`` is absent or a complete
  JSON document, publish's html dir is the previous complete site or a new
  complete one, and no temporary file or directory is left behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import AsvResultsWriter
from e2e_repo import git

TIME = "w.W.time_x"
FLOPS = "w.W.track_work_flops"
ENV = "virtualenv-py3.11"
N_COMMITS = 4
DAY = 86_400_000
COMMANDS = ("compare", "regressions", "publish", "hlo-diff")
DOCUMENTED_EXITS = {
    "compare": {0, 1, 2},
    "regressions": {0, 2},
    "publish": {0, 2},
    "hlo-diff": {0, 2},
}


@dataclass(frozen=True)
class Baseline:
    """A good history: git repo, results (with HLO), asv.conf.json, a published site."""

    root: Path
    repo: Path
    commits: tuple[str, ...]
    results: Path
    site: Path


def _conf(root: Path, results: Path, html_dir: Path, repo: Path) -> Path:
    conf = {
        "version": 1,
        "project": "rel",
        "repo": str(repo),
        "branches": ["main"],
        "environment_type": "virtualenv",
        "results_dir": str(results),
        "html_dir": str(html_dir),
    }
    path = root / "asv.conf.json"
    path.write_text(json.dumps(conf))
    return path


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Baseline:
    from jaxbench.store.hlo_store import save_hlo

    root = tmp_path_factory.mktemp("baseline")
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commits = []
    for i in range(N_COMMITS):
        (repo / "f.txt").write_text(str(i))
        git(repo, "add", "f.txt")
        git(repo, "commit", "-q", "-m", f"c{i}", f"--date=2024-01-0{i + 1}T00:00:00")
        commits.append(git(repo, "rev-parse", "HEAD"))
    results = root / "results"
    writer = AsvResultsWriter(results)
    writer.add_benchmark(TIME, params=[["'64'", "'96'"]])
    writer.add_benchmark(FLOPS, unit="flops")
    writer.write_meta()
    for i, commit in enumerate(commits):
        writer.write_result(
            commit, 1_704_067_200_000 + i * DAY, {TIME: [1e-5, 2e-5], FLOPS: 65536.0}
        )
        environ = {
            "JAXBENCH_COMMIT": commit,
            "JAXBENCH_ENV_NAME": ENV,
            "JAXBENCH_RESULTS_DIR": str(results),
            "JAXBENCH_MACHINE": writer.machine,
        }
        hlo = f"HloModule m\nENTRY e {{\n  ROOT a = f32[{64 + i}] parameter(0)\n}}\n"
        save_hlo(TIME, ("'64'",), hlo, environ=environ)
    site = root / "site"
    conf = _conf(root, results, site, repo)
    status, _out, err = _jaxbench(root, "publish", "--config", str(conf))
    assert status == 0, err
    return Baseline(root, repo, tuple(commits), results, site)


# ---------------------------------------------------------------------------
# faults: each damages the results directory in place


def _files(results: Path) -> list[Path]:
    return sorted(p for p in (results / "m1").glob("*.json") if p.name != "machine.json")


def _rows(path: Path) -> dict[str, list[object]]:
    data = json.loads(path.read_text())
    rows: dict[str, list[object]] = data["results"]
    return rows


def _edit_head(results: Path, edit: Callable[[dict[str, object]], None]) -> None:
    path = _files_by_date(results)[-1]
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


def _files_by_date(results: Path) -> list[Path]:
    return sorted(_files(results), key=lambda p: json.loads(p.read_text())["date"])


def _set_result(bench: str, value: object) -> Callable[[dict[str, object]], None]:
    def edit(data: dict[str, object]) -> None:
        rows = data["results"]
        assert isinstance(rows, dict)
        rows[bench][0] = value

    return edit


def empty(results: Path) -> None:
    shutil.rmtree(results)
    results.mkdir()


def missing_dir(results: Path) -> None:
    shutil.rmtree(results)


def no_machine_json(results: Path) -> None:
    (results / "m1" / "machine.json").unlink()


def no_benchmarks_json(results: Path) -> None:
    (results / "benchmarks.json").unlink()


def truncated(results: Path) -> None:
    path = _files_by_date(results)[-1]
    text = path.read_text()
    path.write_text(text[: len(text) // 2])


def corrupt_bytes(results: Path) -> None:
    _files_by_date(results)[-1].write_bytes(b"\xff\xfe\x00garbage\x80")


def all_truncated(results: Path) -> None:
    for path in _files(results):
        path.write_text("{")


def format_1(results: Path) -> None:
    """The head file rewritten in asv <= 0.4's format 1 (dict per benchmark)."""
    path = _files_by_date(results)[-1]
    data = json.loads(path.read_text())
    columns = data["result_columns"]
    old: dict[str, object] = {}
    for bench, raw in data["results"].items():
        row = dict(zip(columns, raw, strict=False))
        n = len(row["result"])
        stats = [
            {"ci_99": [row["stats_ci_99_a"][j], row["stats_ci_99_b"][j]], "number": 1, "repeat": 5}
            for j in range(n)
        ]
        old[bench] = {"result": row["result"], "params": row["params"], "stats": stats}
    data["results"] = old
    data["version"] = 1
    for key in ("result_columns", "durations"):
        data.pop(key, None)
    data["started_at"] = {b: data["date"] for b in old}
    data["ended_at"] = {b: data["date"] for b in old}
    data["benchmark_version"] = {b: "v1" for b in old}
    path.write_text(json.dumps(data))


def future_version(results: Path) -> None:
    _edit_head(results, lambda data: data.__setitem__("version", 3))


def all_future_version(results: Path) -> None:
    for path in _files(results):
        data = json.loads(path.read_text())
        data["version"] = 99
        path.write_text(json.dumps(data))


def version_changed(results: Path) -> None:
    def edit(data: dict[str, object]) -> None:
        rows = data["results"]
        assert isinstance(rows, dict)
        columns = data["result_columns"]
        assert isinstance(columns, list)
        for row in rows.values():
            row[columns.index("version")] = "v2"

    _edit_head(results, edit)


def failed_benchmark(results: Path) -> None:
    _edit_head(results, _set_result(FLOPS, None))


def failed_param(results: Path) -> None:
    _edit_head(results, _set_result(TIME, [None, 2e-5]))


def skipped_head(results: Path) -> None:
    path = _files_by_date(results)[-1]
    data = json.loads(path.read_text())
    data["results"][TIME][0] = [float("nan"), 2e-5]
    path.write_text(json.dumps(data))  # writes NaN literals, as asv's json does


def skipped_everywhere(results: Path) -> None:
    for path in _files(results):
        data = json.loads(path.read_text())
        data["results"][FLOPS][0] = [float("nan")]
        path.write_text(json.dumps(data))


def infinite(results: Path) -> None:
    path = _files_by_date(results)[-1]
    data = json.loads(path.read_text())
    data["results"][FLOPS][0] = [float("inf")]
    path.write_text(json.dumps(data))


def duplicate(results: Path) -> None:
    head = _files_by_date(results)[-1]
    shutil.copyfile(head, head.with_name("0" + head.name))


def other_machine(results: Path) -> None:
    _edit_head(results, lambda data: data["params"].__setitem__("machine", "elsewhere"))  # type: ignore[index]


def two_machines(results: Path) -> None:
    other = results / "m2"
    other.mkdir()
    machine = json.loads((results / "m1" / "machine.json").read_text())
    machine["machine"] = "m2"
    (other / "machine.json").write_text(json.dumps(machine))
    for path in _files(results):
        data = json.loads(path.read_text())
        data["params"]["machine"] = "m2"
        (other / path.name).write_text(json.dumps(data))


def no_samples(results: Path) -> None:
    for path in _files(results):
        data = json.loads(path.read_text())
        data["result_columns"] = data["result_columns"][:3]
        data["results"] = {b: row[:3] for b, row in data["results"].items()}
        path.write_text(json.dumps(data))


def not_a_result_file(results: Path) -> None:
    _files_by_date(results)[-1].write_text("[1, 2, 3]")


def corrupt_hlo(results: Path) -> None:
    for path in (results / "m1" / "hlo").rglob("*.hlo.gz"):
        path.write_bytes(path.read_bytes()[:10])


FAULTS: dict[str, Callable[[Path], None]] = {
    f.__name__: f
    for f in (
        empty,
        missing_dir,
        no_machine_json,
        no_benchmarks_json,
        truncated,
        corrupt_bytes,
        all_truncated,
        not_a_result_file,
        format_1,
        future_version,
        all_future_version,
        version_changed,
        failed_benchmark,
        failed_param,
        skipped_head,
        skipped_everywhere,
        infinite,
        duplicate,
        other_machine,
        two_machines,
        no_samples,
        corrupt_hlo,
    )
}

#: (fault, command) -> the exit status it must give, where the fault decides it.
EXPECTED: dict[tuple[str, str], int] = {
    **{(f, c): 2 for f in ("empty", "missing_dir", "all_truncated") for c in COMMANDS[:3]},
    **{(f, c): 2 for f in ("no_machine_json", "all_future_version") for c in COMMANDS[:3]},
    ("truncated", "compare"): 2,  # the head commit has no readable results
    ("corrupt_bytes", "compare"): 2,
    ("not_a_result_file", "compare"): 2,
    ("future_version", "compare"): 2,
    ("format_1", "compare"): 0,  # converted in memory, same values
    ("version_changed", "compare"): 0,
    ("failed_benchmark", "compare"): 1,  # FAILED: exit 1 under the default --fail-on
    ("failed_param", "compare"): 1,
    ("skipped_head", "compare"): 0,  # asv's NaN: skipped, never "now failing"
    ("skipped_everywhere", "compare"): 0,
    ("infinite", "compare"): 1,  # an infinite value counts as failed
    ("duplicate", "compare"): 0,  # the other file is kept, with a warning
    ("two_machines", "compare"): 2,  # several machines: pick one with --machine
    ("no_samples", "compare"): 2,  # a warm time with nothing to test
    ("infinite", "publish"): 2,  # asv publish would hang on it: refused before it runs
    ("corrupt_hlo", "hlo-diff"): 2,
    ("missing_dir", "hlo-diff"): 2,
    ("empty", "hlo-diff"): 2,
    **{(f, "regressions"): 0 for f in ("truncated", "format_1", "skipped_head", "duplicate")},
    **{(f, "publish"): 0 for f in ("format_1", "version_changed", "skipped_everywhere")},
}
#: faults whose output must carry a warning line
WARNED = {"truncated", "corrupt_bytes", "duplicate", "infinite", "other_machine"}


def _jaxbench(cwd: Path, *args: str) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASV_", "JAXBENCH_"))}
    proc = subprocess.run(
        [sys.executable, "-m", "jaxbench", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=300,
    )
    return proc.returncode, proc.stdout, proc.stderr


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        h.update(str(path.relative_to(folder)).encode())
        if path.is_file():
            h.update(path.read_bytes())
    return h.hexdigest()


def _args(command: str, base: Baseline, results: Path, work: Path) -> list[str]:
    first, last = base.commits[0][:10], base.commits[-1][:10]
    if command == "compare":
        out = work / "out" / "compare.json"
        return ["compare", first, last, "--results", str(results), "--format", "json",
                "--output", str(out)]  # fmt: skip
    if command == "regressions":
        return ["regressions", "--results", str(results), "--format", "json"]
    if command == "hlo-diff":
        return ["hlo-diff", first, last, "--results", str(results)]
    conf = _conf(work, results, work / "site", base.repo)
    return ["publish", "--config", str(conf)]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_bad_results_input(baseline: Baseline, tmp_path: Path, fault: str, command: str) -> None:
    results = tmp_path / "results"
    shutil.copytree(baseline.results, results)
    shutil.copytree(baseline.site, tmp_path / "site")
    (tmp_path / "out").mkdir()
    FAULTS[fault](results)
    site_before = _digest(tmp_path / "site")

    status, stdout, stderr = _jaxbench(tmp_path, *_args(command, baseline, results, tmp_path))

    assert status in DOCUMENTED_EXITS[command], stderr
    if (fault, command) in EXPECTED:
        assert status == EXPECTED[(fault, command)], stderr + stdout[-2000:]
    assert "Traceback" not in stderr
    lines = stderr.splitlines()
    assert all(line.startswith(("jaxbench: warning: ", "jaxbench: error: ")) for line in lines), (
        stderr
    )
    errors = [line for line in lines if line.startswith("jaxbench: error: ")]
    if status == 2:
        assert len(errors) == 1, stderr
        message = errors[0]
        # names where the problem is (a path, a commit) and says what to do
        named = (str(tmp_path), baseline.commits[-1][:8], ".json", "machine")
        assert any(n in message for n in named), message
        assert ";" in message or " pass " in message or "pick" in message, message
    else:
        assert not errors, stderr
    if fault in WARNED and command in ("compare", "regressions") and status != 2:
        assert "jaxbench: warning: " in stderr or '"warnings": [\n' in stdout, stderr

    # nothing half-written
    out_dir = tmp_path / "out"
    if command == "compare":
        written = sorted(p.name for p in out_dir.iterdir())
        if status == 2:
            assert written == []
        else:
            assert written == ["compare.json"]
            doc = json.loads((out_dir / "compare.json").read_text())
            assert doc["jaxbench_compare_format"] == 2
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert leftovers == []
    if command == "publish":
        site = tmp_path / "site"
        if status == 2:
            assert _digest(site) == site_before
        else:
            assert (site / "index.html").is_file()
            assert (site / "jaxbench" / "regressions.html").is_file() or any(
                site.rglob("regressions.html")
            )


def test_skipped_is_reported_as_skipped_not_failed(baseline: Baseline, tmp_path: Path) -> None:
    results = tmp_path / "results"
    shutil.copytree(baseline.results, results)
    skipped_head(results)
    out = tmp_path / "c.json"
    first, last = baseline.commits[0][:10], baseline.commits[-1][:10]
    status, _out, err = _jaxbench(
        tmp_path, "compare", first, last, "--results", str(results), "--format", "json",
        "--output", str(out),
    )  # fmt: skip
    assert status == 0, err
    rows = json.loads(out.read_text())["rows"]
    verdicts = {(r["benchmark"], tuple(r["params"])): r["verdict"] for r in rows}
    assert verdicts[(TIME, ("'64'",))] == "skipped"
    assert verdicts[(TIME, ("'96'",))] == "unchanged" or verdicts[(TIME, ("'96'",))] in (
        "not significant",
        "inconclusive",
    )
    assert "failed" not in verdicts.values()
    status, md, err = _jaxbench(
        tmp_path, "compare", first, last, "--results", str(results), "--format", "markdown"
    )
    assert status == 0, err
    assert "now failing" not in md
