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
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from e2e_repo import git

__all__ = ["LAYER_SUITE", "Repo", "make_flat_package", "make_src_package"]

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
    """``flatjax``: flat layout, hatchling, one commit."""
    package = root / "flatjax"
    package.mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        "[build-system]\n"
        'requires = ["hatchling"]\n'
        'build-backend = "hatchling.build"\n\n'
        "[project]\n"
        'name = "flatjax"\n'
        'version = "0.2.0"\n'
        'dependencies = ["jax"]\n',
        encoding="utf-8",
    )
    (package / "__init__.py").write_text(
        "import jax.numpy as jnp\n\n\ndef double(x):\n    return 2 * x\n", "utf-8"
    )
    git(root, "init", "-q", "-b", "trunk")
    commits: list[str] = []
    _commit(root, commits, "flatjax")
    return Repo(root, tuple(commits))
