"""The guide's pictures: committed in docs/pictures/, made again by ``make pictures``.

The pictures are photographs, in headless Chromium, of the guide's example
history (``docs_site.build_example``) published with ``jaxbench publish``:
asv's grid, jaxbench's regressions page, the stepped series' graph, the
paired history page, and the pull-request comment rendered as GitHub shows
it. ``make docs`` only copies them: it needs no browser.

**When a picture is out of date.** A photograph is fixed by what it is
taken of and how: the published pages (every file ``jaxbench publish``
writes for the example, asv's ``info.json`` less its publish time), the
comment as ``jaxbench compare --format markdown`` writes it, and this file
(the camera: viewport, clips, what is clicked). Their digest is recorded in
``docs/pictures/pictures.json`` beside each picture's size and the Chromium
version that took them.
``tests/test_docs.py`` publishes the example again (no browser, seconds) and
fails when the digest differs, or a picture is missing; a browser test takes
the photographs again and compares them with the committed ones: pixel for
pixel with the recorded Chromium, by size with another (another machine's
fonts change more pixels than a changed sentence does, so no looser pixel
rule can tell the two apart: the digest does).

``python tests/docs_pictures.py`` says whether the pictures are current
(exit 1 when not); ``--write`` (``make pictures``) takes them again and
writes the record. The photographs are byte-identical run to run on one
machine, so retaking current pictures changes no file.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import shutil
import struct
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"
FOLDER = REPO / "docs" / "pictures"
RECORD = FOLDER / "pictures.json"
#: The pictures, by file name: what each shows.
PICTURES = {
    "graph.png": "asv's graph of the stepped series, opened from the regressions page",
    "index.png": "asv's grid of benchmarks, with jaxbench's pages in the top bar",
    "paired.png": "the paired history page",
    "regressions.png": "the regressions page, down to its warm-time section",
    "review-comment.png": "the pull-request comment, rendered as GitHub shows it",
}
WIDTH, HEIGHT = 1200, 720

if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))


@dataclass(frozen=True)
class Subject:
    """What the photographs are taken of: the published example and the comment's page."""

    site: Path
    comment: Path
    #: The example's text outputs (``docs_site.text_outputs``), the comment among them.
    outputs: dict[str, str]


@contextlib.contextmanager
def published() -> Iterator[Subject]:
    """The example history published, and its comment as a page, in a temporary folder."""
    import docs_site

    with docs_site.example() as made:
        status, _ = docs_site._run_cli("publish", "--config", str(made.config))
        if status != 0:
            raise SystemExit(f"pictures: jaxbench publish of the example history exited {status}")
        outputs = docs_site.text_outputs(made)
        comment = made.root / "comment.html"
        comment.write_text(docs_site._comment_page(outputs["review-comment.md"]), encoding="utf-8")
        yield Subject(site=made.html_dir, comment=comment, outputs=outputs)


def inputs_digest(subject: Subject) -> str:
    """The digest of what the photographs are taken of, and of the camera (this file)."""
    digest = hashlib.sha256()
    files = sorted(p for p in subject.site.rglob("*") if p.is_file())
    for path in files:
        data = path.read_bytes()
        if path.relative_to(subject.site).as_posix() == "info.json":
            info = json.loads(data)
            info.pop("timestamp", None)  # when it was published, not what
            data = json.dumps(info, sort_keys=True).encode()
        digest.update(path.relative_to(subject.site).as_posix().encode() + b"\0" + data + b"\0")
    # the comment as jaxbench writes it (its page's HTML depends on Markdown's version too)
    digest.update(b"comment\0" + subject.outputs["review-comment.md"].encode() + b"\0")
    digest.update(b"camera\0" + Path(__file__).read_bytes())
    return digest.hexdigest()


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's header (its IHDR chunk)."""
    data = path.read_bytes()[:24]
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise SystemExit(f"{path} is not a PNG file: run make pictures")
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def watch(tab: Any, local: tuple[str, ...], problems: list[str]) -> None:
    """Note in ``problems`` every console error, page error, failed response and
    request to anywhere but ``local`` (aborted) of a Playwright page."""

    def route(request: Any) -> None:
        if request.request.url.startswith(local):
            request.continue_()
        else:
            problems.append(f"remote request {request.request.url}")
            request.abort()

    def console(message: Any) -> None:
        if message.type == "error":
            problems.append(message.text)

    def response(answer: Any) -> None:
        if answer.status >= 400:
            problems.append(f"{answer.status} {answer.url}")

    tab.route("**/*", route)
    tab.on("console", console)
    tab.on("pageerror", lambda e: problems.append(str(e)))
    tab.on("response", response)


def photograph(subject: Subject, out: Path) -> str:
    """The pictures, in headless Chromium (its version returned); a console error fails."""
    from playwright.sync_api import sync_playwright

    from jaxbench.render import html, paired
    from served import served
    from test_browser import CHROMIUM, CHROMIUM_ARGS

    if not CHROMIUM.exists():
        raise SystemExit(
            f"pictures: no {CHROMIUM} to take the guide's pictures: install it with "
            "'apt-get install -y chromium' or set JAXBENCH_CHROMIUM"
        )
    out.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    with served(subject.site) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        version = str(browser.version)
        try:
            context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
            tab: Any = context.new_page()

            watch(tab, (url, "file://"), problems)

            tab.goto(url + "index.html", wait_until="networkidle")
            tab.wait_for_selector("#summarygrid-display .benchmark-container")
            tab.screenshot(path=str(out / "index.png"))

            # The page down to its warm-time section (the flagged row): the empty
            # sections below it say "None flagged" like those above.
            tab.goto(url + html.REGRESSIONS_PAGE, wait_until="networkidle")
            box = tab.locator("#time").bounding_box()
            height = int(box["y"] + box["height"]) + 16
            clip = {"x": 0, "y": 0, "width": WIDTH, "height": height}
            tab.screenshot(path=str(out / "regressions.png"), full_page=True, clip=clip)

            tab.locator("#time tr.regression a").first.click()
            tab.wait_for_selector("#main-graph canvas.flot-base")
            tab.wait_for_load_state("networkidle")
            tab.wait_for_timeout(300)  # flot draws after the data arrives
            tab.screenshot(path=str(out / "graph.png"))

            tab.goto(url + paired.PAIRED_PAGE, wait_until="networkidle")
            tab.screenshot(path=str(out / "paired.png"), full_page=True)

            tab.goto(subject.comment.as_uri(), wait_until="load")
            tab.locator(".comment").screenshot(path=str(out / "review-comment.png"))
            context.close()
        finally:
            browser.close()
    if problems:
        raise SystemExit("pictures: the pages photographed failed: " + "; ".join(problems))
    return version


def record(digest: str, chromium: str, folder: Path) -> dict[str, Any]:
    """What ``pictures.json`` holds: the inputs' digest, the browser, each picture's size."""
    sizes = {name: list(png_size(folder / name)) for name in sorted(PICTURES)}
    return {"inputs_sha256": digest, "chromium": chromium, "pictures": sizes}


def problems(digest: str) -> list[str]:
    """Why the committed pictures are not current ([] when they are)."""
    found = [f"docs/pictures/{n} is missing" for n in PICTURES if not (FOLDER / n).is_file()]
    if not RECORD.is_file():
        return [*found, "docs/pictures/pictures.json is missing"]
    kept = json.loads(RECORD.read_text(encoding="utf-8"))
    if kept.get("inputs_sha256") != digest:
        found.append(
            "the published example pages, the comment or the camera changed since the "
            "pictures were taken"
        )
    if sorted(kept.get("pictures", {})) != sorted(PICTURES):
        found.append("docs/pictures/pictures.json does not list every picture")
    return found


def write(subject: Subject) -> list[str]:
    """Take the pictures again into docs/pictures/ (all or none); the names written."""
    with tempfile.TemporaryDirectory(prefix="jaxbench-pictures-") as tmp:
        taken = Path(tmp)
        chromium = photograph(subject, taken)
        FOLDER.mkdir(parents=True, exist_ok=True)
        changed = [
            name
            for name in sorted(PICTURES)
            if not (FOLDER / name).is_file()
            or (FOLDER / name).read_bytes() != (taken / name).read_bytes()
        ]
        for name in changed:
            shutil.copyfile(taken / name, FOLDER / name)
    text = json.dumps(record(inputs_digest(subject), chromium, FOLDER), indent=2) + "\n"
    RECORD.write_text(text, encoding="utf-8")
    return changed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--write", action="store_true", help="take the pictures again (needs Chromium)"
    )
    args = parser.parse_args(argv)
    with published() as subject:
        if args.write:
            changed = write(subject)
            print(f"pictures: {len(changed)} of {len(PICTURES)} changed ({', '.join(changed)})")
            return 0
        found = problems(inputs_digest(subject))
    for problem in found:
        print(f"pictures: {problem}: run make pictures")
    if not found:
        print(f"pictures: the {len(PICTURES)} pictures are current")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
