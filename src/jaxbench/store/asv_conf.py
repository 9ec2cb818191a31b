"""``asv.conf.json``: the one reader of asv's configuration file in jaxbench.

asv allows ``//`` comments in it (:mod:`jaxbench.store.jsonc` strips them as
asv does). Every part of jaxbench that needs the configuration (its
``results_dir``, ``html_dir``, ``repo`` or ``regressions_thresholds``) reads
it here: ``jaxbench regressions``, ``publish``, ``pair-history`` and the HLO
store of the measuring half (standard library only, so it loads in asv's
benchmark environments).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from jaxbench.errors import ResultsError, UsageError
from jaxbench.store import jsonc

__all__ = [
    "CONF_NAME",
    "AsvProject",
    "forks_workers",
    "read_asv_conf",
    "read_project",
    "results_dir",
    "thresholds_from_asv_conf",
]

#: The file asv reads by default, in the directory it runs from.
CONF_NAME = "asv.conf.json"


def read_asv_conf(path: Path) -> dict[str, object]:
    """The content of an ``asv.conf.json`` (asv allows ``//`` comments in it).

    Raises :class:`ResultsError` naming the file when it cannot be read or is
    not a JSON object.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read ({exc.strerror or exc}); check the path") from None
    try:
        data = jsonc.loads(text)
    except ValueError as exc:
        raise ResultsError(f"{path}: not valid JSON ({exc}); fix the file") from None
    if not isinstance(data, dict):
        raise ResultsError(f"{path}: not an asv.conf.json (no JSON object); fix the file")
    return data


def results_dir(conf: Mapping[str, object], path: Path) -> Path:
    """Where asv writes results: ``results_dir`` of the configuration ``conf`` read
    from ``path``, relative to that file's folder as asv takes it (``results`` when
    absent).

    Raises :class:`ResultsError` naming the file when the value is not a path.
    """
    value = conf.get("results_dir", "results")
    if not isinstance(value, str) or not value:
        raise ResultsError(f"{path}: 'results_dir' must be a path, got {value!r}; fix the file")
    return Path(path).resolve().parent / value


@dataclass(frozen=True)
class AsvProject:
    """An asv project as the commands find it: its configuration, its folder and
    where asv writes its results."""

    conf: Mapping[str, object]
    root: Path
    results: Path


def read_project(path: Path, *, required: bool = True, job: str = "jaxbench") -> AsvProject:
    """The project whose ``asv.conf.json`` is ``path``.

    A missing file raises :class:`UsageError` naming it and ``job`` (the command
    that needs it); with ``required=False`` it is a project in the working
    folder with asv's defaults instead (no configuration, results in
    ``results``). Raises :class:`ResultsError` naming the file when it cannot
    be used.
    """
    path = Path(path)
    if not path.is_file():
        if required:
            raise UsageError(
                f"{path}: no such file; run {job} where asv.conf.json is "
                "(jaxbench init writes one), or give --config"
            )
        root = Path.cwd()
        return AsvProject({}, root, root / "results")
    conf = read_asv_conf(path)
    return AsvProject(conf, path.resolve().parent, results_dir(conf, path))


def forks_workers(conf: Mapping[str, object]) -> bool:
    """True when asv forks each benchmark from a server that imported the suite
    (``"launch_method": "forkserver"``); the lockstep workers then start the same
    way. asv's default (``auto``) and ``spawn`` start a new interpreter each time."""
    return conf.get("launch_method") == "forkserver" and hasattr(os, "fork")


def thresholds_from_asv_conf(path: Path) -> dict[str, float]:
    """``regressions_thresholds`` of an ``asv.conf.json`` (``{}`` when absent).

    Raises :class:`ResultsError` naming the file when it cannot be used.
    """
    conf = read_asv_conf(path)
    raw = conf.get("regressions_thresholds", {})
    if not isinstance(raw, dict):
        raise ResultsError(
            f"{path}: 'regressions_thresholds' must map regexes to numbers; fix the file"
        )
    thresholds: dict[str, float] = {}
    for regex, value in raw.items():
        try:
            number = float(value)
            re.compile(regex)
        except (TypeError, ValueError, re.error):
            raise ResultsError(
                f"{path}: regressions_thresholds[{regex!r}] = {value!r} is not a regex "
                "mapped to a number; fix the file"
            ) from None
        if not math.isfinite(number) or number < 0:
            raise ResultsError(
                f"{path}: regressions_thresholds[{regex!r}] = {value!r} must be >= 0; fix the file"
            )
        thresholds[regex] = number
    return thresholds
