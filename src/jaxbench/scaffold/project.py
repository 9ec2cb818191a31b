"""The Python project in a directory, as ``jaxbench init`` needs to know it.

Reads ``pyproject.toml`` (PEP 621 ``[project]`` for setuptools, hatch, flit
and pdm; ``[tool.poetry]`` for poetry) or ``setup.cfg``, finds the import
package (``src/<name>/`` or ``<name>/``) and asks git for the repository's top
and branch. Every problem is a :class:`~jaxbench.errors.UsageError` naming
the fix.
"""

from __future__ import annotations

import configparser
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jaxbench.errors import UsageError

__all__ = [
    "EXTRA",
    "GROUP",
    "OptionalDependencies",
    "Project",
    "inspect_project",
    "suite_imports",
]


EXTRA = "extra"
GROUP = "dependency group"


@dataclass(frozen=True)
class OptionalDependencies:
    """An extra or a dependency group of the project, and its requirements."""

    name: str
    #: :data:`EXTRA` (``pip install 'pkg[name]'``) or :data:`GROUP` (PEP 735, poetry).
    kind: str
    requirements: tuple[str, ...]


@dataclass(frozen=True)
class Project:
    """A Python project at the top of a git repository."""

    root: Path
    #: Distribution name (what ``pip uninstall`` takes).
    name: str
    #: Import package name, e.g. ``mypkg`` for ``src/mypkg/__init__.py``.
    import_name: str
    #: ``"src"`` or ``"flat"``.
    layout: str
    #: ``build-backend`` of ``pyproject.toml`` (setuptools' legacy one if none).
    backend: str
    #: The branch checked out now (the one the main-branch workflow follows).
    branch: str
    #: Whether ``jax`` is among the declared dependencies.
    depends_on_jax: bool
    #: Optional dependencies: PEP 621 extras, PEP 735 dependency groups, poetry's
    #: extras and groups, setup.cfg's extras_require.
    extras: tuple[OptionalDependencies, ...] = ()
    #: ``[project] requires-python`` ("" when not declared).
    requires_python: str = ""


def _read_pyproject(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read ({exc}); check the file") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not valid TOML ({exc}); fix the file") from None


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def _table(data: Any, *keys: str) -> dict[str, Any]:
    """``data[keys[0]][keys[1]]...`` where each is a table, else ``{}``."""
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else {}


def _groups(data: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """PEP 735 ``[dependency-groups]``, each ``{include-group = ...}`` expanded."""
    declared = _table(data, "dependency-groups")

    def expand(name: str, seen: tuple[str, ...]) -> tuple[str, ...]:
        out: list[str] = []
        entries = declared.get(name)
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, str):
                out.append(entry)
            elif isinstance(entry, dict) and isinstance(entry.get("include-group"), str):
                other = entry["include-group"]
                if other not in seen:
                    out.extend(expand(other, (*seen, other)))
        return tuple(out)

    return {str(name): expand(str(name), (str(name),)) for name in declared}


def _poetry_requirements(table: dict[str, Any]) -> tuple[str, ...]:
    """``{name = "^1.2"}`` tables of poetry: the names (poetry's constraints are not pip's)."""
    return tuple(str(name) for name in table if str(name).lower() != "python")


def _optional(data: dict[str, Any], setup_cfg: Path) -> tuple[OptionalDependencies, ...]:
    """Every extra and dependency group the project declares, with its requirements."""
    found: dict[str, OptionalDependencies] = {}

    def add(name: str, kind: str, requirements: tuple[str, ...]) -> None:
        found.setdefault(f"{kind}:{name}", OptionalDependencies(name, kind, requirements))

    for name, reqs in _table(data, "project", "optional-dependencies").items():
        add(str(name), EXTRA, _strings(reqs))
    for name, reqs in _groups(data).items():
        add(name, GROUP, reqs)
    poetry = _table(data, "tool", "poetry")
    for name, reqs in _table(poetry, "extras").items():
        add(str(name), EXTRA, _strings(reqs))
    for name, group in _table(poetry, "group").items():
        add(str(name), GROUP, _poetry_requirements(_table(group, "dependencies")))
    if _table(poetry, "dev-dependencies"):
        add("dev", GROUP, _poetry_requirements(_table(poetry, "dev-dependencies")))
    if not found and setup_cfg.is_file():
        parser = configparser.ConfigParser()
        try:
            parser.read(setup_cfg, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError):
            return ()
        if parser.has_section("options.extras_require"):
            for name, text in parser.items("options.extras_require"):
                add(name, EXTRA, tuple(line.strip() for line in text.splitlines() if line.strip()))
    return tuple(sorted(found.values(), key=lambda o: (o.kind, o.name)))


def _name_and_dependencies(root: Path, data: dict[str, Any]) -> tuple[str, list[str], str]:
    """(distribution name, dependency strings, build backend)."""
    pyproject = root / "pyproject.toml"
    setup_cfg = root / "setup.cfg"
    setup_py = root / "setup.py"
    backend = str(_table(data, "build-system").get("build-backend") or "")
    project = _table(data, "project")
    if isinstance(project.get("name"), str):
        deps = project.get("dependencies") or []
        return project["name"], [str(d) for d in deps], backend or "setuptools.build_meta"
    poetry = _table(data, "tool", "poetry")
    if isinstance(poetry.get("name"), str):
        deps = list(_table(poetry, "dependencies"))
        return poetry["name"], [str(d) for d in deps], backend or "poetry.core.masonry.api"
    if setup_cfg.is_file():
        parser = configparser.ConfigParser()
        try:
            parser.read(setup_cfg, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError) as exc:
            raise UsageError(f"{setup_cfg}: cannot read ({exc}); fix the file") from None
        name = parser.get("metadata", "name", fallback="").strip()
        if name:
            text = parser.get("options", "install_requires", fallback="")
            deps = [line.strip() for line in text.splitlines() if line.strip()]
            return name, deps, backend or "setuptools.build_meta:__legacy__"
    if pyproject.is_file() or setup_py.is_file():
        raise UsageError(
            f"{root}: cannot find the project's name; add [project] name = '...' to "
            "pyproject.toml (or [metadata] name to setup.cfg)"
        )
    raise UsageError(
        f"{root}: no Python project found (no pyproject.toml, setup.cfg or setup.py); "
        "run jaxbench init in the root of your JAX project"
    )


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


#: Directories at the top of a repository that are not the project's package.
_NOT_THE_PACKAGE = frozenset(
    {"benchmarks", "bench", "asv_bench", "tests", "test", "testing", "docs", "doc",
     "examples", "example", "scripts", "tools", "notebooks", "build", "dist", "ci"}
)  # fmt: skip


def _declared_packages(data: dict[str, Any]) -> list[tuple[str, str]]:
    """(directory, top-level name) of the packages the build backend's settings name:
    flit's module, setuptools' packages and package-dir, hatch's wheel packages,
    poetry's packages, pdm's package-dir."""
    tool = _table(data, "tool")
    found: list[tuple[str, str]] = []

    def add_path(path: str, base: str = "") -> None:
        parts = Path(base, path.strip("/")).parts
        if parts:
            found.append(("/".join(parts[:-1]), parts[-1].removesuffix(".py")))

    module = _table(tool, "flit", "module").get("name")
    if isinstance(module, str):
        found.extend((base, module.split(".")[0]) for base in ("src", ""))
    setuptools = _table(tool, "setuptools")
    package_dir = setuptools.get("package-dir")
    base = package_dir.get("") if isinstance(package_dir, dict) else None
    base = "/".join(Path(base).parts) if isinstance(base, str) else ""
    where = _strings(_table(setuptools, "packages", "find").get("where"))
    for name in (*_strings(setuptools.get("packages")), *_strings(setuptools.get("py-modules"))):
        found.append((base, name.split(".")[0]))
    found.extend(("/".join(Path(directory).parts), "") for directory in where[:1])
    for path in _strings(_table(tool, "hatch", "build", "targets", "wheel").get("packages")):
        add_path(path)
    for entry in _table(tool, "poetry").get("packages") or []:
        if isinstance(entry, dict) and isinstance(entry.get("include"), str):
            add_path(entry["include"], str(entry.get("from") or ""))
    pdm_dir = _table(tool, "pdm", "build").get("package-dir")
    if isinstance(pdm_dir, str):
        found.append(("/".join(Path(pdm_dir).parts), ""))
    return found


def _packages_in(base: Path) -> list[str]:
    """The importable packages directly in ``base``, but tests, docs and the like."""
    if not base.is_dir():
        return []
    return sorted(
        p.name
        for p in base.iterdir()
        if p.is_dir()
        and (p / "__init__.py").is_file()
        and p.name.isidentifier()
        and p.name not in _NOT_THE_PACKAGE
    )


def _import_package(root: Path, name: str, data: dict[str, Any]) -> tuple[str, str]:
    """(import name, layout) of the project's package: the one the build backend's
    settings name, else the package named as the project, else the only one there."""
    wanted = _normalise(name)

    def exists(base: str, module: str) -> bool:
        where = root / base / module
        return (where / "__init__.py").is_file() or where.with_suffix(".py").is_file()

    declared = _declared_packages(data)
    for base, module in declared:
        layout = "src" if base == "src" else "flat"
        if module and exists(base, module):
            return module, layout
        if not module and (root / base).is_dir():  # a directory the backend searches
            packages = _packages_in(root / base)
            if wanted in packages or len(packages) == 1:
                return (wanted if wanted in packages else packages[0]), layout
    for layout, base in (("src", "src"), ("flat", "")):
        if exists(base, wanted):
            return wanted, layout
    for layout, base in (("src", "src"), ("flat", "")):
        packages = _packages_in(root / base)
        if len(packages) == 1 or (layout == "src" and packages):
            return packages[0], layout
    return wanted, "src" if (root / "src").is_dir() else "flat"


def _mentions_jax(dependencies: list[str]) -> bool:
    return any(re.match(r"^\s*jax(\[[^\]]*\])?\s*($|[<>=!~;@ (])", d) for d in dependencies)


def inspect_project(root: Path, *, branch: str = "main") -> Project:
    """The project at ``root``; UsageError with the fix when there is none.

    ``branch``: the branch checked out (:func:`jaxbench.jobs.init_checks.check_repository`
    asks git, and checks that ``root`` is the top of a repository with a commit).
    """
    root = Path(root)
    if not root.exists():
        raise UsageError(f"{root} does not exist; pass the path of your project's repository")
    if not root.is_dir():
        raise UsageError(f"{root} is not a directory; pass the path of your project's repository")
    root = root.resolve()
    pyproject = root / "pyproject.toml"
    data = _read_pyproject(pyproject) if pyproject.is_file() else {}
    name, dependencies, backend = _name_and_dependencies(root, data)
    import_name, layout = _import_package(root, name, data)
    requires_python = _table(data, "project").get("requires-python")
    return Project(
        root=root,
        name=name,
        import_name=import_name,
        layout=layout,
        backend=backend,
        branch=branch,
        depends_on_jax=_mentions_jax(dependencies),
        extras=_optional(data, root / "setup.cfg"),
        requires_python=requires_python if isinstance(requires_python, str) else "",
    )


def suite_imports(root: Path) -> frozenset[str]:
    """Top-level modules that ``root/benchmarks/*.py`` imports (none if there is no suite)."""
    import ast

    found: set[str] = set()
    for path in sorted((root / "benchmarks").rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
    return frozenset(found)
