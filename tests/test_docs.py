"""The guide (``mkdocs.yml``, ``docs/``): built strict, opened in Chromium, its reference true.

The build runs the hook in ``tests/docs_site.py``, which generates the
command-line reference from the argparse definitions and the screenshots from
a published history in headless Chromium, so it needs Chromium like the other
browser tests.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import docs_site
from jaxbench.cli import COMMANDS
from served import served
from test_browser import CHROMIUM, CHROMIUM_ARGS

REPO = Path(__file__).resolve().parents[1]
#: Every page of the nav, as the built site names it.
PAGES = [
    "index.html",
    "adopt/index.html",
    "write-benchmarks/index.html",
    "history/index.html",
    "paired-history/index.html",
    "review/index.html",
    "pull-requests/index.html",
    "compare/index.html",
    "measuring/index.html",
    "timing/index.html",
    "detection-power/index.html",
    "reliability/index.html",
    "machines/index.html",
    "measured/index.html",
    "reference/index.html",
    "development/index.html",
]


def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not CHROMIUM.exists():
        pytest.skip(f"no {CHROMIUM}: install it with 'apt-get install -y chromium'")
    out = tmp_path_factory.mktemp("site")
    done = mkdocs_build(REPO / "mkdocs.yml", out)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "WARNING" not in done.stderr, done.stderr[-3000:]
    return out


@pytest.mark.browser
def test_the_site_builds_strict_with_every_page_and_picture(site: Path) -> None:
    for page in PAGES:
        assert (site / page).is_file(), page
    for name in docs_site.SCREENSHOTS:
        picture = site / "img" / "generated" / name
        assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
        assert picture.stat().st_size > 5000, name  # a picture, not a blank
    # The generated outputs are in the pages, from the planted history.
    assert "workloads.Predict.time_warm(64)" in (site / "history" / "index.html").read_text()
    assert (
        "time regression  workloads.Predict.time_warm(64)"
        in (site / "review" / "index.html").read_text()
    )
    # The README's listing is the generated one (it cannot drift from the code).
    listing = re.search(r"```text\n(1 event.*?)```", (REPO / "README.md").read_text(), re.DOTALL)
    assert listing is not None
    assert listing.group(1) in (docs_site.CURRENT / "regressions.txt").read_text()


@pytest.mark.browser
def test_a_broken_anchor_fails_the_build(site: Path, tmp_path: Path) -> None:
    """The strict build can fail: a link to a missing anchor stops it."""
    del site  # built once already: the generated set is in place
    docs = tmp_path / "docs"
    shutil.copytree(REPO / "docs", docs)
    with (docs / "review.md").open("a", encoding="utf-8") as page:
        page.write("\n[broken](measured.md#no-such-heading)\n")
    config = tmp_path / "mkdocs.yml"
    text = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    text = text.replace("docs_dir: docs", f"docs_dir: {docs}")
    text = text.replace("  - tests/docs_site.py", f"  - {REPO / 'tests' / 'docs_site.py'}")
    config.write_text(text, encoding="utf-8")
    done = mkdocs_build(config, tmp_path / "site")
    assert done.returncode != 0
    assert "does not contain an anchor '#no-such-heading'" in done.stderr


@pytest.fixture
def site_url(site: Path) -> Iterator[str]:
    with served(site) as url:
        yield url


@pytest.mark.browser
def test_every_page_opens_in_chromium_without_a_console_error(site_url: str) -> None:
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            tab: Any = browser.new_page()

            def route(request: Any) -> None:
                if request.request.url.startswith(site_url):
                    request.continue_()
                else:
                    problems.append(f"remote request {request.request.url}")
                    request.abort()

            tab.route("**/*", route)

            def console(message: Any) -> None:
                if message.type == "error":
                    problems.append(message.text)

            tab.on("console", console)
            tab.on("pageerror", lambda e: problems.append(str(e)))
            for page in PAGES:
                tab.goto(site_url + page, wait_until="load")
                assert tab.locator("article h1").count() == 1, page
            tab.goto(site_url + "history/index.html", wait_until="load")
            pictures = tab.locator("article img")
            assert pictures.count() >= 4
            for i in range(pictures.count()):
                width = pictures.nth(i).evaluate("e => e.complete ? e.naturalWidth : 0")
                assert width > 0, pictures.nth(i).get_attribute("src")
        finally:
            browser.close()
    assert problems == []


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_the_reference_is_each_command_s_help(command: str) -> None:
    """The reference page holds exactly what ``jaxbench COMMAND --help`` prints."""
    done = subprocess.run(
        [sys.executable, "-m", "jaxbench", *([command] if command else []), "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": str(docs_site.HELP_COLUMNS)},
        check=True,
    )
    assert done.stdout.strip()
    assert done.stdout == docs_site.help_text(*([command] if command else []))
    assert f"```text\n{done.stdout}```" in docs_site.cli_reference()


def test_the_reference_never_imports_jax() -> None:
    code = (
        "import sys; sys.path.insert(0, 'tests'); import docs_site; docs_site.cli_reference()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True
    )
    assert done.stdout.strip() == "[]"
