"""Histories of the project shapes, for the end-to-end corpus (tests/test_shapes.py).

The shapes themselves (files, build backend, layout, version scheme, the
benchmark set-ups a project may already have) are ``tests/init_repo.py``'s
:data:`~init_repo.SHAPES`, one tiny JAX package each, whose function is
``double(x) = 2 * x``. Here each gets a history a user's repository has:

* at least three commits that do not change what ``double`` computes (README
  changes), so an A/A review and the paired history must flag nothing;
* ``flat-setuptools-scm``: five commits, a tag at the first, and the
  repository the tests use is a ``git clone --no-tags`` of it (its
  ``_version.py`` is written at build time and a clone without tags builds as
  ``0.1.devN+g<hash>``);
* ``merge-history``: ``src-setuptools`` whose newest commit merges a feature
  branch (``--no-ff``), so first parents skip the branch's own commit.

:func:`double_suite` is the suite a user adds for ``double``, as the README's
example; :data:`BROKEN_SUITE` one whose reference is wrong. Pure stdlib and git.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from e2e_repo import git
from init_repo import SHAPES, write_files

__all__ = ["BROKEN_SUITE", "HISTORIES", "History", "ShapeRepo", "double_suite", "make_history"]


@dataclass(frozen=True)
class History:
    """One shape of init_repo.SHAPES and the history it is given."""

    name: str
    #: the key of init_repo.SHAPES
    shape: str
    commits: int = 3
    merge: bool = False
    #: the tests use a clone without tags of a repository that has one
    clone_without_tags: bool = False

    @property
    def package(self) -> str:
        return SHAPES[self.shape].found[1]


HISTORIES: tuple[History, ...] = (
    History("src-setuptools", "src-setuptools"),
    History("flat-setuptools-scm", "flat-setuptools-scm", commits=5, clone_without_tags=True),
    History("flat-hatchling", "flat-hatchling"),
    History("hatch-vcs", "hatch-vcs"),
    History("flit-dynamic-version", "flit-dynamic-version"),
    History("pdm-backend", "pdm-backend"),
    History("poetry-core", "poetry-core"),
    History("merge-history", "src-setuptools", merge=True),
    History("benchmark-workflows", "benchmark-workflows"),
    History("asv-conf", "asv-conf"),
)


@dataclass(frozen=True)
class ShapeRepo:
    """A history made on disk: its root and first-parent commits, oldest first."""

    history: History
    root: Path
    commits: tuple[str, ...]


def double_suite(package: str, *, reference: str = "2.0 * x", name: str = "Double") -> str:
    """A suite for ``double``, as the README's example (``reference``: what it checks against)."""
    return f'''\
import numpy as np
from jaxbench.measure import Workload, jax_suite

from {package} import double


def double_reference(x):
    return {reference}


def double_workload(rows):
    def inputs(rng):
        return (rng.normal(size=(rows, 32)).astype(np.float32),)

    return Workload(
        name="{name.lower()}",
        fn=double,
        inputs=inputs,
        reference=double_reference,
        params={{"rows": rows}},
    )


{name}, {name}Figures = jax_suite("{name}", double_workload, params={{"rows": [64]}})
'''


#: A suite whose reference is not what ``double`` computes: its check must fail.
BROKEN_SUITE = double_suite("{package}", reference="3.0 * x", name="Broken")


def _commit(root: Path, message: str, hour: int) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message, date=f"2024-01-01T{hour:02d}:00:00+00:00")


def _readme(root: Path, line: str) -> None:
    with (root / "README.md").open("a", encoding="utf-8") as readme:
        readme.write(f"\n{line}\n")


def make_history(history: History, root: Path) -> ShapeRepo:
    """``history``'s repository at ``root`` (see the module doc)."""
    origin = root.with_name(root.name + "-origin") if history.clone_without_tags else root
    origin.mkdir(parents=True)
    write_files(origin, SHAPES[history.shape].files)
    (origin / "README.md").write_text(f"# {history.package}\n", encoding="utf-8")
    git(origin, "init", "-q", "-b", "main")
    _commit(origin, f"{history.package} as is", 0)
    git(origin, "tag", "v0.1.0")
    for i in range(2, history.commits + 1):
        if history.merge and i == history.commits:
            git(origin, "checkout", "-q", "-b", "feature", "HEAD~1")
            # a file of its own: two appends to README.md's end would conflict
            (origin / "FEATURE.md").write_text("A feature branch's change.\n", encoding="utf-8")
            _commit(origin, "feature: FEATURE.md", i)
            git(origin, "checkout", "-q", "main")
            git(origin, "merge", "-q", "--no-ff", "-m", "Merge branch 'feature'", "feature",
                date=f"2024-01-01T{i + 1:02d}:00:00+00:00")  # fmt: skip
            continue
        _readme(origin, f"README change {i}.")
        _commit(origin, f"README change {i}", i)
    if history.clone_without_tags:
        subprocess.run(
            ["git", "clone", "-q", "--no-tags", str(origin), str(root)],
            check=True,
            capture_output=True,
        )
    commits = git(root, "rev-list", "--first-parent", "--reverse", "HEAD").split()
    return ShapeRepo(history, root, tuple(commits))
