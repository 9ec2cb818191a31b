"""The package's layout for docs/development.md, from each module's first docstring line.

:func:`layout` walks ``src/jaxbench`` and writes one Markdown list item per
package and module, in the order a file browser shows them, each with the
first line of its docstring (read from the syntax tree: nothing is
imported). A folder of package data (no ``__init__.py``) is named with its
line from :data:`DATA_FOLDERS`. A module without a docstring, or a data folder
not described there, stops it with one line naming the file and the fix.

``python tests/docs_site.py --write`` (``make docs-generated``) writes the list
into docs/development.md, between the markers; ``tests/test_docs.py`` fails
when the committed list differs from what this makes.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "src" / "jaxbench"
#: Folders of package data, which have no docstring to read.
DATA_FOLDERS = {
    "assets": "the published pages' stylesheet and vendored JavaScript (package data)",
    "templates": "what `jaxbench init` writes, rendered by `scaffold/plan.py` (package data)",
}
_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")


class LayoutError(Exception):
    """A module or folder the layout cannot describe."""


def first_line(path: Path) -> str:
    """A module's first docstring line, as Markdown (``x`` and :mod:`x` become `x`)."""
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    if not docstring or not docstring.strip():
        shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
        raise LayoutError(
            f"{shown} has no docstring: give it one whose first line says what the module is for"
        )
    line = docstring.strip().splitlines()[0].strip()
    line = _ROLE.sub(lambda m: f"`{m.group(1).split('.')[-1]}`", line)
    return line.replace("``", "`")


def _entries(folder: Path, depth: int) -> list[str]:
    indent = "  " * depth
    lines: list[str] = []
    children = sorted(
        (p for p in folder.iterdir() if p.name != "__pycache__" and not p.name.startswith(".")),
        key=lambda p: (p.is_dir(), p.name),
    )
    for child in children:
        name = child.relative_to(PACKAGE).as_posix()
        if child.is_dir():
            if (child / "__init__.py").is_file():
                lines.append(f"{indent}- `{name}/`: {first_line(child / '__init__.py')}")
                lines += _entries(child, depth + 1)
            elif child.name in DATA_FOLDERS:
                lines.append(f"{indent}- `{name}/`: {DATA_FOLDERS[child.name]}")
            else:
                raise LayoutError(
                    f"src/jaxbench/{name}/ is neither a package nor a known data folder: "
                    "add an __init__.py with a docstring, or describe it in "
                    "tests/docs_layout.py's DATA_FOLDERS"
                )
        elif child.suffix == ".py" and child.name != "__init__.py":
            lines.append(f"{indent}- `{name}`: {first_line(child)}")
    return lines


def layout() -> str:
    """The Markdown list of every package, module and data folder under src/jaxbench."""
    lines = [f"- `src/jaxbench/`: {first_line(PACKAGE / '__init__.py')}", *_entries(PACKAGE, 1)]
    return "\n".join(lines) + "\n"
