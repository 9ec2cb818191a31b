"""A range of commits in first-parent order, as the main job measures them (git).

``make bench`` measures ``git rev-list --first-parent`` (a merged branch's
own commits are not measured), so a regression's range ``GOOD..BAD`` is
bisected over the same commits: :func:`first_parent_range`. A range that
holds more than one commit is worth a bisect (:func:`commits_between`;
:func:`bisect_hint` gives the listing and the HTML page its command);
:func:`subjects` names its commits.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence
from pathlib import Path

from jaxbench.analyse.events import Event
from jaxbench.errors import UsageError
from jaxbench.jobs.git import git
from jaxbench.render.bisect import bisect_command

__all__ = ["bisect_hint", "commits_between", "first_parent_range", "subjects"]


def _resolve(repo: Path, option: str, text: str) -> str:
    try:
        return git(repo, "rev-parse", "--verify", "--quiet", f"{text}^{{commit}}")
    except UsageError:
        raise UsageError(
            f"{option} {text!r} is not a commit of {repo}; give a hash or a prefix git "
            "resolves (git log --oneline prints them)"
        ) from None


def first_parent_range(repo: Path, good: str, bad: str) -> tuple[str, ...]:
    """GOOD, then every commit after it up to BAD along first parents (full hashes).

    A UsageError when either is not a commit, they are the same, or GOOD is
    not on BAD's first-parent line (a commit of a merged branch).
    """
    good_hash, bad_hash = _resolve(repo, "GOOD", good), _resolve(repo, "BAD", bad)
    if good_hash == bad_hash:
        raise UsageError(f"GOOD and BAD are the same commit ({good_hash[:12]}); give two commits")
    after = git(repo, "rev-list", "--first-parent", "--reverse", f"{good_hash}..{bad_hash}").split()
    parent = git(repo, "rev-parse", f"{after[0]}^1").strip() if after else ""
    if not after or parent != good_hash:
        raise UsageError(
            f"GOOD {good_hash[:12]} is not an ancestor of BAD {bad_hash[:12]} along first "
            "parents (as make bench measures); give GOOD older than BAD on one branch"
        )
    return (good_hash, *after)


def commits_between(repo: Path, good: str, bad: str) -> int | None:
    """How many commits ``good..bad`` holds along first parents; None where git cannot say."""
    with contextlib.suppress(UsageError, ValueError):
        return int(git(repo, "rev-list", "--count", "--first-parent", f"{good}..{bad}"))
    return None


def subjects(repo: Path, commits: Sequence[str]) -> dict[str, str]:
    """Each commit's subject line (empty where git cannot say)."""
    if not commits:
        return {}
    with contextlib.suppress(UsageError):
        out = git(repo, "log", "--no-walk=unsorted", "--format=%H %s", *commits)
        found = {}
        for line in out.splitlines():
            commit, _, subject = line.partition(" ")
            found[commit] = subject
        return {c: found.get(c, "") for c in commits}
    return dict.fromkeys(commits, "")


def bisect_hint(
    repo: Path, *, results: Path | None = None, config: Path | None = None
) -> Callable[[Event], str | None]:
    """For the listing and the HTML page: each event's bisect command where its range
    holds more than one commit along first parents in ``repo`` (git's count; none where
    git cannot say, e.g. the results are read without their repository)."""
    spans = functools.lru_cache(maxsize=None)(functools.partial(commits_between, repo))

    def hint(event: Event) -> str | None:
        if event.good_commit is None:
            return None
        n = spans(event.good_commit, event.bad_commit)
        if n is None or n < 2:
            return None
        return bisect_command(
            event,
            results=None if results is None else str(results),
            config=None if config is None else str(config),
        )

    return hint
