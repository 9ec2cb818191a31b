"""The paths asv and jaxbench write that a repository must not commit, for ``.gitignore``.

init tells users to commit ``results/``; asv's environments and logs
(``.asv/``), the published HTML (``html/``, deployed by the workflow, never
committed) and jaxbench's scan cache inside ``results/`` must stay out of it.
:func:`missing_ignores` asks git which of them it does not ignore yet (any
ignore file, any pattern that covers them counts); :func:`with_ignores` is
the ``.gitignore`` text with those lines appended, once, and
:func:`planned_gitignore` the file init writes with the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from jaxbench.errors import UsageError
from jaxbench.scaffold.plan import PlannedFile
from jaxbench.store.series_table import CACHE_NAME

__all__ = [
    "GITIGNORE",
    "IGNORED",
    "Ignored",
    "missing_ignores",
    "planned_gitignore",
    "with_ignores",
]

GITIGNORE = ".gitignore"
#: asv.conf.json's ``results_dir`` as init writes it.
RESULTS_DIR = "results"


@dataclass(frozen=True)
class Ignored:
    """A line of ``.gitignore`` and what it keeps out of git."""

    #: The pattern, anchored at the repository's top.
    pattern: str
    #: A path the pattern must cover, for ``git check-ignore`` (a directory
    #: pattern matches only what is inside it).
    probe: str
    #: For people.
    what: str


IGNORED = (
    Ignored("/.asv/", ".asv/env", "asv's environments and logs"),
    Ignored("/html/", "html/index.html", "the published history"),
    Ignored(f"/{RESULTS_DIR}/{CACHE_NAME}", f"{RESULTS_DIR}/{CACHE_NAME}", "jaxbench's scan cache"),
)
_HEADER = "# asv and jaxbench: environments, published HTML, caches (jaxbench init)"


def missing_ignores(ignores: Callable[[str], bool]) -> tuple[Ignored, ...]:
    """The entries of :data:`IGNORED` that git does not ignore yet (``ignores(path)``
    answers whether git ignores a path of the repository:
    :func:`jaxbench.jobs.init_checks.git_ignores`)."""
    return tuple(entry for entry in IGNORED if not ignores(entry.probe))


def with_ignores(current: str | None, entries: tuple[Ignored, ...]) -> str:
    """``.gitignore``'s text (``current``; None when there is none) with a line for each
    entry it lacks appended, under one comment."""
    text = current or ""
    have = {line.strip() for line in text.splitlines()}
    lines = [entry.pattern for entry in entries if entry.pattern not in have]
    if not lines:
        return text
    if text and not text.endswith("\n"):
        text += "\n"
    if _HEADER not in have:
        lines.insert(0, _HEADER)
    separator = "\n" if text.strip() and _HEADER not in have else ""
    return text + separator + "\n".join(lines) + "\n"


def planned_gitignore(root: Path, ignores: Callable[[str], bool]) -> tuple[PlannedFile | None, str]:
    """``.gitignore`` with the lines it lacks (None: it lacks none), and which, for people."""
    missing = missing_ignores(ignores)
    if not missing:
        return None, ""
    path = root / GITIGNORE
    try:
        current = path.read_text(encoding="utf-8") if path.is_file() else None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path} ({exc}); fix or remove it") from None
    said = ", ".join(f"{entry.pattern} ({entry.what})" for entry in missing)
    return PlannedFile(GITIGNORE, with_ignores(current, missing)), said
