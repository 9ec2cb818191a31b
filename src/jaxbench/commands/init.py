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
from pathlib import Path

from jaxbench.errors import UsageError
from jaxbench.jobs.init import InitOptions, plan_init
from jaxbench.jobs.init_checks import git_ignores
from jaxbench.scaffold import apply, existing
from jaxbench.scaffold.gitignore import GITIGNORE, planned_gitignore
from jaxbench.scaffold.launch import METHODS
from jaxbench.scaffold.plan import MAKEFILE_INCLUDE, Plan, PlannedFile

__all__ = ["HELP", "add_arguments", "run"]

HELP = "set up asv benchmarks, workflows and a Makefile in a JAX project's git repository"


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
    whole = plan_init(
        InitOptions(
            dir=args.dir,
            jax=args.jax,
            python=args.python,
            jaxbench=args.jaxbench,
            launch_method=args.launch_method,
        )
    )
    project, plan, describe, notes = whole.project, whole.plan, whole.describe, whole.notes
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
