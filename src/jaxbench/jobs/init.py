"""``jaxbench init``'s job: look at the repository, ask the world, plan the files.

The repository (:func:`jaxbench.jobs.init_checks.check_repository`, then
:func:`jaxbench.scaffold.project.inspect_project`), the jax versions (installed
here, else what pip resolves for the project; and the newest the index
serves), the Python, where jaxbench comes from, the benchmarks' own packages
(:mod:`jaxbench.scaffold.matrix`) and asv's launch method (checked in a fresh
interpreter beside the look-ups), then the files (:func:`jaxbench.scaffold.plan.render`).
:func:`plan_init` returns it all as :class:`InitPlan`; the command
(:mod:`jaxbench.commands.init`) surveys, writes and says what it did. Never
imports jax.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from jaxbench.errors import UsageError
from jaxbench.jobs.init_checks import (
    LaunchCheck,
    check_repository,
    resolve_with_pip,
    served_versions,
    start_check,
)
from jaxbench.scaffold import existing, sources
from jaxbench.scaffold.launch import given_launch
from jaxbench.scaffold.matrix import benchmark_dependencies
from jaxbench.scaffold.plan import MAKEFILE, Plan, Settings, render
from jaxbench.scaffold.project import Project, inspect_project, suite_imports

__all__ = ["InitOptions", "InitPlan", "plan_init"]

_PYTHON = re.compile(r"^3\.\d{1,2}$")


@dataclass(frozen=True)
class InitOptions:
    """``jaxbench init``'s choices (None: init decides)."""

    dir: Path
    jax: str | None = None
    python: str | None = None
    jaxbench: str | None = None
    launch_method: str | None = None


@dataclass(frozen=True)
class InitPlan:
    """The project, the files to write, lines describing the set-up, and notes."""

    project: Project
    plan: Plan
    describe: tuple[str, ...]
    notes: tuple[str, ...]


def _python(text: str | None, project: Project) -> str:
    version = text or f"{sys.version_info.major}.{sys.version_info.minor}"
    if not _PYTHON.match(version):
        raise UsageError(f"--python {version!r} is not a Python version; give one like 3.11")
    try:
        allowed = SpecifierSet(project.requires_python)
    except InvalidSpecifier:
        allowed = SpecifierSet()
    if not allowed.contains(f"{version}.0", prereleases=True) and not allowed.contains(
        f"{version}.99", prereleases=True
    ):
        raise UsageError(
            f"{project.name} requires Python {project.requires_python} and the asv "
            f"environments would use {version}; pass --python with a version it accepts"
        )
    if shutil.which(f"python{version}") is None:
        raise UsageError(
            f"no python{version} on PATH, which asv needs to create the environments; "
            "install it or pass --python with one you have"
        )
    return version


def _jaxbench(text: str | None) -> sources.Requirement:
    if text is None:
        return sources.jaxbench_requirement()
    spec = text.strip()
    if not spec or "'" in spec or "\n" in spec or spec.startswith("-"):
        raise UsageError(
            f"--jaxbench {text!r} is not a pip requirement; give e.g. 'jaxbench==0.1.0' or "
            "'jaxbench @ git+https://github.com/OWNER/jaxbench@COMMIT'"
        )
    return sources.Requirement(spec, "--jaxbench", "file:" not in spec and not spec.startswith("/"))


def _jax_versions(text: str | None, project: Project) -> tuple[tuple[str, ...], list[str]]:
    """(the matrix, lines saying where each version came from)."""
    served = served_versions("jax")
    if text is not None:
        wanted = [v.strip() for v in text.split(",") if v.strip()]
        if not wanted:
            raise UsageError("--jax is empty; give versions like 0.9.2,0.10.2")
        for version in wanted:
            if not sources.VERSION.match(version):
                raise UsageError(f"--jax: {version!r} is not a version; give e.g. 0.10.2")
            if served is not None and version not in served:
                raise UsageError(
                    f"jax {version} is not served by the package index (newest: {served[0]}); "
                    "choose versions from 'pip index versions jax'"
                )
        note = "given with --jax" + ("" if served else "; not checked: the index did not answer")
        return tuple(dict.fromkeys(wanted)), [f"jax {', '.join(wanted)} ({note})"]
    lines: list[str] = []
    today = sources.installed_version("jax")
    if today is not None:
        lines.append(f"jax {today}: installed here, what {project.name} resolves to today")
    else:
        today = resolve_with_pip(project.root, "jax")
        if today is None:
            raise UsageError(
                f"cannot tell which jax {project.name} uses: jax is not installed here and "
                "pip could not resolve the project; pass --jax VERSIONS (e.g. --jax 0.10.2)"
            )
        lines.append(f"jax {today}: what pip resolves for {project.name} today")
    versions = [today]
    if served is None:
        lines.append(
            "newest jax unknown: 'pip index versions jax' did not answer (offline?); "
            "add one later in asv.conf.json or with --jax"
        )
    elif served[0] != today:
        versions.append(served[0])
        lines.append(f"jax {served[0]}: the newest the package index serves")
    else:
        lines.append(f"jax {today} is also the newest the package index serves")
    return tuple(versions), lines


def plan_init(args: InitOptions) -> InitPlan:
    """What init would write in ``args.dir``, and why (see the module doc)."""
    project = inspect_project(args.dir, branch=check_repository(Path(args.dir)))
    # the launch check imports jax in a fresh Python: it runs beside the look-ups below
    check = (
        None
        if args.launch_method
        else start_check(project.root, project.import_name, project.layout)
    )
    try:
        return _plan_with(args, project, check)
    finally:
        if check is not None:
            check.close()


def _plan_with(args: InitOptions, project: Project, check: LaunchCheck | None) -> InitPlan:
    python = _python(args.python, project)
    jaxbench = _jaxbench(args.jaxbench)
    versions, jax_lines = _jax_versions(args.jax, project)
    packages = benchmark_dependencies(
        project, suite_imports(project.root), sources.installed_version, sources.import_names
    )
    launch = check.result() if check is not None else given_launch(args.launch_method or "")
    settings = Settings(
        launch=launch,
        packages=packages,
        project=project,
        python=python,
        jax_versions=versions,
        jaxbench=jaxbench,
        asv=sources.pinned("asv"),
        asv_runner=sources.pinned("asv_runner"),
    )
    makefile = existing.existing_makefile(project.root)
    if makefile is not None:
        ours = next(f for f in render(settings).files if f.path == MAKEFILE)
        if makefile.name != MAKEFILE or makefile.read_text(encoding="utf-8") != ours.text:
            settings = dataclasses.replace(settings, write_makefile=False)
    plan = render(settings)
    describe = [
        f"{project.name} ({project.layout} layout, {project.backend}) at {project.root}",
        f"python {python}; asv matrix: jax {', '.join(sorted(versions, key=sources.version_key))}",
        *(f"  {line}" for line in jax_lines),
        *(f"  {p.describe()}" for p in packages),
        f"jaxbench in every environment and workflow: {jaxbench.spec} ({jaxbench.origin})",
        f"asv launch method: {launch.method} ({launch.why})",
    ]
    notes: list[str] = []
    if not jaxbench.portable:
        notes.append(
            f"the workflows install jaxbench from {jaxbench.spec}, which exists only on this "
            "machine; before pushing, run jaxbench init again with --force --jaxbench "
            "'jaxbench @ git+https://github.com/OWNER/jaxbench@COMMIT' (or a released "
            "version): --force replaces the files init wrote"
        )
    if not project.depends_on_jax:
        notes.append(
            f"{project.name} does not list jax among its dependencies; "
            "the matrix installs it in every environment anyway"
        )
    return InitPlan(project, plan, tuple(describe), tuple(notes))
