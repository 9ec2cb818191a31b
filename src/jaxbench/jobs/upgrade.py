"""One commit in two environments of the history: is the new jax slower for this code?

``make bench`` measures every commit in each environment of asv.conf.json's
matrix (jax 0.9.2 and jax 0.10.2, say) in one ``asv run`` with interleaved
rounds, so the history already holds both versions' figures for the same
code. :func:`compare_environments` reads one commit's points in the two
environments and compares them as a review compares two commits
(:func:`jaxbench.analyse.compare.compare_points`): each row matched by
benchmark and parameters, the head environment's points relabelled to the
base's. Warm times are tested on their samples when both environments were
measured in one run (asv's interleaved rounds), else shown untested; first
calls and memory measured once a side are moved, not tested; XLA's work and
the answer are exact. Nothing is measured here: the figures are the
history's. Never imports jax.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from jaxbench.analyse.compare import Settings, compare_points
from jaxbench.errors import ResultsError, UsageError
from jaxbench.jobs.compare import WARNINGS_SAID, Compared
from jaxbench.store.checks import read_unchecked
from jaxbench.store.results import Point, find_commit, load_history
from jaxbench.store.sides import read_param_names, read_round_sizes

__all__ = ["Upgraded", "compare_environments", "pick_env"]

Say = Callable[[str], None]


@dataclass(frozen=True)
class Upgraded:
    """A comparison of one commit in two environments."""

    compared: Compared
    base_env: str
    head_env: str
    commit: str


def pick_env(names: Sequence[str], wanted: str, option: str) -> str:
    """The environment ``wanted`` names: its full name, or a part only it has (``jax0.9.2``)."""
    if wanted in names:
        return wanted
    found = [n for n in names if wanted in n]
    if len(found) == 1:
        return found[0]
    listed = ", ".join(sorted(names)) or "none"
    if not found:
        raise UsageError(
            f"{option} {wanted!r}: no environment of the history has that name or part of a "
            f"name; its environments: {listed}"
        )
    raise UsageError(
        f"{option} {wanted!r} is part of {len(found)} environments' names "
        f"({', '.join(sorted(found))}); give more of the one you mean"
    )


def _newest_in_both(points: Sequence[Point], base_env: str, head_env: str) -> str:
    dates: dict[str, int] = {}
    envs: dict[str, set[str]] = {}
    for p in points:
        if p.value is None:
            continue
        envs.setdefault(p.commit, set()).add(p.key.env_name)
        dates[p.commit] = max(dates.get(p.commit, p.date), p.date)
    both = [c for c, e in envs.items() if {base_env, head_env} <= e]
    if not both:
        raise ResultsError(
            f"no commit has results in both {base_env} and {head_env}; run asv on one "
            "commit in both environments (make bench measures every environment of the matrix)"
        )
    return max(both, key=lambda c: (dates[c], c))


def compare_environments(
    *,
    results: Path,
    machine: str | None,
    base_env: str,
    head_env: str,
    commit: str | None,
    settings: Settings,
    say: Say,
) -> Upgraded:
    """``commit`` (default: the newest measured in both) in ``base_env`` against ``head_env``."""
    history = load_history(results, machine=machine)
    for warning in history.warnings[:WARNINGS_SAID]:
        say(f"jaxbench: warning: {warning}")
    machines = history.machines()
    if len(machines) > 1:
        raise ResultsError(
            f"{results} holds results from several machines ({', '.join(machines)}); "
            "pick one with --machine"
        )
    names = sorted({p.key.env_name for p in history.points})
    base_env = pick_env(names, base_env, "--base-env")
    head_env = pick_env(names, head_env, "--head-env")
    if base_env == head_env:
        raise UsageError(f"--base-env and --head-env are the same environment ({base_env})")
    chosen = (
        _newest_in_both(history.points, base_env, head_env)
        if commit is None
        else find_commit(history, commit)
    )
    base = [p for p in history.points if p.commit == chosen and p.key.env_name == base_env]
    head = [
        dataclasses.replace(p, key=dataclasses.replace(p.key, env_name=base_env))
        for p in history.points
        if p.commit == chosen and p.key.env_name == head_env
    ]
    for side, env in ((base, base_env), (head, head_env)):
        if not side:
            raise ResultsError(
                f"commit {chosen[:12]} has no results in {env}; run asv on it there, or pick "
                "a commit measured in both (leave COMMIT out for the newest)"
            )
    settings = dataclasses.replace(
        settings, round_sizes=read_round_sizes(results / "benchmarks.json")
    )
    report = compare_points(base, head, settings, notes=read_unchecked(results))
    return Upgraded(Compared(report, read_param_names(results)), base_env, head_env, chosen)
