"""git as jaxbench's commands need it: one call, and a commit resolved as git resolves it.

:func:`git` runs one git command in a repository and turns a failure into a
:class:`~jaxbench.errors.UsageError`; :func:`resolve_commit` turns what a
user typed (a full hash, the 7-digit prefix ``git log --oneline`` prints, a
branch, ``HEAD~1``) into the full 40-digit hash asv's result files carry.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from jaxbench.errors import UsageError

__all__ = ["FULL_HASH", "git", "resolve_commit"]

#: A full commit hash as asv records it.
FULL_HASH = re.compile(r"^[0-9a-f]{40}$")


def git(repo: Path, *args: str) -> str:
    """``git ARGS`` in ``repo``; its stdout, stripped. UsageError when git fails."""
    try:
        done = subprocess.run(
            ["git", *args], cwd=repo, capture_output=True, text=True, check=True, timeout=120
        )
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        detail = (getattr(exc, "stderr", "") or str(exc)).strip().splitlines()
        raise UsageError(
            f"git {' '.join(args)} failed in {repo}: {detail[-1] if detail else exc}; "
            "run this in the benchmarked repository"
        ) from None
    return done.stdout.strip()


def resolve_commit(repo: Path, text: str) -> str | None:
    """The full hash of the commit ``text`` names in ``repo``; None when git cannot say.

    None for a name git does not know, an ambiguous prefix, a directory that
    is not a git repository, or no git at all: the caller decides.
    """
    if not text or text.startswith("-") or any(c.isspace() for c in text):
        return None
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", f"{text}^{{commit}}"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = done.stdout.strip()
    return found if done.returncode == 0 and FULL_HASH.match(found) else None
