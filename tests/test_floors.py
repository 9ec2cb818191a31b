"""Single-value figures change only beyond their family's measured floor (analyse/floors.py).

The data is this project's own committed history (``results/``: 12 commits x 2
environments of real ``asv run`` results, none of which touches measured
code: docs/measured.md, "Single values between identical commits"), and asv
result files written from its values.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest

from conftest import AsvResultsWriter, commit_hash
from jaxbench.analyse.compare import Settings, compare_points
from jaxbench.analyse.detect import Evidence, scan
from jaxbench.analyse.floors import (
    FLOORS,
    beyond_floor,
    family_of,
    history_floor,
    ratio_is_meaningful,
)
from jaxbench.analyse.stats import Verdict
from jaxbench.kinds import Kind, kind_of
from jaxbench.render.markdown import format_markdown
from jaxbench.render.text import format_text
from jaxbench.store.results import History, Point, load_history
from jaxbench.store.series_table import load_series_table

RESULTS = Path(__file__).resolve().parents[1] / "results"
#: results/'s commits; `git log --stat` shows that none touches benchmarks/ or measure/
AA_COMMITS = (
    "ec14323a",
    "c4e18230",
    "b67b07e0",
    "9755353f",
    "46db8ee3",
    "28f66ccc",
    "dd672071",
    "c65e8977",
    "f8324b9d",
    "32a3871e",
    "a99fd785",
    "4602e8d2",
)
MiB = float(1 << 20)
CHANGED = (Verdict.UNTESTED, Verdict.REGRESSION, Verdict.IMPROVEMENT, Verdict.CHANGED)
SINGLE = (Kind.MEMORY, Kind.COMPILE)


@pytest.fixture(scope="module")
def history() -> History:
    return load_history(RESULTS)


def _at(history: History, env: str, prefix: str) -> list[Point]:
    """The single-value points of one commit and environment."""
    return [
        p
        for p in history.points
        if p.commit.startswith(prefix) and p.key.env_name == env and family_of(p.key.benchmark)
    ]


# --- the rule -------------------------------------------------------------------------


def test_a_change_counts_only_beyond_both_parts_of_the_floor() -> None:
    peak = FLOORS["peakmem"]  # 24 MiB and 1.15x
    assert not beyond_floor(peak, 177 * MiB, 199.7 * MiB)  # 22.7 MiB, 1.13x: results/
    assert not beyond_floor(peak, 251.4 * MiB, 281.8 * MiB)  # 30.4 MiB but 1.12x
    assert beyond_floor(peak, 180 * MiB, 212 * MiB)  # 32 MiB more alive: 1.18x
    assert beyond_floor(peak, 212 * MiB, 180 * MiB)  # and back down
    assert not beyond_floor(peak, 180 * MiB, 212 * MiB, relative=1.2)  # a user's larger factor
    rss = FLOORS["workload_peak_rss"]
    assert not beyond_floor(rss, 0.0, 52 * 1024.0)  # inf as a ratio, 52 KiB as a change
    assert beyond_floor(rss, 0.0, 32 * MiB)
    assert not beyond_floor(rss, 1.0, math.nan)
    compile_ = FLOORS["compile"]
    assert not beyond_floor(compile_, 0.0554, 0.0845)  # 1.53x: within compile's spread


def test_family_of_names_every_single_value_figure() -> None:
    assert family_of("m.C.peakmem_call") == "peakmem"
    assert family_of("m.C.mem_state") == "peakmem"
    assert family_of("m.CFigures.track_workload_peak_rss_bytes") == "workload_peak_rss"
    assert family_of("m.CFigures.track_trace_seconds") == "trace"
    assert family_of("m.CFigures.track_max_abs_error") == "max_abs_error"
    assert family_of("m.C.time_warm") is None
    assert family_of("m.CFigures.track_work_flops") is None


def test_a_ratio_of_tiny_or_zero_values_is_not_shown() -> None:
    rss = FLOORS["workload_peak_rss"]
    assert not ratio_is_meaningful(0.0, 52 * 1024.0, rss)
    assert not ratio_is_meaningful(8 * 1024.0, 0.0, rss)
    assert not ratio_is_meaningful(28 * 1024.0, 4 * 1024.0, rss)  # 0.14x of 24 KiB
    assert ratio_is_meaningful(37.5 * MiB, 32.2 * MiB, rss)  # 0.86x: within the ratio part
    assert ratio_is_meaningful(85 * MiB, 117 * MiB, rss)  # beyond both: the ratio tells it
    assert ratio_is_meaningful(1e-5, 2e-5, None)
    assert not ratio_is_meaningful(0.0, 2e-5, None)


def test_the_history_takes_the_whole_floor_only_where_values_drift() -> None:
    assert history_floor("m.C.peakmem_call", 181 * MiB, 186 * MiB)  # drift between runs
    assert not history_floor("m.C.peakmem_call", 181 * MiB, 213 * MiB)
    rss = "m.CFigures.track_workload_peak_rss_bytes"
    assert history_floor(rss, 0.0, 24e3)  # pages and arenas
    assert not history_floor(rss, 85 * MiB, 106 * MiB)  # its step test decides
    assert not history_floor("m.CFigures.track_compile_seconds", 0.05, 0.06)
    assert not history_floor("m.C.time_warm", 1.0, 1.01)


# --- compare and the comment ----------------------------------------------------------


def test_no_single_value_changes_between_any_two_identical_code_commits(
    history: History,
) -> None:
    """What an A/A compare of this project's history shows: nothing changed."""
    changed, rows, beyond_old_factor = [], 0, 0
    for env in history.env_names():
        sides = {prefix: _at(history, env, prefix) for prefix in AA_COMMITS}
        assert all(sides.values()), "results/ lost a commit of the A/A set"
        for a, b in itertools.combinations(AA_COMMITS, 2):
            report = compare_points(sides[a], sides[b])
            for row in report.rows:
                rows += row.kind in SINGLE
                ratio = row.comparison.ratio or 1.0
                old_gate = 1.10 if row.kind is Kind.MEMORY else 1.25
                beyond_old_factor += row.kind in SINGLE and max(ratio, 1 / ratio) > old_gate
                if row.kind in SINGLE and row.verdict in CHANGED:
                    changed.append((a, b, row.benchmark, row.params, row.comparison.reason))
    assert rows == 2 * 66 * 80  # 66 pairs a side, 80 memory and first-call rows each
    assert beyond_old_factor > 1000  # a bare factor would have shown these as changed
    assert changed == []


def _series(
    history: History, env: str, kinds: tuple[Kind, ...] = (Kind.MEMORY,)
) -> dict[str, list[float]]:
    """results/'s values of one environment over the A/A commits (oldest first), per
    series, named without parameters (``programs.TrainStep64.peakmem_call``)."""
    out: dict[str, list[float]] = {}
    for prefix in AA_COMMITS:
        for p in _at(history, env, prefix):
            if p.value is None or kind_of(p.key.benchmark) not in kinds:
                continue
            module, cls, method = p.key.benchmark.split(".")
            figures = "Figures" if cls.endswith("Figures") else ""
            name = f"{module}.{cls.removesuffix('Figures')}{''.join(p.key.params)}{figures}"
            out.setdefault(f"{name}.{method}", []).append(p.value)
    return {name: values for name, values in sorted(out.items()) if len(values) == len(AA_COMMITS)}


def _write(writer: AsvResultsWriter, rows: list[dict[str, float]]) -> Path:
    """One result file per row (commit ``i``, a day apart), every value one a side."""
    for name in rows[0]:
        writer.add_benchmark(
            name, unit="bytes" if "mem" in name or name.endswith("_bytes") else "seconds"
        )
    writer.write_meta()
    for i, values in enumerate(rows):
        writer.write_result(commit_hash(i), i * 86_400_000, values, single=frozenset(values))
    return writer.root


def _pair(
    writer: AsvResultsWriter, base: dict[str, float], head: dict[str, float]
) -> tuple[list[Point], list[Point]]:
    root = _write(writer, [base, head])
    both = load_history(root)
    return (
        [p for p in both.points if p.commit == commit_hash(0)],
        [p for p in both.points if p.commit == commit_hash(1)],
    )


def test_the_issues_empty_commit_rows_are_unchanged_and_read_as_differences(
    asv_writer: AsvResultsWriter,
) -> None:
    """The workload-RSS rows of issue 26's empty-commit review, base -> head."""
    pairs = {
        "A": (4.73 * MiB, 5.79 * MiB),
        "B": (37.5 * MiB, 32.2 * MiB),
        "C": (28 * 1024.0, 4 * 1024.0),
        "D": (8 * 1024.0, 0.0),
        "E": (0.0, 52 * 1024.0),
        "F": (72 * 1024.0, 12 * 1024.0),
    }
    name = "w.{}Figures.track_workload_peak_rss_bytes".format
    base, head = _pair(
        asv_writer,
        {name(k): b for k, (b, _h) in pairs.items()},
        {name(k): h for k, (_b, h) in pairs.items()},
    )
    report = compare_points(base, head)
    assert {r.verdict for r in report.rows} == {Verdict.UNCHANGED}
    assert all("within the measured spread" in r.comparison.reason for r in report.rows)
    comment = format_markdown(report)
    assert comment.splitlines()[2] == "6 unchanged"
    assert "#### Changes" not in comment
    text = format_text(report)
    for shown in ("+1.06 MiB", "0.86x", "-24.0 KiB", "-8.00 KiB", "+52.0 KiB", "-60.0 KiB"):
        assert shown in comment
        assert shown in text
    for ratio in ("inf", "0.00x", "0.14x", "0.17x", "1.22x"):
        assert f" {ratio} " not in comment
        assert f" {ratio} " not in text


def _planted(
    values: dict[str, float], workload: str, extra: float = 0.0, factor: float = 1.0
) -> dict[str, float]:
    return {
        name: (value * factor + extra if f".{workload}" in name else value)
        for name, value in values.items()
    }


@pytest.mark.parametrize(
    "workload", ["workloads.Predict64", "programs.TrainStep64", "programs.Noise256"]
)
def test_a_workload_keeping_32_mib_more_alive_is_flagged_by_compare(
    history: History, asv_writer: AsvResultsWriter, workload: str
) -> None:
    env = history.env_names()[0]
    at = {name: values[-1] for name, values in _series(history, env).items()}
    assert any(workload in name for name in at)
    base, head = _pair(asv_writer, at, _planted(at, workload.split(".")[1], extra=32 * MiB))
    report = compare_points(base, head)
    flagged = {r.benchmark for r in report.rows if r.verdict is Verdict.UNTESTED}
    assert flagged  # the peak, the workload's RSS or both
    assert all(workload.split(".")[1] in name for name in flagged)
    assert any(name.endswith("track_workload_peak_rss_bytes") for name in flagged)
    failing = compare_points(base, head, Settings(fail_untested=True))
    assert {r.category for r in failing.rows if r.category} == {"memory"}
    text = format_markdown(report)
    assert "memory moved, not tested" in text
    # never a change: the summary counts none; its own line names the command that tests it
    assert "Not tested: " in text
    assert "jaxbench first-call --base-commit" in text
    assert "#### Changes" not in text


def test_a_workload_peak_grown_by_a_quarter_is_flagged_where_a_quarter_beats_the_spread(
    asv_writer: AsvResultsWriter,
) -> None:
    rss = "w.BigFigures.track_workload_peak_rss_bytes"
    small = "w.SmallFigures.track_workload_peak_rss_bytes"
    base = {rss: 128 * MiB, small: 85 * MiB}
    b, h = _pair(asv_writer, base, {rss: 160 * MiB, small: 85 * MiB * 1.25})
    verdicts = {r.benchmark: r.verdict for r in compare_points(b, h).rows}
    assert verdicts[rss] is Verdict.UNTESTED
    # 85 -> 106 MiB is about what results/ shows between identical commits (TrainStep,
    # jax 0.9.2: 76.1 -> 94.2 MiB, 1.24x): one value a side cannot tell; the history can.
    assert verdicts[small] is Verdict.UNCHANGED


# --- the history ----------------------------------------------------------------------


def _two_runs(history: History) -> list[dict[str, float]]:
    """24 commits: results/'s 12 of one environment, then its 12 of the other, as a
    second ``make bench`` whose peak memory sits a few MiB from the first's."""
    first, second = (_series(history, env) for env in history.env_names())
    names = sorted(set(first) & set(second))
    return [{name: run[name][i] for name in names} for run in (first, second) for i in range(12)]


#: Predict(64)'s peak memory at the three commits a fresh clone's ``make bench`` measured
#: after results/'s newest (4602e8d2: 203.2 MB), as the closing note of stop 23 quotes them.
LATER_RUN = (199.4 / 203.2, 201.1 / 203.2, 207.1 / 203.2)


def _fresh_clone(history: History) -> list[dict[str, float]]:
    """results/'s 12 commits of jax 0.10.2 and the fresh clone's 3 later ones, whose peak
    memory kept the drift (each series scaled as Predict(64) was)."""
    env = next(e for e in history.env_names() if "jax0.10.2" in e)
    series = _series(history, env)
    rows = [{name: values[i] for name, values in series.items()} for i in range(12)]
    rows += [
        {
            name: values[-1] * scale if name.endswith("peakmem_call") else values[-1 - k]
            for name, values in series.items()
        }
        for k, scale in enumerate(LATER_RUN)
    ]
    return rows


def test_the_fresh_clones_drifting_peak_memory_lists_no_step(
    history: History, asv_writer: AsvResultsWriter
) -> None:
    """Stop 23's fresh clone listed 5 peak-memory steps of 1.01-1.05x at a commit that
    touches no measured code; the 1 MiB floor let them through, and so would the step test."""
    found, _fits = scan(
        load_series_table(_write(asv_writer, _fresh_clone(history)), use_cache=False)
    )
    below = [
        r
        for r in found.steps
        if r.evidence is Evidence.BELOW_FLOOR and r.key.benchmark.endswith("peakmem_call")
    ]
    assert len(below) >= 5
    assert all(1.0 < r.ratio < 1.15 for r in below)
    assert found.regressions == ()


def test_two_runs_at_other_memory_levels_list_no_step(
    history: History, asv_writer: AsvResultsWriter
) -> None:
    found, _fits = scan(load_series_table(_write(asv_writer, _two_runs(history)), use_cache=False))
    assert [r for r in found.steps if r.kind is Kind.MEMORY]  # the fit sees the runs' levels
    assert found.regressions == ()


@pytest.mark.parametrize(
    ("workload", "extra", "factor"),
    [
        ("Predict64", 32 * MiB, 1.0),
        ("TrainStep64", 32 * MiB, 1.0),
        ("TrainStep64Figures", 0.0, 1.25),
    ],
)
def test_a_planted_memory_regression_is_listed_at_its_commit(
    history: History, asv_writer: AsvResultsWriter, workload: str, extra: float, factor: float
) -> None:
    rows = _two_runs(history)
    rows = rows[:18] + [_planted(r, workload, extra, factor) for r in rows[18:]]
    found, _fits = scan(load_series_table(_write(asv_writer, rows), use_cache=False))
    listed = {(r.key.benchmark, r.bad_commit) for r in found.regressions}
    assert listed
    assert {commit for _name, commit in listed} == {commit_hash(18)}
    assert all(f".{workload}" in name for name, _commit in listed)
    if factor != 1.0:  # a quarter more of the workload's own peak RSS
        assert {name for name, _c in listed} == {
            f"programs.{workload}.track_workload_peak_rss_bytes"
        }
