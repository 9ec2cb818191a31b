"""``jaxbench publish`` end to end: real asv publish, a real git repo, real headless chromium.

The history: one machine, one environment, ten commits of a real git
repository, asv-format results written by asv's own ``Results.save`` for four
benchmarks (warm time, compile time, tolerance used, XLA flops) over
``rows`` = 64, 96. Warm time at rows=64 steps up 30 % at commit 6 and stays
there; everything else is flat (time within +-1 %).
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from asv import util as asv_util
from asv.results import Results
from asv.runner import BenchmarkResult

from jaxbench.cli import main
from jaxbench.render import html
from served import served

#: Debian's package (``.ci/run`` and the tests workflow install it); another with JAXBENCH_CHROMIUM.
CHROMIUM = Path(os.environ.get("JAXBENCH_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
MACHINE = "ci-box"
ENV_NAME = "virtualenv-py3.11-jax0.10.2"
N_COMMITS = 10
STEP_AT = 6  # 1-based: commit 6 is the first slow one
STEP = 1.3
STEPPED = "workloads.Predict.time_warm"
BENCHMARKS = {  # name -> (asv type, unit, value at rows=64)
    STEPPED: ("time", "seconds", 20e-6),
    "workloads.Predict.track_compile_seconds": ("track", "seconds", 0.05),
    "workloads.Predict.track_tolerance_used": ("track", "unitless", 0.2),
    "workloads.Predict.track_work_flops": ("track", "flops", 65536.0),
}


@dataclass(frozen=True)
class PlantedHistory:
    root: Path
    config: Path
    repo: Path
    commits: tuple[str, ...]  # oldest first

    @property
    def html_dir(self) -> Path:
        return self.root / "html"


def _git(repo: Path, *args: str, date: str | None = None) -> str:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_SYSTEM=os.devnull,
    )
    if date is not None:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    done = subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    )
    return done.stdout.strip()


def make_history(root: Path) -> PlantedHistory:
    """Build the planted history (see module doc) under ``root``."""
    repo = root / "project"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    start = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    commits: list[str] = []
    dates: list[int] = []
    for i in range(1, N_COMMITS + 1):
        when = start + datetime.timedelta(days=i)
        (repo / "model.py").write_text(f"VERSION = {i}\n")
        _git(repo, "add", "model.py")
        _git(repo, "commit", "-q", "-m", f"commit {i}", date=when.isoformat())
        commits.append(_git(repo, "rev-parse", "HEAD"))
        dates.append(int(when.timestamp() * 1000))

    results = root / "results"
    benchmarks = {
        name: {
            "name": name,
            "type": kind,
            "unit": unit,
            "params": [["64", "96"]],
            "param_names": ["rows"],
            "version": f"v1-{name}",
            "timeout": 60.0,
        }
        for name, (kind, unit, _) in BENCHMARKS.items()
    }
    asv_util.write_json(str(results / "benchmarks.json"), benchmarks, api_version=2)
    machine = {
        "machine": MACHINE,
        "arch": "x86_64",
        "cpu": "test cpu",
        "num_cpu": "2",
        "os": "Linux",
        "ram": "1000",
    }
    asv_util.write_json(str(results / MACHINE / "machine.json"), machine, api_version=1)
    for i, (commit, date) in enumerate(zip(commits, dates, strict=True), start=1):
        run = Results(
            dict(machine, python="3.11", jax="0.10.2"),
            {"jax": "0.10.2"},
            commit,
            date,
            "3.11",
            ENV_NAME,
            {},
        )
        for name, (kind, _, base) in BENCHMARKS.items():
            wiggle = 1.0 + 0.01 * ((i * 7) % 3 - 1) if kind == "time" else 1.0
            values = [base * wiggle, 1.5 * base * wiggle]
            if name == STEPPED and i >= STEP_AT:
                values[0] *= STEP
            outcome = BenchmarkResult(
                result=values,
                samples=[None, None],
                number=[None, None],
                errcode=0,
                stderr="",
                profile=None,
            )
            started = datetime.datetime.fromtimestamp(date / 1000, tz=datetime.UTC)
            run.add_result(benchmarks[name], outcome, started_at=started, duration=1.0)
        run.save(str(results))

    config = root / "asv.conf.json"
    config.write_text(
        json.dumps(
            {
                "version": 1,
                "project": "planted",
                "project_url": "#",
                "repo": "project",
                "branches": ["main"],
                "environment_type": "virtualenv",
                "results_dir": "results",
                "html_dir": "html",
                "show_commit_url": "#",
            },
            indent=2,
        )
    )
    return PlantedHistory(root, config, repo, tuple(commits))


def site_files(html_dir: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(html_dir)): p.read_bytes()
        for p in sorted(html_dir.rglob("*"))
        if p.is_file()
    }


class _Rows(HTMLParser):
    """Section id -> [(data-commit, first link's href)] of a regressions page."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: dict[str, list[tuple[str, str]]] = {}
        self._section = ""
        self._row: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "section":
            self._section = found.get("id") or ""
            self.sections[self._section] = []
        elif tag == "tr" and found.get("data-commit"):
            self._row = found["data-commit"]
        elif tag == "a" and self._row is not None:
            self.sections[self._section].append((self._row, found.get("href") or ""))
            self._row = None


def regression_rows(page: Path) -> dict[str, list[tuple[str, str]]]:
    parser = _Rows()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.sections


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> PlantedHistory:
    history = make_history(tmp_path_factory.mktemp("planted"))
    assert main(["publish", "--config", str(history.config)]) == 0
    return history


# ---------------------------------------------------------------------------
# The command, without a browser


def test_publish_lists_the_planted_step_at_commit_6(published: PlantedHistory) -> None:
    rows = regression_rows(published.html_dir / html.REGRESSIONS_PAGE)
    assert [commit for commit, _ in rows["time"]] == [published.commits[STEP_AT - 1]]
    for kind in ("accuracy", "compile", "work", "memory", "other"):
        assert rows[kind] == [], kind
    ((_, link),) = rows["time"]
    assert link.startswith(f"../index.html#{STEPPED}?")
    assert "p-rows=64" in link
    good, bad = published.commits[STEP_AT - 2][:8], published.commits[STEP_AT - 1][:8]
    assert link.endswith(f"commits={good}-{bad}")


def test_published_pages_reference_nothing_remote(published: PlantedHistory) -> None:
    for name, data in site_files(published.html_dir).items():
        if name.endswith(".html"):
            text = data.decode()
            assert "cdn" not in text.lower(), name
            assert 'src="http' not in text, name
            assert 'rel="stylesheet" href="http' not in text, name
    assert (published.html_dir / html.VENDOR_DIR / "jquery-3.3.1" / "LICENSE.txt").is_file()


def test_publish_does_not_import_jax(published: PlantedHistory) -> None:
    code = (
        "import sys\n"
        "from jaxbench.cli import main\n"
        f"status = main(['publish', '--config', {str(published.config)!r},"
        f" '--html-dir', {str(published.root / 'html-nojax')!r}])\n"
        "loaded = sorted(m for m in sys.modules\n"
        "                if m == 'jax' or m.startswith(('jax.', 'jaxlib')))\n"
        "print('JAX', loaded)\n"
        "sys.exit(status)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "JAX []" in done.stdout
    assert (published.root / "html-nojax" / html.REGRESSIONS_PAGE).is_file()


def run_cli(*args: str) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "jaxbench", *args], capture_output=True, text=True, check=False
    )
    return done.returncode, done.stderr


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if ".jaxbench-" in p.name)


def test_missing_repo_is_one_line_and_keeps_the_old_site(tmp_path: Path) -> None:
    history = make_history(tmp_path)
    assert main(["publish", "--config", str(history.config)]) == 0
    before = site_files(history.html_dir)
    history.repo.rename(tmp_path / "elsewhere")
    status, stderr = run_cli("publish", "--config", str(history.config))
    assert status == 2
    assert stderr.count("\n") == 1
    assert stderr.startswith("jaxbench: error: ")
    assert "repo 'project'" in stderr
    assert "clone it there" in stderr
    assert site_files(history.html_dir) == before
    assert leftovers(tmp_path) == []


def test_asv_failure_keeps_the_old_site_and_leaves_no_temporaries(tmp_path: Path) -> None:
    history = make_history(tmp_path)
    assert main(["publish", "--config", str(history.config)]) == 0
    before = site_files(history.html_dir)
    conf = json.loads(history.config.read_text())
    history.config.write_text(json.dumps(dict(conf, branches=["no-such-branch"])))
    status, stderr = run_cli("publish", "--config", str(history.config))
    assert status == 2
    assert stderr.count("\n") == 1
    assert "asv publish failed:" in stderr
    assert "was left as it was" in stderr
    assert site_files(history.html_dir) == before
    assert leftovers(tmp_path) == []


def test_republish_replaces_the_site(tmp_path: Path) -> None:
    history = make_history(tmp_path)
    stale = history.html_dir / "stale.txt"
    stale.parent.mkdir()
    stale.write_text("from an older publish")
    (history.html_dir / "index.html").write_text("old")
    assert main(["publish", "--config", str(history.config)]) == 0
    assert not stale.exists()
    assert (history.html_dir / html.REGRESSIONS_PAGE).is_file()
    assert leftovers(tmp_path) == []


def test_refuses_to_replace_a_directory_that_is_not_a_site(tmp_path: Path) -> None:
    history = make_history(tmp_path)
    precious = tmp_path / "docs" / "notes.txt"
    precious.parent.mkdir()
    precious.write_text("keep me")
    status, stderr = run_cli(
        "publish", "--config", str(history.config), "--html-dir", str(precious.parent)
    )
    assert status == 2
    assert "is not a published asv site" in stderr
    assert precious.read_text() == "keep me"
    status, stderr = run_cli(
        "publish", "--config", str(history.config), "--html-dir", str(tmp_path)
    )
    assert status == 2
    assert "which publishing would delete" in stderr


# ---------------------------------------------------------------------------
# A real browser


@pytest.fixture(scope="module")
def site_url(published: PlantedHistory) -> Iterator[str]:
    with served(published.html_dir) as url:
        yield url


@dataclass
class Visit:
    """What one page did: console errors, page errors, requests made and blocked."""

    errors: list[str]
    requested: list[str]
    blocked: list[str]


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.skip(f"no {CHROMIUM}: install it with 'apt-get install -y chromium'")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: object, site_url: str) -> Iterator[tuple[object, Visit]]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})  # type: ignore[attr-defined]
    tab = context.new_page()
    visit = Visit(errors=[], requested=[], blocked=[])

    def route(route: object) -> None:
        url = route.request.url  # type: ignore[attr-defined]
        if url.startswith(site_url):
            visit.requested.append(url[len(site_url) :])
            route.continue_()  # type: ignore[attr-defined]
        else:
            visit.blocked.append(url)
            route.abort()  # type: ignore[attr-defined]

    tab.route("**/*", route)

    def console(msg: Any) -> None:
        if msg.type == "error":
            visit.errors.append(msg.text)

    tab.on("console", console)
    tab.on("pageerror", lambda exc: visit.errors.append(str(exc)))
    try:
        yield tab, visit
    finally:
        context.close()


def canvas_size(tab: object) -> tuple[int, int]:
    size = tab.evaluate(  # type: ignore[attr-defined]
        "() => { const c = document.querySelector('#main-graph canvas.flot-base');"
        " return c ? [c.width, c.height] : [0, 0]; }"
    )
    return int(size[0]), int(size[1])


@pytest.mark.browser
def test_index_loads_offline_with_our_nav_link(page: tuple[object, Visit], site_url: str) -> None:
    tab, visit = page
    tab.goto(site_url + "index.html", wait_until="networkidle")  # type: ignore[attr-defined]
    assert not tab.url.endswith("error.html")  # type: ignore[attr-defined]
    # asv's grid shows one box per benchmark once jquery and friends ran.
    tab.wait_for_selector("#summarygrid-display .benchmark-container")  # type: ignore[attr-defined]
    link = tab.locator(f"#{html.NAV_LINK_ID} a")  # type: ignore[attr-defined]
    assert link.get_attribute("href") == html.REGRESSIONS_PAGE
    assert visit.errors == []
    assert visit.blocked == []
    assert any(r.startswith(html.VENDOR_DIR) for r in visit.requested)


@pytest.mark.browser
def test_regressions_page_shows_commit_6_and_its_link_opens_the_graph(
    page: tuple[object, Visit], site_url: str, published: PlantedHistory
) -> None:
    tab, visit = page
    tab.goto(site_url + html.REGRESSIONS_PAGE, wait_until="networkidle")  # type: ignore[attr-defined]
    rows = tab.locator("#time tr.regression")  # type: ignore[attr-defined]
    assert rows.count() == 1
    bad = published.commits[STEP_AT - 1]
    assert rows.first.get_attribute("data-commit") == bad
    assert bad[:8] in rows.first.inner_text()
    assert "rows=64" in rows.first.inner_text()
    assert tab.locator("#accuracy tr.regression").count() == 0  # type: ignore[attr-defined]
    # The stylesheet applied (CSP 'self' allows it): the ratio cell is bold.
    weight = rows.first.locator("td.ratio").evaluate("e => getComputedStyle(e).fontWeight")
    assert int(weight) >= 600

    rows.first.locator("a").click()
    tab.wait_for_selector("#main-graph canvas.flot-base")  # type: ignore[attr-defined]
    tab.wait_for_load_state("networkidle")  # type: ignore[attr-defined]
    width, height = canvas_size(tab)
    assert width > 0
    assert height > 0
    graphs = [r for r in visit.requested if r.startswith("graphs/")]
    assert graphs
    # asv fetched exactly this benchmark's graph for this machine/environment.
    wanted = f"/machine-{MACHINE}/num_cpu-2/os-Linux/python-3.11/ram-1000/{STEPPED}.json"
    assert all(r.split("?")[0].endswith(wanted) for r in graphs), graphs
    assert STEPPED in tab.locator("#title").inner_text()  # type: ignore[attr-defined]
    # p-rows=64 selected only that line: asv marks the chosen value's button active.
    chosen = tab.locator("#graphdisplay-navigation-params a.btn.active")  # type: ignore[attr-defined]
    assert "64" in chosen.all_inner_texts()
    assert "96" not in chosen.all_inner_texts()
    assert visit.errors == []
    assert visit.blocked == []
