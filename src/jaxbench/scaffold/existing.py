"""What a repository already has that ``jaxbench init`` leaves alone, said one line each.

A project that adopts jaxbench often measured itself before: a GitHub
workflow running pytest-benchmark, asv or CodSpeed; an ``asv.conf.json`` of
its own in a subdirectory; pytest-benchmark's ``.benchmarks/`` and its pytest
options; suites of its own in ``benchmarks/``; a Makefile. init edits none of
them, and :func:`survey_existing` names each with what the user may want to
do (:class:`Found`), so nothing is left beside the new set-up without a word.

The Makefile: a project with one of its own gets jaxbench's targets in
``benchmarks.mk`` and adds one ``include`` line (:func:`makefile_includes`);
:func:`clashing_targets` names the targets both define (make would warn
"overriding recipe" and run only one).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from jaxbench.scaffold.project import Project

__all__ = [
    "MAKEFILES",
    "Found",
    "clashing_targets",
    "existing_makefile",
    "makefile_includes",
    "survey_existing",
]

MAKEFILES = ("GNUmakefile", "makefile", "Makefile")  # the order GNU make reads them

#: Markers of benchmark tools in a workflow or a configuration file, and the tool.
_TOOLS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"pytest[-_]benchmark|--benchmark-|benchmark-action/github-action-benchmark"),
     "pytest-benchmark"),
    (re.compile(r"codspeed", re.IGNORECASE), "CodSpeed"),
    (re.compile(r"\basv\s+(run|continuous|publish|machine|compare|preview)\b"), "asv"),
)  # fmt: skip
#: Distributions of benchmark tools, as an extra or a group lists them.
_TOOL_PACKAGES = {"pytest_benchmark": "pytest-benchmark", "pytest_codspeed": "CodSpeed"}
#: asv's benchmark kinds, by the name prefix asv discovers them by.
_ASV_NAME = re.compile(r"^(time|timeraw|mem|peakmem|track)_")
_SHOWN = 4


@dataclass(frozen=True)
class Found:
    """Something of the repository's own, left alone."""

    #: Where, relative to the repository's top.
    path: str
    #: What it is, e.g. "a workflow running pytest-benchmark".
    what: str
    #: What the user may want to do about it.
    advice: str

    def line(self) -> str:
        return f"found {self.path} ({self.what}): left alone; {self.advice}"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _tools(text: str) -> list[str]:
    return [tool for pattern, tool in _TOOLS if pattern.search(text)]


def _workflows(root: Path, ours: frozenset[str]) -> list[Found]:
    found = []
    folder = root / ".github" / "workflows"
    paths = sorted([*folder.glob("*.yml"), *folder.glob("*.yaml")]) if folder.is_dir() else []
    for path in paths:
        relative = path.relative_to(root).as_posix()
        if relative in ours:
            continue
        tools = _tools(_read(path))
        if not tools and "bench" not in path.name.lower():
            continue
        what = f"a workflow running {' and '.join(tools)}" if tools else "a benchmark workflow"
        found.append(
            Found(
                relative,
                what,
                "it runs beside jaxbench's benchmarks.yml and pr-bench.yml; remove it once "
                "they measure what it did, or keep both",
            )
        )
    return found


def _asv_configs(root: Path) -> list[Found]:
    found = []
    for pattern in ("*/asv.conf.json", "*/*/asv.conf.json"):
        for path in sorted(root.glob(pattern)):
            relative = path.relative_to(root)
            if any(part.startswith(".") or part == "node_modules" for part in relative.parts):
                continue
            found.append(
                Found(
                    relative.as_posix(),
                    "an asv set-up of its own",
                    "jaxbench's asv.conf.json at the top is another; move its suites into "
                    "benchmarks/ to track them with jaxbench, or keep running it as before",
                )
            )
    return found


def _pytest_benchmark(root: Path, project: Project) -> list[Found]:
    found = []
    if (root / ".benchmarks").is_dir():
        found.append(
            Found(
                ".benchmarks/",
                "pytest-benchmark's saved runs",
                "jaxbench keeps its history in results/ and html/",
            )
        )
    for name in ("pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml"):
        text = _read(root / name)
        if "--benchmark-" in text or "--codspeed" in text:
            tools = [t for t in _tools(text) if t != "asv"] or ["pytest-benchmark"]
            found.append(
                Found(
                    name,
                    f"pytest options of {' and '.join(tools)}",
                    "those benchmarks keep running under pytest; jaxbench's live in benchmarks/",
                )
            )
    for group in project.extras:
        tools = sorted(
            {
                tool
                for requirement in group.requirements
                for key, tool in _TOOL_PACKAGES.items()
                if re.sub(r"[-_.]+", "_", requirement.lower()).startswith(key)
            }
        )
        if tools:
            found.append(
                Found(
                    f"the {group.name} {group.kind}",
                    f"lists {' and '.join(tools)}",
                    "left out of asv's environments; those benchmarks keep running under pytest",
                )
            )
    return found


def _kind_of_module(path: Path) -> str:
    """The module's kind: "asv" (a suite asv runs), "pytest" (tests asv would import
    all the same) or "" (a helper)."""
    try:
        tree = ast.parse(_read(path), filename=str(path))
    except (SyntaxError, ValueError):
        return ""
    pytest = False
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if _ASV_NAME.match(node.name):
                return "asv"
            pytest = pytest or node.name.startswith("test_")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "jax_suite":
            return "asv"
        elif isinstance(node, ast.Import):
            pytest = pytest or any(a.name.split(".")[0] == "pytest" for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            pytest = pytest or node.module.split(".")[0] == "pytest"
    return "pytest" if pytest or path.name == "conftest.py" else ""


def _names(paths: list[str]) -> str:
    shown = ", ".join(paths[:_SHOWN])
    return shown + (f" and {len(paths) - _SHOWN} more" if len(paths) > _SHOWN else "")


def _suites(root: Path, ours: frozenset[str]) -> list[Found]:
    base = root / "benchmarks"
    if not base.is_dir():
        return []
    kinds: dict[str, list[str]] = {"asv": [], "pytest": []}
    for path in sorted(base.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative in ours or path.name == "__init__.py":
            continue
        kind = _kind_of_module(path)
        if kind:
            kinds[kind].append(path.relative_to(base).as_posix())
    found = []
    if kinds["asv"]:
        found.append(
            Found(
                "benchmarks/",
                f"{len(kinds['asv'])} asv suite file(s) of yours: {_names(kinds['asv'])}",
                "asv runs them beside the starter under the new asv.conf.json; what they "
                "import must be in its matrix or your project's dependencies",
            )
        )
    if kinds["pytest"]:
        found.append(
            Found(
                "benchmarks/",
                f"{len(kinds['pytest'])} pytest file(s): {_names(kinds['pytest'])}",
                "asv imports every module under benchmarks/ and stops at one that fails to "
                "import: move them (e.g. to tests/benchmarks/), or put what they import "
                "in asv.conf.json's matrix",
            )
        )
    return found


def survey_existing(project: Project, ours: frozenset[str]) -> tuple[Found, ...]:
    """The benchmark workflows, configurations and suites the repository has beside
    the files init writes (``ours``: their paths)."""
    root = project.root
    return (
        *_workflows(root, ours),
        *_asv_configs(root),
        *_pytest_benchmark(root, project),
        *_suites(root, ours),
    )


def existing_makefile(root: Path) -> Path | None:
    """The Makefile GNU make would read in ``root``, or None."""
    return next((root / n for n in MAKEFILES if (root / n).is_file()), None)


def makefile_includes(makefile: Path, line: str) -> bool:
    """Whether ``makefile`` has the include ``line`` (``include``, ``-include`` or
    ``sinclude``), so that init has nothing left to ask."""
    wanted = line.split(None, 1)[1].strip()
    pattern = re.compile(rf"^\s*(-|s)?include\s+(.*\s)?{re.escape(wanted)}(\s|$)")
    return any(pattern.match(text) for text in _read(makefile).splitlines())


def _targets(text: str) -> set[str]:
    names: set[str] = set()
    for line in text.splitlines():
        match = re.match(r"^([A-Za-z0-9_.%/-][^:=#\t]*?)\s*::?(?![=])", line)
        if match and not match.group(1).startswith("."):
            names.update(match.group(1).split())
    return names


def clashing_targets(makefile: Path, ours: str) -> list[str]:
    """The targets defined both in the project's ``makefile`` and in ``ours``."""
    return sorted(_targets(_read(makefile)) & _targets(ours))
