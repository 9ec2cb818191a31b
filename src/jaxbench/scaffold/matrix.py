"""Which of a project's optional dependencies go into asv's matrix (pure).

A suite imports more than the project needs to run: an optimizer step
benchmark imports optax, a model benchmark flax or equinox. asv installs the
project *with its dependencies* in each environment, but never its extras or
dependency groups, so those packages must be requirements of the matrix. The
rule (:func:`benchmark_dependencies`), from what the project declares:

* every requirement of an extra or dependency group named ``bench``,
  ``benchmark``, ``benchmarks`` or ``asv`` (:data:`BENCH_EXTRAS`): the project
  says they are for benchmarks (``pkg[other]`` of the project itself brings
  that extra's packages too);
* from any other extra or group (``test``, ``dev``, ``docs``...), only a
  package that the existing ``benchmarks/`` imports, JAX libraries included:
  pytest, ruff or sphinx, and a JAX library no benchmark calls, stay out of
  the timed environments.

Each is pinned to the version installed here (what the project uses today),
else to the requirement's own exact ``==`` pin; a package with neither is
listed *unpinned* (asv installs the newest when it makes an environment),
and init and BENCHMARKS.md say so. jax, jaxlib, jaxbench, asv and the project
itself never count.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement

from jaxbench.scaffold.project import OptionalDependencies, Project

__all__ = ["BENCH_EXTRAS", "MatrixPackage", "benchmark_dependencies", "normalise"]

BENCH_EXTRAS = frozenset({"bench", "benchmark", "benchmarks", "asv"})
_INSTALLED = "installed where jaxbench init ran"
_NEVER = frozenset({"jax", "jaxlib", "jaxbench", "asv", "asv_runner", "jax_cuda12_plugin"})


def normalise(name: str) -> str:
    """A package name as PEP 503 compares them (``-``, ``_`` and ``.`` alike), lowercase."""
    return re.sub(r"[-_.]+", "_", name).lower()


@dataclass(frozen=True)
class MatrixPackage:
    """A package of the matrix beside jax."""

    #: The name as the project spells it.
    name: str
    #: The pinned version; "" when unpinned (asv installs the newest).
    version: str
    #: Why it is there, for people: "bench extra", "dev dependency group,
    #: benchmarks/ imports optax".
    why: str
    #: Where its version comes from: "installed where jaxbench init ran", "pinned by
    #: the test extra", "not installed where jaxbench init ran".
    origin: str = _INSTALLED

    @property
    def pinned(self) -> bool:
        return bool(self.version)

    def describe(self) -> str:
        """``optax 0.2.8 (installed where ...): why``, or ``toolz, unpinned (...): why``."""
        if self.pinned:
            return f"{self.name} {self.version} ({self.origin}): {self.why}"
        return f"{self.name}, unpinned ({self.origin}; asv installs the newest): {self.why}"


def _parse(requirement: str) -> Requirement | None:
    try:
        return Requirement(requirement)
    except InvalidRequirement:
        return None


def _exact_pin(requirement: Requirement) -> str | None:
    """``1.2.3`` of ``pkg==1.2.3`` (no wildcard, no other clause), else None."""
    specs = list(requirement.specifier)
    if len(specs) == 1 and specs[0].operator in ("==", "===") and "*" not in specs[0].version:
        return specs[0].version
    return None


def _bench_requirements(
    project: Project, bench: OptionalDependencies
) -> Iterable[tuple[str, Requirement]]:
    """The requirements of a bench extra, ``project[other]`` expanded (once)."""
    extras = {normalise(o.name): o for o in project.extras if o.kind == bench.kind}
    todo, seen = [bench], {normalise(bench.name)}
    while todo:
        current = todo.pop(0)
        for text in current.requirements:
            parsed = _parse(text)
            if parsed is None:
                continue
            if normalise(parsed.name) != normalise(project.name):
                yield text, parsed
                continue
            for extra in sorted(normalise(e) for e in parsed.extras):
                if extra in extras and extra not in seen:
                    seen.add(extra)
                    todo.append(extras[extra])


def benchmark_dependencies(
    project: Project,
    suite_imports: Iterable[str],
    installed: Callable[[str], str | None],
    import_names: Callable[[str], Iterable[str]],
) -> tuple[MatrixPackage, ...]:
    """The project's benchmark dependencies, by the rule above, sorted by name.

    ``installed(name)``: the version installed here, or None; ``import_names(name)``:
    the top-level modules the distribution ``name`` provides.
    """
    imported = set(suite_imports)
    chosen: dict[str, MatrixPackage] = {}
    ordered = sorted(project.extras, key=lambda o: normalise(o.name) not in BENCH_EXTRAS)
    for group in ordered:
        where = f"{group.name} {group.kind}"
        if normalise(group.name) in BENCH_EXTRAS:
            pairs = list(_bench_requirements(project, group))
        else:
            pairs = [(t, p) for t in group.requirements if (p := _parse(t)) is not None]
        for _, requirement in pairs:
            key = normalise(requirement.name)
            if key in _NEVER or key == normalise(project.name) or key in chosen:
                continue
            if normalise(group.name) in BENCH_EXTRAS:
                why = where
            else:
                modules = sorted(set(import_names(requirement.name)) & imported)
                if not modules:
                    continue
                why = f"{where}, benchmarks/ imports {', '.join(modules)}"
            version, origin = installed(requirement.name), _INSTALLED
            if version is None:
                version = _exact_pin(requirement)
                origin = f"pinned by the {where}" if version else f"not {_INSTALLED}"
            chosen[key] = MatrixPackage(requirement.name, version or "", why, origin)
    return tuple(sorted(chosen.values(), key=lambda p: normalise(p.name)))
