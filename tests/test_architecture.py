"""The layout's contracts, checked on the source (no import is executed).

* the jobs (``jobs``), the analysing half (``analyse``, ``render``, ``store``), ``jaxbench init``'s
  core (``scaffold``) and the lockstep coordinator side never import jax, jaxlib or
  the measuring half;
* the core (every subpackage) never imports ``jaxbench.commands`` or ``jaxbench.cli``;
* the lockstep workers, run as scripts in a benchmarked environment, import
  nothing from jaxbench;
* no import cycle among jaxbench's modules (imports inside functions count);
* the command modules are edges: argument parsing and calls into the core
  (no classes, no processes or git, no column-aligned text, a size limit).

Each rule walks the module's AST, so an import inside a function counts too.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "jaxbench"

NO_JAX = (
    "jobs",
    "analyse",
    "render",
    "store",
    "scaffold",
    "lockstep/coordinator.py",
    "lockstep/first_call.py",
    "lockstep/quiet.py",
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
        for part in ("jobs", "analyse", "render", "store", "scaffold", "measure", "lockstep")
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
    assert top == ["__init__.py", "__main__.py", "cli.py", "errors.py", "kinds.py"]


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


# --- no import cycle ------------------------------------------------------------


def module_name(path: Path, package: Path) -> str:
    """``jaxbench.analyse.detect`` for ``<package>/analyse/detect.py``."""
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(package: Path) -> dict[str, set[str]]:
    """Each module of the package and the package's modules it imports (at any depth).

    ``from jaxbench.store import jsonc`` is an edge to ``jaxbench.store.jsonc``
    (the submodule), not to ``jaxbench.store``; a package's own ``__init__``,
    which Python runs first, is not counted as an edge of each import.
    """
    modules = {module_name(p, package): p for p in package.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                edges.update(a.name for a in node.names if a.name in modules)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                subs = {f"{node.module}.{a.name}" for a in node.names} & modules.keys()
                if subs:
                    edges |= subs
                if node.module in modules and len(subs) < len(node.names):
                    edges.add(node.module)
        graph[name] = edges - {name}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(cycles)


def test_no_import_cycle_among_jaxbench_modules() -> None:
    assert import_cycles(import_graph(PACKAGE)) == []


def test_the_cycle_rule_sees_a_cycle(tmp_path: Path) -> None:
    """A cycle hidden in a function-level import is found (the check can fail),
    and ``from pkg import submodule`` is an edge to the submodule only."""
    package = tmp_path / "jaxbench"
    (package / "core").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "core" / "__init__.py").write_text("from jaxbench.core.a import A\n")
    (package / "core" / "a.py").write_text("from jaxbench.core import b\nA = 1\n")
    (package / "core" / "b.py").write_text("def f():\n    from jaxbench.core.a import A\n")
    (package / "core" / "c.py").write_text("from jaxbench.core import a\n")
    graph = import_graph(package)
    assert graph["jaxbench.core.c"] == {"jaxbench.core.a"}
    assert import_cycles(graph) == [["jaxbench.core.a", "jaxbench.core.b"]]


# --- commands are edges ---------------------------------------------------------

#: The most lines a command module may have: argument definitions, one ``run``
#: that calls into the core and prints what it returns, messages.
COMMAND_MAX_LINES = 350
#: Modules that run processes or git: their owners are lockstep/, scaffold/, store/.
COMMAND_FORBIDDEN_IMPORTS = ("subprocess",)
_ALIGNING_METHODS = {"ljust", "rjust", "center"}


def edge_violations(path: Path) -> list[str]:
    """What in a command module is more than argument parsing and calls."""
    source = path.read_text()
    found: list[str] = []
    lines = source.count("\n")
    if lines > COMMAND_MAX_LINES:
        found.append(f"{lines} lines (at most {COMMAND_MAX_LINES})")
    for node in ast.walk(ast.parse(source, filename=str(path))):
        where = f"line {getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.ClassDef):
            found.append(f"{where}: class {node.name} (data types belong in the core)")
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            for name in names:
                if name and name.split(".")[0] in COMMAND_FORBIDDEN_IMPORTS:
                    found.append(f"{where}: imports {name} (processes and git belong in the core)")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in _ALIGNING_METHODS:
                found.append(f"{where}: .{node.func.attr}() aligns text (render/ formats)")
            elif node.func.attr == "format" and isinstance(node.func.value, ast.Constant):
                found.append(f"{where}: str.format (render/ formats)")
        elif (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Mod)
            and isinstance(node.left, ast.Constant)
            and isinstance(node.left.value, str)
        ):
            found.append(f"{where}: %-formatting (render/ formats)")
        elif isinstance(node, ast.FormattedValue) and node.format_spec is not None:
            spec = ast.unparse(node.format_spec)
            if re.match(r"^f?[\"']?(.?[<>=^])?[+\- ]?#?0?[1-9]", spec):
                found.append(f"{where}: a width in a format spec aligns a column (render/ formats)")
    return found


def command_modules() -> list[Path]:
    return [p for p in files_of("commands") if p.name != "__init__.py"]


@pytest.mark.parametrize("path", command_modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_commands_hold_argument_parsing_and_calls_only(path: Path) -> None:
    assert edge_violations(path) == []


def test_the_edge_rule_sees_formatting_and_plumbing(tmp_path: Path) -> None:
    """Each thing the edge rule forbids is seen (the check can fail); messages pass."""
    planted = tmp_path / "planted.py"
    planted.write_text(
        "import subprocess\n"
        "class Table:\n    pass\n"
        "def run(rows, n, x):\n"
        "    print(f'{n} rows in {x:.1f} s; {x:g}')\n"
        "    print(', '.join(rows))\n"
        "    print(f'{rows[0]:12}|{n:>8}')\n"
        "    print(rows[0].ljust(10), '%s' % n, '{}'.format(n))\n" + "# more\n" * COMMAND_MAX_LINES
    )
    found = edge_violations(planted)
    assert found[0].endswith(f"lines (at most {COMMAND_MAX_LINES})")
    assert sorted(f.split(": ", 1)[1] for f in found[1:]) == sorted(
        [
            "imports subprocess (processes and git belong in the core)",
            "class Table (data types belong in the core)",
            "a width in a format spec aligns a column (render/ formats)",
            "a width in a format spec aligns a column (render/ formats)",
            ".ljust() aligns text (render/ formats)",
            "%-formatting (render/ formats)",
            "str.format (render/ formats)",
        ]
    )


# --- floors: every arrow points down ---------------------------------------------------

#: Each room's floor. A module may import its own room and rooms on lower floors only:
#: the vocabulary (errors, kinds) at the bottom, files, pure analysis, what people read;
#: the measuring half beside the rendering (it reads HLO with the analysis' parser);
#: the lockstep runners and init's planning; the jobs; the commands; the command line.
FLOORS = {
    "jaxbench": 0,
    "errors": 0,
    "kinds": 0,
    "store": 1,
    "analyse": 2,
    "render": 3,
    "measure": 3,
    "lockstep": 4,
    "scaffold": 4,
    "jobs": 5,
    "commands": 6,
    "cli": 7,
    "__main__": 8,
}


def room_of(module: str) -> str:
    """``analyse`` for ``jaxbench.analyse.detect``; ``kinds`` for ``jaxbench.kinds``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "jaxbench"


def arrows_up(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Imports of a room on the same or a higher floor than the importer's (own room aside)."""
    found = []
    for importer, imported in graph.items():
        mine = room_of(importer)
        for other in sorted(imported):
            theirs = room_of(other)
            if theirs != mine and FLOORS[theirs] >= FLOORS[mine]:
                found.append((importer, other))
    return sorted(found)


def test_every_room_has_a_floor() -> None:
    rooms = {room_of(m) for m in import_graph(PACKAGE)}
    assert rooms <= FLOORS.keys(), rooms - FLOORS.keys()


def test_every_import_points_down_a_floor() -> None:
    assert arrows_up(import_graph(PACKAGE)) == []


def test_the_floor_rule_sees_an_arrow_up() -> None:
    graph = {
        "jaxbench.store.checks": {"jaxbench.analyse.kinds"},
        "jaxbench.measure.suite": {"jaxbench.render.units", "jaxbench.store.fsio"},
        "jaxbench.jobs.review": {"jaxbench.lockstep.coordinator"},
    }
    assert arrows_up(graph) == [
        ("jaxbench.measure.suite", "jaxbench.render.units"),  # the same floor, another room
        ("jaxbench.store.checks", "jaxbench.analyse.kinds"),
    ]


# --- processes start in the jobs and the runners only -----------------------------------

#: The rooms that may start processes (git, asv, pip, forks, the lockstep workers).
PROCESS_ROOMS = ("jobs", "lockstep", "measure")
_PROCESS_MODULES = ("subprocess", "multiprocessing", "concurrent.futures.process")
_PROCESS_CALLS = re.compile(r"^os\.(fork|forkpty|system|popen|exec\w*|spawn\w*|posix_spawn\w*)$")
#: Every module that starts a process, and how (the list the rule keeps short).
PROCESS_STARTERS = {
    "jobs/git.py": "git",
    "jobs/init_checks.py": "git, pip, the launch check's interpreter",
    "jobs/parallel.py": "the scan's forked workers",
    "jobs/publish.py": "asv publish",
    "jobs/streamed.py": "asv run of a review or an upgrade, in its own process group",
    "lockstep/builds.py": "git clone, the project's build command, pip",
    "lockstep/coordinator.py": "the lockstep workers and their fork servers",
    "lockstep/first_call.py": "the first-call workers",
    "lockstep/worker.py": "its forked rounds (--serve)",
    "measure/forks.py": "the figures processes, forked from the suite",
}


def starts_processes(path: Path) -> list[str]:
    """How a module may start a process: what it imports or calls for it."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith(_PROCESS_MODULES)]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [f"{node.module}.{a.name}" for a in node.names]
            if node.module.startswith(_PROCESS_MODULES):
                found.append(node.module)
            found += [n for n in names if n == "concurrent.futures.ProcessPoolExecutor"]
        elif isinstance(node, ast.Call) and _PROCESS_CALLS.match(ast.unparse(node.func)):
            found.append(ast.unparse(node.func))
    return sorted(set(found))


def test_only_the_jobs_and_the_runners_start_processes() -> None:
    starters = {
        str(p.relative_to(PACKAGE)): how
        for p in sorted(PACKAGE.rglob("*.py"))
        if (how := starts_processes(p))
    }
    outside = sorted(p for p in starters if p.split("/")[0] not in PROCESS_ROOMS)
    assert outside == [], {p: starters[p] for p in outside}
    assert sorted(starters) == sorted(PROCESS_STARTERS), starters


def test_the_process_rule_sees_a_process(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text(
        "import subprocess\nfrom concurrent.futures import ProcessPoolExecutor\n"
        "import os\n\ndef f():\n    os.fork()\n    os.system('ls')\n"
    )
    assert starts_processes(planted) == [
        "concurrent.futures.ProcessPoolExecutor",
        "os.fork",
        "os.system",
        "subprocess",
    ]
