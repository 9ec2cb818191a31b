"""Which of a project's optional dependencies go into asv's matrix (pure).

A suite imports more than the project needs to run: an optimizer step
benchmark imports optax, a model benchmark flax or equinox. asv installs the
project *with its dependencies* in each environment, but never its extras, so
those packages must be requirements of the matrix. The rule
(:func:`benchmark_dependencies`), from what the project declares:

* every requirement of an extra or dependency group named ``bench``,
  ``benchmark``, ``benchmarks`` or ``asv``: the project says so;
* from any other extra or group (``test``, ``dev``, ...), the **JAX
  libraries** (:data:`JAX_LIBRARIES`, or a package installed here that
  depends on jax): what a JAX benchmark calls, while pytest, ruff or sphinx
  stay out of the timed environments;
* from any extra or group, a package the existing ``benchmarks/`` suite imports.

Each is pinned to the version installed here (what the project uses today),
else to the requirement's own ``==`` pin, else left unpinned (asv installs
the newest). jax, jaxlib, jaxbench, asv and the project itself never count.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from jaxbench.scaffold.project import Project

__all__ = [
    "BENCH_EXTRAS",
    "JAX_LIBRARIES",
    "MatrixPackage",
    "benchmark_dependencies",
    "normalise",
]

BENCH_EXTRAS = frozenset({"bench", "benchmark", "benchmarks", "asv"})
#: JAX libraries a benchmark calls (distribution names, normalised).
JAX_LIBRARIES = frozenset(
    {
        "optax",
        "flax",
        "equinox",
        "chex",
        "diffrax",
        "lineax",
        "optimistix",
        "orbax_checkpoint",
        "dm_haiku",
        "distrax",
        "numpyro",
        "blackjax",
        "jraph",
        "jaxopt",
        "optree",
        "penzai",
        "treescope",
    }
)
_NEVER = frozenset({"jax", "jaxlib", "jaxbench", "asv", "asv_runner", "jax_cuda12_plugin"})
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_PIN = re.compile(r"==\s*([0-9][A-Za-z0-9.+!-]*)\s*(?:$|[;,])")


def normalise(name: str) -> str:
    """A package name as PEP 503 compares them (``-``, ``_`` and ``.`` alike), lowercase."""
    return re.sub(r"[-_.]+", "_", name).lower()


@dataclass(frozen=True)
class MatrixPackage:
    """A package of the matrix beside jax."""

    #: The name as the project spells it.
    name: str
    #: The pinned version; "" leaves it unpinned.
    version: str
    #: Why it is there, for people: "bench extra", "test extra, a JAX library"...
    why: str


def benchmark_dependencies(
    project: Project,
    suite_imports: Iterable[str],
    installed: Callable[[str], str | None],
    requires_jax: Callable[[str], bool],
) -> tuple[MatrixPackage, ...]:
    """The project's benchmark dependencies, by the rule above, sorted by name."""
    imported = {normalise(i) for i in suite_imports}
    chosen: dict[str, MatrixPackage] = {}
    for extra, requirements in project.extras:
        for requirement in requirements:
            match = _NAME.match(requirement)
            if match is None:
                continue
            name = match.group(1)
            key = normalise(name)
            if key in _NEVER or key == normalise(project.name) or key in chosen:
                continue
            if normalise(extra) in BENCH_EXTRAS:
                why = f"{extra} extra"
            elif key in imported:
                why = f"{extra} extra, imported by benchmarks/"
            elif key in JAX_LIBRARIES or requires_jax(name):
                why = f"{extra} extra, a JAX library"
            else:
                continue
            version = installed(name)
            if version is not None:
                why += f"; {version} installed here"
            else:
                pin = _PIN.search(requirement)
                version = pin.group(1) if pin else None
                why += f"; pinned {version} there" if version else "; unpinned: not installed here"
            chosen[key] = MatrixPackage(name, version or "", why)
    return tuple(sorted(chosen.values(), key=lambda p: normalise(p.name)))
