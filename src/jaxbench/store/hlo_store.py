"""Where optimized HLO text is kept: beside asv's results, one gzip file each.

Layout (``<results_dir>`` is asv.conf.json's ``results_dir``)::

    <results_dir>/<machine>/hlo/<commit8>-<env_name>/<slug>-<key>.hlo.gz

``<slug>`` is the benchmark name and parameters made filename-safe (for
people reading the folder); ``<key>`` is a hash of the exact benchmark name
and parameters, so that two names that sanitise alike never share a file.
Each file holds one header line, ``// jaxbench-hlo {json}`` with the exact
``benchmark`` and ``params``, then the HLO text.

asv leaves this folder alone: its results reader only loads ``*.json`` files
(and ``hlo/`` holds none), and ``asv publish`` only rebuilds ``html_dir``.

Inside an asv benchmark process the commit, environment and configuration
come from the variables asv sets (``ASV_COMMIT``, ``ASV_ENV_NAME``,
``ASV_CONF_DIR``, the directory asv was started in). asv does not pass its
machine name: ``JAXBENCH_MACHINE`` names it, else the host name
(``platform.uname().node``), which is asv's default machine name.
``JAXBENCH_RESULTS_DIR`` overrides the results directory.

asv sets none of its ``ASV_*`` variables for ``environment_type: existing``
(``--python=same``): ``ExistingEnvironment.run`` passes only the parent's
environment and the matrix ``env`` variables. There, set ``JAXBENCH_COMMIT``
(the hash given to ``--set-commit-hash``), ``JAXBENCH_ENV_NAME`` and
``JAXBENCH_RESULTS_DIR`` in the environment of ``asv run``; asv passes the
parent's environment through to every benchmark process. ``ASV_*`` wins
where both are set.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import platform
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from jaxbench.errors import ResultsError, UsageError
from jaxbench.store.asv_conf import CONF_NAME, read_asv_conf, results_dir
from jaxbench.store.fsio import write_bytes_atomic

__all__ = [
    "HLO_FOLDER",
    "HloRuns",
    "StoredHlo",
    "env_folder_part",
    "find_run",
    "list_hlo",
    "load_hlo",
    "machine_name",
    "read_hlo_runs",
    "read_stored",
    "results_dir_from_environ",
    "run_dir_from_environ",
    "run_files",
    "save_hlo",
    "stored_file_name",
]

#: The folder under ``<results_dir>/<machine>/`` that holds HLO files.
HLO_FOLDER = "hlo"
_SUFFIX = ".hlo.gz"
_HEADER = "// jaxbench-hlo "
_UNSAFE = re.compile(r"[^A-Za-z0-9_.=,+\-]+")
_SLUG_MAX = 120


@dataclass(frozen=True)
class StoredHlo:
    """One stored HLO file: which run and which benchmark it belongs to."""

    machine: str
    commit: str
    env_name: str
    benchmark: str
    params: tuple[str, ...]
    path: Path


def _safe(text: str) -> str:
    """``text`` as one safe path component: no separators, no leading dots."""
    return _UNSAFE.sub("_", text).lstrip(".") or "_"


def _file_name(benchmark: str, params: tuple[str, ...], suffix: str = _SUFFIX) -> str:
    slug = _safe(benchmark + ("-" + ",".join(params) if params else ""))[:_SLUG_MAX]
    key = hashlib.sha256(json.dumps([benchmark, list(params)]).encode("utf-8")).hexdigest()
    return f"{slug}-{key[:12]}{suffix}"


def _env_part(env_name: str) -> str:
    """``env_name`` as the part of a run folder name after ``<commit8>-``."""
    return _UNSAFE.sub("_", env_name) or "_"


def _run_folder(commit: str, env_name: str) -> str:
    return f"{_safe(commit[:8].lower())}-{_env_part(env_name)}"


def machine_name(environ: Mapping[str, str]) -> str:
    """``JAXBENCH_MACHINE``, else asv's default machine name (the host name)."""
    return environ.get("JAXBENCH_MACHINE") or platform.uname().node


def results_dir_from_environ(environ: Mapping[str, str]) -> Path:
    """asv's results directory, from ``JAXBENCH_RESULTS_DIR`` or ``ASV_CONF_DIR``."""
    if environ.get("JAXBENCH_RESULTS_DIR"):
        return Path(environ["JAXBENCH_RESULTS_DIR"])
    conf_dir = Path(environ.get("ASV_CONF_DIR", "."))
    conf = conf_dir / CONF_NAME
    try:
        data = read_asv_conf(conf)
    except ResultsError as exc:
        raise UsageError(
            f"cannot read {conf} to find the results directory ({exc}); "
            "run asv from the directory of asv.conf.json or set JAXBENCH_RESULTS_DIR"
        ) from None
    return results_dir(data, conf)


def run_dir_from_environ(folder: str, environ: Mapping[str, str]) -> Path | None:
    """``<results_dir>/<machine>/<folder>/<commit8>-<env_name>`` of the current asv run.

    ``None`` when not inside an asv run (neither ``ASV_COMMIT`` nor ``JAXBENCH_COMMIT``).
    """
    commit = environ.get("ASV_COMMIT") or environ.get("JAXBENCH_COMMIT")
    if not commit:
        return None
    env_name = environ.get("ASV_ENV_NAME") or environ.get("JAXBENCH_ENV_NAME") or "unknown-env"
    return (
        results_dir_from_environ(environ)
        / _safe(machine_name(environ))
        / folder
        / _run_folder(commit, env_name)
    )


def env_folder_part(env_name: str) -> str:
    """``env_name`` as it appears in a run folder's name (after ``<commit8>-``)."""
    return _env_part(env_name)


def stored_file_name(benchmark: str, params: tuple[str, ...], suffix: str) -> str:
    """A safe, collision-free file name for one benchmark and parameter combination."""
    return _file_name(benchmark, params, suffix)


def save_hlo(
    benchmark: str, params: tuple[str, ...], text: str, *, environ: Mapping[str, str]
) -> Path | None:
    """Store ``text`` for this benchmark in the current asv run; its path.

    ``None`` when not inside an asv run (neither ``ASV_COMMIT`` nor
    ``JAXBENCH_COMMIT``): nothing is written.
    """
    run = run_dir_from_environ(HLO_FOLDER, environ)
    if run is None:
        return None
    path = run / _file_name(benchmark, params)
    header = _HEADER + json.dumps({"benchmark": benchmark, "params": list(params)})
    write_bytes_atomic(path, gzip.compress(f"{header}\n{text}".encode(), mtime=0))
    return path


def _read(path: Path) -> tuple[str, tuple[str, ...], str]:
    """(benchmark, params, HLO text) of one stored file."""
    try:
        raw = gzip.decompress(path.read_bytes()).decode("utf-8")
        header, _, text = raw.partition("\n")
        if not header.startswith(_HEADER):
            raise ValueError("no jaxbench-hlo header line")
        meta = json.loads(header[len(_HEADER) :])
        benchmark, params = meta["benchmark"], meta["params"]
        if not isinstance(benchmark, str) or not isinstance(params, list):
            raise ValueError("bad header")
    except (OSError, ValueError, EOFError, KeyError, TypeError) as exc:
        raise ResultsError(
            f"cannot read stored HLO {path} ({exc}); delete it and rerun that benchmark"
        ) from None
    return benchmark, tuple(str(p) for p in params), text


def read_stored(stored: StoredHlo) -> str:
    """The HLO text of a file found by :func:`list_hlo`."""
    return _read(stored.path)[2]


def list_hlo(results_dir: Path, machine: str | None = None) -> list[StoredHlo]:
    """Every stored HLO file under ``results_dir`` (for one machine if given)."""
    root = Path(results_dir)
    if not root.is_dir():
        raise ResultsError(
            f"results directory {root} does not exist; pass --results or run asv first"
        )
    machines = [root / _safe(machine)] if machine is not None else sorted(root.iterdir())
    found: list[StoredHlo] = []
    for machine, commit, env_name, path in run_files(machines, HLO_FOLDER, _SUFFIX):
        benchmark, params, _ = _read(path)
        found.append(StoredHlo(machine, commit, env_name, benchmark, params, path))
    return found


def run_files(
    machine_dirs: Iterable[Path], folder: str, suffix: str
) -> Iterator[tuple[str, str, str, Path]]:
    """(machine, commit, environment, path) of every ``<machine>/<folder>/<commit>-<env>/*suffix``.

    The layout the HLO store and the unchecked notes share beside asv's
    results; sorted, folders without a ``-`` skipped.
    """
    for machine_dir in machine_dirs:
        base = machine_dir / folder
        if not base.is_dir():
            continue
        for run_dir in sorted(p for p in base.iterdir() if p.is_dir()):
            commit, sep, env_name = run_dir.name.partition("-")
            if not sep:
                continue
            for path in sorted(run_dir.glob(f"*{suffix}")):
                yield machine_dir.name, commit, env_name, path


def find_run(results_dir: Path, machine: str, commit_prefix: str, env_name: str) -> Path:
    """The run folder of the one stored commit starting with ``commit_prefix``.

    Raises :class:`ResultsError` naming what is missing, or the candidates.
    """
    hlo_dir = Path(results_dir) / _safe(machine) / HLO_FOLDER
    prefix = commit_prefix[:8].lower()
    env = _env_part(env_name)
    runs = sorted(p for p in hlo_dir.glob("*-*") if p.is_dir()) if hlo_dir.is_dir() else []
    matches = [p for p in runs if p.name.partition("-")[2] == env and p.name.startswith(prefix)]
    if not prefix or len(matches) != 1:
        stored = sorted({p.name.partition("-")[0] for p in runs if p.name.partition("-")[2] == env})
        what = "several commits" if len(matches) > 1 else "no commit"
        raise ResultsError(
            f"{what} matching {commit_prefix!r} with HLO stored in {hlo_dir} for env {env_name} "
            f"(stored: {', '.join(stored) or 'none'}); give a longer or other commit, "
            "or run the benchmarks for it with asv"
        )
    return matches[0]


def load_hlo(
    results_dir: Path,
    machine: str,
    commit_prefix: str,
    env_name: str,
    benchmark: str,
    params: tuple[str, ...],
) -> str:
    """The stored HLO text of one benchmark in one run.

    ``commit_prefix`` may be a full hash or a prefix that names one stored run.
    Raises :class:`ResultsError` naming the missing file and the fix.
    """
    path = find_run(results_dir, machine, commit_prefix, env_name) / _file_name(benchmark, params)
    if not path.is_file():
        raise ResultsError(
            f"no HLO stored for {benchmark} {list(params)} at commit {commit_prefix[:8]}: "
            f"{path} is missing; run that benchmark with asv for that commit"
        )
    stored_benchmark, stored_params, text = _read(path)
    if (stored_benchmark, stored_params) != (benchmark, params):
        raise ResultsError(f"{path} holds {stored_benchmark}, not {benchmark}; delete it")
    return text


# ---------------------------------------------------------------------------
# the HLO of two commits, side by side


@dataclass(frozen=True)
class HloRuns:
    """The stored HLO of one benchmark run per commit: (benchmark, params) -> text."""

    base: str
    head: str
    machine: str
    env_name: str
    base_texts: Mapping[tuple[str, tuple[str, ...]], str]
    head_texts: Mapping[tuple[str, tuple[str, ...]], str]


def _choose(what: str, option: str, given: str | None, choices: set[str], fix: str) -> str:
    if given is not None:
        return given
    if len(choices) == 1:
        return next(iter(choices))
    listed = ", ".join(sorted(choices)) or "none"
    raise UsageError(f"cannot tell which {what} to use (found: {listed}); {fix} or pass {option}")


def _runs_of(stored: list[StoredHlo], commit: str) -> list[StoredHlo]:
    prefix = commit[:8].lower()
    return [s for s in stored if prefix and s.commit.startswith(prefix)]


def read_hlo_runs(
    results: Path,
    base: str,
    head: str,
    *,
    machine: str | None = None,
    env_name: str | None = None,
    benchmark_regex: str | None = None,
    head_env_name: str | None = None,
) -> HloRuns:
    """The stored HLO of ``base`` and ``head`` (commits or prefixes) in one machine and
    environment, for the benchmarks matching ``benchmark_regex``.

    The machine and the environment may be left out when only one fits. With
    ``head_env_name`` the head's HLO is read from that environment and the
    base's from ``env_name`` (one commit in two environments: an upgrade);
    the runs' environment then reads ``base -> head``.
    Raises :class:`UsageError` / :class:`ResultsError` with the fix otherwise.
    """
    try:
        pattern = re.compile(benchmark_regex or "")
    except re.error as exc:
        raise UsageError(
            f"--benchmark {benchmark_regex!r} is not a regular expression: {exc}"
        ) from None
    stored = list_hlo(results)
    machine = _choose(
        "machine",
        "--machine",
        machine,
        {s.machine for s in stored},
        f"run the benchmarks with asv so that {results}/<machine>/hlo exists",
    )
    stored = [s for s in stored if s.machine == machine]
    for commit in (base, head):
        if not _runs_of(stored, commit):
            have = ", ".join(sorted({s.commit for s in stored})) or "none"
            raise ResultsError(
                f"no HLO stored for commit {commit!r} under {results}/{machine}/hlo "
                f"(stored: {have}); run the benchmarks for it with asv"
            )
    if head_env_name is not None and env_name is not None:
        base_dir = find_run(results, machine, base, env_name)
        head_dir = find_run(results, machine, head, head_env_name)
        env_name = f"{env_name} -> {head_env_name}"
    else:
        env_name = _choose(
            "environment",
            "--env",
            env_name,
            {s.env_name for s in _runs_of(stored, base)}
            & {s.env_name for s in _runs_of(stored, head)},
            "benchmark both commits in one asv environment",
        )
        base_dir = find_run(results, machine, base, env_name)
        head_dir = find_run(results, machine, head, env_name)

    def texts(run_dir: Path) -> dict[tuple[str, tuple[str, ...]], str]:
        return {
            (s.benchmark, s.params): read_stored(s)
            for s in stored
            if s.path.parent == run_dir and pattern.search(s.benchmark)
        }

    base_texts, head_texts = texts(base_dir), texts(head_dir)
    if not base_texts and not head_texts:
        raise ResultsError(
            f"no stored HLO matches --benchmark {benchmark_regex!r} at {base} or {head}; "
            "check the regular expression"
        )
    return HloRuns(
        base_dir.name.partition("-")[0],
        head_dir.name.partition("-")[0],
        machine,
        env_name,
        base_texts,
        head_texts,
    )
