"""What ``jaxbench init`` writes matches this repository's own main job and review.

* The written Makefile has this repository's main-job targets and variables
  (``bench``, ``measure``, ``paired``, ``publish``, ``regressions``,
  ``preview``, ``review``; ``COMMITS``, ``MACHINE``, ``PAIRED``, ``BASE``...),
  recipe for recipe: a
  change to one that the other lacks fails here.
* The written benchmarks.yml measures and pairs as this repository's
  measure.yml does, step for step; the written pr-bench.yml's review steps
  are this repository's.
* The matrix rule, ``--force``, the single machine command, the quick check
  that times no warm call, and a make bench that names a broken suite file.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from init_repo import make_src_package
from jaxbench.cli import main
from jaxbench.scaffold.matrix import benchmark_dependencies
from jaxbench.scaffold.plan import Settings, render
from jaxbench.scaffold.project import inspect_project
from jaxbench.scaffold.sources import Requirement, import_names
from jaxbench.scaffold.sources import installed_version as version_of
from jaxbench.store.asv_conf import read_asv_conf
from test_workflows import REPO, load

JAX = "0.10.2"
MAIN_JOB = ("bench", "measure", "paired", "publish", "regressions", "preview", "review")
VARIABLES = (
    "COMMITS",
    "MACHINE",
    "ASV_ARGS",
    "PAIRED",
    "PAIR_ARGS",
    "PORT",
    "KEEP_LOGS",
    "ASV_OUTPUT",
    "BASE",
    "HEAD",
    "REVIEW_ARGS",
)


def rendered(project_root: Path, **changes: object) -> dict[str, str]:
    settings = Settings(
        project=inspect_project(project_root),
        python="3.11",
        jax_versions=(JAX,),
        jaxbench=Requirement("jaxbench==0.1.0", "test", True),
        asv="asv==0.6.6",
        asv_runner="asv_runner==0.3.2",
    )
    for key, value in changes.items():
        settings = Settings(**{**settings.__dict__, key: value})
    return {f.path: f.text for f in render(settings).files}


@pytest.fixture
def written(tmp_path: Path) -> dict[str, str]:
    return rendered(make_src_package(tmp_path / "tinyjax").root)


def _normalise(line: str) -> str:
    """A recipe line with the tool paths of either Makefile spelled alike."""
    for ours, plain in (
        ("$(BIN)/jaxbench", "jaxbench"),
        ("$(BIN)/asv", "asv"),
        ("$(BIN)/python", "python"),
        ("$(JAXBENCH)", "jaxbench"),
        ("$(ASV)", "asv"),
        ("$(PYTHON)", "python"),
    ):
        line = line.replace(ours, plain)
    return line.strip()


#: This repository's own set-up steps (the written Makefile uses the user's jaxbench).
VENV_STAMPS = ("$(BIN)/.installed", "$(BIN)/.bench-installed")


def targets(text: str) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """Makefile target -> (prerequisites but the venv stamp, normalised recipe lines)."""
    found: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        match = re.match(r"^([a-z][a-z-]*):(?!=)(.*)$", line)
        if not match:
            continue
        prereqs = tuple(p for p in match.group(2).split() if p not in VENV_STAMPS)
        recipe = []
        for body in lines[i + 1 :]:
            if not body.startswith("\t"):
                break
            recipe.append(_normalise(body))
        found[match.group(1)] = (prereqs, tuple(recipe))
    return found


def _definition(text: str, name: str) -> str:
    """A variable's definition (its continuation lines too), tool paths normalised."""
    found = re.search(rf"^{name} :?= (.*?[^\\])$", text, re.MULTILINE | re.DOTALL)
    assert found is not None, name
    return _normalise(found.group(1))


def variables(text: str) -> dict[str, str]:
    return dict(re.findall(r"^([A-Z_]+)[ \t]*\?=[ \t]*(.*?)[ \t]*$", text, re.MULTILINE))


def test_the_written_makefile_has_this_repository_s_main_job(written: dict[str, str]) -> None:
    ours = (REPO / "Makefile").read_text(encoding="utf-8")
    theirs = written["Makefile"]
    for name in MAIN_JOB:
        assert targets(theirs)[name] == targets(ours)[name], name
    for name in VARIABLES:
        assert variables(theirs)[name] == variables(ours)[name], name
    assert "export JAXBENCH_MACHINE := $(MACHINE)" in theirs
    # the same progress line per step under make bench (jaxbench progress)
    job_step = [
        _normalise(line) for line in theirs.splitlines() if line.startswith(("bench: JOB", "JOB_"))
    ]
    assert job_step == [
        _normalise(line) for line in ours.splitlines() if line.startswith(("bench: JOB", "JOB_"))
    ]
    assert job_step == [
        "JOB_STEP := :",
        "bench: JOB = bench",
        "bench: JOB_STEP = jaxbench progress --job 'make bench'",
    ]
    # the job's last word is the same check (jaxbench check-run), its logs kept alike
    for name in ("CHECK_RUN", "ASV_LOGS", "ASV_LOG", "ASV_STATUS"):
        assert _definition(theirs, name) == _definition(ours, name), name
    assert "jaxbench pair-history --machine $(MACHINE)" in "".join(targets(theirs)["paired"][1])


def test_the_drift_check_sees_a_changed_step() -> None:
    ours = (REPO / "Makefile").read_text(encoding="utf-8")
    drifted = ours.replace("pair-history --machine", "pair-history --force --machine")
    assert targets(drifted)["paired"] != targets(ours)["paired"]


def _runs(steps: list[dict[str, object]], names: tuple[str, ...]) -> list[str]:
    by_name = {str(s.get("name")): str(s.get("run", "")) for s in steps}
    return [by_name[n].replace(' --config "$ASV_CONFIG"', "") for n in names]


def test_the_written_main_workflow_measures_and_pairs_as_ours(written: dict[str, str]) -> None:
    import yaml

    ours = load(REPO / ".github" / "workflows" / "measure.yml")["jobs"]["measure"]["steps"]
    theirs = yaml.safe_load(written[".github/workflows/benchmarks.yml"])["jobs"]["measure"]
    steps = (
        "Choose the commits to measure",
        "Run the benchmarks",
        "Time each new commit side by side with the one before it",
    )
    assert _runs(theirs["steps"], steps) == _runs(ours, steps)
    assert "jaxbench pair-history" in _runs(theirs["steps"], steps)[-1]


def test_the_written_review_steps_are_ours(written: dict[str, str]) -> None:
    import yaml

    ours = load(REPO / ".github" / "workflows" / "pr-bench.yml")["jobs"]["review"]["steps"]
    theirs = yaml.safe_load(written[".github/workflows/pr-bench.yml"])["jobs"]["review"]["steps"]
    names = [str(s["name"]) for s in ours if "run" in s and "Install" not in str(s["name"])]
    assert [
        str(s["name"]) for s in theirs if "run" in s and "Install" not in str(s["name"])
    ] == names
    assert _runs(theirs, tuple(names)) == _runs(ours, tuple(names))
    both = "\n".join(_runs(theirs, tuple(names)))
    # the sides run asv's environment: no hand-kept package list, no second install
    assert "--base-python" not in both
    assert "pip install" not in both


def test_one_machine_command_and_the_quick_check_times_no_warm_call(
    written: dict[str, str],
) -> None:
    makefile = written["Makefile"]
    recipes = [line for _, recipe in targets(makefile).values() for line in recipe]
    assert not [line for line in recipes if "asv machine" in line]
    assert [line for line in recipes if "jaxbench machine" in line]
    check = " ".join(targets(makefile)["bench-check"][1])
    assert "jaxbench machine --machine $(MACHINE)" in check
    assert "-b '^(?!.*\\.time_)'" in check
    pattern = re.compile(r"^(?!.*\.time_)")
    assert not pattern.search("starter.Starter.time_warm")
    assert pattern.search("starter.Starter.peakmem_call")


def test_benchmarks_md_imports_nothing_the_project_lacks(written: dict[str, str]) -> None:
    blocks = re.findall(r"```python\n(.*?)```", written["BENCHMARKS.md"], re.DOTALL)
    assert blocks
    for block in blocks:
        tree = ast.parse(block)
        imported = {
            (node.module or "").split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom)
        } | {
            a.name.split(".")[0]
            for n in ast.walk(tree)
            if isinstance(n, ast.Import)
            for a in n.names
        }
        assert imported <= {"jax", "numpy", "jaxbench"}, imported


def test_the_config_says_why_spawn(written: dict[str, str]) -> None:
    conf = written["asv.conf.json"]
    assert '"launch_method": "spawn"' in conf
    assert "forkserver" in conf
    assert "backend" in conf


# --- the matrix: the project's benchmark dependencies ---------------------------------


def _project_with_extras(root: Path, extras: str) -> Path:
    repo = make_src_package(root).root
    with (repo / "pyproject.toml").open("a", encoding="utf-8") as handle:
        handle.write("\n[project.optional-dependencies]\n" + extras)
    return repo


def test_the_matrix_rule(tmp_path: Path) -> None:
    """A bench extra whole; from other extras only what benchmarks/ imports; each
    pinned as installed, else by the requirement's own ==, else said unpinned."""
    repo = _project_with_extras(
        tmp_path / "p",
        'test = ["pytest>=8", "optax==0.2.8", "hypothesis"]\n'
        'bench = ["tabulate", "jax", "tinyjax[plot]"]\n'
        'plot = ["matplotlib>=3"]\n'
        'docs = ["sphinx", "toolz"]\n',
    )
    project = inspect_project(repo)

    def found(imports: set[str]) -> dict[str, tuple[str, str, str]]:
        chosen = benchmark_dependencies(
            project,
            imports,
            installed={"tabulate": "0.10.0"}.get,
            import_names=lambda name: {name.lower()},
        )
        return {p.name: (p.version, p.origin, p.why) for p in chosen}

    got = found({"toolz", "numpy"})
    # pytest, hypothesis, sphinx stay out; optax too: no benchmark imports it
    assert set(got) == {"tabulate", "matplotlib", "toolz"}
    assert got["tabulate"] == ("0.10.0", "installed where jaxbench init ran", "bench extra")
    assert got["matplotlib"] == ("", "not installed where jaxbench init ran", "bench extra")
    assert got["toolz"] == (
        "",
        "not installed where jaxbench init ran",
        "docs extra, benchmarks/ imports toolz",
    )
    got = found({"optax"})
    assert got["optax"] == (
        "0.2.8",
        "pinned by the test extra",
        "test extra, benchmarks/ imports optax",
    )


def test_a_dependency_group_no_benchmark_imports_stays_out(tmp_path: Path) -> None:
    """As seen in a real library: a PEP 735 ``dev`` group (not an extra) of three
    packages no benchmark imports put nothing in the matrix; one a benchmark
    imports does, called a dependency group."""
    repo = make_src_package(tmp_path / "p")
    with (repo.root / "pyproject.toml").open("a", encoding="utf-8") as handle:
        handle.write(
            '\n[dependency-groups]\ndev = ["ruff", "equinox", {include-group = "docs"}]\n'
            'docs = ["sphinx"]\n'
        )
    project = inspect_project(repo.root)
    assert [(o.name, o.kind, o.requirements) for o in project.extras] == [
        ("dev", "dependency group", ("ruff", "equinox", "sphinx")),
        ("docs", "dependency group", ("sphinx",)),
    ]
    none = benchmark_dependencies(project, set(), version_of, import_names)
    assert none == ()
    (chosen,) = benchmark_dependencies(project, {"equinox"}, version_of, import_names)
    assert chosen.name == "equinox"
    assert chosen.version == version_of("equinox")
    assert chosen.why == "dev dependency group, benchmarks/ imports equinox"


def test_init_puts_the_benchmark_dependencies_in_asv_s_matrix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _project_with_extras(
        tmp_path / "p", 'test = ["pytest", "optax", "equinox"]\nbench = ["tabulate"]\n'
    )
    (repo / "benchmarks").mkdir()
    (repo / "benchmarks" / "steps.py").write_text(
        "import optax\n\n\ndef time_adam():\n    optax.adam(1e-3)\n", encoding="utf-8"
    )
    assert main(["init", str(repo), "--jax", JAX]) == 0
    out = capsys.readouterr().out
    req = read_asv_conf(repo / "asv.conf.json")["matrix"]["req"]  # type: ignore[index]

    assert req == {
        "jax": [JAX],
        "optax": [version_of("optax")],
        "tabulate": [version_of("tabulate")],
    }
    installed = "installed where jaxbench init ran"
    assert (
        f"optax {version_of('optax')} ({installed}): test extra, benchmarks/ imports optax" in out
    )
    guide = (repo / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert f"- `optax`, pinned to {version_of('optax')} ({installed})" in guide
    assert "unpinned" not in guide.lower()
    from asv.config import Config
    from asv.environment import get_environments

    names = [e.name for e in get_environments(Config.load(str(repo / "asv.conf.json")), None)]
    assert len(names) == 1
    assert "optax" in names[0]
    assert "tabulate" in names[0]


def test_an_unpinned_package_is_called_unpinned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bench package not installed where init runs: listed unpinned in asv.conf.json
    ([""]: asv installs the newest), in init's output and in BENCHMARKS.md."""
    repo = _project_with_extras(tmp_path / "p", 'bench = ["no-such-package-here"]\n')
    assert main(["init", str(repo), "--jax", JAX]) == 0
    out = capsys.readouterr().out
    req = read_asv_conf(repo / "asv.conf.json")["matrix"]["req"]  # type: ignore[index]
    assert req == {"jax": [JAX], "no-such-package-here": [""]}
    assert (
        "no-such-package-here, unpinned (not installed where jaxbench init ran; asv "
        "installs the newest): bench extra" in out
    )
    guide = (repo / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert "- `no-such-package-here`, **unpinned** (not installed where jaxbench init ran)" in guide
    assert "pinned to" not in guide


# --- the advice and the rules agree ---------------------------------------------------


@pytest.mark.slow
def test_the_advice_to_run_init_again_works(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_src_package(tmp_path / "tinyjax").root
    assert main(["init", str(repo), "--jax", JAX]) == 0
    out = capsys.readouterr().out
    assert "run jaxbench init again with --force --jaxbench" in out  # a local jaxbench
    again = ["init", str(repo), "--jax", JAX, "--jaxbench", "jaxbench==0.1.0"]
    assert main(again) == 2
    assert "replace them with --force" in capsys.readouterr().err
    assert main([*again, "--force"]) == 0
    flow = (repo / ".github" / "workflows" / "pr-bench.yml").read_text(encoding="utf-8")
    assert 'JAXBENCH_REQUIREMENT: "jaxbench==0.1.0"' in flow
    assert main(again) == 0  # and now the files are as init writes them
    assert "nothing to do" in capsys.readouterr().out
