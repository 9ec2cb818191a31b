"""The files ``jaxbench init`` writes, rendered from ``jaxbench/templates``.

Pure: :func:`render` takes :class:`Settings` and returns a :class:`Plan`
(paths and texts); it reads only the package's own templates. A template
marks each value as ``@@NAME@@``; a value that goes into JSON or YAML is
quoted as a JSON string (a valid YAML double-quoted scalar too).
"""

from __future__ import annotations

import json
import re
import textwrap
from dataclasses import dataclass, field
from importlib import resources

from jaxbench.scaffold.launch import FORKSERVER, Launch
from jaxbench.scaffold.matrix import MatrixPackage
from jaxbench.scaffold.project import Project
from jaxbench.scaffold.sources import Requirement, version_key

__all__ = [
    "GUIDE_URL",
    "JAXBENCH_URL",
    "MAKEFILE",
    "MAKEFILE_INCLUDE",
    "Plan",
    "PlannedFile",
    "Settings",
    "render",
]

MAKEFILE = "Makefile"
#: Where the Makefile's targets go when the project has a Makefile of its own:
#: the user adds one line, ``include benchmarks.mk``, to theirs.
MAKEFILE_INCLUDE = "benchmarks.mk"
JAXBENCH_URL = "https://github.com/jaxbench/jaxbench"
#: The guide's pages (``docs/*.md``) as GitHub shows them: every link of a written
#: file to jaxbench's documentation starts here (tests/test_init.py follows each).
GUIDE_URL = f"{JAXBENCH_URL}/blob/main/docs"
_PLACEHOLDER = re.compile(r"@@[A-Z_]+@@")

#: Written path -> template, in the order they are written and listed.
_TEMPLATES: tuple[tuple[str, str], ...] = (
    ("asv.conf.json", "asv.conf.json.tmpl"),
    ("benchmarks/__init__.py", ""),
    ("benchmarks/starter.py", "starter.py.tmpl"),
    (".github/workflows/benchmarks.yml", "workflows/benchmarks.yml.tmpl"),
    (".github/workflows/pr-bench.yml", "workflows/pr-bench.yml.tmpl"),
    (".github/workflows/pr-comment.yml", "workflows/pr-comment.yml.tmpl"),
    (".github/workflows/jax-upgrade.yml", "workflows/jax-upgrade.yml.tmpl"),
    (MAKEFILE, "Makefile.tmpl"),
    ("BENCHMARKS.md", "BENCHMARKS.md.tmpl"),
)

#: Files that need only exist: one already there, whatever its content, is kept.
_ANY_EXISTING = frozenset({"benchmarks/__init__.py"})


@dataclass(frozen=True)
class Settings:
    """Everything the rendered files depend on."""

    project: Project
    python: str
    #: The jax matrix, oldest first; the last one is what pull requests measure.
    jax_versions: tuple[str, ...]
    jaxbench: Requirement
    asv: str
    asv_runner: str
    #: False when the project has a Makefile of its own: the targets go to
    #: :data:`MAKEFILE_INCLUDE`, and the user includes it from theirs.
    write_makefile: bool = True
    #: The project's benchmark dependencies, beside jax (:mod:`jaxbench.scaffold.matrix`).
    packages: tuple[MatrixPackage, ...] = ()
    #: asv's launch method (:mod:`jaxbench.scaffold.launch`); spawn is safe for any suite.
    launch: Launch = field(default_factory=lambda: Launch("spawn", "not checked"))


@dataclass(frozen=True)
class PlannedFile:
    """One file to write, its path relative to the project root."""

    path: str
    text: str
    #: Any file already at ``path`` will do (``benchmarks/__init__.py``: a suite of
    #: the project's own may have one with content); it is kept, never replaced.
    any_existing: bool = False


@dataclass(frozen=True)
class Plan:
    files: tuple[PlannedFile, ...]
    #: The line to add to an existing Makefile (``include benchmarks.mk``), or ""
    #: when the Makefile is written.
    makefile_lines: str


def _template(name: str) -> str:
    return resources.files("jaxbench").joinpath("templates", name).read_text(encoding="utf-8")


def _fill(text: str, values: dict[str, str], name: str) -> str:
    for key, value in values.items():
        text = text.replace(f"@@{key}@@", value)
    left = _PLACEHOLDER.findall(text)
    if left:  # a template names a value this module does not know: a bug here
        raise AssertionError(f"template {name}: unfilled {sorted(set(left))}")
    return text


def _words(versions: tuple[str, ...]) -> str:
    return " and ".join(", ".join(versions).rsplit(", ", 1)) if versions else ""


def _launch_comment(launch: Launch, project: str) -> str:
    """The ``//`` lines above asv.conf.json's ``launch_method``: what it does and why."""
    if launch.method == FORKSERVER:
        text = (
            '"forkserver": asv imports the benchmark modules once and forks each '
            "benchmark from that process, which saves jax's import (about 2 s) per "
            f"benchmark. jaxbench init checked: {launch.why}. A fork after jax's backend "
            "started would hang, so if a module later makes a jax array or PRNG key at "
            "import time, each benchmark stops with an error that says so; then use "
            '"spawn" (a fresh interpreter per benchmark).'
        )
    else:
        text = (
            f'"spawn": a fresh interpreter per benchmark, safe for any suite ({launch.why}). '
            '"forkserver" imports the benchmark modules once and forks each benchmark, '
            "saving jax's import (about 2 s) per benchmark, and is safe while importing "
            f"{project} and benchmarks/ starts no jax backend (no jax array or PRNG key "
            "at module level)."
        )
    lines = textwrap.wrap(text, width=76, break_on_hyphens=False)
    return "\n".join(f"    // {line}" for line in lines)


def _packages_words(packages: tuple[MatrixPackage, ...]) -> str:
    """BENCHMARKS.md's list of the matrix's packages beside jax, pinned or not."""
    if not packages:
        return (
            "Beside jax, `jaxbench init` put nothing in the matrix: it takes every package\n"
            "of a `bench` (or `benchmark`, `benchmarks`, `asv`) extra or dependency group,\n"
            "and from your other extras and groups what `benchmarks/` imported when it ran."
        )
    lines = [
        "Beside jax, `jaxbench init` put in the matrix every package of a `bench` (or",
        "`benchmark`, `benchmarks`, `asv`) extra or dependency group, and from your",
        "other extras and groups what `benchmarks/` imported when it ran:",
        "",
    ]
    for package in packages:
        state = f"pinned to {package.version}" if package.pinned else "**unpinned**"
        lines.append(f"- `{package.name}`, {state} ({package.origin}): {package.why}")
    if any(not p.pinned for p in packages):
        lines += [
            "",
            "An unpinned package is installed at its newest version whenever asv makes an",
            "environment, so a new release can change a series: pin it in `matrix.req`.",
        ]
    return "\n".join(lines)


def _values(settings: Settings) -> dict[str, str]:
    jaxbench = settings.jaxbench.spec
    install = (
        f"in-dir={{env_dir}} python -m pip install --no-deps '{jaxbench}' {settings.asv_runner}"
    )
    versions = tuple(sorted(set(settings.jax_versions), key=version_key))
    return {
        "PROJECT": settings.project.name,
        "IMPORT": settings.project.import_name,
        "PYTHON": settings.python,
        "MAIN_BRANCH": settings.project.branch,
        "MATRIX_REQ": json.dumps(
            {"jax": list(versions), **{p.name: [p.version] for p in settings.packages}}
        ),
        "JAX_MATRIX_WORDS": _words(versions),
        "JAX_PR": versions[-1],
        "JAXBENCH_INSTALL": json.dumps(install),
        "JAXBENCH_INSTALL_WORDS": f"'{jaxbench}'",
        "JAXBENCH_REQUIREMENT": json.dumps(jaxbench),
        "ASV_REQUIREMENT": json.dumps(settings.asv),
        "ASV_RUNNER_REQUIREMENT": json.dumps(settings.asv_runner),
        "JAXBENCH_URL": JAXBENCH_URL,
        "GUIDE_URL": GUIDE_URL,
        "MATRIX_PACKAGES": _packages_words(settings.packages),
        "LAUNCH_METHOD": json.dumps(settings.launch.method),
        "LAUNCH_COMMENT": _launch_comment(settings.launch, settings.project.name),
    }


def render(settings: Settings) -> Plan:
    """Every file ``jaxbench init`` writes for ``settings``."""
    if not settings.jax_versions:
        raise ValueError("at least one jax version is needed")
    values = _values(settings)
    files: list[PlannedFile] = []
    makefile_lines = ""
    for path, template in _TEMPLATES:
        text = _fill(_template(template), values, template) if template else ""
        if path == MAKEFILE and not settings.write_makefile:
            path, makefile_lines = MAKEFILE_INCLUDE, f"include {MAKEFILE_INCLUDE}\n"
        files.append(PlannedFile(path, text, any_existing=path in _ANY_EXISTING))
    return Plan(tuple(files), makefile_lines)
