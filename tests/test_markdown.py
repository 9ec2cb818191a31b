"""The pull-request markdown: golden files, hostile names, the size limit, graph links.

Regenerate the golden files after an intended change with::

    JAXBENCH_REGEN_GOLDEN=1 .venv/bin/pytest tests/test_markdown.py
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import pytest

from conftest import AsvResultsWriter, Value, commit_hash
from jaxbench.analyse.compare import CompareReport, Row, compare_points
from jaxbench.analyse.stats import Comparison, Verdict
from jaxbench.kinds import Kind
from jaxbench.render.markdown import (
    GITHUB_COMMENT_LIMIT,
    escape,
    format_markdown,
    graph_url,
    summary_line,
)
from jaxbench.store.results import load_result_file

GOLDEN = Path(__file__).resolve().parent / "golden"
BASE, HEAD = commit_hash(1), commit_hash(2)
ROWS = [["'64'", "'96'"]]


def _check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("JAXBENCH_REGEN_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"{path} missing: run with JAXBENCH_REGEN_GOLDEN=1 to create it"
    assert text == path.read_text(encoding="utf-8")


def _mixed_report(writer: AsvResultsWriter) -> CompareReport:
    units = {
        "workloads.Predict.time_warm": "seconds",
        "workloads.Predict.track_first_call_seconds": "seconds",
        "workloads.Predict.track_tolerance_used": "unitless",
        "workloads.Predict.track_work_flops": "flops",
        "workloads.Predict.peakmem_call": "bytes",
        "workloads.Energy.time_warm": "seconds",
        "workloads.Sharded.time_warm": "seconds",
    }
    for name, unit in units.items():
        writer.add_benchmark(name, params=ROWS, unit=unit)
    writer.write_meta()
    base = {
        "workloads.Predict.time_warm": [10e-6, 20e-6],
        "workloads.Predict.track_first_call_seconds": [0.5, 0.7],
        "workloads.Predict.track_tolerance_used": [0.1, 0.1],
        "workloads.Predict.track_work_flops": [65536.0, 98304.0],
        "workloads.Predict.peakmem_call": [1e8, 1e8],
        "workloads.Energy.time_warm": [30e-6, 40e-6],
        "workloads.Sharded.time_warm": [math.nan, 50e-6],  # skipped: too few devices
    }
    head: dict[str, Value] = {
        **base,
        "workloads.Predict.time_warm": [7e-6, 26e-6],
        "workloads.Predict.track_tolerance_used": [2.5, 0.1],
        "workloads.Predict.track_work_flops": [65536.0, 98305.0],
        "workloads.Energy.time_warm": [None, 40e-6],
        "workloads.Predict.peakmem_call": [1e8, 1.3e8],
    }
    meta = writer.root / "benchmarks.json"
    # Warm times: 12 samples a side; first call and peak memory: one value a
    # side, as 'asv run' records them (shown, not tested).
    single = frozenset(
        {"workloads.Predict.track_first_call_seconds", "workloads.Predict.peakmem_call"}
    )
    base_points = load_result_file(
        writer.write_result(BASE, 1_000, base, n_samples=12, single=single), meta
    )
    head_points = load_result_file(
        writer.write_result(HEAD, 2_000, head, n_samples=12, single=single), meta
    )
    return compare_points(base_points, head_points)


def test_golden_mixed_report(asv_writer: AsvResultsWriter) -> None:
    report = _mixed_report(asv_writer)
    names = {name: ("rows",) for name in asv_writer.benchmarks}
    text = format_markdown(report, html_url="https://example.org/bench/", param_names=names)
    lines = text.splitlines()
    assert lines[2] == (
        "**1 now failing**, **3 regressions** (1 correctness, 1 warm time, 1 work), "
        "1 improvement (1 warm time), 1 skipped, 7 unchanged"
    )
    # moved, not tested: never a change; its own line under the summary, and its own table
    assert lines[4] == (
        "Not tested: 1 memory figure moved beyond the measured spread, one value a side "
        "(1.30x): no side-by-side measurement exists for it."
    )
    changes = text.split("#### Changes", 1)[1].split("####", 1)[0]
    assert "peakmem_call" not in changes
    assert "#### Moved, not tested" in text
    assert "| skipped | skipped |" in text  # never "failed | failed"
    assert "track_first_call_seconds" in text  # readable in the raw comment
    assert "Holm-Bonferroni" in text
    _check_golden("compare_mixed.md", text)


def test_golden_no_change(asv_writer: AsvResultsWriter) -> None:
    asv_writer.add_benchmark("workloads.Predict.time_warm", params=ROWS)
    asv_writer.write_meta()
    values = {"workloads.Predict.time_warm": [10e-6, 20e-6]}
    meta = asv_writer.root / "benchmarks.json"
    base = load_result_file(asv_writer.write_result(BASE, 1_000, values), meta)
    head = load_result_file(asv_writer.write_result(HEAD, 2_000, values), meta)
    text = format_markdown(compare_points(base, head))
    assert "#### Changes" not in text
    _check_golden("compare_unchanged.md", text)


# -- hostile names -------------------------------------------------------------

HOSTILE = (
    "workloads.Evil|col</details><img src=x onerror=alert(1)>`code`"
    " @octocat [click](https://evil.example/x) owner/repo#12 www.evil.example"
    " <!-- *bold* _it_ ~~s~~ \\ \n| --- |.time_warm"
)


def _row(name: str, params: tuple[str, ...], env: str, verdict: Verdict) -> Row:
    comparison = Comparison(1e-5, 2e-5, 2.0, 0.001, verdict, f"because {name}")
    return Row(name, params, env, Kind.TIME, "seconds", comparison)


def _hostile_report() -> CompareReport:
    rows = (
        _row(HOSTILE, ("'|'", "'<b>'", "'@admin'"), "env`|@x", Verdict.REGRESSION),
        _row("workloads.Fine.time_warm", (), "env`|@x", Verdict.NOT_SIGNIFICANT),
    )
    return CompareReport(
        machine="m@chine|<b>",
        env_names=("env`|@x",),
        base_commit="<b>base|",
        head_commit="@head`",
        rows=rows,
    )


def test_escape_makes_hostile_text_inert() -> None:
    out = escape(HOSTILE)
    assert not re.search(r"<[^ =]", out)  # no tag, comment or autolink can open
    assert not re.search(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])", out)  # no emphasis
    for bad in (
        "|",
        "`",
        "[",
        "]",
        "*",
        "~",
        "\\",
        "\n",
        "https://",
        "www.",
        "@octocat",
        "repo#12",
        "<!--",
    ):
        assert bad not in out, bad
    assert "&#64;&#8203;octocat" in out


def test_escape_keeps_names_and_comparisons_readable() -> None:
    """Only what markdown needs is escaped: names read the same in the raw comment."""
    assert escape("workloads.StructuredFigures.track_compile_seconds") == (
        "workloads.StructuredFigures.track_compile_seconds"
    )
    assert escape("paired t p=0.002 < 0.01; ratio >= 1.02") == (
        "paired t p=0.002 < 0.01; ratio >= 1.02"
    )
    assert escape("_private_") == "&#95;private&#95;"
    assert escape("<b>") == "&#60;b>"


def test_hostile_names_cannot_break_the_comment() -> None:
    text = format_markdown(_hostile_report(), html_url="https://example.org/b")
    assert "<img" not in text
    assert "</details>" in text
    assert text.count("</details>") == text.count("<details>") == 1
    assert "@octocat" not in text
    assert "@admin" not in text
    assert "@head" not in text
    assert "`code`" not in text
    assert "](https://evil" not in text
    assert "[click]" not in text
    for line in text.splitlines():
        if line.startswith("| **") or line.startswith("| not significant"):
            # 7 cells (one environment: no environment column) -> 8 pipes; none from a cell
            assert line.count("|") == 8, line
    # Links: only the graph URLs, percent-encoded, each ending at its own parenthesis.
    links = re.findall(r"\]\(([^)]*)\)", text)
    assert len(links) == 3  # the regression in "Changes", then both rows in "All"
    assert all(link.startswith("https://example.org/b/#") for link in links)
    assert all(" " not in link and "<" not in link for link in links)


# -- size limit ----------------------------------------------------------------


def _big_report(n: int) -> CompareReport:
    rows = tuple(
        _row(
            f"workloads.Workload{i:05d}.time_warm_{'x' * 60}",
            (f"'{i}'",),
            "env",
            Verdict.REGRESSION if i % 3 == 0 else Verdict.NOT_SIGNIFICANT,
        )
        for i in range(n)
    )
    return CompareReport(
        machine="m", env_names=("env",), base_commit=BASE, head_commit=HEAD, rows=rows
    )


def test_small_report_is_not_cut() -> None:
    text = format_markdown(_big_report(30))
    assert "cut" not in text
    assert text.count("because") == 10 + 30  # 10 changes, then all 30


def test_details_table_is_cut_first_and_summary_stays_true() -> None:
    report = _big_report(600)
    text = format_markdown(report)
    assert len(text.encode()) <= GITHUB_COMMENT_LIMIT
    assert text.splitlines()[2] == "**200 regressions** (200 warm time), 400 unchanged"
    assert "rows shown" not in text  # every change still listed
    cut = re.search(r"_(\d+) of 600 rows cut to fit the comment size limit\._", text)
    assert cut is not None
    shown = text.split("<details>")[1].count("\n| ") - 1  # minus the header row
    assert shown + int(cut.group(1)) == 600


def test_changes_table_is_cut_when_it_alone_is_too_big() -> None:
    report = _big_report(3000)
    text = format_markdown(report)
    assert len(text.encode()) <= GITHUB_COMMENT_LIMIT
    assert text.splitlines()[2] == summary_line(report)
    assert "**1000 regressions**" in text
    assert "Table of all 3000 rows cut" in text
    match = re.search(r"_(\d+) of 1000 rows shown; (\d+) cut", text)
    assert match is not None
    shown, cut = int(match.group(1)), int(match.group(2))
    assert shown + cut == 1000
    assert text.count("\n| **") == shown


def test_custom_limit_is_respected() -> None:
    text = format_markdown(_big_report(100), limit=5_000)
    assert len(text) <= 5_000
    with pytest.raises(ValueError, match="cannot hold even the summary"):
        format_markdown(_big_report(100), limit=100)


# -- graph links ---------------------------------------------------------------


def test_graph_url_follows_asv_hash_format() -> None:
    row = _row("workloads.Predict.time_warm", ("'64'", "'float32'"), "env", Verdict.REGRESSION)
    url = graph_url(
        "https://h.example/asv/",
        row,
        machine="ci box",
        param_names=("rows", "dtype"),
        commits=(BASE, HEAD),
    )
    assert url == (
        "https://h.example/asv/#workloads.Predict.time_warm?machine=ci%20box"
        "&p-rows=%2764%27&p-dtype=%27float32%27&commits=00000001-00000002"
    )
