"""The documentation site's generated parts, and the mkdocs hook that makes them.

``mkdocs.yml`` names this file under ``hooks:``, so every ``mkdocs build``
(``make docs``, ``tests/test_docs.py``) and ``mkdocs serve`` runs it:

* **the command-line reference** (``reference.md``): ``jaxbench --help`` and
  ``jaxbench COMMAND --help`` of every command, captured from the argparse
  definitions in :mod:`jaxbench.cli` (one source; never imports jax);
* **the screenshots and outputs the guide shows**: the planted history of
  ``tests/test_browser.py`` (ten commits, a 30 % warm-time step at commit 6)
  with a paired history beside it, published with ``jaxbench publish`` and
  photographed in headless Chromium (the regressions page, a graph, the
  paired history, the pull-request comment rendered); ``jaxbench
  regressions`` and ``jaxbench compare --format markdown`` on it as text.

They are generated at build time, not committed: a picture of the pages as
they are at this commit cannot go stale, and a change to the pages needs no
second commit of binary files. They land in ``build/docs-generated/<digest>/``,
keyed by a digest of what they are made from (``src/jaxbench``, this file,
``tests/test_browser.py``), so ``mkdocs serve`` regenerates them only when
that changes. The pages include the text outputs with ``pymdownx.snippets``
(``--8<--``) from ``build/docs-generated/current/``.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"
GENERATED = REPO / "build" / "docs-generated"
#: What pages include with ``--8<--`` (a copy of the newest generated set).
CURRENT = GENERATED / "current"
#: The width ``--help`` is wrapped at in the reference (argparse reads COLUMNS).
HELP_COLUMNS = 100
#: The generated pictures, by file name: what each shows.
SCREENSHOTS = {
    "regressions.png": "the regressions page of the planted history",
    "graph.png": "asv's graph of the stepped series, opened from the regressions page",
    "paired.png": "the paired history page",
    "review-comment.png": "the pull-request comment, rendered",
    "index.png": "asv's grid of benchmarks, with jaxbench's link in the top bar",
}
#: Text outputs, by file name.
OUTPUTS = ("regressions.txt", "review-comment.md", "compare.txt")
#: Where the comment's graph links point in the generated example.
EXAMPLE_HTML_URL = "https://example.org/benchmarks/"


# --- the command-line reference ---------------------------------------------------


def help_text(*command: str) -> str:
    """What ``jaxbench COMMAND --help`` prints, wrapped at :data:`HELP_COLUMNS`."""
    from jaxbench.cli import main

    out = io.StringIO()
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(HELP_COLUMNS)
    try:
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            main([*command, "--help"])
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved
    return out.getvalue()


def cli_reference() -> str:
    """The reference page: every command's ``--help``, from the argparse definitions."""
    from jaxbench.cli import COMMANDS

    parts = [
        "# Command-line reference\n\n",
        "Generated from the argparse definitions in `jaxbench.cli` and "
        "`jaxbench.commands` when the site is built: each block is what "
        "`jaxbench COMMAND --help` prints. All commands but `report` belong to the "
        "analysing half and never import jax. Bad input gives one line naming the "
        "problem and the fix, exit status 2, no traceback and no half-written "
        "file ([Reliability](reliability.md)).\n\n",
        "## jaxbench\n\n```text\n",
        help_text(),
        "```\n",
    ]
    for name in COMMANDS:
        parts += [f"\n## jaxbench {name}\n\n```text\n", help_text(name), "```\n"]
    return "".join(parts)


# --- the screenshots ------------------------------------------------------------------


def source_digest() -> str:
    """A digest of everything the generated pictures and outputs are made from."""
    digest = hashlib.sha256()
    sources = sorted((REPO / "src" / "jaxbench").rglob("*"))
    for path in [*sources, Path(__file__), TESTS / "test_browser.py"]:
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _write_paired_history(root: Path, commits: tuple[str, ...]) -> None:
    """Each commit of the planted history paired with the one before it.

    The ratios are those ``jaxbench pair-history`` would measure on it: about
    1.00 (within half a per cent) everywhere but the 1.30 step of rows=64 at
    commit 6, which its pair flags.
    """
    from jaxbench.store.paired import PairedEstimate, PairedRun, write_paired
    from test_browser import ENV_NAME, MACHINE, STEP, STEP_AT, STEPPED

    for i in range(1, len(commits)):
        estimates = []
        for rows in ("64", "96"):
            stepped = rows == "64" and i == STEP_AT - 1
            ratio = STEP if stepped else 1.0 + 0.004 * ((i * 5 + int(rows)) % 3 - 1)
            estimates.append(
                PairedEstimate(
                    benchmark=STEPPED,
                    params=(rows,),
                    ratio=ratio,
                    low=ratio * 0.985,
                    high=ratio * 1.015,
                    p_value=1e-7 if stepped else 0.4 + 0.05 * (i % 5),
                    rounds=10,
                    samples=200,
                    verdict="regression" if stepped else "not significant",
                    reason="paired t over 10 side-by-side rounds",
                )
            )
        run = PairedRun(
            machine=MACHINE,
            env_name=ENV_NAME,
            base_commit=commits[i - 1],
            head_commit=commits[i],
            per_round=20,
            factor=1.02,
            alpha=0.01,
            date=1767225600000 + i * 86400000,
            estimates=tuple(estimates),
            first_look=10,
        )
        write_paired(root / "results", run)


def _write_review(root: Path, base: str, head: str) -> Path:
    """A pull request's two result files: the planted step at head, with samples.

    What ``pr-bench`` leaves for ``jaxbench compare``: 120 warm samples a side (4 rounds of 30)
    (head 30 % slower at rows=64), one value a side for the other figures, and
    one more XLA flop count at head (the change does more work).
    """
    import datetime

    from asv import util as asv_util
    from asv.results import Results
    from asv.runner import BenchmarkResult

    from test_browser import BENCHMARKS, ENV_NAME, MACHINE, STEP, STEPPED

    results = root / "review-results"
    # the machine's files, not the main job's paired history: a review has its own
    # results directory (and machine name), so compare never reads the main job's pairs
    shutil.copytree(
        root / "results" / MACHINE,
        results / MACHINE,
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("paired"),
    )
    for stale in (results / MACHINE).glob("*-*.json"):
        stale.unlink()
    shutil.copy2(root / "results" / "benchmarks.json", results / "benchmarks.json")
    benchmarks = asv_util.load_json(str(results / "benchmarks.json"), api_version=2)
    machine = asv_util.load_json(str(results / MACHINE / "machine.json"), api_version=1)
    for side, commit in (("base", base), ("head", head)):
        date = 1767225600000 + (86400000 if side == "head" else 0)
        run = Results(
            dict(machine, python="3.11", jax="0.10.2"),
            {"jax": "0.10.2"},
            commit,
            date,
            "3.11",
            ENV_NAME,
            {},
        )
        for name, (_, _, value) in BENCHMARKS.items():
            values = [value, 1.5 * value]
            samples: list[list[float] | None] = [None, None]
            if name == STEPPED:
                slower = STEP if side == "head" else 1.0
                wobble = 0.02 if side == "head" else 0.0
                samples = [
                    [
                        v * slower * (1 + 0.01 * ((k * 7) % 5 - 2) + wobble * ((k // 30) % 2))
                        for k in range(120)
                    ]
                    for v in (value, 1.5 * value)
                ]
                samples[1] = [s / slower for s in samples[1] or []]
                values = [sorted(s or [])[60] for s in samples]
            elif name.endswith("track_work_flops") and side == "head":
                values = [v * 1.5 for v in values]
            outcome = BenchmarkResult(
                result=values,
                samples=samples,
                number=[50, 50] if name == STEPPED else [None, None],
                errcode=0,
                stderr="",
                profile=None,
            )
            # One run of both commits (pr-bench's asv run --interleave-rounds):
            # their measuring intervals overlap.
            started = datetime.datetime.fromtimestamp(1767225600, tz=datetime.UTC)
            run.add_result(
                benchmarks[name], outcome, started_at=started, duration=60.0, record_samples=True
            )
        run.save(str(results))
    return results


def _run_cli(*args: str) -> tuple[int, str]:
    from jaxbench.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(list(args))
    return status, out.getvalue()


def _comment_page(markdown_text: str) -> str:
    """The comment as GitHub shows it, near enough: markdown, tables, open details."""
    import markdown  # type: ignore[import-untyped]

    text = re.sub(r"<details>", '<details open markdown="1">', markdown_text)
    body = markdown.markdown(text, extensions=["tables", "md_in_html"])
    style = (
        "body{font:14px/1.5 -apple-system,'Segoe UI',Helvetica,Arial,sans-serif;"
        "color:#1f2328;margin:0;padding:16px;background:#fff}"
        ".comment{border:1px solid #d1d9e0;border-radius:6px;max-width:1100px}"
        ".head{background:#f6f8fa;border-bottom:1px solid #d1d9e0;padding:8px 16px;"
        "color:#59636e}.body{padding:16px}"
        "table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #d1d9e0;"
        "padding:4px 10px}th{background:#f6f8fa}code{background:#eff1f3;"
        "padding:1px 4px;border-radius:4px;font-size:85%}a{color:#0969da}"
    )
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>comment</title>"
        f"<style>{style}</style></head><body><div class='comment'>"
        "<div class='head'><b>github-actions</b> commented</div>"
        f"<div class='body'>{body}</div></div></body></html>"
    )


def _photograph(site: Path, comment: Path, out: Path) -> None:
    """The screenshots, in headless Chromium; any console error or remote request fails."""
    from playwright.sync_api import sync_playwright

    from jaxbench.render import html, paired
    from served import served
    from test_browser import CHROMIUM, CHROMIUM_ARGS

    if not CHROMIUM.exists():
        raise SystemExit(
            f"docs: no {CHROMIUM} to take the guide's screenshots: install it with "
            "'apt-get install -y chromium' or set JAXBENCH_CHROMIUM"
        )
    problems: list[str] = []
    with served(site) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1200, "height": 720})
            tab: Any = context.new_page()

            def route(request: Any) -> None:
                if request.request.url.startswith((url, "file://")):
                    request.continue_()
                else:
                    problems.append(f"remote request {request.request.url}")
                    request.abort()

            tab.route("**/*", route)

            def console(message: Any) -> None:
                if message.type == "error":
                    problems.append(message.text)

            def response(answer: Any) -> None:
                if answer.status >= 400:
                    problems.append(f"{answer.status} {answer.url}")

            tab.on("console", console)
            tab.on("pageerror", lambda e: problems.append(str(e)))
            tab.on("response", response)

            tab.goto(url + "index.html", wait_until="networkidle")
            tab.wait_for_selector("#summarygrid-display .benchmark-container")
            tab.screenshot(path=str(out / "index.png"))

            tab.goto(url + html.REGRESSIONS_PAGE, wait_until="networkidle")
            tab.screenshot(path=str(out / "regressions.png"), full_page=True)

            tab.locator("#time tr.regression a").first.click()
            tab.wait_for_selector("#main-graph canvas.flot-base")
            tab.wait_for_load_state("networkidle")
            tab.wait_for_timeout(300)  # flot draws after the data arrives
            tab.screenshot(path=str(out / "graph.png"))

            tab.goto(url + paired.PAIRED_PAGE, wait_until="networkidle")
            tab.screenshot(path=str(out / "paired.png"), full_page=True)

            tab.goto(comment.as_uri(), wait_until="load")
            tab.locator(".comment").screenshot(path=str(out / "review-comment.png"))
            context.close()
        finally:
            browser.close()
    if problems:
        raise SystemExit(
            "docs: the pages photographed for the guide failed: " + "; ".join(problems)
        )


def generate(out: Path) -> None:
    """Write the screenshots and text outputs into ``out``."""
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    from test_browser import STEP_AT, make_history

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="jaxbench-docs-") as tmp:
        history = make_history(Path(tmp))
        _write_paired_history(history.root, history.commits)
        config = str(history.config)
        results = str(history.root / "results")
        status, _ = _run_cli("publish", "--config", config)
        if status != 0:
            raise SystemExit(f"docs: jaxbench publish of the planted history exited {status}")
        _, listing = _run_cli("regressions", "--config", config, "--results", results)
        (out / "regressions.txt").write_text(listing.replace(tmp, "/tmp/history"), encoding="utf-8")
        base, head = history.commits[STEP_AT - 2], history.commits[STEP_AT - 1]
        review = str(_write_review(history.root, base, head))
        compare = ("compare", base[:8], head[:8], "--results", review)
        _, text = _run_cli(*compare)
        (out / "compare.txt").write_text(text, encoding="utf-8")
        _, comment = _run_cli(*compare, "--format", "markdown", "--html-url", EXAMPLE_HTML_URL)
        (out / "review-comment.md").write_text(comment, encoding="utf-8")
        page = Path(tmp) / "comment.html"
        page.write_text(_comment_page(comment), encoding="utf-8")
        _photograph(history.html_dir, page, out)


def generated() -> Path:
    """The generated set for the current sources (made if missing), copied to ``current``."""
    target = GENERATED / source_digest()
    wanted = [*SCREENSHOTS, *OUTPUTS]
    if not all((target / name).is_file() for name in wanted):
        partial = target.with_name(target.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        generate(partial)
        shutil.rmtree(target, ignore_errors=True)
        partial.rename(target)
        for older in GENERATED.iterdir():  # sets made from older sources
            if older.is_dir() and older not in (target, CURRENT):
                shutil.rmtree(older, ignore_errors=True)
    shutil.rmtree(CURRENT, ignore_errors=True)
    shutil.copytree(target, CURRENT)
    return target


# --- the mkdocs hook ----------------------------------------------------------------


def on_pre_build(config: Any) -> None:
    """Make (or reuse) the generated set before the pages are read."""
    generated()


def on_files(files: Any, config: Any) -> Any:
    """Add the reference page and the screenshots (``img/generated/``) to the site."""
    from mkdocs.structure.files import File

    files.append(File.generated(config, "reference.md", content=cli_reference()))
    for name in SCREENSHOTS:
        files.append(
            File.generated(config, f"img/generated/{name}", abs_src_path=str(CURRENT / name))
        )
    return files
