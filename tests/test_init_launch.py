"""``jaxbench init`` writes ``forkserver`` only where a fork is safe, and says why.

Real throw-away packages (``tests/init_repo.py``) and the real check: a fresh
Python (this one) importing jax, the package and its benchmark modules, then
asking jax whether its backend started (:mod:`jaxbench.scaffold.launch`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from init_repo import make_src_package
from jaxbench.jobs.init_checks import start_check
from jaxbench.scaffold.launch import FORKSERVER, SPAWN, Launch
from jaxbench.scaffold.plan import Settings, render
from jaxbench.scaffold.project import inspect_project
from jaxbench.scaffold.sources import Requirement
from jaxbench.store.asv_conf import read_asv_conf


def _package(tmp_path: Path, init_text: str | None = None) -> Path:
    root = make_src_package(tmp_path / "tinyjax").root
    if init_text is not None:
        (root / "src" / "tinyjax" / "__init__.py").write_text(init_text, encoding="utf-8")
    return root


def _check(root: Path) -> Launch:
    return start_check(root, "tinyjax", "src").result()


def test_a_package_that_starts_no_backend_gets_forkserver(tmp_path: Path) -> None:
    launch = _check(_package(tmp_path))
    assert launch == Launch(FORKSERVER, "importing tinyjax and benchmarks/ starts no jax backend")


def test_a_module_level_array_in_the_package_means_spawn(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        "import jax.numpy as jnp\n\nSCALE = jnp.float32(2.0)  # starts the backend\n\n\n"
        "def layer(x, w):\n    return SCALE * jnp.tanh(x @ w)\n",
    )
    assert _check(root) == Launch(SPAWN, "importing tinyjax starts jax's backend")


def test_a_prng_key_in_a_benchmark_module_means_spawn(tmp_path: Path) -> None:
    root = _package(tmp_path)
    bench = root / "benchmarks"
    bench.mkdir()
    (bench / "__init__.py").write_text("", encoding="utf-8")
    (bench / "a_fine.py").write_text("import jax\n", encoding="utf-8")
    (bench / "keys.py").write_text("import jax\n\nKEY = jax.random.key(0)\n", encoding="utf-8")
    assert _check(root) == Launch(SPAWN, "importing benchmarks.keys starts jax's backend")


def test_a_package_that_cannot_be_imported_here_means_spawn_and_why(tmp_path: Path) -> None:
    root = _package(tmp_path, "import not_installed_anywhere\n")
    launch = _check(root)
    assert launch.method == SPAWN
    assert launch.why == (
        "could not check: importing tinyjax failed here "
        "(ModuleNotFoundError: No module named 'not_installed_anywhere')"
    )


def test_a_python_that_does_not_exist_means_spawn(tmp_path: Path) -> None:
    launch = start_check(_package(tmp_path), "tinyjax", "src", python=str(tmp_path / "no")).result()
    assert launch.method == SPAWN
    assert launch.why.startswith("could not check (FileNotFoundError running ")


def test_close_stops_a_check_that_still_runs(tmp_path: Path) -> None:
    check = start_check(_package(tmp_path), "tinyjax", "src")
    check.close()  # init stopped early (a bad option): no process is left behind
    assert check.result().method == SPAWN  # killed: no answer, so the safe choice


@pytest.mark.parametrize(
    ("launch", "said"),
    [
        (Launch(FORKSERVER, "importing tinyjax and benchmarks/ starts no jax backend"),
         "jaxbench init checked: importing tinyjax and benchmarks/ starts no jax backend"),
        (Launch(SPAWN, "importing tinyjax starts jax's backend"),
         "(importing tinyjax starts jax's backend)"),
    ],
)  # fmt: skip
def test_the_written_config_holds_the_method_and_says_why(
    tmp_path: Path, launch: Launch, said: str
) -> None:
    settings = Settings(
        project=inspect_project(_package(tmp_path)),
        python=f"{sys.version_info.major}.{sys.version_info.minor}",
        jax_versions=("0.10.2",),
        jaxbench=Requirement("jaxbench==0.1.0", "test", True),
        asv="asv==0.6.6",
        asv_runner="asv_runner==0.3.2",
        launch=launch,
    )
    text = next(f.text for f in render(settings).files if f.path == "asv.conf.json")
    path = tmp_path / "asv.conf.json"
    path.write_text(text, encoding="utf-8")
    assert read_asv_conf(path)["launch_method"] == launch.method
    comment = " ".join(
        line.strip().removeprefix("// ")
        for line in text.splitlines()
        if line.strip().startswith("//")
    )
    assert said in comment
    assert all(len(line) <= 100 for line in text.splitlines())
