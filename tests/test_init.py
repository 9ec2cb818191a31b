"""``jaxbench init``: what it writes, that it never overwrites, and its bad input.

Real git repositories of tiny JAX packages (``tests/init_repo.py``), the real
``pip index versions jax`` of this machine's index, real actionlint and zizmor
on the written workflows, and the written starter run with real jax. The
asv runs over the written configuration are in ``tests/test_e2e_init.py``.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import other_suites_set_aside
from init_repo import SHAPES, make_flat_package, make_shape, make_src_package
from jaxbench.cli import main
from jaxbench.jobs import init_checks
from jaxbench.scaffold import sources
from jaxbench.scaffold.plan import Settings, render
from jaxbench.scaffold.project import inspect_project
from jaxbench.store.asv_conf import read_asv_conf
from test_workflows import REPO, load, run_actionlint, run_zizmor

WRITTEN = [
    "asv.conf.json",
    "benchmarks/__init__.py",
    "benchmarks/starter.py",
    ".github/workflows/benchmarks.yml",
    ".github/workflows/pr-bench.yml",
    ".github/workflows/pr-comment.yml",
    ".github/workflows/jax-upgrade.yml",
    "Makefile",
    "BENCHMARKS.md",
]
JAX = "0.10.2"


def init(
    *args: str, capsys: pytest.CaptureFixture[str], check_launch: bool = False
) -> tuple[int, str, str]:
    """``jaxbench init ARGS``. Its launch check (a fresh Python importing jax, about
    2 s) runs only where a test asks for it; elsewhere ``--launch-method spawn``
    (``tests/test_init_launch.py`` tests the check)."""
    launch = () if check_launch or "--launch-method" in args else ("--launch-method", "spawn")
    status = main(["init", *args, *launch])
    out, err = capsys.readouterr()
    return status, out, err


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under root but .git, with its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def settings_for(root: Path, **changes: Any) -> Settings:
    """What init would render for the project at ``root``, without asking pip or jax."""
    settings = Settings(
        project=inspect_project(root),
        python="3.11",
        jax_versions=(JAX,),
        jaxbench=sources.Requirement("jaxbench==0.1.0", "test", True),
        asv="asv==0.6.6",
        asv_runner="asv_runner==0.3.2",
    )
    return dataclasses.replace(settings, **changes)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_src_package(tmp_path / "tinyjax").root


def assert_one_line_error(status: int, out: str, err: str, *needles: str) -> None:
    assert status == 2, out + err
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("jaxbench: error: ")
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], lines[0]


# --- what it writes ------------------------------------------------------------------


def test_init_writes_every_file_and_a_working_asv_conf(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = init(str(repo), "--jax", JAX, capsys=capsys, check_launch=True)
    assert status == 0, err
    # importing tinyjax starts no jax backend: asv forks each benchmark
    assert "asv launch method: forkserver (importing tinyjax and benchmarks/ starts no" in out
    for path in WRITTEN:
        assert (repo / path).is_file(), path
        assert f"wrote {path}" in out
    conf = read_asv_conf(repo / "asv.conf.json")
    assert conf["project"] == "tinyjax"
    assert conf["repo"] == "."
    assert conf["environment_type"] == "virtualenv"
    assert conf["pythons"] == [f"{sys.version_info.major}.{sys.version_info.minor}"]
    assert conf["matrix"] == {"req": {"jax": [JAX]}}
    assert conf["results_dir"] == "results"
    assert conf["html_dir"] == "html"
    assert conf["launch_method"] == "forkserver"
    assert conf["build_command"] == [
        "python -m pip wheel --no-deps -w {build_cache_dir} {build_dir}"
    ]
    # the project with its dependencies; jaxbench from where this one came from
    install = conf["install_command"]
    assert isinstance(install, list)
    assert install[0] == "in-dir={env_dir} python -m pip install {wheel_file}"
    assert f"'jaxbench @ file://{REPO}'" in install[1]
    assert f"asv_runner=={sources.installed_version('asv_runner')}" in install[1]
    # the same thresholds as this project's own configuration
    ours = read_asv_conf(REPO / "asv.conf.json")
    assert conf["regressions_thresholds"] == ours["regressions_thresholds"]
    # asv's own reader accepts it, and names the environment as the tests expect
    from asv.config import Config
    from asv.environment import get_environments

    loaded = Config.load(str(repo / "asv.conf.json"))
    names = [env.name for env in get_environments(loaded, None, verbose=False)]
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert names == [f"virtualenv-py{python}-jax{JAX}"]


def test_the_jaxbench_source_follows_its_direct_url_record() -> None:
    req = sources.requirement_from_direct_url
    assert req("jaxbench", "0.1.0", None).spec == "jaxbench==0.1.0"
    assert req("jaxbench", "0.1.0", None).portable
    local = req("jaxbench", "0.1.0", {"url": "file:///src/jb", "dir_info": {"editable": True}})
    assert local.spec == "jaxbench @ file:///src/jb"
    assert not local.portable
    git = req(
        "jaxbench",
        "0.1.0",
        {
            "url": "https://github.com/o/jaxbench",
            "vcs_info": {"vcs": "git", "commit_id": "ab" * 20, "requested_revision": "main"},
        },
    )
    assert git.spec == f"jaxbench @ git+https://github.com/o/jaxbench@{'ab' * 20}"
    assert git.portable
    archive = req("jaxbench", "0.1.0", {"url": "https://x.invalid/jb.tar.gz", "archive_info": {}})
    assert archive.spec == "jaxbench @ https://x.invalid/jb.tar.gz"
    sub = req(
        "jaxbench",
        "0.1.0",
        {
            "url": "https://g.invalid/r",
            "vcs_info": {"vcs": "git", "commit_id": "c"},
            "subdirectory": "py",
        },
    )
    assert sub.spec == "jaxbench @ git+https://g.invalid/r@c#subdirectory=py"
    # this test session's jaxbench: the editable install of this checkout
    assert sources.jaxbench_requirement().spec == f"jaxbench @ file://{REPO}"


def test_the_default_matrix_is_the_installed_jax_and_the_newest_served(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = init(str(repo), "--dry-run", capsys=capsys)
    assert status == 0, err
    installed = sources.installed_version("jax")
    served = init_checks.served_versions("jax")
    assert installed is not None
    assert served is not None
    expected = sorted({installed, served[0]}, key=sources.version_key)
    assert f"asv matrix: jax {', '.join(expected)}" in out
    assert f"jax {installed}: installed here" in out
    assert json.dumps(expected) in out  # the asv.conf.json it would write


@pytest.fixture
def starter_dir(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The starter rendered into a benchmark directory of its own (no pip, no asv)."""
    plan = render(settings_for(repo))
    root = tmp_path / "starter_bench"  # asv_runner imports it as starter_bench.starter
    root.mkdir()
    monkeypatch.syspath_prepend(str(tmp_path))
    for planned in plan.files:
        if planned.path.startswith("benchmarks/"):
            (root / planned.path.removeprefix("benchmarks/")).write_text(planned.text, "utf-8")
    yield root
    for name in [m for m in sys.modules if m.split(".")[0] == root.name]:
        del sys.modules[name]


def _asv_benchmark(root: Path, name: str) -> Any:
    """What asv's benchmark process loads for ``starter.<name>`` at rows=256 (index 0)."""
    from asv_runner.discovery import get_benchmark_from_name

    return get_benchmark_from_name(str(root), f"starter.{name}-0")


def test_the_rendered_starter_runs_through_asv_runner_and_passes_its_check(
    starter_dir: Path,
) -> None:
    """The starter as asv's benchmark process loads and runs it: the timed
    class through asv_runner's own loop (its first call checks the answer), the
    figures class through setup_cache."""
    timed = _asv_benchmark(starter_dir, "Starter.time_warm")
    assert (timed.param_names, timed.params) == (["rows"], [["256"]])
    timed.set_cache(None)
    timed.repeat, timed.number, timed.warmup_time = 2, 5, 0.0
    assert not timed.do_setup()
    try:
        result = timed.do_run()
    finally:
        timed.do_teardown()
    assert len(result["samples"]) >= 2
    assert all(sample > 0 for sample in result["samples"])

    figures = _asv_benchmark(starter_dir, "StarterFigures.track_tolerance_used")
    with other_suites_set_aside(keep=":Starter"):  # setup_cache measures the starter only
        cache = figures.do_setup_cache()
    for track in ("track_tolerance_used", "track_max_abs_error", "track_work_flops"):
        benchmark = _asv_benchmark(starter_dir, f"StarterFigures.{track}")
        benchmark.set_cache(cache)
        assert not benchmark.do_setup()
        value = benchmark.do_run()
        if track == "track_work_flops":
            assert value > 0
        else:
            assert 0 <= value < 1, (track, value)


def test_the_rendered_starter_workload_follows_the_contract_and_its_check_can_fail(
    starter_dir: Path,
) -> None:
    import dataclasses

    from jaxbench.errors import ReferenceMismatch
    from jaxbench.measure import Workload, protocol

    module = importlib.import_module(f"{starter_dir.name}.starter")
    workload = module.starter_workload(256)
    assert isinstance(workload, Workload)
    assert workload.label == "softmax_scores-rows=256"
    assert workload.reference_kind == "numpy"
    params, x = workload.host_inputs()
    assert set(params) == {"w", "b"}
    assert x.shape == (256, module.FEATURES)
    measurement = protocol.measure(workload, repeats=2)
    assert measurement.accuracy is not None
    assert measurement.accuracy.tolerance_used < 1
    # a wrong answer is refused before anything is timed
    off = dataclasses.replace(workload, fn=lambda p, batch: module.softmax_scores(p, batch) * 1.01)
    with pytest.raises(ReferenceMismatch, match="softmax_scores-rows=256"):
        protocol.prepare(off)


def test_the_written_python_passes_ruff(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert init(str(repo), "--jax", JAX, capsys=capsys)[0] == 0
    ruff = Path(sys.executable).parent / "ruff"
    done = subprocess.run(
        [str(ruff), "check", "--no-cache", "--isolated", "--select", "E,F,W,I,B,UP", "benchmarks"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_written_workflows_pass_actionlint_and_zizmor(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert init(str(repo), "--jax", JAX, "--jaxbench", "jaxbench==0.1.0", capsys=capsys)[0] == 0
    workflows = repo / ".github" / "workflows"
    linted = run_actionlint(workflows)
    assert linted.returncode == 0, linted.stdout + linted.stderr
    assert "4 file(s), 0 finding(s)" in linted.stdout
    audited = run_zizmor(workflows)
    assert audited.returncode == 0, audited.stdout + audited.stderr
    assert json.loads(audited.stdout) == []


def test_the_written_workflows_are_hardened_like_ours(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert init(str(repo), "--jax", JAX, "--jaxbench", "jaxbench==0.1.0", capsys=capsys)[0] == 0
    workflows = {p.name: load(p) for p in (repo / ".github" / "workflows").glob("*.yml")}
    assert set(workflows) == {"benchmarks.yml", "pr-bench.yml", "pr-comment.yml", "jax-upgrade.yml"}
    writes = {}
    for name, flow in workflows.items():
        assert set(flow["permissions"].values()) <= {"read", "none"}, name
        for job_name, job in flow["jobs"].items():
            granted = {k for k, v in job["permissions"].items() if v == "write"}
            if granted:
                writes[(name, job_name)] = granted
            for step in job.get("steps", []):
                assert "${{" not in step.get("run", ""), (name, step.get("name"))
                if str(step.get("uses", "")).startswith("actions/checkout@"):
                    assert step["with"]["persist-credentials"] is False
    assert writes == {
        ("benchmarks.yml", "commit-results"): {"contents"},
        ("benchmarks.yml", "deploy"): {"pages", "id-token"},
        ("jax-upgrade.yml", "keep"): {"contents"},
        ("pr-comment.yml", "comment"): {"pull-requests"},
    }
    # the same pinned actions as this repository's workflows
    pins = set()
    for path in (REPO / ".github" / "workflows").glob("*.yml"):
        pins |= set(re.findall(r"uses:\s*(\S+@[0-9a-f]{40})", path.read_text()))
    for path in (repo / ".github" / "workflows").glob("*.yml"):
        assert set(re.findall(r"uses:\s*(\S+@\S+)", path.read_text())) <= pins, path.name
    review = workflows["pr-bench.yml"]["jobs"]["review"]
    # the review measures the matrix entry of the newest jax (jaxbench review's default)
    assert "JAX_VERSION" not in review["env"]
    assert any('jaxbench "${args[@]}"' in str(s.get("run", "")) for s in review["steps"])
    assert review["env"]["JAXBENCH_REQUIREMENT"] == "jaxbench==0.1.0"
    assert workflows["benchmarks.yml"]["on"]["push"]["branches"] == ["main"]
    comment = workflows["pr-comment.yml"]["on"]["workflow_run"]["workflows"]
    assert comment == [workflows["pr-bench.yml"]["name"]]
    # the weekly try of the newest jax: jaxbench upgrade against the matrix's newest
    upgrade = workflows["jax-upgrade.yml"]
    assert set(upgrade["on"]) == {"schedule", "workflow_dispatch"}
    steps = upgrade["jobs"]["upgrade"]["steps"]
    assert any('jaxbench upgrade --head "jax==$JAX_VERSION"' in str(s.get("run")) for s in steps)
    assert upgrade["jobs"]["upgrade"]["env"]["JAXBENCH_REQUIREMENT"] == "jaxbench==0.1.0"
    # its verdict is committed to the main branch for the published history's page
    keep = upgrade["jobs"]["keep"]
    assert keep["needs"] == "upgrade"
    (checkout,) = [s for s in keep["steps"] if str(s.get("uses")).startswith("actions/checkout@")]
    assert checkout["with"]["ref"] == "main"


def test_the_main_workflow_follows_the_checked_out_branch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flat = make_flat_package(tmp_path / "flatjax").root
    assert init(str(flat), "--jax", JAX, capsys=capsys)[0] == 0
    flow = load(flat / ".github" / "workflows" / "benchmarks.yml")
    assert flow["on"]["push"]["branches"] == ["trunk"]


def test_a_flat_hatchling_project_is_found(tmp_path: Path) -> None:
    flat = make_flat_package(tmp_path / "flatjax").root
    project = inspect_project(flat)
    assert (project.name, project.import_name, project.layout) == ("flatjax", "flatjax", "flat")
    assert project.backend == "hatchling.build"
    assert project.depends_on_jax
    src = make_src_package(tmp_path / "tinyjax").root
    project = inspect_project(src)
    assert (project.name, project.import_name, project.layout) == ("tinyjax", "tinyjax", "src")
    assert project.backend == "setuptools.build_meta"


def test_a_poetry_project_is_found(tmp_path: Path) -> None:
    root = make_flat_package(tmp_path / "poetryjax").root
    (root / "pyproject.toml").write_text(
        '[tool.poetry]\nname = "flatjax"\nversion = "0.1.0"\n\n'
        '[tool.poetry.dependencies]\npython = "^3.11"\njax = "^0.10"\n\n'
        '[build-system]\nrequires = ["poetry-core"]\nbuild-backend = "poetry.core.masonry.api"\n',
        encoding="utf-8",
    )
    project = inspect_project(root)
    assert project.name == "flatjax"
    assert project.backend == "poetry.core.masonry.api"
    assert project.depends_on_jax


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_project_shape_is_found(shape: str, tmp_path: Path) -> None:
    """Name, import package, layout and backend of each common shape, from its real
    pyproject.toml in a git repository of one commit and no tag."""
    root = make_shape(tmp_path / shape, shape).root
    project = inspect_project(root)
    assert (project.name, project.import_name, project.layout, project.backend) == (
        SHAPES[shape].found
    )
    assert project.depends_on_jax


@pytest.mark.slow
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_init_sets_up_each_project_shape(
    shape: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """init writes its files in each shape (a root asv.conf.json of the project's own
    with --force, after it is named), the starter names the right package, and
    make parses the written Makefile."""
    root = make_shape(tmp_path / shape, shape).root
    status, out, err = init(str(root), "--jax", JAX, capsys=capsys)
    if shape == "asv-conf":
        assert_one_line_error(status, out, err, "asv.conf.json", "an asv set-up of your own")
        status, out, err = init(str(root), "--jax", JAX, "--force", capsys=capsys)
    assert status == 0, err
    name, import_name, layout, backend = SHAPES[shape].found
    assert out.startswith(f"jaxbench init: {name} ({layout} layout, {backend}) at {root}\n")
    for path in WRITTEN:
        assert (root / path).is_file(), path
    starter = (root / "benchmarks" / "starter.py").read_text(encoding="utf-8")
    assert f"from {import_name} import my_function" in starter
    assert read_asv_conf(root / "asv.conf.json")["project"] == name
    done = make(root, "bench-check")
    assert done.returncode == 0, done.stderr


def test_a_python_the_project_does_not_accept_is_refused(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject = repo / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(text.replace('">=3.10"', '">=3.99"'), encoding="utf-8")
    before = snapshot(repo)
    status, out, err = init(str(repo), "--jax", JAX, capsys=capsys)
    assert_one_line_error(status, out, err, "tinyjax requires Python >=3.99", "pass --python")
    assert snapshot(repo) == before


# --- what the repository has already: named, left alone -----------------------------


def test_existing_benchmark_set_ups_are_named_one_line_each_and_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_shape(tmp_path / "p", "benchmark-workflows").root
    (root / "asv_bench").mkdir()
    (root / "asv_bench" / "asv.conf.json").write_text('{"version": 1}\n', encoding="utf-8")
    (root / "benchmarks").mkdir()
    (root / "benchmarks" / "test_speed.py").write_text(
        "import pytest\n\n\ndef test_sum(benchmark):\n    benchmark(sum, [1, 2])\n"
    )
    (root / "benchmarks" / "suite.py").write_text("def time_sum():\n    sum([1, 2])\n")
    before = snapshot(root)
    status, out, err = init(str(root), "--jax", JAX, capsys=capsys)
    assert status == 0, err
    found = sorted(line.strip() for line in out.splitlines() if line.startswith("  found "))
    assert [line.split(": left alone; ")[0] for line in found] == [
        "found .benchmarks/ (pytest-benchmark's saved runs)",
        "found .github/workflows/benchmark.yml (a workflow running pytest-benchmark)",
        "found .github/workflows/codspeed.yml (a workflow running CodSpeed)",
        "found asv_bench/asv.conf.json (an asv set-up of its own)",
        "found benchmarks/ (1 asv suite file(s) of yours: suite.py)",
        "found benchmarks/ (1 pytest file(s): test_speed.py)",
        "found pyproject.toml (pytest options of pytest-benchmark)",
        "found the test extra (lists pytest-benchmark)",
    ]
    assert all(": left alone; " in line for line in found)
    after = snapshot(root)
    assert {path: after[path] for path in before} == before  # nothing of theirs changed
    # the pytest file imports pytest, which the test extra lists: the matrix has it
    matrix = read_asv_conf(root / "asv.conf.json")["matrix"]
    assert isinstance(matrix, dict)
    assert "pytest" in matrix["req"]


def test_a_benchmarks_package_of_the_project_s_own_is_kept(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "benchmarks").mkdir()
    (repo / "benchmarks" / "__init__.py").write_text('"""Our suites."""\n', encoding="utf-8")
    status, out, err = init(str(repo), "--jax", JAX, capsys=capsys)
    assert status == 0, err
    assert "kept benchmarks/__init__.py (already there)" in out
    assert (repo / "benchmarks" / "__init__.py").read_text(
        encoding="utf-8"
    ) == '"""Our suites."""\n'


# --- .gitignore -------------------------------------------------------------------------


def test_gitignore_gets_what_must_not_be_committed_once(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The fixture's .gitignore has /.asv/ and /html/: init appends the scan cache
    only, says so, and a second run adds nothing; git then leaves the cache out of
    results/ and keeps the results."""
    from e2e_repo import git
    from jaxbench.store.series_table import CACHE_NAME

    before = (repo / ".gitignore").read_text(encoding="utf-8")
    status, out, err = init(str(repo), "--jax", JAX, capsys=capsys)
    assert status == 0, err
    assert f"added to .gitignore: /results/{CACHE_NAME} (jaxbench's scan cache)" in out
    text = (repo / ".gitignore").read_text(encoding="utf-8")
    assert text.startswith(before)
    assert text.count(f"/results/{CACHE_NAME}\n") == 1
    assert text.count("/.asv/") == 1
    status, out, _ = init(str(repo), "--jax", JAX, capsys=capsys)
    assert "nothing to do" in out
    assert (repo / ".gitignore").read_text(encoding="utf-8") == text
    (repo / "results" / "m").mkdir(parents=True)
    (repo / "results" / CACHE_NAME).write_bytes(b"cache")
    (repo / "results" / "m" / "abc-env.json").write_text("{}", encoding="utf-8")
    (repo / ".asv" / "env").mkdir(parents=True)
    (repo / "html").mkdir()
    (repo / "html" / "index.html").write_text("", encoding="utf-8")
    status_lines = git(repo, "status", "--porcelain", "--untracked-files=all").splitlines()
    untracked = {line[3:] for line in status_lines}
    assert "results/m/abc-env.json" in untracked
    assert not any(p.startswith(("results/.jaxbench", ".asv/", "html/")) for p in untracked)


def test_gitignore_is_created_with_every_line_when_there_is_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flat = make_flat_package(tmp_path / "flatjax").root
    status, out, err = init(str(flat), "--jax", JAX, "--dry-run", capsys=capsys)
    assert status == 0, err
    assert "--- would add to .gitignore: /.asv/ (asv's environments and logs), /html/" in out
    assert not (flat / ".gitignore").exists()
    status, out, err = init(str(flat), "--jax", JAX, capsys=capsys)
    assert status == 0, err
    lines = (flat / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert lines[1:] == ["/.asv/", "/html/", "/results/.jaxbench-scan-cache.npz"]
    assert lines[0].startswith("# ")


def test_gitignore_without_a_final_newline_is_appended_on_a_line_of_its_own() -> None:
    from jaxbench.scaffold.gitignore import IGNORED, with_ignores

    text = with_ignores("*.pyc", IGNORED[:1])
    assert text.splitlines()[0] == "*.pyc"
    assert text.endswith("\n/.asv/\n")
    assert with_ignores(text, IGNORED[:1]) == text  # never twice


# --- never overwrite, dry run, idempotent ----------------------------------------------


def test_a_second_run_with_nothing_changed_writes_nothing_and_says_so(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert init(str(repo), "--jax", JAX, capsys=capsys)[0] == 0
    before = snapshot(repo)
    status, out, err = init(str(repo), "--jax", JAX, capsys=capsys)
    assert status == 0, err
    assert "nothing to do" in out
    assert "wrote" not in out
    assert snapshot(repo) == before


def test_dry_run_prints_every_file_and_writes_nothing(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(repo)
    status, out, err = init(str(repo), "--jax", JAX, "--dry-run", capsys=capsys)
    assert status == 0, err
    for path in WRITTEN:
        assert f"--- would write {path} (" in out
    assert '"project": "tinyjax"' in out
    assert "dry run: nothing was written" in out
    assert snapshot(repo) == before


def test_existing_files_are_named_and_nothing_is_written(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "asv.conf.json").write_text("{}\n", encoding="utf-8")
    (repo / "BENCHMARKS.md").write_text("# ours\n", encoding="utf-8")
    before = snapshot(repo)
    status, out, err = init(str(repo), "--jax", JAX, capsys=capsys)
    assert_one_line_error(
        status, out, err, "2 file(s) exist", "asv.conf.json, BENCHMARKS.md", "never overwrites"
    )
    assert snapshot(repo) == before


def _printed_include(out: str, makefile: str = "Makefile") -> str:
    """The lines init asks to paste, exactly as printed (between the blank lines)."""
    head = f"add this line at the end of {makefile}:\n\n"
    assert head in out, out
    return out.split(head, 1)[1].split("\n\n", 1)[0]


def make(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``make -n ARGS`` in ``repo``, as a user runs it (not as a sub-make of ``make test``)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    return subprocess.run(
        ["make", "-n", *args], cwd=repo, env=env, capture_output=True, text=True, check=False
    )


def test_an_existing_makefile_gets_one_include_line_that_pastes(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """init writes the targets to benchmarks.mk and prints one unindented line; pasted
    as printed into the project's real Makefile, make parses it and runs both the
    project's targets and jaxbench's."""
    (repo / "Makefile").write_text("test:\n\tpytest -q\n", encoding="utf-8")
    status, out, err = init(str(repo), "--jax", JAX, capsys=capsys)
    assert status == 0, err
    assert (repo / "Makefile").read_text(encoding="utf-8") == "test:\n\tpytest -q\n"
    assert "wrote benchmarks.mk" in out
    assert "wrote Makefile" not in out
    pasted = _printed_include(out)
    assert pasted == "include benchmarks.mk"
    with (repo / "Makefile").open("a", encoding="utf-8") as makefile:
        makefile.write(pasted + "\n")
    done = make(repo, "bench-check")
    assert done.returncode == 0, done.stderr
    assert "jaxbench machine --machine" in done.stdout
    assert "asv run --quick --dry-run" in done.stdout
    assert "missing separator" not in done.stderr
    done = make(repo)  # the project's own first target stays the default
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "pytest -q"
    # once the line is in, a second run has nothing to do
    status, out, _ = init(str(repo), "--jax", JAX, capsys=capsys)
    assert status == 0
    assert "nothing to do" in out


def test_a_target_both_makefiles_define_is_named(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "GNUmakefile").write_text("bench:\n\tpytest benchmarks\n", encoding="utf-8")
    status, out, err = init(str(repo), "--jax", JAX, capsys=capsys)
    assert status == 0, err
    assert _printed_include(out, "GNUmakefile") == "include benchmarks.mk"
    assert "GNUmakefile already has target(s) bench, which benchmarks.mk defines too" in out


# --- links ------------------------------------------------------------------------------

_URL = re.compile(r"https?://[^\s)<>\]\"'`]+")
#: Links of the written files that are not jaxbench's documentation.
OTHER_LINKS = {"https://asv.readthedocs.io", "http://127.0.0.1:8080"}


def _anchors(markdown: str) -> set[str]:
    """The anchors of a page's headings, as the guide (mkdocs.yml's slugify) and
    GitHub make them; headings in code blocks do not count."""
    from pymdownx.slugs import slugify  # type: ignore[import-untyped]

    slug = slugify(case="lower")
    found, fenced = set(), False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"^#{1,6} ", line):
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", line.lstrip("#").strip())
            found.add(slug(text.replace("`", ""), "-"))
    return found


def broken_link(url: str) -> str | None:
    """Why ``url`` (a link to jaxbench's README or guide) does not resolve, or None."""
    from jaxbench.scaffold.plan import JAXBENCH_URL

    target, _, anchor = url.partition("#")
    if target == JAXBENCH_URL:
        page = REPO / "README.md"
    elif target.startswith(f"{JAXBENCH_URL}/blob/main/"):
        page = REPO / target.removeprefix(f"{JAXBENCH_URL}/blob/main/")
    else:
        return f"{url}: not a page of {JAXBENCH_URL}"
    if not page.is_file():
        return f"{url}: {page.relative_to(REPO)} does not exist"
    if anchor and anchor not in _anchors(page.read_text(encoding="utf-8")):
        return f"{url}: no heading #{anchor} in {page.relative_to(REPO)}"
    return None


def test_every_link_init_writes_resolves(repo: Path) -> None:
    """Each link in each file init writes (benchmarks.mk too) goes to a page of
    jaxbench's README or guide that exists, at a heading it has."""
    from jaxbench.scaffold.matrix import MatrixPackage

    settings = settings_for(
        repo, packages=(MatrixPackage("toolz", "", "bench extra", "not installed"),)
    )
    own_makefile = dataclasses.replace(settings, write_makefile=False)
    files = [*render(settings).files, *render(own_makefile).files]
    assert {f.path for f in files} >= {"Makefile", "benchmarks.mk", "BENCHMARKS.md"}
    ours, problems = [], []
    for planned in files:
        for url in _URL.findall(planned.text):
            url = url.rstrip(".,;:")
            if url in OTHER_LINKS:
                continue
            ours.append(url)
            why = broken_link(url)
            if why:
                problems.append(f"{planned.path}: {why}")
    assert problems == []
    assert len(ours) >= 4  # BENCHMARKS.md's and the starter's links to the guide
    # the check can fail: a renamed heading, a missing page, a link elsewhere
    from jaxbench.scaffold.plan import GUIDE_URL

    assert broken_link(f"{GUIDE_URL}/write-benchmarks.md#benchmark-your-own-code")
    assert broken_link(f"{GUIDE_URL}/no-such-page.md")
    assert broken_link("https://github.com/jaxbench/jaxbench#benchmark-your-own-code")


# --- bad input: one line, exit 2, nothing written ---------------------------------------


def test_not_a_git_repository(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    before = snapshot(tmp_path)
    status, out, err = init(str(tmp_path), capsys=capsys)
    assert_one_line_error(status, out, err, "is not a git repository", "git init")
    assert snapshot(tmp_path) == before


def test_a_missing_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = init(str(tmp_path / "nowhere"), capsys=capsys)
    assert_one_line_error(status, out, err, "does not exist")
    assert not (tmp_path / "nowhere").exists()


def test_no_python_project(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from e2e_repo import git

    (tmp_path / "README.md").write_text("hello\n", encoding="utf-8")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "readme")
    before = snapshot(tmp_path)
    status, out, err = init(str(tmp_path), capsys=capsys)
    assert_one_line_error(status, out, err, "no Python project found", "pyproject.toml")
    assert snapshot(tmp_path) == before


def test_a_repository_without_commits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from e2e_repo import git

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    git(tmp_path, "init", "-q")
    status, out, err = init(str(tmp_path), capsys=capsys)
    assert_one_line_error(status, out, err, "no commit yet")


def test_a_subdirectory_of_the_repository(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = init(str(repo / "src"), capsys=capsys)
    assert_one_line_error(status, out, err, "not its top", f"jaxbench init {repo}")


def test_an_unknown_jax_version(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = snapshot(repo)
    status, out, err = init(str(repo), "--jax", f"{JAX},9.9.9", capsys=capsys)
    assert_one_line_error(status, out, err, "jax 9.9.9 is not served", "pip index versions jax")
    assert snapshot(repo) == before
    status, out, err = init(str(repo), "--jax", "latest", capsys=capsys)
    assert_one_line_error(status, out, err, "'latest' is not a version")
    assert snapshot(repo) == before


def test_a_python_that_is_not_there(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = init(str(repo), "--jax", JAX, "--python", "3.99", capsys=capsys)
    assert_one_line_error(status, out, err, "no python3.99 on PATH")
    status, out, err = init(str(repo), "--jax", JAX, "--python", "three", capsys=capsys)
    assert_one_line_error(status, out, err, "not a Python version")


def test_a_file_in_the_way_of_a_directory(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / ".github").write_text("not a directory\n", encoding="utf-8")
    before = snapshot(repo)
    status, out, err = init(str(repo), "--jax", JAX, capsys=capsys)
    assert_one_line_error(status, out, err, "is a file, not a directory", "move it away")
    assert snapshot(repo) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory anyway")
def test_an_unwritable_directory(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = snapshot(repo)
    repo.chmod(0o555)
    try:
        status, out, err = init(str(repo), "--jax", JAX, capsys=capsys)
    finally:
        repo.chmod(0o755)
    assert_one_line_error(status, out, err, "cannot write in", "make it writable")
    assert snapshot(repo) == before


def test_a_failed_write_removes_what_it_wrote(repo: Path) -> None:
    """A write that fails half-way (here: a file where a directory must go, made
    after the checks) leaves nothing of this run behind."""
    from jaxbench.errors import UsageError
    from jaxbench.scaffold import apply

    plan = render(settings_for(repo))
    (repo / ".github").write_text("in the way\n", encoding="utf-8")
    before = snapshot(repo)
    with pytest.raises(UsageError, match="cannot write"):
        apply.write(repo, plan.files)
    assert snapshot(repo) == before
    assert not (repo / "benchmarks").exists()


def test_a_bad_jaxbench_requirement(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = init(str(repo), "--jax", JAX, "--jaxbench", "x'; rm -rf /", capsys=capsys)
    assert_one_line_error(status, out, err, "is not a pip requirement")
