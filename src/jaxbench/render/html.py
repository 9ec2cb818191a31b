"""The published HTML: asv's pages made to work offline, plus our regressions page.

Two pure transformations, no I/O (``jaxbench publish`` does the reading and
writing):

* :func:`localize_asv_index` rewrites the nine CDN ``<script>``/``<link>``
  tags of asv 0.6.6's ``index.html`` to the copies vendored under
  ``jaxbench/assets/vendor/`` (fetched by ``scripts/vendor-assets.sh``) and
  adds a link to our regressions page to asv's navigation bar. Where the
  vendored file is byte-identical to what the CDN serves, asv's
  ``integrity`` hash is kept, so the browser itself checks the copy.
* :func:`render_regressions_page` turns regressions found by
  :func:`jaxbench.analyse.detect.find_regressions` into a static page (no script,
  one same-origin stylesheet, a ``default-src 'self'`` Content-Security-Policy)
  that lists correctness, first-call and work regressions apart from warm-time
  ones, each row linked to its asv graph.

Every benchmark, parameter, machine and environment name comes from
benchmark code or results files, i.e. from untrusted input: all of them are
HTML-escaped in text and attributes, and percent-encoded in graph URLs.
"""

from __future__ import annotations

import datetime
import html
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from jaxbench.analyse.detect import MachineChange, Regression
from jaxbench.analyse.events import Event
from jaxbench.analyse.failures import Failure, FailureGroup
from jaxbench.errors import UsageError
from jaxbench.kinds import TOLERANCE_TRACK, UNCHECKED_TRACK, Kind, method_of
from jaxbench.render import links
from jaxbench.render.regressions import unconfirmed_summary
from jaxbench.render.units import format_ratio, format_value
from jaxbench.store.checks import UncheckedWorkload
from jaxbench.store.results import History

if TYPE_CHECKING:
    from jaxbench.store.series_table import SeriesTable

__all__ = [
    "KIND_SECTIONS",
    "NAV_LINK_ID",
    "PAGE_DIR",
    "REGRESSIONS_PAGE",
    "STYLESHEET",
    "VENDORED",
    "VENDOR_DIR",
    "EnvSummary",
    "KindSection",
    "VendoredAsset",
    "add_nav_link",
    "esc",
    "format_value",
    "graph_url",
    "localize_asv_index",
    "render_regressions_page",
    "side_page_head",
    "summarize",
]

#: Folder of the published html dir that holds everything jaxbench adds.
PAGE_DIR = "jaxbench"
#: Our regressions page and stylesheet, relative to the html dir.
REGRESSIONS_PAGE = f"{PAGE_DIR}/regressions.html"
STYLESHEET = f"{PAGE_DIR}/jaxbench.css"
#: Where the vendored scripts and styles are published, relative to the html dir.
VENDOR_DIR = f"{PAGE_DIR}/vendor"
#: ``id`` of the ``<li>`` added to asv's navigation bar.
NAV_LINK_ID = "nav-li-jaxbench-regressions"


_OUR_NAV = re.compile(r'<li id="nav-li-jaxbench-[^"]*"[^>]*>.*?</li>', re.DOTALL)


def side_page_head(title: str) -> str:
    """The top of one of our pages beside the regressions page (``title`` already
    escaped): same-origin only, our stylesheet, a way back to asv's history."""
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'self\'">\n'
        f'<title>{title}</title>\n<link rel="stylesheet" href="jaxbench.css">\n'
        '<link rel="icon" href="../swallow.ico">\n</head>\n<body>\n'
        '<nav><a href="../index.html">← asv history</a> · '
        '<a href="regressions.html">regressions by kind</a></nav>\n'
        f"<h1>{title}</h1>\n"
    )


def add_nav_link(index_html: str, nav_id: str, href: str, label: str) -> str:
    """asv's (already localized) index with a link to one of our pages after our last one."""
    ours = list(_OUR_NAV.finditer(index_html))
    if not ours:
        return index_html
    end = ours[-1].end()
    nav = f'\n\t<li id="{nav_id}"><a href="{href}">{html.escape(label)}</a></li>'
    return index_html[:end] + nav + index_html[end:]


@dataclass(frozen=True)
class VendoredAsset:
    """A CDN file that asv's ``index.html`` loads, and our copy of it."""

    cdn_url: str
    #: Path under ``assets/vendor/`` (and under :data:`VENDOR_DIR` when published).
    path: str
    #: The copy is byte-identical to the CDN's file, so asv's SRI hash still holds.
    same_bytes: bool


#: Every CDN file of asv 0.6.6's ``www/index.html``. flot's npm package has
#: no minified files (cdnjs minifies the same sources) and stupidtable 1.0.1
#: is not on npm (1.1.3 is): those three differ from the CDN's bytes.
VENDORED: tuple[VendoredAsset, ...] = (
    VendoredAsset(
        "https://code.jquery.com/jquery-3.3.1.min.js", "jquery-3.3.1/jquery.min.js", same_bytes=True
    ),
    VendoredAsset(
        "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.min.js",
        "flot-0.8.3/jquery.flot.js",
        same_bytes=False,
    ),
    VendoredAsset(
        "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.time.min.js",
        "flot-0.8.3/jquery.flot.time.js",
        same_bytes=False,
    ),
    VendoredAsset(
        "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.selection.min.js",
        "flot-0.8.3/jquery.flot.selection.js",
        same_bytes=False,
    ),
    VendoredAsset(
        "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.categories.min.js",
        "flot-0.8.3/jquery.flot.categories.js",
        same_bytes=False,
    ),
    VendoredAsset(
        "https://cdn.jsdelivr.net/npm/flot-orderbars@1.0.0/js/jquery.flot.orderBars.js",
        "flot-orderbars-1.0.0/jquery.flot.orderBars.js",
        same_bytes=True,
    ),
    VendoredAsset(
        "https://cdnjs.cloudflare.com/ajax/libs/stupidtable/1.0.1/stupidtable.min.js",
        "stupidtable-1.1.3/stupidtable.min.js",
        same_bytes=False,
    ),
    VendoredAsset(
        "https://cdnjs.cloudflare.com/ajax/libs/blueimp-md5/2.19.0/js/md5.min.js",
        "blueimp-md5-2.19.0/md5.min.js",
        same_bytes=True,
    ),
    VendoredAsset(
        "https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/js/bootstrap.min.js",
        "bootstrap-3.1.1/bootstrap.min.js",
        same_bytes=True,
    ),
    VendoredAsset(
        "https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/css/bootstrap.min.css",
        "bootstrap-3.1.1/bootstrap.min.css",
        same_bytes=True,
    ),
)

_REMOTE = r"(?:https?:)?//[^\"'\s>]+"
_SCRIPT_TAG = re.compile(
    rf"<script\b[^>]*?\bsrc\s*=\s*[\"'](?P<url>{_REMOTE})[\"'][^>]*>\s*</script>", re.IGNORECASE
)
_LINK_TAG = re.compile(
    rf"<link\b[^>]*?\bhref\s*=\s*[\"'](?P<url>{_REMOTE})[\"'][^>]*>", re.IGNORECASE
)
_INTEGRITY = re.compile(r"\bintegrity\s*=\s*\"(?P<hash>[^\"]+)\"", re.IGNORECASE)
_ASV_NAV_ANCHOR = re.compile(r"<li\s+id=\"nav-li-regressions\"[^>]*>.*?</li>", re.DOTALL)
_FIX_ASSETS = (
    "use asv 0.6.6 (the version jaxbench pins) or add the file to scripts/vendor-assets.sh "
    "and jaxbench.render.html.VENDORED"
)


def localize_asv_index(index_html: str) -> str:
    """asv's ``index.html`` with CDN files replaced by the vendored copies.

    Also adds a link to :data:`REGRESSIONS_PAGE` after asv's own
    "Regressions" item in the navigation bar. Raises :class:`UsageError` when
    the page loads a remote file jaxbench has no copy of (a different asv),
    since the published history would then not work offline.
    """
    by_url = {asset.cdn_url: asset for asset in VENDORED}

    def script(match: re.Match[str]) -> str:
        asset = by_url.get(match.group("url"))
        if asset is None:
            return match.group(0)
        return f'<script src="{VENDOR_DIR}/{asset.path}"{_sri(match.group(0), asset)}></script>'

    def link(match: re.Match[str]) -> str:
        asset = by_url.get(match.group("url"))
        if asset is None or "stylesheet" not in match.group(0).lower():
            return match.group(0)
        return (
            f'<link rel="stylesheet" href="{VENDOR_DIR}/{asset.path}"{_sri(match.group(0), asset)}>'
        )

    text = _LINK_TAG.sub(link, _SCRIPT_TAG.sub(script, index_html))
    remote = [m.group("url") for m in _SCRIPT_TAG.finditer(text)]
    remote += [
        m.group("url") for m in _LINK_TAG.finditer(text) if "stylesheet" in m.group(0).lower()
    ]
    if remote:
        raise UsageError(
            f"asv's index.html loads {remote[0]}, which jaxbench has no offline copy of; "
            + _FIX_ASSETS
        )
    anchor = _ASV_NAV_ANCHOR.search(text)
    if anchor is None:
        raise UsageError(
            "asv's index.html has no 'nav-li-regressions' item to put the jaxbench link "
            "after; " + _FIX_ASSETS
        )
    nav = (
        f'\n\t<li id="{NAV_LINK_ID}"><a href="{REGRESSIONS_PAGE}">'
        "Regressions by kind (jaxbench)</a></li>"
    )
    return text[: anchor.end()] + nav + text[anchor.end() :]


def _sri(tag: str, asset: VendoredAsset) -> str:
    """The integrity attributes to keep for ``asset`` (none unless byte-identical)."""
    found = _INTEGRITY.search(tag)
    if not asset.same_bytes or found is None:
        return ""
    return f' integrity="{found.group("hash")}" crossorigin="anonymous"'


# ---------------------------------------------------------------------------
# The regressions page


@dataclass(frozen=True)
class KindSection:
    """A section of the regressions page: one benchmark kind."""

    kind: Kind
    anchor: str
    title: str
    explanation: str


#: Sections in page order: what a reviewer should read first comes first.
KIND_SECTIONS: tuple[KindSection, ...] = (
    KindSection(
        Kind.ACCURACY,
        "accuracy",
        "Correctness",
        "Error against the NumPy reference went up (tolerance used > 1 fails).",
    ),
    KindSection(
        Kind.COMPILE,
        "compile",
        "First call",
        "Trace, lower, compile or first-execute time of a fresh specialization.",
    ),
    KindSection(
        Kind.WORK,
        "work",
        "Work",
        "XLA cost and memory analysis and HLO op counts: exact figures, any "
        "lasting increase is listed.",
    ),
    KindSection(
        Kind.TIME, "time", "Warm time", "Synchronized warm calls (noisy: check the graph)."
    ),
    KindSection(Kind.MEMORY, "memory", "Memory", "Process peak memory."),
    KindSection(Kind.OTHER, "other", "Other", "Benchmarks outside the naming contract."),
)


@dataclass(frozen=True)
class EnvSummary:
    """What the history holds for one machine and environment."""

    machine: str
    env_name: str
    commits: int
    benchmarks: int
    series: int
    failed_points: int
    first_date: int
    last_date: int


def summarize(history: History) -> tuple[EnvSummary, ...]:
    """One :class:`EnvSummary` per (machine, environment), sorted by them."""
    groups: dict[tuple[str, str], list[int]] = {}
    commits: dict[tuple[str, str], set[str]] = {}
    benches: dict[tuple[str, str], set[str]] = {}
    series: dict[tuple[str, str], set[object]] = {}
    failed: dict[tuple[str, str], int] = {}
    for point in history.points:
        env = (point.key.machine, point.key.env_name)
        groups.setdefault(env, []).append(point.date)
        commits.setdefault(env, set()).add(point.commit)
        benches.setdefault(env, set()).add(point.key.benchmark)
        series.setdefault(env, set()).add(point.key)
        failed[env] = failed.get(env, 0) + point.failed
    return tuple(
        EnvSummary(
            machine=env[0],
            env_name=env[1],
            commits=len(commits[env]),
            benchmarks=len(benches[env]),
            series=len(series[env]),
            failed_points=failed[env],
            first_date=min(dates),
            last_date=max(dates),
        )
        for env, dates in sorted(groups.items())
    )


def summarize_table(table: SeriesTable) -> tuple[EnvSummary, ...]:
    """:func:`summarize` from the scan's columns (same figures, no Point objects)."""
    import numpy as np

    keys: dict[tuple[str, str], list[int]] = {}
    for i, k in enumerate(table.keys):
        keys.setdefault((k.machine, k.env_name), []).append(i)
    failed_per_series = (
        np.add.reduceat(np.isnan(table.values).astype(np.int64), table.offsets[:-1])
        if len(table.values)
        else np.zeros(len(table.keys), dtype=np.int64)
    )
    lengths = np.diff(table.offsets)
    out: list[EnvSummary] = []
    for env, idx in sorted(keys.items()):
        present = [i for i in idx if lengths[i] > 0]
        if not present:
            continue
        fidx = np.unique(np.concatenate([table.points(i)[0] for i in present]))
        dates = [table.files[int(j)].date for j in fidx]
        commits = {table.files[int(j)].commit for j in fidx}
        out.append(
            EnvSummary(
                machine=env[0],
                env_name=env[1],
                commits=len(commits),
                benchmarks=len({table.keys[i].benchmark for i in present}),
                series=len(present),
                failed_points=int(sum(int(failed_per_series[i]) for i in present)),
                first_date=min(dates),
                last_date=max(dates),
            )
        )
    return tuple(out)


def graph_url(
    regression: Regression,
    *,
    env_params: Mapping[str, str],
    param_names: Sequence[str],
    hash_length: int = 8,
    index: str = "../index.html",
) -> str:
    """The asv graph of ``regression``'s series, with the step's commits highlighted.

    The format is asv's own (:func:`jaxbench.render.links.graph_url`).
    ``env_params`` are the ``params`` of a result file of that machine and
    environment (machine, python, requirements ...), which asv's graph page
    uses as filters; ``param_names`` the benchmark's ``param_names`` from
    ``benchmarks.json``.
    """
    return links.graph_url(
        index,
        regression.key.benchmark,
        env_params=sorted(env_params.items()),
        param_names=param_names,
        params=regression.key.params,
        commits=(regression.good_commit, regression.bad_commit),
        hash_length=hash_length,
    )


def _date(ms: int) -> str:
    stamp = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.UTC)
    return stamp.strftime("%Y-%m-%d %H:%M UTC")


def esc(text: object) -> str:
    """``text`` as HTML text or an attribute's value (quotes escaped too)."""
    return html.escape(str(text), quote=True)


def _row(
    regression: Regression,
    *,
    env_params: Mapping[tuple[str, str], Mapping[str, str]],
    param_names: Mapping[str, Sequence[str]],
    hash_length: int,
) -> str:
    key = regression.key
    url = graph_url(
        regression,
        env_params=env_params.get((key.machine, key.env_name), {"machine": key.machine}),
        param_names=param_names.get(key.benchmark, ()),
        hash_length=hash_length,
    )
    names = param_names.get(key.benchmark, ())
    if len(names) == len(key.params):
        shown = [f"{name}={value}" for name, value in zip(names, key.params, strict=True)]
    else:
        shown = list(key.params)
    bad = regression.bad_commit[:hash_length]
    good = regression.good_commit[:hash_length] if regression.good_commit else ""
    failing = method_of(key.benchmark) == TOLERANCE_TRACK and regression.after > 1.0
    flag = ' <span class="flag">outside tolerance</span>' if failing else ""
    return (
        f'<tr class="regression" data-commit="{esc(regression.bad_commit)}">'
        f'<td class="bench"><a href="{esc(url)}">{esc(key.benchmark)}</a>{flag}</td>'
        f"<td>{esc(', '.join(shown))}</td>"
        f'<td>{esc(key.machine)}<br><span class="env">{esc(key.env_name)}</span></td>'
        f'<td class="commit">{esc(good + ".." if good else "")}{esc(bad)}</td>'
        f'<td class="date">{esc(_date(regression.date))}</td>'
        f'<td class="num">{esc(format_value(regression.before, regression.unit))}</td>'
        f'<td class="num">{esc(format_value(regression.after, regression.unit))}</td>'
        f'<td class="num ratio">{esc(_ratio(regression.ratio))}</td>'
        "</tr>"
    )


def _ratio(ratio: float) -> str:
    if ratio == float("inf"):
        return "from 0"
    return f"{format_ratio(ratio)} ({(ratio - 1) * 100:+.1f} %)"


_TABLE_HEAD = (
    "<thead><tr><th>Benchmark</th><th>Parameters</th><th>Machine / environment</th>"
    '<th>Commits (good..bad)</th><th>Date</th><th class="num">Before</th>'
    '<th class="num">After</th><th class="num">Ratio</th></tr></thead>'
)


def _summary_table(summaries: Sequence[EnvSummary]) -> str:
    rows = "".join(
        "<tr>"
        f'<td>{esc(s.machine)}</td><td class="env">{esc(s.env_name)}</td>'
        f'<td class="num">{s.commits}</td><td class="num">{s.benchmarks}</td>'
        f'<td class="num">{s.series}</td><td class="num">{s.failed_points}</td>'
        f'<td class="date">{esc(_date(s.first_date))}</td>'
        f'<td class="date">{esc(_date(s.last_date))}</td>'
        "</tr>"
        for s in summaries
    )
    return (
        '<table class="summary"><thead><tr><th>Machine</th><th>Environment</th>'
        '<th class="num">Commits</th><th class="num">Benchmarks</th>'
        '<th class="num">Series</th><th class="num">Failed points</th>'
        "<th>First commit</th><th>Last commit</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )


#: Series shown per event on the page; the rest are counted.
EVENT_TOP_SERIES = 5


def _events_section(
    events: Sequence[Event],
    changes: Sequence[MachineChange],
    hash_length: int,
    bisect: Callable[[Event], str | None] | None = None,
) -> str:
    from jaxbench.analyse.events import BROAD_LABEL

    items: list[str] = []
    for event in events:
        bad = event.bad_commit[:hash_length]
        span = f"{event.good_commit[:hash_length]}..{bad}" if event.good_commit else bad
        kinds = ", ".join(k.value for k in event.kinds)
        broad = f' <span class="flag broad">broad: {esc(BROAD_LABEL)}</span>' if event.broad else ""
        series = "".join(
            f"<li>{esc(r.key.entry_name)}: {esc(format_value(r.before, r.unit))} → "
            f"{esc(format_value(r.after, r.unit))} {esc(_ratio(r.ratio))}</li>"
            for r in event.regressions[:EVENT_TOP_SERIES]
        )
        rest = len(event.regressions) - EVENT_TOP_SERIES
        more = f'<li class="more">and {rest} more series</li>' if rest > 0 else ""
        command = bisect(event) if bisect is not None else None
        if command:  # the range holds several commits: which one did it
            more += f'<li class="bisect">which commit: <code>{esc(command)}</code></li>'
        items.append(
            f'<li class="event{" broad" if event.broad else ""}" '
            f'data-commit="{esc(event.bad_commit)}">'
            f'<span class="commit">{esc(span)}</span> {esc(_date(event.date))}: '
            f"{len(event.regressions)} of {event.series_measured} series, up to "
            f"{esc(_ratio(event.worst_ratio))} ({esc(kinds)}), {esc(event.machine)} / "
            f'<span class="env">{esc(event.env_name)}</span>{broad}<ul>{series}{more}</ul></li>'
        )
    changed = "".join(
        f'<li class="machine-change" data-commit="{esc(c.commit)}">machine changed at '
        f"{esc(c.commit[:hash_length])} ({esc(c.machine)} / "
        f'<span class="env">{esc(c.env_name)}</span>): {c.series} series restarted</li>'
        for c in changes
    )
    body = f'<ol class="events">{"".join(items)}</ol>' if items else '<p class="none">None.</p>'
    if changed:
        body += f'<ul class="machine-changes">{changed}</ul>'
    return (
        f'<section id="events"><h2>Events <span class="count">{len(events)}</span></h2>'
        '<p class="explain">Commits that made things worse, per machine and environment, '
        "most severe first (correctness and work first, then size times breadth).</p>"
        f"{body}</section>"
    )


def _graph_and_params(
    benchmark: str,
    machine: str,
    env_name: str,
    params: tuple[str, ...],
    commits: tuple[str | None, str],
    *,
    env_params: Mapping[tuple[str, str], Mapping[str, str]],
    param_names: Mapping[str, Sequence[str]],
    hash_length: int,
) -> tuple[str, str]:
    """The asv graph of one series (``commits`` highlighted) and its parameters as shown."""
    names = param_names.get(benchmark, ())
    url = links.graph_url(
        "../index.html",
        benchmark,
        env_params=sorted(env_params.get((machine, env_name), {"machine": machine}).items()),
        param_names=names,
        params=params,
        commits=commits,
        hash_length=hash_length,
    )
    if len(names) == len(params):
        return url, ", ".join(f"{n}={v}" for n, v in zip(names, params, strict=True))
    return url, ", ".join(params)


def _unchecked_section(
    unchecked: Sequence[UncheckedWorkload],
    *,
    env_params: Mapping[tuple[str, str], Mapping[str, str]],
    param_names: Mapping[str, Sequence[str]],
    hash_length: int,
) -> str:
    """Workloads declared ``Unchecked(reason)``: timed, never compared with a reference."""
    rows = []
    for u in unchecked:
        url, shown = _graph_and_params(
            f"{u.benchmark}.{UNCHECKED_TRACK}",
            u.machine,
            u.env_name,
            u.params,
            (None, u.commit),
            env_params=env_params,
            param_names=param_names,
            hash_length=hash_length,
        )
        reason = (
            esc(u.reason)
            if u.reason is not None
            else '<span class="none">not kept by this run (jaxbench without checks/)</span>'
        )
        rows.append(
            f'<tr class="unchecked" data-commit="{esc(u.commit)}">'
            f'<td class="bench"><a href="{esc(url)}">{esc(u.benchmark)}</a></td>'
            f"<td>{esc(shown)}</td>"
            f'<td>{esc(u.machine)}<br><span class="env">{esc(u.env_name)}</span></td>'
            f'<td class="commit">{esc(u.commit[:hash_length])}</td>'
            f'<td class="reason">{reason}</td></tr>'
        )
    if rows:
        body = (
            '<table class="unchecked"><thead><tr><th>Workload</th><th>Parameters</th>'
            "<th>Machine / environment</th><th>Newest commit</th><th>Why unchecked</th>"
            f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )
    else:
        body = '<p class="none">None: every workload\'s answer is checked.</p>'
    return (
        f'<section id="unchecked"><h2>Unchecked workloads <span class="count">{len(rows)}'
        '</span></h2><p class="explain">Declared with Unchecked(reason): no reference, '
        "so their times and work are recorded but their answers are never checked "
        f"({UNCHECKED_TRACK} is 1 at the newest commit; their accuracy figures are absent "
        f"by declaration, not skipped).</p>{body}</section>"
    )


def _failure_rows(
    failures: Sequence[Failure],
    *,
    env_params: Mapping[tuple[str, str], Mapping[str, str]],
    param_names: Mapping[str, Sequence[str]],
    hash_length: int,
) -> str:
    rows: list[str] = []
    for f in failures:
        key = f.key
        url, shown = _graph_and_params(
            key.benchmark,
            key.machine,
            key.env_name,
            key.params,
            (f.last_good_commit, f.since_commit),
            env_params=env_params,
            param_names=param_names,
            hash_length=hash_length,
        )
        error = (
            f'<code class="error">{esc(f.error)}</code>'
            if f.error is not None
            else '<span class="no-error">no error text</span>'
        )
        rows.append(
            f'<tr class="failing{" newly" if f.newly else ""}" '
            f'data-commit="{esc(f.since_commit)}">'
            f'<td class="bench"><a href="{esc(url)}">{esc(key.benchmark)}</a></td>'
            f"<td>{esc(shown)}</td>"
            f'<td class="num">{f.failed_commits} of {f.measured_commits}</td>'
            f"<td>{error}</td></tr>"
        )
    return (
        '<table class="failing"><thead><tr><th>Benchmark</th><th>Parameters</th>'
        '<th class="num">Failed at (commits)</th><th>Last line of its error</th></tr>'
        f"</thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _failing_section(
    groups: Sequence[FailureGroup],
    *,
    env_params: Mapping[tuple[str, str], Mapping[str, str]],
    param_names: Mapping[str, Sequence[str]],
    hash_length: int,
    no_error: str,
) -> str:
    """Benchmarks failing at the newest commit (asv's null results), grouped as the text
    listing groups them: one line per machine, environment, commit and cause; a whole
    result's series folded away, a partial failure's worst few shown, the rest folded."""
    from jaxbench.render.failures import (
        TOP_FAILURES,
        failure_cause,
        failure_counts,
        failure_group_title,
        retired_note,
    )

    def table(failures: Sequence[Failure]) -> str:
        return _failure_rows(
            failures, env_params=env_params, param_names=param_names, hash_length=hash_length
        )

    items: list[str] = []
    for group in groups:
        members = group.failures
        if group.whole_result:
            body = (
                f'<details class="series"><summary>its {len(members)} series</summary>'
                f"{table(members)}</details>"
            )
        else:
            top = members if len(members) <= TOP_FAILURES + 1 else members[:TOP_FAILURES]
            body = table(top)
            if len(top) < len(members):
                body += (
                    f'<details class="more"><summary>... and {len(members) - len(top)} more '
                    f"series</summary>{table(members[len(top) :])}</details>"
                )
        title = failure_group_title(group).replace(
            group.since_commit[:8], group.since_commit[:hash_length]
        )
        cause = failure_cause(group)
        classes = " ".join(
            name
            for name, on in (
                ("failure-group", True),
                ("newly", group.newly),
                ("whole", group.whole_result),
                ("retired", group.retired),
            )
            if on
        )
        items.append(
            f'<li class="{classes}" data-commit="{esc(group.since_commit)}">'
            f'<span class="what">{esc(title)}</span> {esc(_date(group.date))}: '
            f"{len(members)} of {group.series_measured} series, {esc(group.machine)} / "
            f'<span class="env">{esc(group.env_name)}</span>'
            + (' <span class="flag retired">retired</span>' if group.retired else "")
            + (f': <span class="cause">{esc(cause)}</span>' if cause else "")
            + f"{body}</li>"
        )
    total, newly, always, retired = failure_counts(groups)
    if items:
        body = f'<ol class="failing">{"".join(items)}</ol>'
        if retired:
            body += f'<p class="retired-note">{esc(retired_note(groups))}</p>'
        if no_error:
            body += f'<p class="no-error-text">{esc(no_error)}</p>'
    else:
        body = '<p class="none">None: every benchmark has a value at the newest commit.</p>'
    on_retired = f"; {retired} on retired environments, no longer measured" if retired else ""
    return (
        f'<section id="failing"><h2>Failing at the newest commit <span class="count">{total}'
        f'</span></h2><p class="explain">asv recorded no value for these at the newest '
        f"commit of their machine and environment ({newly} newly failing: they had a value "
        f"before; {always} never had one{on_retired}), one line per machine, environment, "
        "commit and cause. No regression can be seen in a figure that is not measured.</p>"
        f"{body}</section>"
    )


def render_regressions_page(
    regressions: Sequence[Regression],
    summaries: Sequence[EnvSummary],
    *,
    env_params: Mapping[tuple[str, str], Mapping[str, str]],
    param_names: Mapping[str, Sequence[str]],
    project: str = "project",
    hash_length: int = 8,
    warnings: Sequence[str] = (),
    events: Sequence[Event] | None = None,
    machine_changes: Sequence[MachineChange] = (),
    unconfirmed: Sequence[Regression] = (),
    unchecked: Sequence[UncheckedWorkload] = (),
    failing: Sequence[FailureGroup] = (),
    no_error: str = "",
    bisect: Callable[[Event], str | None] | None = None,
) -> str:
    """The regressions page (``jaxbench/regressions.html``) as HTML text.

    ``bisect``: an event's ``jaxbench bisect`` command, shown in it where its
    range holds several commits (:func:`jaxbench.jobs.first_parent.bisect_hint`).

    ``failing``: the benchmarks failing at the newest commit
    (:func:`jaxbench.analyse.failures.failing_groups`), listed first;
    ``no_error`` says why some have no error text
    (:func:`jaxbench.render.regressions.no_error_text`).

    ``unconfirmed``: the fitted steps that the values do not confirm
    (:mod:`jaxbench.analyse.evidence`), counted under the lede.
    ``unchecked``: the workloads declared ``Unchecked`` at their newest commit
    (:func:`jaxbench.store.checks.unchecked_workloads`), listed with their reason.

    ``regressions`` as :func:`~jaxbench.analyse.detect.find_regressions` returns them
    (newest first; that order is kept inside each kind's section);
    ``env_params`` maps (machine, env_name) to the result-file ``params`` used
    in graph links; ``param_names`` maps a benchmark to its parameter names;
    ``warnings`` are the results reader's, shown at the bottom.
    """
    by_kind: dict[Kind, list[Regression]] = {}
    for regression in regressions:
        by_kind.setdefault(regression.kind, []).append(regression)
    n_failing = sum(len(g.failures) for g in failing)
    n_newly = sum(f.newly for g in failing for f in g.failures)
    n_retired = sum(f.retired for g in failing for f in g.failures)
    toc = (
        (
            '<li><a href="#failing">Failing benchmarks</a> '
            f'<span class="count">{n_failing}</span></li>'
        )
        + "".join(
            f'<li><a href="#{sec.anchor}">{esc(sec.title)}</a> '
            f'<span class="count">{len(by_kind.get(sec.kind, []))}</span></li>'
            for sec in KIND_SECTIONS
        )
        + (
            f'<li><a href="#unchecked">Unchecked workloads</a> '
            f'<span class="count">{len(unchecked)}</span></li>'
        )
    )
    sections: list[str] = []
    for sec in KIND_SECTIONS:
        found = by_kind.get(sec.kind, [])
        if found:
            rows = "".join(
                _row(r, env_params=env_params, param_names=param_names, hash_length=hash_length)
                for r in found
            )
            body = f'<table class="regressions">{_TABLE_HEAD}<tbody>{rows}</tbody></table>'
        else:
            body = '<p class="none">None flagged.</p>'
        sections.append(
            f'<section id="{sec.anchor}" class="kind kind-{sec.anchor}">'
            f'<h2>{esc(sec.title)} <span class="count">{len(found)}</span></h2>'
            f'<p class="explain">{esc(sec.explanation)}</p>{body}</section>'
        )
    notes = ""
    if warnings:
        items = "".join(f"<li>{esc(w)}</li>" for w in warnings)
        notes = (
            f'<section id="warnings"><h2>Results warnings <span class="count">'
            f"{len(warnings)}</span></h2><ul>{items}</ul></section>"
        )
    title = f"{esc(project)}: regressions by kind"
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'self\'">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<title>{title}</title>\n<link rel="stylesheet" href="jaxbench.css">\n'
        # asv's own icon, so the browser does not ask for a missing /favicon.ico
        '<link rel="icon" href="../swallow.ico">\n'
        "</head>\n<body>\n"
        '<nav><a href="../index.html">← asv history</a> · '
        '<a href="../index.html#/regressions">asv\'s regressions list</a></nav>\n'
        f"<h1>{title}</h1>\n"
        f'<p class="lede">{len(regressions)} regression(s) still present at the newest '
        "commit of their series. Each benchmark links to its asv graph with the step's "
        "commits highlighted."
        + (
            f" {n_failing} benchmark(s) fail at the newest commit ({n_newly} newly failing"
            + (f", {n_retired} on retired environments" if n_retired else "")
            + ")."
            if n_failing
            else ""
        )
        + "</p>\n"
        + (
            f'<p class="unconfirmed">{esc(unconfirmed_summary(unconfirmed))} '
            "asv's own regressions list shows every step of its fit.</p>\n"
            if unconfirmed
            else ""
        )
        + f'<ul class="toc">{toc}</ul>\n'
        + _failing_section(
            failing,
            env_params=env_params,
            param_names=param_names,
            hash_length=hash_length,
            no_error=no_error,
        )
        + "\n"
        + (
            _events_section(events, machine_changes, hash_length, bisect) + "\n"
            if events is not None
            else ""
        )
        + "\n".join(sections)
        + "\n"
        + _unchecked_section(
            unchecked, env_params=env_params, param_names=param_names, hash_length=hash_length
        )
        + f'\n<section id="environments"><h2>History</h2>{_summary_table(summaries)}</section>\n'
        + notes
        + "\n</body>\n</html>\n"
    )
