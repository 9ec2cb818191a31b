"""The published site: asv's HTML history, working offline, plus a regressions page by kind.

The core of ``jaxbench publish`` (:mod:`jaxbench.commands.publish` is its
command line).

Steps:

1. Scan the results (:func:`jaxbench.store.series_table.load_series_table`,
   through the scan cache beside them, and :func:`jaxbench.analyse.detect.scan`,
   the same scan and cache as ``jaxbench regressions``, with the
   ``regressions_thresholds`` of ``asv.conf.json``) first, so bad results stop
   the command before anything is written. A result file with an infinite
   value is refused here: asv 0.6.6's ``asv publish`` hangs on one (its step
   detection pool never returns).
2. Run the real ``asv publish`` in a subprocess, into a staging directory
   beside the html dir. asv needs the benchmarked git repository (``repo``
   in ``asv.conf.json``) to order commits; without it asv stops with "Can not
   determine what kind of DVCS to use" *after* deleting its ``html_dir``. So
   the repository is checked first, and asv never writes to the real html dir.
3. In the staging copy: rewrite asv's CDN ``<script>``/``<link>`` tags to the
   vendored copies (:func:`jaxbench.render.html.localize_asv_index`), copy
   ``assets/vendor`` and our stylesheet, write ``jaxbench/regressions.html``
   (with the workloads declared ``Unchecked``, and why:
   :mod:`jaxbench.store.checks`), the paired history's page where pairs were
   measured and the upgrades page where ``jaxbench upgrade`` recorded verdicts
   (:mod:`jaxbench.store.upgrades`).
4. Swap the staging directory in with two renames (old out of the way, new
   in), then delete the old one. A failure at any step before the swap leaves
   the previous html dir exactly as it was.

``asv publish`` is given a temporary copy of ``asv.conf.json`` (a hidden file
next to the original, so that relative paths and asv's mirror of a remote
repository keep their meaning) with ``results_dir`` and ``html_dir`` set; it is
removed afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from jaxbench.analyse.detect import DEFAULT_DETECTOR, scan
from jaxbench.analyse.events import group_events
from jaxbench.analyse.failures import FailureGroup, failing_groups
from jaxbench.analyse.paired_history import paired_series
from jaxbench.errors import ResultsError, UsageError
from jaxbench.jobs.first_parent import bisect_hint
from jaxbench.jobs.parallel import forked_batches
from jaxbench.render import html
from jaxbench.render.failures import no_error_text
from jaxbench.render.paired import PAIRED_PAGE, add_paired_nav, render_paired_page
from jaxbench.render.upgrades import UPGRADES_PAGE, add_upgrades_nav, render_upgrades_page
from jaxbench.store.asv_conf import read_asv_conf, thresholds_from_asv_conf
from jaxbench.store.asv_log import read_asv_log
from jaxbench.store.benchmarks_json import read_benchmarks_json_or_warn
from jaxbench.store.checks import read_unchecked, unchecked_workloads
from jaxbench.store.paired import load_paired
from jaxbench.store.results import read_env_params
from jaxbench.store.series_table import load_series_table, save_fits
from jaxbench.store.upgrades import load_upgrades

__all__ = ["PUBLISH_TIMEOUT", "PublishOutcome", "check_repo", "publish"]

_URL_PREFIXES = ("http://", "https://", "git@", "ssh://", "git://", "file://")


@dataclass(frozen=True)
class PublishOutcome:
    """What :func:`publish` wrote."""

    html_dir: Path
    regressions_page: Path
    regressions: int
    asv_output: str
    #: benchmarks failing at the newest commit, newly failing first
    failing: tuple[FailureGroup, ...] = ()


def _conf_path(conf: Mapping[str, object], key: str, default: str, base: Path) -> Path:
    value = conf.get(key, default)
    if not isinstance(value, str) or not value:
        raise UsageError(f"asv.conf.json: {key!r} must be a path string; fix the file")
    return (base / value).resolve()


def check_repo(conf: Mapping[str, object], conf_dir: Path, config: Path) -> None:
    """Fail with the fix when the benchmarked repository that asv publish needs is missing."""
    repo = conf.get("repo")
    if not isinstance(repo, str) or not repo:
        raise UsageError(
            f"{config}: no 'repo'; asv publish needs the benchmarked git repository "
            'to order commits: set "repo" to its path or URL'
        )
    if repo.startswith(_URL_PREFIXES):
        return
    path = (conf_dir / repo).resolve()
    if not path.is_dir():
        raise UsageError(
            f"{config}: repo {repo!r} ({path}) does not exist; asv publish needs the "
            'benchmarked git repository to order commits: clone it there or fix "repo"'
        )


def _repo_dir(conf: Mapping[str, object], conf_dir: Path) -> Path:
    """The benchmarked repository, where it is a folder here (else asv.conf.json's folder)."""
    repo = conf.get("repo")
    path = conf_dir / repo if isinstance(repo, str) else conf_dir
    return path if path.is_dir() else conf_dir


def _asv_failure(output: str) -> str:
    """The last meaningful line of asv's output, without its progress prefix."""
    for line in reversed(output.splitlines()):
        text = line.strip()
        if text.startswith("["):
            text = text.split("]", 1)[-1].strip()
        text = text.lstrip("·").strip()
        if text:
            return text
    return "no output"


def _check_html_dir(html_dir: Path, protected: list[Path]) -> None:
    for path in protected:
        if html_dir == path or html_dir in path.parents:
            raise UsageError(
                f"html dir {html_dir} contains {path}, which publishing would delete; "
                "choose another --html-dir"
            )
    if html_dir.exists():
        if not html_dir.is_dir():
            raise UsageError(
                f"html dir {html_dir} is a file; remove it or choose another --html-dir"
            )
        if any(html_dir.iterdir()) and not (html_dir / "index.html").exists():
            raise UsageError(
                f"html dir {html_dir} exists and is not a published asv site (no index.html); "
                "publishing replaces it: remove it or choose another --html-dir"
            )


#: Seconds before a hanging ``asv publish`` is given up (it publishes 1,000
#: commits x 50 benchmarks in well under a minute here).
PUBLISH_TIMEOUT = 600


def _run_asv_publish(
    conf: dict[str, object], conf_dir: Path, staging_html: Path, results_dir: Path, html_dir: Path
) -> str:
    conf = dict(conf, results_dir=str(results_dir), html_dir=str(staging_html))
    fd, tmp_conf = tempfile.mkstemp(prefix=".asv.conf.jaxbench-", suffix=".json", dir=conf_dir)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(conf, handle, indent=2)
        proc = subprocess.run(
            [sys.executable, "-m", "asv", "publish", "--config", tmp_conf],
            capture_output=True,
            text=True,
            check=False,
            timeout=PUBLISH_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        raise UsageError(
            f"asv publish did not finish in {PUBLISH_TIMEOUT} s; {html_dir} was left as it was; "
            "look for result files with unusual values and re-run"
        ) from None
    finally:
        Path(tmp_conf).unlink(missing_ok=True)
    output = proc.stdout + proc.stderr
    if proc.returncode != 0 or not (staging_html / "index.html").is_file():
        raise UsageError(
            f"asv publish failed: {_asv_failure(output)}; {html_dir} was left as it was"
        )
    return output


def _finish_site(
    site: Path, page: str, paired_page: str | None = None, upgrades_page: str | None = None
) -> None:
    """Make asv's site in ``site`` work offline and add our pages to it."""
    index = site / "index.html"
    localized = html.localize_asv_index(index.read_text(encoding="utf-8"))
    (site / html.PAGE_DIR).mkdir(parents=True, exist_ok=True)
    if paired_page is not None:
        localized = add_paired_nav(localized)
        (site / PAIRED_PAGE).write_text(paired_page, encoding="utf-8")
    if upgrades_page is not None:
        localized = add_upgrades_nav(localized)
        (site / UPGRADES_PAGE).write_text(upgrades_page, encoding="utf-8")
    index.write_text(localized, encoding="utf-8")
    assets = resources.files("jaxbench").joinpath("assets")
    with resources.as_file(assets) as assets_dir:
        shutil.copytree(assets_dir / "vendor", site / html.VENDOR_DIR)
        shutil.copyfile(assets_dir / "jaxbench.css", site / html.STYLESHEET)
    (site / html.REGRESSIONS_PAGE).write_text(page, encoding="utf-8")


def _page_names(conf: Mapping[str, object]) -> tuple[str, int]:
    """(project name, commit hash length) as asv.conf.json gives them to every page."""
    hash_length = conf.get("hash_length", 8)
    return str(conf.get("project", "project")), hash_length if isinstance(hash_length, int) else 8


def _paired_page(
    results: Path, commit_order: tuple[str, ...], conf: Mapping[str, object]
) -> str | None:
    """The paired-history page, or None when no pair was measured (read before any write)."""
    runs = load_paired(results)
    if not runs:
        return None
    project, hash_length = _page_names(conf)
    return render_paired_page(
        paired_series(runs, commit_order, results),
        commit_order=commit_order,
        runs=runs,
        project=project,
        hash_length=hash_length,
    )


def _upgrades_page(results: Path, conf: Mapping[str, object]) -> str | None:
    """The upgrades page, or None when no upgrade was recorded (read before any write)."""
    records = load_upgrades(results)
    if not records:
        return None
    project, hash_length = _page_names(conf)
    return render_upgrades_page(records, project=project, hash_length=hash_length)


def _swap_in(new: Path, html_dir: Path) -> None:
    """Replace ``html_dir`` by ``new`` (same parent): two renames, then delete the old one."""
    old: Path | None = None
    if html_dir.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{html_dir.name}.jaxbench-old-", dir=html_dir.parent))
        os.replace(html_dir, old / "html")
    try:
        os.replace(new, html_dir)
    except OSError:
        if old is not None:
            os.replace(old / "html", html_dir)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def publish(
    config: Path,
    *,
    html_dir: Path | None = None,
    results_dir: Path | None = None,
    detector: str = DEFAULT_DETECTOR,
    asv_logs: tuple[Path, ...] = (),
) -> PublishOutcome:
    """Publish the history of ``config``'s results into its html dir (see module doc)."""
    config = Path(config)
    if not config.is_file():
        raise UsageError(f"{config}: no such asv configuration; pass --config PATH")
    conf = read_asv_conf(config)
    conf_dir = config.resolve().parent
    results = (
        results_dir.resolve()
        if results_dir
        else _conf_path(conf, "results_dir", "results", conf_dir)
    )
    target = html_dir.resolve() if html_dir else _conf_path(conf, "html_dir", "html", conf_dir)
    _check_html_dir(target, [results, config.resolve(), conf_dir])
    check_repo(conf, conf_dir, config)

    parallel = forked_batches()
    history = load_series_table(results, parallel=parallel)
    if history.infinite_files:
        first = history.infinite_files[0]
        raise ResultsError(
            f"{first}: holds an infinite value ({len(history.infinite_files)} such file(s)), "
            "on which asv publish's step detection never finishes; delete those files or "
            "re-run 'asv run' for those commits"
        )
    paired_page = _paired_page(results, history.commits(), conf)  # bad files stop here
    upgrades_page = _upgrades_page(results, conf)
    log = read_asv_log(asv_logs)
    failing = failing_groups(history, log.error, build_error_of=log.build_error)
    found, fits = scan(
        history, thresholds=thresholds_from_asv_conf(config), detector=detector, parallel=parallel
    )
    save_fits(history, fits)
    regressions = found.regressions
    benchmarks, _ = read_benchmarks_json_or_warn(results / "benchmarks.json")
    project, hash_length = _page_names(conf)
    page = html.render_regressions_page(
        regressions,
        html.summarize_table(history),
        env_params=read_env_params(results),
        param_names=benchmarks.param_names(),
        project=project,
        hash_length=hash_length,
        warnings=history.warnings,
        events=group_events(regressions, found.series_at),
        machine_changes=found.machine_changes,
        unconfirmed=found.unconfirmed,
        unchecked=unchecked_workloads(history, read_unchecked(results)),
        failing=failing,
        no_error=no_error_text(failing, asv_logs),
        bisect=bisect_hint(_repo_dir(conf, conf_dir), results=results_dir),
    )

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.jaxbench-new-", dir=target.parent))
    except OSError as exc:
        raise UsageError(
            f"cannot write next to {target}: {exc.strerror or exc}; choose a writable --html-dir"
        ) from None
    try:
        site = staging / "html"
        output = _run_asv_publish(conf, conf_dir, site, results, target)
        _finish_site(site, page, paired_page, upgrades_page)
        _swap_in(site, target)
    except OSError as exc:
        raise UsageError(
            f"cannot publish into {target}: {exc.strerror or exc}; {target} was left as it was"
        ) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return PublishOutcome(
        html_dir=target,
        regressions_page=target / html.REGRESSIONS_PAGE,
        regressions=len(regressions),
        asv_output=output,
        failing=tuple(failing),
    )
