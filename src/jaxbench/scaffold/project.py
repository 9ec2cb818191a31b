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
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jaxbench.errors import UsageError

__all__ = ["Project", "git_ignores", "inspect_project", "suite_imports"]

_BRANCH = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$")


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
    #: Optional dependencies by extra or dependency group (PEP 621 extras,
    #: PEP 735 groups, poetry groups, setup.cfg extras_require): name -> requirements.
    extras: tuple[tuple[str, tuple[str, ...]], ...] = ()


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except FileNotFoundError:
        raise UsageError("git is not installed; install git and run jaxbench init again") from None


def git_ignores(root: Path, path: str) -> bool:
    """Whether git ignores what would be written under ``path`` (``git check-ignore``)."""
    return _git(root, "check-ignore", "-q", f"{path}/env").returncode == 0


def _git_top(root: Path) -> Path:
    done = _git(root, "rev-parse", "--show-toplevel")
    if done.returncode != 0:
        raise UsageError(
            f"{root} is not a git repository; run jaxbench init in your project's "
            "repository (git init, commit the project, then jaxbench init)"
        )
    top = Path(done.stdout.strip()).resolve()
    if top != root.resolve():
        raise UsageError(
            f"{root} is inside the git repository {top}, not its top; "
            f"run jaxbench init {top} (asv benchmarks a whole repository)"
        )
    if _git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}").returncode != 0:
        raise UsageError(
            f"{root}: the git repository has no commit yet; commit your project, "
            "then run jaxbench init (asv measures commits)"
        )
    return top


def _branch(root: Path) -> str:
    done = _git(root, "symbolic-ref", "--quiet", "--short", "HEAD")
    branch = done.stdout.strip()
    return branch if done.returncode == 0 and _BRANCH.match(branch) else "main"


def _read_pyproject(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read ({exc}); check the file") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not valid TOML ({exc}); fix the file") from None


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def _extras(data: dict[str, Any], setup_cfg: Path) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Every extra and dependency group the project declares, with its requirements."""
    found: dict[str, tuple[str, ...]] = {}
    project = data.get("project")
    if isinstance(project, dict):
        for name, reqs in (project.get("optional-dependencies") or {}).items():
            found[str(name)] = _strings(reqs)
    for name, reqs in (data.get("dependency-groups") or {}).items():  # PEP 735
        found.setdefault(str(name), _strings(reqs))
    poetry = data.get("tool", {}).get("poetry")
    if isinstance(poetry, dict):
        for name, group in (poetry.get("group") or {}).items():
            deps = group.get("dependencies") if isinstance(group, dict) else None
            if isinstance(deps, dict):
                found.setdefault(str(name), tuple(str(d) for d in deps))
        for name in ("dev-dependencies",):
            deps = poetry.get(name)
            if isinstance(deps, dict):
                found.setdefault("dev", tuple(str(d) for d in deps))
    if not found and setup_cfg.is_file():
        parser = configparser.ConfigParser()
        try:
            parser.read(setup_cfg, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError):
            return ()
        if parser.has_section("options.extras_require"):
            for name, text in parser.items("options.extras_require"):
                found[name] = tuple(line.strip() for line in text.splitlines() if line.strip())
    return tuple(sorted(found.items()))


def _name_and_dependencies(root: Path) -> tuple[str, list[str], str]:
    """(distribution name, dependency strings, build backend)."""
    pyproject = root / "pyproject.toml"
    setup_cfg = root / "setup.cfg"
    setup_py = root / "setup.py"
    data: dict[str, Any] = _read_pyproject(pyproject) if pyproject.is_file() else {}
    backend = str(data.get("build-system", {}).get("build-backend") or "")
    project = data.get("project")
    if isinstance(project, dict) and isinstance(project.get("name"), str):
        deps = project.get("dependencies") or []
        return project["name"], [str(d) for d in deps], backend or "setuptools.build_meta"
    poetry = data.get("tool", {}).get("poetry")
    if isinstance(poetry, dict) and isinstance(poetry.get("name"), str):
        deps = list((poetry.get("dependencies") or {}).keys())
        return poetry["name"], [str(d) for d in deps], backend or "poetry.core.masonry.api"
    if setup_cfg.is_file():
        parser = configparser.ConfigParser()
        try:
            parser.read(setup_cfg, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError) as exc:
            raise UsageError(f"{setup_cfg}: cannot read ({exc}); fix the file") from None
        name = parser.get("metadata", "name", fallback="").strip()
        if name:
            deps = parser.get("options", "install_requires", fallback="").split()
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


def _import_package(root: Path, name: str) -> tuple[str, str]:
    """(import name, layout) of the project's package."""
    wanted = _normalise(name)
    for layout, base in (("src", root / "src"), ("flat", root)):
        if not base.is_dir():
            continue
        packages = sorted(
            p.name
            for p in base.iterdir()
            if p.is_dir() and (p / "__init__.py").is_file() and p.name.isidentifier()
        )
        packages = [p for p in packages if p not in {"benchmarks", "tests", "test", "docs"}]
        if wanted in packages:
            return wanted, layout
        if layout == "src" and packages:
            return packages[0], layout
    flat = [p for p in (root / f"{wanted}.py",) if p.is_file()]
    if flat:
        return wanted, "flat"
    return wanted, "src" if (root / "src").is_dir() else "flat"


def _mentions_jax(dependencies: list[str]) -> bool:
    return any(re.match(r"^\s*jax(\[[^\]]*\])?\s*($|[<>=!~;@ (])", d) for d in dependencies)


def inspect_project(root: Path) -> Project:
    """The project at ``root``; UsageError with the fix when there is none."""
    root = Path(root)
    if not root.exists():
        raise UsageError(f"{root} does not exist; pass the path of your project's repository")
    if not root.is_dir():
        raise UsageError(f"{root} is not a directory; pass the path of your project's repository")
    root = root.resolve()
    _git_top(root)
    name, dependencies, backend = _name_and_dependencies(root)
    import_name, layout = _import_package(root, name)
    pyproject = root / "pyproject.toml"
    data = _read_pyproject(pyproject) if pyproject.is_file() else {}
    return Project(
        root=root,
        name=name,
        import_name=import_name,
        layout=layout,
        backend=backend,
        branch=_branch(root),
        depends_on_jax=_mentions_jax(dependencies),
        extras=_extras(data, root / "setup.cfg"),
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
