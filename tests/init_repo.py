"""Throw-away git repositories of tiny JAX packages (not jaxbench), for ``jaxbench init``.

:func:`make_src_package` writes ``tinyjax`` (``src/`` layout, setuptools,
depends on numpy and jax) and commits three times:

* ``c1``: ``tinyjax.layer(x, w) = tanh(x @ w)``;
* ``c2``: ``layer`` does real extra work that keeps the answer (a Gram matrix
  of tiled inputs, multiplied by 0 and added): XLA keeps it, so its flops grow
  by a deterministic factor;
* ``c3``: a no-op change (README only).

:func:`make_flat_package` writes ``flatjax`` (flat layout, hatchling) with one
commit. :data:`LAYER_SUITE` is the suite the README tells users to add.

:data:`SHAPES` are the common shapes of a JAX project's repository (build
backend, layout, version scheme, benchmark set-ups it has already), each the
files of a tiny package; :func:`make_shape` commits one, for ``jaxbench
init``'s detection (tests/test_init.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from e2e_repo import git

__all__ = [
    "LAYER_SUITE",
    "SHAPES",
    "Repo",
    "Shape",
    "make_flat_package",
    "make_shape",
    "make_src_package",
    "write_files",
]

LAYER = "def layer(x, w):\n    return jnp.tanh(x @ w)\n"
LAYER_MORE_WORK = (
    "def layer(x, w):\n"
    "    big = jnp.tile(x, (4, 8))  # real extra work, kept by XLA, answer unchanged\n"
    "    return jnp.tanh(x @ w) + 0.0 * jnp.sum(big.T @ big)\n"
)

#: A suite for the package's own function, written as the README says.
LAYER_SUITE = """\
import numpy as np
from jaxbench.measure import Workload, jax_suite

from tinyjax import layer


def layer_reference(x, w):
    return np.tanh(x @ w)


def layer_workload(rows):
    def inputs(rng):
        x = rng.normal(size=(rows, 32)).astype(np.float32)
        w = rng.normal(size=(32, 16)).astype(np.float32)
        return x, w

    return Workload(
        name="layer",
        description="tanh(x @ w)",
        fn=layer,
        inputs=inputs,
        reference=layer_reference,
        params={"rows": rows},
    )


Layer, LayerFigures = jax_suite("Layer", layer_workload, params={"rows": [64]})
"""


@dataclass(frozen=True)
class Repo:
    root: Path
    commits: tuple[str, ...]


def _commit(root: Path, commits: list[str], message: str) -> None:
    # An hour apart: asv orders results by commit date.
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message, date=f"2024-01-01T{len(commits):02d}:00:00+00:00")
    commits.append(git(root, "rev-parse", "HEAD"))


def make_src_package(root: Path, bench_extra: tuple[str, ...] = ()) -> Repo:
    """``tinyjax``: src/ layout, setuptools, three commits (as is, more work, no-op).

    ``bench_extra``: requirements of a ``bench`` extra (what only the benchmarks need).
    """
    package = root / "src" / "tinyjax"
    package.mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        "[build-system]\n"
        'requires = ["setuptools>=61"]\n'
        'build-backend = "setuptools.build_meta"\n\n'
        "[project]\n"
        'name = "tinyjax"\n'
        'version = "0.1.0"\n'
        'requires-python = ">=3.10"\n'
        'dependencies = ["numpy>=1.26", "jax>=0.4.30"]\n'
        + (
            f"\n[project.optional-dependencies]\nbench = {list(bench_extra)!r}\n".replace("'", '"')
            if bench_extra
            else ""
        ),
        encoding="utf-8",
    )
    (root / "README.md").write_text("# tinyjax\n", encoding="utf-8")
    (root / ".gitignore").write_text("/.asv/\n/html/\n", encoding="utf-8")
    module = package / "__init__.py"
    module.write_text(f'"""A tiny JAX package."""\nimport jax.numpy as jnp\n\n\n{LAYER}', "utf-8")
    git(root, "init", "-q", "-b", "main")
    commits: list[str] = []
    _commit(root, commits, "c1: tinyjax as is")
    module.write_text(module.read_text("utf-8").replace(LAYER, LAYER_MORE_WORK), "utf-8")
    _commit(root, commits, "c2: layer does more work")
    with (root / "README.md").open("a", encoding="utf-8") as readme:
        readme.write("\nA no-op change.\n")
    _commit(root, commits, "c3: README only")
    return Repo(root, tuple(commits))


def make_flat_package(root: Path) -> Repo:
    """``flatjax``: flat layout, hatchling (:data:`SHAPES` ``["flat-hatchling"]``), one
    commit on a branch named ``trunk``."""
    return make_shape(root, "flat-hatchling", branch="trunk")


@dataclass(frozen=True)
class Shape:
    """A project's files, and what init must find in them."""

    files: dict[str, str]
    #: (distribution name, import package, layout, build backend)
    found: tuple[str, str, str, str]


_DOUBLE = "import jax.numpy as jnp\n\n\ndef double(x):\n    return 2 * jnp.asarray(x)\n"
_TESTS = {"tests/__init__.py": "", "tests/test_double.py": "def test_nothing():\n    pass\n"}
_SETUPTOOLS = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "srcjax"
version = "1.2.0"
dependencies = ["jax"]
"""
_PYTEST_BENCHMARK_FLOW = """\
name: benchmark
on: [push]
jobs:
  bench:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: pip install pytest-benchmark && pytest tests --benchmark-only --benchmark-json out.json
      - uses: benchmark-action/github-action-benchmark@v1
"""
_CODSPEED_FLOW = """\
name: codspeed
on: [push]
jobs:
  benchmarks:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: CodSpeedHQ/action@v3
        with:
          run: pytest tests/ --codspeed
"""
_ASV_SUITE = """\
from srcjax import double


class Double:
    def time_double(self):
        double(3.0)
"""

SHAPES: dict[str, Shape] = {
    # src layout, setuptools, a static version
    "src-setuptools": Shape(
        {"pyproject.toml": _SETUPTOOLS, "src/srcjax/__init__.py": _DOUBLE, **_TESTS},
        ("srcjax", "srcjax", "src", "setuptools.build_meta"),
    ),
    # flat layout, setuptools_scm (a clone without tags), a package named otherwise
    # than the distribution, tests/ and docs/ packages beside it
    "flat-setuptools-scm": Shape(
        {
            "pyproject.toml": """\
[build-system]
requires = ["setuptools>=64", "setuptools_scm>=8"]
build-backend = "setuptools.build_meta"

[project]
name = "flat-scm-sampler"
dynamic = ["version"]
dependencies = ["jax", "numpy"]

[tool.setuptools]
packages = ["scmsampler"]

[tool.setuptools_scm]
version_file = "scmsampler/_version.py"
""",
            "scmsampler/__init__.py": "from scmsampler._version import version\n" + _DOUBLE,
            "docs/__init__.py": "",
            ".gitignore": "scmsampler/_version.py\n",
            **_TESTS,
        },
        ("flat-scm-sampler", "scmsampler", "flat", "setuptools.build_meta"),
    ),
    # flat layout, hatchling finding the package named after the project, a static version
    "flat-hatchling": Shape(
        {
            "pyproject.toml": """\
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "flatjax"
version = "0.2.0"
dependencies = ["jax"]
""",
            "flatjax/__init__.py": _DOUBLE,
            **_TESTS,
        },
        ("flatjax", "flatjax", "flat", "hatchling.build"),
    ),
    # hatchling and hatch-vcs, the wheel's package named in hatch's settings
    "hatch-vcs": Shape(
        {
            "pyproject.toml": """\
[build-system]
requires = ["hatchling", "hatch-vcs"]
build-backend = "hatchling.build"

[project]
name = "hatch-vcs-demo"
dynamic = ["version"]
dependencies = ["jax"]

[tool.hatch.version]
source = "vcs"

[tool.hatch.build.hooks.vcs]
version-file = "src/hvdemo/_version.py"

[tool.hatch.build.targets.wheel]
packages = ["src/hvdemo"]
""",
            "src/hvdemo/__init__.py": _DOUBLE,
            **_TESTS,
        },
        ("hatch-vcs-demo", "hvdemo", "src", "hatchling.build"),
    ),
    # flit_core: version and description read from the module, flit's module name
    "flit-dynamic-version": Shape(
        {
            "pyproject.toml": """\
[build-system]
requires = ["flit_core>=3.4"]
build-backend = "flit_core.buildapi"

[project]
name = "flit-demo"
dynamic = ["version", "description"]
dependencies = ["jax"]

[tool.flit.module]
name = "flitmod"
""",
            "flitmod/__init__.py": '"""A tiny JAX package."""\n\n__version__ = "0.3.0"\n' + _DOUBLE,
            **_TESTS,
        },
        ("flit-demo", "flitmod", "flat", "flit_core.buildapi"),
    ),
    # pdm-backend and its package-dir
    "pdm-backend": Shape(
        {
            "pyproject.toml": """\
[build-system]
requires = ["pdm-backend"]
build-backend = "pdm.backend"

[project]
name = "pdm-demo"
version = "0.1.0"
dependencies = ["jax"]

[tool.pdm.build]
package-dir = "src"
""",
            "src/pdm_demo/__init__.py": _DOUBLE,
            **_TESTS,
        },
        ("pdm-demo", "pdm_demo", "src", "pdm.backend"),
    ),
    # poetry-core: [tool.poetry] only, its package from src/, a dev group
    "poetry-core": Shape(
        {
            "pyproject.toml": """\
[tool.poetry]
name = "poetry-demo"
version = "0.1.0"
description = ""
authors = []
packages = [{ include = "poetrylib", from = "src" }]

[tool.poetry.dependencies]
python = ">=3.10"
jax = ">=0.4"

[tool.poetry.group.dev.dependencies]
pytest = "^8"

[build-system]
requires = ["poetry-core>=1.0"]
build-backend = "poetry.core.masonry.api"
""",
            "src/poetrylib/__init__.py": _DOUBLE,
            **_TESTS,
        },
        ("poetry-demo", "poetrylib", "src", "poetry.core.masonry.api"),
    ),
    # benchmark workflows of its own (pytest-benchmark, CodSpeed) and their traces
    "benchmark-workflows": Shape(
        {
            "pyproject.toml": _SETUPTOOLS
            + """
[project.optional-dependencies]
test = ["pytest", "pytest-benchmark"]

[tool.pytest.ini_options]
addopts = "--benchmark-skip"
""",
            "src/srcjax/__init__.py": _DOUBLE,
            ".github/workflows/benchmark.yml": _PYTEST_BENCHMARK_FLOW,
            ".github/workflows/codspeed.yml": _CODSPEED_FLOW,
            ".github/workflows/tests.yml": "name: tests\non: [push]\njobs: {}\n",
            ".benchmarks/Linux-CPython-3.11-64bit/0001_base.json": "{}\n",
            **_TESTS,
        },
        ("srcjax", "srcjax", "src", "setuptools.build_meta"),
    ),
    # an asv set-up of its own at the top: asv.conf.json, benchmarks/ with a suite
    "asv-conf": Shape(
        {
            "pyproject.toml": _SETUPTOOLS,
            "src/srcjax/__init__.py": _DOUBLE,
            "asv.conf.json": '{"version": 1, "project": "srcjax", "repo": ".", '
            '"environment_type": "virtualenv", "benchmark_dir": "benchmarks"}\n',
            "benchmarks/__init__.py": '"""asv suites of srcjax."""\n',
            "benchmarks/bench_double.py": _ASV_SUITE,
        },
        ("srcjax", "srcjax", "src", "setuptools.build_meta"),
    ),
}


def write_files(root: Path, files: Mapping[str, str]) -> None:
    """Each of ``files`` (a path relative to ``root``: its text) written, folders made."""
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def make_shape(root: Path, shape: str, branch: str = "main") -> Repo:
    """A git repository holding :data:`SHAPES` ``[shape]``'s files, one commit on
    ``branch``, no tag."""
    write_files(root, SHAPES[shape].files)
    git(root, "init", "-q", "-b", branch)
    commits: list[str] = []
    _commit(root, commits, shape)
    return Repo(root, tuple(commits))
