"""The listing at the scale of a real history (issue 41): one screen, failures grouped.

One module-scoped fixture writes, with ``bench/gen_history.py --failing``
(seeded: the same bytes every time), a history of 300 commits and 8,380
series over 2 machines and 3 environments, and asv's logs of the newest runs:

* ``m-a`` / ``py3.10-numpy1`` retired at commit 250, its last build failed
  (every benchmark ``null``; the log: the package needs a newer Python);
* ``m-b`` / ``py3.11-numpy2``'s newest result failed whole (the install:
  no space left on device);
* three partial failures on ``m-a`` / ``py3.11-numpy2`` with their error text;
* the planted steps: a code regression (commit 200), an environment change
  on ``m-b`` (234), a work figure (266), a machine change on ``m-b`` (167).

The default listing fits 60 lines and says each failure in one line per
commit, environment and cause, and lists the planted events; ``--failing``
lists every failing series; the retired environment is labelled, never newly
failing and never fails ``--fail-on``; the HTML section groups the same way
(in Chromium).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from jaxbench.cli import main

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import gen_history  # noqa: E402

COMMITS = 300
PLAN = gen_history.Plan(COMMITS)
LIVE = ("m-a", "py3.11-numpy2")
WHOLE = ("m-b", "py3.11-numpy2")
RETIRED = gen_history.RETIRED


@dataclass(frozen=True)
class History:
    root: Path
    #: the JSON listing (with the logs)
    doc: dict[str, Any]

    @property
    def results(self) -> Path:
        return self.root / "results"

    @property
    def logs(self) -> list[str]:
        return [
            arg
            for machine in ("m-a", "m-b")
            for arg in ("--asv-log", str(self.root / f"asv-run-{machine}.log"))
        ]


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    root = tmp_path_factory.mktemp("at-scale")
    generate = [sys.executable, str(BENCH / "gen_history.py"), str(root)]
    subprocess.run(
        [*generate, "--commits", str(COMMITS), "--failing"],
        check=True,
        capture_output=True,
        timeout=600,
    )
    found = History(root, {})
    # the first scan writes the cache beside the results: the other runs read it
    argv = ["regressions", "--results", str(found.results), *found.logs, "--format", "json"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return History(root, json.loads(out.getvalue()))


def listing(
    history: History, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, list[str]]:
    status = main(["regressions", "--results", str(history.results), *history.logs, *args])
    return status, capsys.readouterr().out.splitlines()


def index(ms: int) -> int:
    """The generator's commit number of a commit date."""
    return (ms - gen_history.T0_MS) // gen_history.DAY_MS


@pytest.mark.slow
def test_the_history_is_at_scale(history: History) -> None:
    doc = history.doc
    assert doc["series"] >= 8000
    files = list(history.results.glob("*/*-*.json"))
    assert {(f.parent.name, f.stem[9:]) for f in files} == {RETIRED, LIVE, WHOLE}


@pytest.mark.slow
def test_default_listing_is_one_screen_of_grouped_failures_and_the_planted_events(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    status, lines = listing(history, capsys)
    assert status == 0
    assert len(lines) <= 60
    doc = history.doc
    n_failing = sum(len(g["failures"]) for g in doc["failing"])
    retired = sum(len(g["failures"]) for g in doc["failing"] if g["retired"])
    assert lines[0].startswith(f"{n_failing} benchmarks fail at the newest commit (")
    assert lines[0].endswith(
        f", {retired} on retired environments), worst first; --failing lists each:"
    )
    # the live whole-result failure: one line, its count and asv's cause, no series under it
    (whole,) = [i for i, line in enumerate(lines) if "m-b / py3.11-numpy2:" in line]
    assert lines[whole] == (
        f"newly failing since {doc['failing'][0]['since_commit'][:8]} (last value at "
        f"{doc['failing'][0]['last_good_commit'][:8]})  "
        f"{lines[whole].split('  ')[1]}  2550 of 2550 series  m-b / py3.11-numpy2: every "
        f"benchmark failed; asv could not build or install it: {gen_history.INSTALL_ERROR}"
    )
    assert whole == 1  # the most important first
    assert not lines[whole + 1].startswith("   ")
    # the three partial failures, each with its error and its worst series
    for error, count in (
        (gen_history.PARTIAL[5], 20),
        (gen_history.PARTIAL[7], 10),
        (gen_history.PARTIAL[6], 1),
    ):
        (line,) = [x for x in lines if x.endswith(f"m-a / py3.11-numpy2: {error}")]
        assert f"  {count} of 2525 series  " in line
        below = lines[lines.index(line) + 1]
        assert below.startswith("   suite")
        assert below.endswith(f"commits: {error}")
    assert "   ... and 17 more series (--failing, --format json)" in lines
    # the retired environment: labelled, not newly failing, said once
    (old,) = [x for x in lines if "m-a / py3.10-numpy1 (retired)" in x]
    assert old.startswith("failing since ")
    assert old.endswith(
        f"2550 of 2550 series  m-a / py3.10-numpy1 (retired): every benchmark failed; "
        f"asv could not build or install it: {gen_history.BUILD_ERROR}"
    )
    (note,) = [x for x in lines if x.startswith("Retired ")]
    assert "m-a / py3.10-numpy1 after " in note
    assert note.endswith("its failures are not newly failing and --fail-on ignores them.")
    assert not any(x.startswith("No error text") for x in lines)  # the logs say each
    # the planted events, on the same screen
    start = next(i for i, x in enumerate(lines) if " events (" in x)
    shown = "\n".join(lines[start:])
    planted = {
        (RETIRED, PLAN.code),
        (LIVE, PLAN.code),
        (WHOLE, PLAN.code + 1),
        (WHOLE, PLAN.env + 1),
        (LIVE, PLAN.work),
        (WHOLE, PLAN.work + 1),
    }
    events = {((e["machine"], e["env_name"]), index(e["date"])): e for e in doc["events"]}
    assert planted <= set(events)
    for ident in planted:
        event = events[ident]
        span = f"{event['good_commit'][:8]}..{event['bad_commit'][:8]}"
        assert f"{span}  " in shown, (ident, shown)
    assert "broad: likely an environment, machine or core change" in shown
    assert any(x.startswith("machine changed at ") and "(m-b)" in x for x in lines)


@pytest.mark.slow
def test_failing_lists_every_failing_series(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = history.doc
    status, lines = listing(history, capsys, "--failing")
    assert status == 0
    series = [x for x in lines if x.startswith("   ") and " failed at " in x]
    expected = [f for g in doc["failing"] for f in g["failures"]]
    assert len(series) == len(expected) > 5000
    names = {x.strip().split("  ")[0] for x in series}
    assert len(names) == len({(f["benchmark"], tuple(f["params"])) for f in expected})
    assert not any(x.startswith("   ... and") for x in lines[: lines.index(series[-1])])
    # the events keep their screen
    start = next(i for i, x in enumerate(lines) if " events (" in x)
    assert len(lines) - start <= 60


@pytest.mark.slow
def test_json_is_complete_and_the_retired_environment_is_not_news(history: History) -> None:
    doc = history.doc
    assert doc["format"] == 5
    groups = [
        ((g["machine"], g["env_name"]), len(g["failures"]), g["whole_result"], g["retired"])
        for g in doc["failing"]
    ]
    assert groups == [
        (WHOLE, 2550, True, False),
        (LIVE, 20, False, False),
        (LIVE, 10, False, False),
        (LIVE, 1, False, False),
        (RETIRED, 2550, True, True),
    ]
    (retired,) = doc["retired"]
    assert (retired["machine"], retired["env_name"]) == RETIRED
    assert index(retired["date"]) == PLAN.retire - 1
    assert retired["later_commits"] == COMMITS - PLAN.retire
    old = doc["failing"][-1]
    assert (old["newly"], old["build_error"], old["error"]) == (
        False,
        True,
        gen_history.BUILD_ERROR,
    )
    assert not any(f["newly"] for f in old["failures"])
    assert doc["newly_failing"] == sum(f["newly"] for g in doc["failing"] for f in g["failures"])
    assert doc["newly_failing"] == sum(
        1 for g in doc["failing"][:3] for f in g["failures"] if f["last_good_commit"]
    )
    deleted = doc["failing"][1]
    assert index(deleted["date"]) == PLAN.deleted_since + 1  # its first commit measured
    assert deleted["failed_commits"] == 20


@pytest.mark.slow
def test_fail_on_ignores_the_retired_environment(
    history: History, capsys: pytest.CaptureFixture[str]
) -> None:
    assert listing(history, capsys, "--fail-on", "newly-failing")[0] == 1
    only_retired = ["--machine", RETIRED[0], "--env", RETIRED[1]]
    for gate in ("newly-failing", "failing"):
        status, lines = listing(history, capsys, *only_retired, "--fail-on", gate)
        assert status == 0, lines
    assert lines[0] == (
        "2550 benchmarks fail at the newest commit (0 newly failing, 0 failing at every "
        "commit measured, 2550 on retired environments), worst first; --failing lists each:"
    )
    assert lines[1].endswith(
        "m-a / py3.10-numpy1 (retired): every benchmark failed; "
        f"asv could not build or install it: {gen_history.BUILD_ERROR}"
    )
    assert lines[2].startswith("Retired ")


@pytest.mark.browser
def test_the_html_section_is_grouped_the_same_way_in_chromium(
    history: History, tmp_path: Path
) -> None:
    chromium = Path(os.environ.get("JAXBENCH_CHROMIUM", "/usr/bin/chromium"))
    if not chromium.exists():
        pytest.skip(f"no {chromium}: install it with 'apt-get install -y chromium'")
    import jaxbench
    from jaxbench.analyse.failures import failing_groups
    from jaxbench.render import html
    from jaxbench.render.failures import failure_group_line, no_error_text
    from jaxbench.store.asv_log import read_asv_log
    from jaxbench.store.series_table import load_series_table

    logs = [Path(p) for p in history.logs[1::2]]
    log = read_asv_log(logs)
    table = load_series_table(history.results)
    groups = failing_groups(table, log.error, build_error_of=log.build_error)
    page = html.render_regressions_page(
        [],
        html.summarize_table(table),
        env_params={},
        param_names={},
        failing=groups,
        no_error=no_error_text(groups, logs),
    )
    site = tmp_path / "html"
    (site / "jaxbench").mkdir(parents=True)
    (site / html.REGRESSIONS_PAGE).write_text(page, encoding="utf-8")
    (site / "swallow.ico").write_bytes(b"")  # asv's icon, which the page links
    shutil.copyfile(
        Path(jaxbench.__file__).parent / "assets" / "jaxbench.css", site / html.STYLESHEET
    )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium), args=["--no-sandbox"])
        try:
            tab = browser.new_page()
            errors: list[str] = []
            tab.on("pageerror", lambda exc: errors.append(str(exc)))
            tab.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
            tab.goto((site / html.REGRESSIONS_PAGE).as_uri())
            items = tab.locator("#failing li.failure-group")
            texts = items.all_inner_texts()
            classes = [items.nth(i).get_attribute("class") for i in range(items.count())]
            visible_rows = tab.locator("#failing tr.failing:visible").count()
            all_rows = tab.locator("#failing tr.failing").count()
            retired_flag = items.nth(4).locator(".flag.retired").is_visible()
            more = items.nth(1).locator("details.more > summary")
            more_text = more.inner_text()
            more.click()
            opened_rows = items.nth(1).locator("tr.failing:visible").count()
            section = tab.locator("#failing").inner_text()
        finally:
            browser.close()
    assert errors == []
    assert len(texts) == len(groups) == 5
    assert classes == [
        "failure-group newly whole",
        "failure-group newly",
        "failure-group newly",
        "failure-group",
        "failure-group whole retired",
    ]
    # each group's first line reads as the text listing's line does
    for text, group in zip(texts, groups, strict=True):
        cause = failure_group_line(group).split(f"{group.env_name}", 1)[1].split(": ", 1)[-1]
        assert cause in text.splitlines()[0]
        assert f"{len(group.failures)} of {group.series_measured} series" in text
    assert "No space left on device" in texts[0]
    assert retired_flag
    assert all_rows == sum(len(g.failures) for g in groups) > 5000
    assert visible_rows == 3 + 3 + 1  # the worst three of each partial group, the rest folded
    assert more_text == "... and 17 more series"
    assert opened_rows == 20
    assert "Array has been deleted" in section
    assert "suite" not in texts[0].splitlines()[0]
