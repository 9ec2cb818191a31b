"""One commit in two environments of the matrix: is the new jax slower for this code?

Two ways, both with compare's verdicts row by row (each row matched by
benchmark and parameters, the head environment's points relabelled to the
base's):

- :func:`measure_upgrade` measures, as a review measures two commits
  (:func:`jaxbench.jobs.review.measure_and_compare`): ``asv run`` of the
  commit in both environments (the exact figures: XLA's work, the answer,
  the HLO), the first calls in fresh processes of each environment's Python
  side by side, the warm times side by side (lockstep rounds, each side in
  its own environment with the commit's code in front); then one
  comparison, a pull-request-style comment with the HLO diff of each
  benchmark whose program changed, and the exit status. It measures under its
  own folder (``.asv/upgrade/``), never into asv's history; the verdict is
  kept beside it (``<results_dir>/<machine>/upgrades/``,
  :mod:`jaxbench.store.upgrades`) for the published site's upgrades page.
- :func:`compare_environments` reads what the history already holds
  (``make bench`` measures every commit in each environment of the matrix):
  nothing is measured; warm times are tested on their samples only when
  both environments were measured in one run, first calls and memory (one
  value a side) are moved, not tested.

Never imports jax.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from jaxbench.analyse.compare import Settings, compare_points
from jaxbench.errors import ResultsError, UsageError
from jaxbench.jobs.compare import WARNINGS_SAID, Compared
from jaxbench.jobs.review import (
    ReviewDone,
    ReviewPlace,
    ReviewSettings,
    Subject,
    measure_and_compare,
    resolve,
)
from jaxbench.render.text import format_json
from jaxbench.store.asv_conf import read_asv_conf, read_project
from jaxbench.store.asv_env import AsvEnv, asv_envs, review_env
from jaxbench.store.checks import read_unchecked
from jaxbench.store.results import Point, find_commit, load_history
from jaxbench.store.sides import read_param_names, read_round_sizes
from jaxbench.store.upgrades import UpgradeRecord, write_upgrade

__all__ = [
    "JOB",
    "Measured",
    "NothingToCompare",
    "Pin",
    "Upgraded",
    "changed_packages",
    "compare_environments",
    "measure_upgrade",
    "parse_pin",
    "pick_env",
    "pinned_matrix",
]

#: The name the measured upgrade's lines start with.
JOB = "jaxbench upgrade"

Say = Callable[[str], None]


@dataclass(frozen=True)
class Measured:
    """An upgrade measured side by side, and where its verdict was kept."""

    done: ReviewDone
    base_env: str
    head_env: str
    commit: str
    #: ``jax 0.9.2 -> 0.10.2``: the packages whose versions differ
    title: str
    record: Path


@dataclass(frozen=True)
class Upgraded:
    """A comparison of one commit in two environments."""

    compared: Compared
    base_env: str
    head_env: str
    commit: str


def pick_env(names: Sequence[str], wanted: str, option: str, where: str = "the history") -> str:
    """The environment ``wanted`` names: its full name, or a part only it has (``jax0.9.2``);
    ``where`` the environments ``names`` are, for the message."""
    if wanted in names:
        return wanted
    found = [n for n in names if wanted in n]
    if len(found) == 1:
        return found[0]
    listed = ", ".join(sorted(names)) or "none"
    if not found:
        raise UsageError(
            f"{option} {wanted!r}: no environment of {where} has that name or part of a "
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
    report = dataclasses.replace(report, head_env=head_env)
    return Upgraded(Compared(report, read_param_names(results)), base_env, head_env, chosen)


def changed_packages(base: AsvEnv, head: AsvEnv) -> tuple[tuple[str, str, str], ...]:
    """(package, base version, head version) of each package of the two matrix entries
    whose version differs ("" for unpinned), by name."""
    before, after = dict(base.requirements), dict(head.requirements)
    return tuple(
        (name, before.get(name, ""), after.get(name, ""))
        for name in sorted(before.keys() | after.keys())
        if before.get(name, "") != after.get(name, "")
    )


def measure_upgrade(
    commit: str,
    base_env: str,
    head_env: str,
    place: ReviewPlace,
    settings: ReviewSettings,
    *,
    say: Say,
) -> Measured:
    """``commit`` (anything git resolves) measured in ``base_env`` and ``head_env`` side
    by side, compared, and the verdict kept for the published history.

    The environments are named in full or by a part only one has (``jax0.9.2``)."""
    config = place.config
    full = resolve(read_project(config, job=JOB).root, "COMMIT", commit)
    envs = {e.name: e for e in asv_envs(config)}
    where = f"{config.name}'s matrix"
    base_name = pick_env(list(envs), base_env, "--base-env", where)
    head_name = pick_env(list(envs), head_env, "--head-env", where)
    if base_name == head_name:
        raise UsageError(f"--base-env and --head-env are the same environment ({base_name})")

    def compare(results: Path, machine: str, paired: Settings) -> Compared:
        return compare_environments(
            results=results,
            machine=machine,
            base_env=base_name,
            head_env=head_name,
            commit=full,
            settings=paired,
            say=say,
        ).compared

    subject = Subject((full, full), (envs[base_name], envs[head_name]))
    done = measure_and_compare(subject, place, settings, compare, say=say)
    record = UpgradeRecord(
        machine=place.machine,
        commit=full,
        base_env=base_name,
        head_env=head_name,
        changed=changed_packages(envs[base_name], envs[head_name]),
        date=int(time.time() * 1000),
        status=done.status,
        compare=json.loads(format_json(done.report, settings.fail_on)),
    )
    path = write_upgrade(read_project(config, job=JOB).results, record)
    return Measured(done, base_name, head_name, full, record.title, path)


class NothingToCompare(Exception):
    """The base environment already has the version asked for (not an error: a
    scheduled try of the newest jax when the matrix pins it already)."""


@dataclass(frozen=True)
class Pin:
    """A package pinned to one version, as ``jax==0.10.2``."""

    name: str
    version: str

    def __str__(self) -> str:
        return f"{self.name}=={self.version}"


_PIN = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([A-Za-z0-9][A-Za-z0-9.+!_-]*)\s*$")


def parse_pin(text: str, option: str) -> Pin:
    """``jax==0.10.2`` as a :class:`Pin`; anything else is a one-line error."""
    match = _PIN.match(text)
    if match is None:
        raise UsageError(
            f"{option} {text!r}: give one package pinned to one version, e.g. jax==0.10.2"
        )
    return Pin(match.group(1), match.group(2))


def _env_of(envs: Sequence[AsvEnv], name: str, version: str) -> str:
    found = [e.name for e in envs if dict(e.requirements).get(name) == version]
    if len(found) != 1:  # asv's matrix names the two; one each
        raise UsageError(f"asv made {len(found)} environments of {name}=={version}; report this")
    return found[0]


@contextlib.contextmanager
def pinned_matrix(
    config: Path, head: Pin, base: Pin | None, base_env: str | None
) -> Iterator[tuple[Path, str, str]]:
    """A copy of ``config`` whose matrix is one environment twice, ``head``'s package at
    the base's version and at ``head``'s; (the copy, the base environment, the head's).

    The base is ``base_env`` of the matrix (by name or a part of it) or, without
    it, the entry of the newest jax (as a review picks); its other packages
    and variables are kept. Its version of ``head``'s package is ``base``'s
    where given, else the base environment's own. asv builds the two
    environments in the configuration's ``env_dir`` (an existing one is
    reused); the copy sits beside ``config`` until the end, then is removed.
    Raises :class:`NothingToCompare` when the base (not given) already has
    ``head``'s version."""
    envs = asv_envs(config)
    if base_env is None:
        try:
            chosen = review_env(envs, config)
        except UsageError:
            names = ", ".join(e.name for e in envs) or "none"
            raise UsageError(
                f"{config}: which environment is the base? ({names}); pick one with --base-env"
            ) from None
    else:
        name = pick_env([e.name for e in envs], base_env, "--base-env", f"{config.name}'s matrix")
        chosen = next(e for e in envs if e.name == name)
    if base is not None and base.name.lower() != head.name.lower():
        raise UsageError(
            f"--base {base} and --head {head} pin different packages; pin the same one"
        )
    requirements = dict(chosen.requirements)
    key = next((k for k in requirements if k.lower() == head.name.lower()), head.name)
    version = base.version if base is not None else requirements.get(key, "")
    if not version:
        raise UsageError(
            f"{chosen.name} does not pin {head.name}; give the version to compare against "
            f"with --base {head.name}==VERSION"
        )
    if version == head.version:
        if base is None:
            raise NothingToCompare(f"{chosen.name} already has {head}: nothing to compare")
        raise UsageError(f"base and head both pin {head}; give two versions")
    conf = dict(read_asv_conf(config))
    conf["matrix"] = {
        "req": {**{k: [v] for k, v in requirements.items()}, key: [version, head.version]},
        "env": {k: [v] for k, v in chosen.env_vars},
    }
    fd, name = tempfile.mkstemp(prefix=".asv.conf.upgrade-", suffix=".json", dir=config.parent)
    copy = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(conf, handle, indent=2)
        made = asv_envs(copy)
        yield copy, _env_of(made, key, version), _env_of(made, key, head.version)
    finally:
        copy.unlink(missing_ok=True)
