"""The paired history for people: a terminal section and a static HTML page (pure).

:func:`format_paired_text` is the "paired history" section of ``jaxbench
regressions``; :func:`render_paired_page` is ``jaxbench/paired.html`` of the
published site: per series, an inline SVG of the chained relative time
(1.0 = the first paired commit; above 1 is slower) with its interval as a
band, flagged commits drawn as red squares with their paired ratio. No
script, same-origin stylesheet only (``default-src 'self'``); every name is
HTML-escaped. :func:`add_paired_nav` links the page from asv's navigation bar.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping, Sequence

from jaxbench.analyse.paired_history import ChainPoint, PairedSeries, flagged
from jaxbench.render.units import format_ratio

__all__ = [
    "PAIRED_NAV_ID",
    "PAIRED_PAGE",
    "add_paired_nav",
    "format_paired_text",
    "paired_json",
    "render_paired_page",
]

PAIRED_PAGE = "jaxbench/paired.html"
PAIRED_NAV_ID = "nav-li-jaxbench-paired"


def _ratio(x: float) -> str:
    return format_ratio(x) if math.isfinite(x) else "-"


def _interval(point: ChainPoint) -> str:
    step = point.step
    if step is None:
        return "-"
    return f"[{format_ratio(step.low)}, {format_ratio(step.high)}]"


def _p(point: ChainPoint) -> str:
    if point.holm_p is None:
        return "-"
    return f"{point.holm_p:.2g}"


def format_paired_text(series: Sequence[PairedSeries], n_pairs: int) -> str:
    """The "paired history" section: flagged commits, worst first."""
    found = flagged(series)
    head = f"Paired history ({n_pairs} commit pair(s) timed side by side, {len(series)} series):"
    if not found:
        return f"{head} no commit flagged.\n"
    rows = [
        ("benchmark", "commit", "paired ratio", "interval", "p (Holm)", "rounds", "environment")
    ]
    for s, point in found:
        assert point.step is not None
        rows.append(
            (
                s.name,
                point.commit[:8],
                _ratio(point.step.ratio),
                _interval(point),
                _p(point),
                str(point.step.rounds),
                s.env_name,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    noun = "commit" if len(found) == 1 else "commits"
    return (
        f"{head} {len(found)} {noun} flagged (each at the commit whose own pair says regression):\n"
        + "\n".join(lines)
        + "\n"
    )


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def paired_json(series: Sequence[PairedSeries], n_pairs: int) -> dict[str, object]:
    """The flagged commits as JSON data (``regressions --format json``'s ``paired_history``)."""
    flagged_rows = []
    for s, point in flagged(series):
        assert point.step is not None
        flagged_rows.append(
            {
                "benchmark": s.benchmark,
                "params": list(s.params),
                "machine": s.machine,
                "env_name": s.env_name,
                "commit": point.commit,
                "ratio": _finite(point.step.ratio),
                "low": _finite(point.step.low),
                "high": _finite(point.step.high),
                "p_value": _finite(point.holm_p),
                "raw_p_value": _finite(point.step.p_value),
                "rounds": point.step.rounds,
            }
        )
    return {"pairs": n_pairs, "series": len(series), "flagged": flagged_rows}


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


_W, _H, _PAD = 640, 180, 36


def _svg(s: PairedSeries, commit_index: Mapping[str, int], hash_length: int) -> str:
    points = s.points
    xs = [commit_index.get(p.commit, i) for i, p in enumerate(points)]
    finite = [v for p in points for v in (p.low, p.value, p.high) if math.isfinite(v) and v > 0]
    lo, hi = min([*finite, 1.0]), max([*finite, 1.0])
    lo, hi = math.log(lo) - 0.02, math.log(hi) + 0.02
    x_lo, x_hi = min(xs), max(xs)

    def x(i: int) -> float:
        return _PAD + (i - x_lo) * (_W - 2 * _PAD) / max(1, x_hi - x_lo)

    def y(v: float) -> float:
        v = min(max(v, math.exp(lo)), math.exp(hi)) if math.isfinite(v) else math.exp(hi)
        return _H - _PAD + (math.log(v) - lo) * -(_H - 2 * _PAD) / (hi - lo)

    # one line and band per segment: a segment starts at a point without a step
    segments: list[list[tuple[int, ChainPoint]]] = []
    for i, p in zip(xs, points, strict=True):
        if p.step is None or not segments:
            segments.append([])
        segments[-1].append((i, p))
    drawn = []
    for seg in segments:
        line = " ".join(f"{x(i):.1f},{y(p.value):.1f}" for i, p in seg)
        band = " ".join(f"{x(i):.1f},{y(p.high):.1f}" for i, p in seg)
        band += " " + " ".join(f"{x(i):.1f},{y(p.low):.1f}" for i, p in reversed(seg))
        drawn.append(
            f'<polygon class="band" points="{band}"/><polyline class="series" points="{line}"/>'
        )
    marks = []
    for i, p in zip(xs, points, strict=True):
        label = f"{p.commit[:hash_length]}: {_ratio(p.value)} of the first commit"
        if p.step is not None:
            label += f"; paired step {_ratio(p.step.ratio)} {_interval(p)}, p {_p(p)}"
        if p.flagged:
            marks.append(
                f'<rect class="flagged" data-commit="{_esc(p.commit)}" x="{x(i) - 6:.1f}" '
                f'y="{y(p.value) - 6:.1f}" width="12" height="12"><title>{_esc(label)} '
                "(flagged)</title></rect>"
                f'<text class="flag-label" x="{x(i) + 8:.1f}" y="{y(p.value) - 8:.1f}">'
                f"{_esc(p.commit[:hash_length])}</text>"
            )
        else:
            marks.append(
                f'<circle class="point" data-commit="{_esc(p.commit)}" cx="{x(i):.1f}" '
                f'cy="{y(p.value):.1f}" r="3"><title>{_esc(label)}</title></circle>'
            )
    one = y(1.0)
    return (
        f'<svg class="paired-graph" viewBox="0 0 {_W} {_H}" width="{_W}" height="{_H}" '
        f'role="img" aria-label="chained paired ratio of {_esc(s.name)}">'
        f'<line class="unity" x1="{_PAD}" x2="{_W - _PAD}" y1="{one:.1f}" y2="{one:.1f}"/>'
        f'<text class="axis" x="2" y="{one + 4:.1f}">1.00</text>'
        f'<text class="axis" x="2" y="{_PAD - 20}">{_ratio(math.exp(hi))}</text>'
        f'<text class="axis" x="2" y="{_H - 4}">{_ratio(math.exp(lo))}</text>'
        + "".join(drawn)
        + "".join(marks)
        + "</svg>"
    )


def render_paired_page(
    series: Sequence[PairedSeries],
    *,
    commit_order: Sequence[str],
    n_pairs: int,
    project: str = "project",
    hash_length: int = 8,
) -> str:
    """``jaxbench/paired.html``: one graph per series, flagged series first."""
    index = {c: i for i, c in enumerate(commit_order)}
    ordered = sorted(series, key=lambda s: (not s.flagged, s.env_name, s.name))
    found = flagged(series)
    rows = "".join(
        f"<tr><td>{_esc(s.name)}</td><td><code>{_esc(p.commit[:hash_length])}</code></td>"
        f"<td>{_ratio(p.step.ratio if p.step else math.nan)}</td><td>{_esc(_interval(p))}</td>"
        f"<td>{_esc(_p(p))}</td><td>{_esc(s.env_name)}</td></tr>"
        for s, p in found
    )
    table = (
        '<table class="regressions"><thead><tr><th>benchmark</th><th>commit</th>'
        "<th>paired ratio</th><th>interval</th><th>p</th><th>environment</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
        if found
        else '<p class="none">No commit flagged.</p>'
    )
    graphs = "".join(
        f'<section class="paired-series" data-benchmark="{_esc(s.name)}" '
        f'data-env="{_esc(s.env_name)}"><h3>{_esc(s.name)} <small>{_esc(s.env_name)} · '
        f"{_esc(s.machine)}</small></h3>{_svg(s, index, hash_length)}</section>"
        for s in ordered
    )
    title = f"{_esc(project)}: paired history"
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'self\'">\n'
        f'<title>{title}</title>\n<link rel="stylesheet" href="jaxbench.css">\n'
        '<link rel="icon" href="../swallow.ico">\n</head>\n<body>\n'
        '<nav><a href="../index.html">← asv history</a> · '
        '<a href="regressions.html">regressions by kind</a></nav>\n'
        f"<h1>{title}</h1>\n"
        f'<p class="lede">{n_pairs} commit pair(s), each commit timed side by side with the '
        "one before it (jaxbench pair-history). Each graph chains the paired ratios: the "
        "first commit is 1.00, above is slower; the band is the interval. A red square is a "
        "commit whose own pair says regression (the gate and alpha of compare --paired). "
        "asv's graphs keep the unpaired values, for absolute numbers.</p>\n"
        f'<section id="flagged"><h2>Flagged commits <span class="count">{len(found)}</span>'
        f"</h2>{table}</section>\n"
        f'<section id="series"><h2>Series</h2>{graphs}</section>\n</body>\n</html>\n'
    )


_OUR_NAV = re.compile(r'<li id="nav-li-jaxbench-regressions"[^>]*>.*?</li>', re.DOTALL)


def add_paired_nav(index_html: str) -> str:
    """asv's (already localized) index with a link to the paired page after ours."""
    anchor = _OUR_NAV.search(index_html)
    if anchor is None:
        return index_html
    nav = f'\n\t<li id="{PAIRED_NAV_ID}"><a href="{PAIRED_PAGE}">Paired history (jaxbench)</a></li>'
    return index_html[: anchor.end()] + nav + index_html[anchor.end() :]
