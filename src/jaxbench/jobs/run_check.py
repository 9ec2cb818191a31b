"""Did a run of the main job measure what it set out to? What to say when it did not.

``make bench`` and the main workflow go on past a step that measured nothing
(publishing and listing what there is), then end here: asv's output says
whether it could build the project and import the suite
(:func:`jaxbench.store.asv_log.read_suite_failure`), its exit status whether
it ended for another reason, and the paired history's files of the run's
commits whether a pair timed nothing (:func:`jaxbench.analyse.paired_history.gaps`).
Each problem is one line naming its cause and the fix; none means the run
measured what it could. Never imports jax.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from jaxbench.analyse.paired_history import gaps
from jaxbench.errors import ResultsError
from jaxbench.store.asv_log import read_suite_failure, selected_nothing
from jaxbench.store.benchmarks_json import read_benchmarks_json
from jaxbench.store.paired import load_paired

__all__ = ["PAIRS_NAMED", "run_problems"]

#: Pairs that timed nothing named one by one; the rest are counted.
PAIRS_NAMED = 3
#: asv run's exit statuses that mean it ran: 0, or 2 (some benchmark failed; the listing says).
_ASV_RAN = (0, 2)


def run_problems(
    *,
    asv_log: Path | None,
    asv_status: int | None,
    commits: Collection[str],
    results: Path,
    machine: str,
    root: Path,
) -> list[str]:
    """One line per thing the run could not measure (empty: it measured what it could)."""
    problems: list[str] = []
    failure = read_suite_failure(asv_log, root) if asv_log is not None else None
    where = f" (asv's output: {asv_log})" if asv_log is not None else ""
    if failure is not None:
        fix = "fix that file" if failure.stage == "import" else "fix the project's build"
        problems.append(f"{failure}; nothing was measured; {fix} and run again{where}")
    elif asv_log is not None and asv_status not in _ASV_RAN and selected_nothing(asv_log):
        problems.append(f"{_selected_nothing(results)} and run again{where}")
    elif asv_status is not None and asv_status not in _ASV_RAN:
        problems.append(f"asv run exited with status {asv_status}; read why{where}")
    wanted = set(commits)
    runs = [r for r in load_paired(results, machine=machine) if r.head_commit in wanted]
    nothing = [g for g in gaps(runs) if g.run.timed_nothing]
    for gap in nothing[:PAIRS_NAMED]:
        run = gap.run
        problems.append(
            f"the pair {run.base_commit[:8]}..{run.head_commit[:8]} [{run.env_name}] timed "
            f"nothing: {gap.cause}"
        )
    if len(nothing) > PAIRS_NAMED:
        problems.append(
            f"{len(nothing) - PAIRS_NAMED} more pair(s) timed nothing "
            "(jaxbench regressions lists them)"
        )
    return problems


def _selected_nothing(results: Path) -> str:
    """Why asv selected no benchmark: its -b pattern matched none, or the suite has none.

    asv writes every benchmark it found to benchmarks.json before it applies
    ``-b``, so an empty file means an empty suite.
    """
    try:
        found = read_benchmarks_json(results / "benchmarks.json").benchmarks
    except ResultsError:
        return (
            "asv run selected no benchmark: its -b (--bench) pattern matches no benchmark's "
            "name, or the suite has none; fix the pattern (ASV_ARGS in make) or the suite"
        )
    if not found:
        return (
            "asv found no benchmark in the suite: asv.conf.json's benchmark_dir needs a module "
            "of time_*, track_* or peakmem_* functions or methods (or a jax_suite); add one"
        )
    return (
        "asv run selected no benchmark: its -b (--bench) pattern, a regular expression "
        f"searched in each name, matches none of the suite's {len(found)} (e.g. "
        f"{found[0].name}); fix the pattern (ASV_ARGS in make)"
    )
