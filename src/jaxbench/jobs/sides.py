"""A commit's package put in front of an asv environment's installed one.

asv keeps one installed commit per environment; side-by-side timing needs
two at once. :func:`jaxbench.lockstep.builds.commit_site` makes a folder
that imports a commit's package, built as asv builds it (once per commit,
cached). :func:`asv_side` is a lockstep
:class:`~jaxbench.lockstep.coordinator.Side` that runs the environment's own
Python (so exactly the matrix's packages: jax and every other requirement)
with that folder first on ``PYTHONPATH`` and the matrix's variables (e.g.
``XLA_FLAGS``) set, as asv sets them. Used by ``pair-history``, ``ab`` and
``first-call``. Never imports jax.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from jaxbench.errors import UsageError
from jaxbench.jobs.git import resolve_commit
from jaxbench.lockstep.builds import builds_of, commit_site
from jaxbench.lockstep.coordinator import Side
from jaxbench.store.asv_conf import forks_workers, read_asv_conf
from jaxbench.store.asv_env import AsvEnv, built_env

__all__ = ["Sides", "asv_side", "open_asv_sides", "open_sides", "resolve_side_commit"]

#: A hash written out, for sides that name no commit of a repository here (results only).
_HEX = re.compile(r"^[0-9a-f]{8,40}$")


def asv_side(
    label: str,
    env: AsvEnv,
    site: Path,
    benchmarks: Path,
    *,
    forkserver: bool = False,
) -> Side:
    """A side that runs ``env``'s Python with ``site`` in front, as asv runs a benchmark
    (``forkserver``: its workers forked from a server, as asv's launch method of that name)."""
    environ = (*env.env_vars, ("PYTHONPATH", str(site)))
    return Side(label, env.python, benchmarks, environ=environ, forkserver=forkserver)


def resolve_side_commit(repo: Path, option: str, text: str) -> tuple[str, bool]:
    """(the full hash git resolves ``text`` to, True), else (``text``, False) for a bare hash.

    What ``compare`` takes: a full hash, any unambiguous prefix (the 7 digits
    ``git log --oneline`` prints), a branch or ``HEAD~1``. A hash of 8 to 40
    hex digits that no repository here knows is kept as given (sides that
    differ only in their benchmark directories); anything else is an error.
    """
    full = resolve_commit(repo, text)
    if full is not None:
        return full, True
    if _HEX.match(text):
        return text, False
    raise UsageError(
        f"{option} {text!r} is not a commit hash or a commit git resolves in {repo}; "
        "give a hash or an unambiguous prefix (git log --oneline prints them, e.g. 9a04e3f)"
    )


@dataclass(frozen=True)
class Sides:
    """Base and head of a side-by-side run, their full commits and their environment."""

    base: Side
    head: Side
    base_commit: str
    head_commit: str
    #: The asv environment both sides run in (the base's, where they differ); None when
    #: the Pythons were given.
    env_name: str | None
    #: The head's asv environment where it is not the base's (``jaxbench upgrade``: one
    #: commit, two environments); None: the base's.
    head_env_name: str | None = None


@contextlib.contextmanager
def open_sides(
    *,
    config: Path,
    base_commit: str,
    head_commit: str,
    base_python: str | None,
    head_python: str | None,
    base_benchmarks: Path,
    head_benchmarks: Path,
    env_name: str | None,
    default_python: str,
) -> Iterator[Sides]:
    """The two sides; each commit's package stays in a scratch folder until the end.

    Without ``--base-python``/``--head-python`` and with an ``asv.conf.json``
    (``config``), both sides run the Python of asv's environment ``env_name``
    (or the only one built), each with its own commit put in front
    (:func:`~jaxbench.lockstep.builds.commit_site`: the commit built as asv
    builds it): the matrix's packages and variables as ``asv run`` has them,
    with nothing installed into the environment. With
    neither Pythons nor a configuration, both run ``default_python``.
    """
    repo = config.resolve().parent if config.is_file() else Path.cwd()
    base, base_known = resolve_side_commit(repo, "--base-commit", base_commit)
    head, head_known = resolve_side_commit(repo, "--head-commit", head_commit)
    if (base_python is None) != (head_python is None):
        raise UsageError(
            "give both --base-python and --head-python, or neither "
            "(then both sides run asv's environment, each with its commit in front)"
        )
    if base_python is not None and head_python is not None:
        yield Sides(
            Side("base", base_python, base_benchmarks),
            Side("head", head_python, head_benchmarks),
            base,
            head,
            None,
        )
        return
    if not config.is_file():
        yield Sides(
            Side("base", default_python, base_benchmarks),
            Side("head", default_python, head_benchmarks),
            base,
            head,
            None,
        )
        return
    for option, commit, known in (
        ("--base-commit", base, base_known),
        ("--head-commit", head, head_known),
    ):
        if not known:
            raise UsageError(
                f"{option} {commit}: not a commit of the repository {repo}; asv's "
                "environment can run only commits of it (or give --base-python and --head-python)"
            )
    env = built_env(config, env_name).name
    with open_asv_sides(
        config=config,
        commits=(base, head),
        env_names=(env, env),
        benchmarks=(base_benchmarks, head_benchmarks),
    ) as sides:
        yield sides


@contextlib.contextmanager
def open_asv_sides(
    *,
    config: Path,
    commits: tuple[str, str],
    env_names: tuple[str, str],
    benchmarks: tuple[Path, Path],
) -> Iterator[Sides]:
    """Base and head, each a commit (full hashes) in an asv environment asv has built.

    Two commits in one environment (a review), or one commit in two (an
    upgrade: jax 0.9.2 and 0.10.2 of the matrix): each side runs its
    environment's Python with its commit's package in front
    (:func:`~jaxbench.lockstep.builds.commit_site`, built for that
    environment) and its matrix's variables set."""
    conf = read_asv_conf(config)
    fork = forks_workers(conf)
    builds = builds_of(config, conf)
    envs = [built_env(config, name) for name in env_names]
    base, head = (
        asv_side(label, env, commit_site(builds, commit, env), bench, forkserver=fork)
        for label, env, commit, bench in zip(
            ("base", "head"), envs, commits, benchmarks, strict=True
        )
    )
    yield Sides(
        base,
        head,
        commits[0],
        commits[1],
        envs[0].name,
        envs[1].name if envs[1].name != envs[0].name else None,
    )
