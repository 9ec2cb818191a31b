"""The layout's contracts, checked on the source (no import is executed).

* the analysing half (``analyse``, ``render``, ``store``), ``jaxbench init``'s
  core (``scaffold``) and the lockstep coordinator side never import jax, jaxlib or
  the measuring half;
* the core (every subpackage) never imports ``jaxbench.commands`` or ``jaxbench.cli``;
* the lockstep workers, run as scripts in a benchmarked environment, import
  nothing from jaxbench.

Each rule walks the module's AST, so an import inside a function counts too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "jaxbench"

NO_JAX = (
    "analyse",
    "render",
    "store",
    "scaffold",
    "lockstep/coordinator.py",
    "lockstep/first_call.py",
    "commands",
)
#: Run as scripts by a benchmarked environment's Python: stdlib and asv_runner only.
WORKERS = ("lockstep/worker.py", "lockstep/first_call_worker.py")
#: commands that may import jax-free modules only; report runs the measuring half.
MEASURING_COMMANDS = {"commands/report.py"}


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, absolute, at any depth of the file."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def files_of(part: str) -> list[Path]:
    target = PACKAGE / part
    return [target] if target.suffix == ".py" else sorted(target.rglob("*.py"))


def forbidden(path: Path, prefixes: tuple[str, ...]) -> list[str]:
    return sorted(
        name
        for name in imported_modules(path)
        if any(name == p or name.startswith(p + ".") for p in prefixes)
    )


def no_jax_files() -> list[Path]:
    files = [f for part in NO_JAX for f in files_of(part)]
    return [f for f in files if str(f.relative_to(PACKAGE)) not in MEASURING_COMMANDS]


@pytest.mark.parametrize("path", no_jax_files(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_analysing_half_never_imports_jax(path: Path) -> None:
    assert forbidden(path, ("jax", "jaxlib", "jaxbench.measure")) == []


@pytest.mark.parametrize(
    "path",
    [
        f
        for part in ("analyse", "render", "store", "scaffold", "measure", "lockstep")
        for f in files_of(part)
    ],
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_core_never_imports_the_edges(path: Path) -> None:
    assert forbidden(path, ("jaxbench.commands", "jaxbench.cli")) == []


@pytest.mark.parametrize("worker", WORKERS)
def test_workers_import_nothing_from_jaxbench(worker: str) -> None:
    assert forbidden(PACKAGE / worker, ("jaxbench",)) == []


def test_the_rules_see_a_forbidden_import(tmp_path: Path) -> None:
    """A planted ``import jax`` inside a function is caught (the check can fail)."""
    planted = tmp_path / "planted.py"
    planted.write_text(
        "def f():\n    import jax.numpy as jnp\n    from jaxbench.measure import timing\n"
    )
    assert forbidden(planted, ("jax", "jaxbench.measure")) == [
        "jax.numpy",
        "jaxbench.measure",
        "jaxbench.measure.timing",
    ]


def test_every_module_belongs_to_a_declared_room() -> None:
    """No module lands flat in the package by accident: the layout is the README's."""
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert top == ["__init__.py", "__main__.py", "cli.py", "errors.py"]


def test_analysing_commands_load_without_jax() -> None:
    """At run time too: importing every analysing module leaves jax unloaded."""
    import subprocess
    import sys

    modules = [
        "jaxbench.cli",
        *(
            "jaxbench." + str(f.relative_to(PACKAGE).with_suffix("")).replace("/", ".")
            for f in no_jax_files()
            if f.name != "__init__.py"
        ),
    ]
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _module_file(name: str) -> Path | None:
    """The source file of a ``jaxbench`` module (None: not a module, e.g. a function)."""
    relative = Path(*name.split(".")[1:])
    for candidate in (PACKAGE / relative.with_suffix(".py"), PACKAGE / relative / "__init__.py"):
        if name.startswith("jaxbench.") and candidate.is_file():
            return candidate
    return None


def test_the_measuring_half_loads_without_the_analysing_dependencies() -> None:
    """asv's benchmark environments install jaxbench without its dependencies (asv.conf.json,
    ``--no-deps``): every module the measuring half imports, at any depth and
    transitively, must load without orjson (the analysing half's JSON parser,
    imported inside the function that uses it)."""
    import subprocess
    import sys

    todo = ["jaxbench.measure." + f.stem for f in (PACKAGE / "measure").glob("*.py")]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        path = _module_file(name)
        if name in seen or path is None:
            continue
        seen.add(name)
        todo.extend(m for m in imported_modules(path) if m.startswith("jaxbench."))
    assert "jaxbench.store.fastjson" in seen  # reached through store.checks
    code = (
        "import importlib, sys\n"
        "sys.modules['orjson'] = None  # as if not installed\n"
        f"for m in {sorted(seen)!r}: importlib.import_module(m)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr[-2000:]


def test_the_e2e_repository_edits_a_module_of_the_layout() -> None:
    """tests/e2e_repo.py makes its commits by editing ``predict`` in the project's
    workloads module: the path and the text it replaces must exist, or every e2e
    test fails minutes into its set-up (as after the move into subpackages)."""
    from e2e_repo import PREDICT, PROJECT, WORKLOADS

    assert PREDICT in (PROJECT / WORKLOADS).read_text(encoding="utf-8")
