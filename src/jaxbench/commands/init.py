"""``jaxbench init [DIR]``: set up asv and jaxbench in a JAX project's git repository.

Writes ``asv.conf.json``, ``benchmarks/`` with a starter suite, the three
GitHub workflows, a ``Makefile`` (or, beside a Makefile of the project's own,
``benchmarks.mk`` and the one ``include`` line to add to it), ``BENCHMARKS.md``
and the ``.gitignore`` lines it lacks (see :mod:`jaxbench.scaffold`). Never
overwrites a file: a file that exists with other content stops the command
(exit 2, nothing written); one that exists with exactly the text init would
write is left alone, so a second run with nothing changed writes nothing and
says so. The benchmark set-ups the repository has already are named, one
line each, and left alone (:mod:`jaxbench.scaffold.existing`).

The jax matrix: the jax installed in the environment running ``jaxbench
init`` (the project's development environment, so the version it resolves
to today), else the version ``pip install --dry-run`` resolves for the
project; plus the newest version ``pip index versions jax`` lists. ``--jax``
replaces both.

asv's launch method: ``forkserver`` where importing the project's package
and benchmarks starts no jax backend, checked in a fresh interpreter
(:mod:`jaxbench.scaffold.launch`), else ``spawn``; ``--launch-method``
chooses. This process never imports jax.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import shutil
import sys
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from jaxbench.errors import UsageError
from jaxbench.jobs.init_checks import (
    LaunchCheck,
    check_repository,
    git_ignores,
    resolve_with_pip,
    served_versions,
    start_check,
)
from jaxbench.scaffold import apply, existing, sources
from jaxbench.scaffold.gitignore import GITIGNORE, planned_gitignore
from jaxbench.scaffold.launch import METHODS, given_launch
from jaxbench.scaffold.matrix import benchmark_dependencies
from jaxbench.scaffold.plan import MAKEFILE, MAKEFILE_INCLUDE, Plan, PlannedFile, Settings, render
from jaxbench.scaffold.project import Project, inspect_project, suite_imports

__all__ = ["HELP", "add_arguments", "run"]

HELP = "set up asv benchmarks, workflows and a Makefile in a JAX project's git repository"

_PYTHON = re.compile(r"^3\.\d{1,2}$")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "dir",
        metavar="DIR",
        nargs="?",
        type=Path,
        default=Path("."),
        help="the project's git repository (default: the current directory)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print what would be written; write nothing"
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace the files init writes that exist with other content (e.g. to change "
        "--jaxbench); an existing Makefile of your own is still never edited",
    )
    parser.add_argument(
        "--jax",
        metavar="VERSIONS",
        help="jax versions of the asv matrix, comma-separated (default: the one installed "
        "here or resolved for the project, and the newest the package index serves)",
    )
    parser.add_argument(
        "--python",
        metavar="VERSION",
        help="Python of the asv environments, e.g. 3.12 (default: this Python's)",
    )
    parser.add_argument(
        "--jaxbench",
        metavar="REQUIREMENT",
        help="pip requirement that installs jaxbench in each environment and workflow, e.g. "
        "'jaxbench @ git+https://github.com/OWNER/jaxbench@COMMIT' (default: where this "
        "jaxbench was installed from)",
    )
    parser.add_argument(
        "--launch-method",
        choices=METHODS,
        help="asv's launch method (default: forkserver when importing the package and "
        "benchmarks/ starts no jax backend, checked in a fresh Python; else spawn)",
    )


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


def _plan(args: argparse.Namespace) -> tuple[Project, Plan, list[str], list[str]]:
    """(the project, the plan, lines describing the set-up, notes)."""
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


def _plan_with(
    args: argparse.Namespace, project: Project, check: LaunchCheck | None
) -> tuple[Project, Plan, list[str], list[str]]:
    python = _python(args.python, project)
    jaxbench = _jaxbench(args.jaxbench)
    versions, jax_lines = _jax_versions(args.jax, project)
    packages = benchmark_dependencies(
        project, suite_imports(project.root), sources.installed_version, sources.import_names
    )
    launch = given_launch(args.launch_method) if check is None else check.result()
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
    return project, plan, describe, notes


def _print_makefile_lines(plan: Plan, root: Path) -> None:
    """The one line to paste, unindented, and what it brings."""
    makefile = existing.existing_makefile(root)
    if not plan.makefile_lines or makefile is None:
        return
    print(
        f"{makefile.name} is your own (jaxbench init never edits it): the targets are in "
        f"{MAKEFILE_INCLUDE}; add this line at the end of {makefile.name}:"
    )
    print()
    print(plan.makefile_lines, end="")
    print()
    ours = next(f.text for f in plan.files if f.path == MAKEFILE_INCLUDE)
    clashes = existing.clashing_targets(makefile, ours)
    if clashes:
        print(
            f"note: {makefile.name} already has target(s) {', '.join(clashes)}, which "
            f"{MAKEFILE_INCLUDE} defines too: make would run only one; rename yours"
        )


def _refuse(conflicting: tuple[PlannedFile, ...]) -> UsageError:
    names = ", ".join(f.path for f in conflicting)
    own_asv = any(f.path == "asv.conf.json" for f in conflicting)
    return UsageError(
        f"{len(conflicting)} file(s) exist already and jaxbench init never overwrites: "
        f"{names}; move them away and run it again, or replace them with --force "
        + (
            "(asv.conf.json is an asv set-up of your own: git keeps it, and jaxbench's "
            "runs the suites in benchmarks/) "
            if own_asv
            else ""
        )
        + "(--dry-run prints what it would write)"
    )


def run(args: argparse.Namespace) -> int:
    project, plan, describe, notes = _plan(args)
    found = apply.survey(project.root, plan)
    if found.conflicting and args.force:
        replaced = set(found.new + found.conflicting)
        found = apply.Survey(tuple(f for f in plan.files if f in replaced), found.same, ())
    if found.conflicting:
        raise _refuse(found.conflicting)
    ignore, ignore_said = planned_gitignore(
        project.root, lambda path: git_ignores(project.root, path)
    )
    writes = (*found.new, *((ignore,) if ignore else ()))
    if writes and not args.dry_run:
        apply.check_writable(project.root, writes)
    kept = existing.survey_existing(project, frozenset(f.path for f in plan.files))
    print(f"jaxbench init: {describe[0]}")
    for line in describe[1:]:
        print(f"  {line}")
    makefile_done = not plan.makefile_lines or _makefile_has(project.root, plan)
    if not writes and makefile_done:
        for thing in kept:
            print(f"  {thing.line()}")
        print(
            f"nothing to do: all {len(found.same)} files jaxbench init writes are there, "
            "unchanged; nothing was written"
        )
        return 0
    if args.dry_run:
        for planned in found.new:
            lines = planned.text.count("\n")
            print(f"--- would write {planned.path} ({lines} lines) ---")
            print(planned.text, end="" if planned.text.endswith("\n") or not planned.text else "\n")
        for planned in found.same:
            print(f"--- {planned.path} is there already, unchanged ---")
        if ignore_said:
            print(f"--- would add to {GITIGNORE}: {ignore_said} ---")
    else:
        apply.write(project.root, writes)
        for planned in found.new:
            print(f"  wrote {planned.path}")
        for planned in found.same:
            print(f"  kept {planned.path} (already there)")
        if ignore_said:
            print(f"  added to {GITIGNORE}: {ignore_said}")
    for thing in kept:
        print(f"  {thing.line()}")
    if not makefile_done:
        _print_makefile_lines(plan, project.root)
    for note in notes:
        print(f"note: {note}")
    if args.dry_run:
        print("dry run: nothing was written")
        return 0
    print("next:")
    print("  make bench-check   every benchmark but the warm times once at HEAD: checks pass")
    print("  make bench         asv run over the last 3 commits, their paired history,")
    print("                     jaxbench publish, regressions; make preview serves html/")
    print("  then commit what init wrote, results/ after make bench (see BENCHMARKS.md),")
    print("  and open a pull request")
    return 0


def _makefile_has(root: Path, plan: Plan) -> bool:
    """Whether the project's own Makefile already includes benchmarks.mk."""
    makefile = existing.existing_makefile(root)
    return makefile is not None and existing.makefile_includes(makefile, plan.makefile_lines)
