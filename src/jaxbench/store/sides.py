"""The two sides of ``jaxbench compare``, read from asv results (no jax).

A side is a commit (hash or unique prefix) found in a results directory, or
an asv result file; both sides are the same sort. ``benchmarks.json`` beside
them gives each time benchmark's samples per round (its ``repeat``) and each
benchmark's parameter names (for graph links); the machine's paired history
(``<results>/<machine>/paired/``, :mod:`jaxbench.store.paired`) what
``jaxbench pair-history`` timed side by side.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from jaxbench.errors import ResultsError, UsageError
from jaxbench.store.benchmarks_json import read_benchmarks_json_or_warn
from jaxbench.store.paired import PairedRun, load_paired
from jaxbench.store.results import Point, find_commit, load_history, load_result_file

__all__ = [
    "Sides",
    "load_sides",
    "looks_like_file",
    "read_param_names",
    "read_round_sizes",
    "results_dir_of",
]


def looks_like_file(arg: str) -> bool:
    """Whether a side names an asv result file rather than a commit."""
    return arg.endswith(".json") or Path(arg).is_file()


def results_dir_of(head: str, results: Path) -> Path:
    """The results directory whose ``benchmarks.json`` describes the compared files."""
    if looks_like_file(head):
        return Path(head).parent.parent
    return results


def _load_file(arg: str) -> list[Point]:
    path = Path(arg)
    benchmarks_json = path.parent.parent / "benchmarks.json"
    points = load_result_file(path, benchmarks_json if benchmarks_json.is_file() else None)
    if not points:
        raise ResultsError(f"{path}: holds no benchmark results; re-run 'asv run' for that commit")
    return points


@dataclass(frozen=True)
class Sides:
    """What ``jaxbench compare`` reads: base and head, and what surrounds them."""

    base: list[Point]
    head: list[Point]
    warnings: tuple[str, ...]
    #: every point of the results directory (none for two result files)
    history: tuple[Point, ...]
    #: the machine's paired history, in the environment asked for
    paired: tuple[PairedRun, ...]


def _paired_of(results: Path, points: list[Point], env_name: str | None) -> tuple[PairedRun, ...]:
    machines = {p.key.machine for p in points}
    if len(machines) != 1:  # compare refuses mixed machines itself
        return ()
    return tuple(load_paired(results, machine=machines.pop(), env_name=env_name))


def load_sides(
    base: str, head: str, results: Path, *, machine: str | None, env_name: str | None
) -> Sides:
    """Base points, head points, warnings, the history around them and the paired history.

    From two result files (no history: ``()``; the paired history of the
    results directory that holds them) or two commits of a results directory
    (every point of its one machine, in the environment asked for).
    """
    base_file, head_file = looks_like_file(base), looks_like_file(head)
    if base_file != head_file:
        raise UsageError(
            f"BASE and HEAD must both be commits or both be result files; got {base!r} and {head!r}"
        )
    if base_file:
        sides = [_load_file(base), _load_file(head)]
        if env_name is not None:
            sides = [[p for p in side if p.key.env_name == env_name] for side in sides]
            if not all(sides):
                raise ResultsError(
                    f"no results for environment {env_name!r} in {base} or {head}; "
                    "pick an environment those files hold"
                )
        paired = _paired_of(results_dir_of(head, results), [*sides[0], *sides[1]], env_name)
        return Sides(sides[0], sides[1], (), (), paired)

    history = load_history(results, machine=machine, env_name=env_name)
    machines = history.machines()
    if len(machines) > 1:
        raise ResultsError(
            f"{results} holds results from several machines ({', '.join(machines)}); "
            "pick one with --machine"
        )
    base_commit = find_commit(history, base)
    head_commit = find_commit(history, head)
    base_points = [p for p in history.points if p.commit == base_commit]
    head_points = [p for p in history.points if p.commit == head_commit]
    paired = _paired_of(results, [*base_points, *head_points], env_name)
    return Sides(base_points, head_points, history.warnings, tuple(history.points), paired)


def read_round_sizes(benchmarks_json: Path) -> tuple[tuple[str, int | None], ...]:
    """Time benchmark -> samples per asv round (its ``repeat``); () if unreadable.

    :meth:`jaxbench.store.benchmarks_json.BenchmarksJson.round_sizes`: None
    where asv decides the repeat (the rounds cannot be split back).
    """
    return read_benchmarks_json_or_warn(benchmarks_json)[0].round_sizes()


def read_param_names(results: Path) -> dict[str, tuple[str, ...]]:
    """Benchmark -> parameter names from ``results/benchmarks.json``; empty if unreadable.

    Used only to build graph links, so a missing file costs the ``p-`` part of
    the links, not the comparison.
    """
    return read_benchmarks_json_or_warn(results / "benchmarks.json")[0].param_names()
