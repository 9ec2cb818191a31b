"""A corpus of project shapes: throw-away git repositories of tiny JAX libraries.

Each :class:`Shape` is a real layout and build backend that JAX libraries
use, with one function, ``layer(x, w) = tanh(x @ w)``, a README and at least
three commits that do not change what ``layer`` computes (so an A/A review and
the paired history must flag nothing):

========================  =======  =================================================
shape                     layout   build and version
========================  =======  =================================================
``src-setuptools``        src/     setuptools, a static version
``flat-setuptools-scm``   flat     setuptools + setuptools_scm (``_version.py`` written
                                   at build time, ignored by git); cloned without tags
``hatch-vcs``             src/     hatchling + hatch-vcs (``_version.py`` at build time)
``flit``                  flat     flit_core, ``__version__`` read from the module
``poetry-core``           flat     poetry-core, ``[tool.poetry]`` metadata
``merge-history``         src/     setuptools; a feature branch merged with a merge commit
``bench-workflows``       src/     setuptools; has its own pytest-benchmark workflow
``asv-conf``              flat     setuptools; has its own asv.conf.json and asv suite
========================  =======  =================================================

:func:`make_shape` writes one and commits; the tests (``tests/test_shapes.py``)
then adopt it as a user would. Pure stdlib and git.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from e2e_repo import git

__all__ = ["SHAPES", "Shape", "ShapeRepo", "layer_suite", "make_shape"]

LAYER = '''"""{name}: a tiny JAX library."""

import jax.numpy as jnp
{extra}

def layer(x, w):
    """tanh(x @ w)."""
    return jnp.tanh(x @ w)
'''

SETUPTOOLS_STATIC = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "{dist}"
version = "0.1.0"
requires-python = ">=3.10"
dependencies = ["numpy>=1.26", "jax>=0.4.30"]
{packages}"""

SRC_PACKAGES = """
[tool.setuptools.packages.find]
where = ["src"]
"""

SETUPTOOLS_SCM = """\
[build-system]
requires = ["setuptools>=64", "setuptools-scm>=8"]
build-backend = "setuptools.build_meta"

[project]
name = "{dist}"
dynamic = ["version"]
requires-python = ">=3.10"
dependencies = ["numpy>=1.26", "jax>=0.4.30"]

[tool.setuptools]
packages = ["{package}"]

[tool.setuptools_scm]
version_file = "{package}/_version.py"
"""

HATCH_VCS = """\
[build-system]
requires = ["hatchling", "hatch-vcs"]
build-backend = "hatchling.build"

[project]
name = "{dist}"
dynamic = ["version"]
requires-python = ">=3.10"
dependencies = ["numpy>=1.26", "jax>=0.4.30"]

[tool.hatch.version]
source = "vcs"

[tool.hatch.build.hooks.vcs]
version-file = "src/{package}/_version.py"

[tool.hatch.build.targets.wheel]
packages = ["src/{package}"]
"""

FLIT = """\
[build-system]
requires = ["flit_core>=3.4,<4"]
build-backend = "flit_core.buildapi"

[project]
name = "{dist}"
dynamic = ["version", "description"]
requires-python = ">=3.10"
dependencies = ["numpy>=1.26", "jax>=0.4.30"]

[tool.flit.module]
name = "{package}"
"""

POETRY = """\
[build-system]
requires = ["poetry-core>=1.0.0"]
build-backend = "poetry.core.masonry.api"

[tool.poetry]
name = "{dist}"
version = "0.1.0"
description = "a tiny JAX library"
authors = ["Someone <someone@example.com>"]
packages = [{{ include = "{package}" }}]

[tool.poetry.dependencies]
python = ">=3.10"
numpy = ">=1.26"
jax = ">=0.4.30"
"""

#: A pytest-benchmark workflow of the repository's own (init must leave it alone).
OWN_BENCH_WORKFLOW = """\
name: benchmark
on: [push]
permissions: {}
jobs:
  benchmark:
    runs-on: ubuntu-latest
    permissions:
      contents: read
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
        with:
          persist-credentials: false
      - run: python -m pip install . pytest pytest-benchmark
      - run: python -m pytest tests/benchmarks --benchmark-only
"""

OWN_PYTEST_BENCHMARK = """\
import numpy as np

from {package} import layer


def test_layer(benchmark):
    x = np.ones((64, 32), np.float32)
    w = np.ones((32, 16), np.float32)
    benchmark(lambda: layer(x, w).block_until_ready())
"""

#: The repository's own asv suite (plain asv, no jaxbench), before jaxbench.
OWN_ASV_SUITE = """\
import jax
import numpy as np

from {package} import layer


class Layer:
    def setup(self):
        self.x = jax.device_put(np.ones((64, 32), np.float32))
        self.w = jax.device_put(np.ones((32, 16), np.float32))
        layer(self.x, self.w).block_until_ready()

    def time_layer(self):
        layer(self.x, self.w).block_until_ready()
"""


def _own_asv_conf(package: str) -> str:
    conf = {
        "version": 1,
        "project": package,
        "repo": ".",
        "branches": ["main"],
        "environment_type": "virtualenv",
        "pythons": ["3.11"],
        "matrix": {"req": {"jax": ["0.10.2"]}},
        "build_command": ["python -m pip wheel --no-deps -w {build_cache_dir} {build_dir}"],
        "env_dir": ".asv/env",
        "results_dir": "results",
        "html_dir": "html",
    }
    return json.dumps(conf, indent=4) + "\n"


@dataclass(frozen=True)
class Shape:
    """One project shape: how its files look at the first commit."""

    name: str
    #: the import name of the package
    package: str
    #: the distribution name
    dist: str
    #: "src" or "flat"
    layout: str
    #: pyproject.toml's template (``{dist}``, ``{package}``, ``{packages}``)
    pyproject: str
    #: what the package module adds (e.g. reading ``_version.py``)
    module_extra: str = ""
    #: further files (path -> text, ``{package}`` filled in)
    files: dict[str, str] = field(default_factory=dict)
    #: .gitignore lines of its own
    ignore: tuple[str, ...] = ()
    #: its history: "linear" or "merge"
    history: str = "linear"
    #: cloned without tags from a repository that has one (setuptools_scm's case)
    clone_without_tags: bool = False
    #: commits of its history
    commits: int = 3

    @property
    def module(self) -> str:
        """The package's ``__init__.py``, relative to the repository."""
        base = f"src/{self.package}" if self.layout == "src" else self.package
        return f"{base}/__init__.py"


SHAPES: tuple[Shape, ...] = (
    Shape("src-setuptools", "shapesrc", "shapesrc", "src", SETUPTOOLS_STATIC),
    Shape(
        "flat-setuptools-scm",
        "scmflat",
        "scmflat",
        "flat",
        SETUPTOOLS_SCM,
        module_extra="from ._version import version as __version__\n",
        ignore=("scmflat/_version.py",),
        clone_without_tags=True,
        commits=5,
    ),
    Shape(
        "hatch-vcs",
        "hvcs",
        "hvcs",
        "src",
        HATCH_VCS,
        module_extra="from ._version import __version__\n",
        ignore=("src/hvcs/_version.py",),
    ),
    Shape("flit", "flitpkg", "flitpkg", "flat", FLIT, module_extra='\n__version__ = "0.1.0"\n'),
    Shape("poetry-core", "poetpkg", "poetpkg", "flat", POETRY),
    Shape("merge-history", "mergepkg", "mergepkg", "src", SETUPTOOLS_STATIC, history="merge"),
    Shape(
        "bench-workflows",
        "wfpkg",
        "wfpkg",
        "src",
        SETUPTOOLS_STATIC,
        files={
            ".github/workflows/benchmark.yml": OWN_BENCH_WORKFLOW,
            "tests/benchmarks/test_speed.py": OWN_PYTEST_BENCHMARK,
        },
    ),
    Shape(
        "asv-conf",
        "asvpkg",
        "asvpkg",
        "flat",
        SETUPTOOLS_STATIC,
        files={
            "asv.conf.json": "",  # written by _own_asv_conf
            "benchmarks/__init__.py": "",
            "benchmarks/own.py": OWN_ASV_SUITE,
        },
    ),
)


@dataclass(frozen=True)
class ShapeRepo:
    """A shape made on disk: its root and commits, oldest first (first parents)."""

    shape: Shape
    root: Path
    commits: tuple[str, ...]


def layer_suite(package: str) -> str:
    """The suite a user adds for ``layer``, as the README's example says."""
    return f"""\
import numpy as np
from jaxbench.measure import Workload, jax_suite

from {package} import layer


def layer_reference(x, w):
    return np.tanh(x @ w)


def layer_workload(rows):
    def inputs(rng):
        x = rng.normal(size=(rows, 32)).astype(np.float32)
        w = rng.normal(size=(32, 16)).astype(np.float32)
        return x, w

    return Workload(
        name="layer", fn=layer, inputs=inputs, reference=layer_reference, params={{"rows": rows}}
    )


Layer, LayerFigures = jax_suite("Layer", layer_workload, params={{"rows": [64]}})
"""


def _write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _commit(root: Path, message: str, hour: int) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message, date=f"2024-01-01T{hour:02d}:00:00+00:00")
    return git(root, "rev-parse", "HEAD")


def _readme_change(root: Path, line: str) -> None:
    with (root / "README.md").open("a", encoding="utf-8") as readme:
        readme.write(f"\n{line}\n")


def _first_parents(root: Path) -> tuple[str, ...]:
    return tuple(reversed(git(root, "rev-list", "--first-parent", "HEAD").split()))


def make_shape(
    shape: Shape, root: Path, *, clone: Callable[[Path, Path], None] | None = None
) -> ShapeRepo:
    """``shape`` written at ``root`` with its history (see the module doc)."""
    origin = root.with_name(root.name + "-origin") if shape.clone_without_tags else root
    origin.mkdir(parents=True)
    packages = SRC_PACKAGES if shape.layout == "src" and "find" not in shape.pyproject else ""
    _write(
        origin,
        "pyproject.toml",
        shape.pyproject.format(dist=shape.dist, package=shape.package, packages=packages),
    )
    _write(origin, shape.module, LAYER.format(name=shape.package, extra=shape.module_extra))
    _write(origin, "README.md", f"# {shape.package}\n")
    _write(origin, ".gitignore", "\n".join(("/.asv/", "/html/", *shape.ignore)) + "\n")
    for relative, text in shape.files.items():
        if relative == "asv.conf.json":
            text = _own_asv_conf(shape.package)
        _write(origin, relative, text.format(package=shape.package))
    git(origin, "init", "-q", "-b", "main")
    hour = 0
    _commit(origin, f"{shape.package} as is", hour)
    git(origin, "tag", "v0.1.0")
    for i in range(2, shape.commits + 1):
        hour += 1
        if shape.history == "merge" and i == shape.commits:
            git(origin, "checkout", "-q", "-b", "feature", "HEAD~1")
            _readme_change(origin, "A feature branch's change.")
            _commit(origin, "feature: README", hour)
            git(origin, "checkout", "-q", "main")
            hour += 1
            git(
                origin,
                "merge",
                "-q",
                "--no-ff",
                "-m",
                "Merge branch 'feature'",
                "feature",
                date=f"2024-01-01T{hour:02d}:00:00+00:00",
            )
            continue
        _readme_change(origin, f"README change {i}.")
        _commit(origin, f"README change {i}", hour)
    if shape.clone_without_tags:
        subprocess.run(
            ["git", "clone", "-q", "--no-tags", str(origin), str(root)],
            check=True,
            capture_output=True,
        )
        assert git(root, "tag", "--list") == ""
    return ShapeRepo(shape, root, _first_parents(root))
