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

import math
from collections.abc import Mapping, Sequence

from jaxbench.analyse.paired_history import ChainPoint, PairedSeries, flagged, gaps
from jaxbench.render.html import add_nav_link, esc, side_page_head
from jaxbench.render.units import format_ratio
from jaxbench.store.paired import PairedRun

__all__ = [
    "PAIRED_NAV_ID",
    "PAIRED_PAGE",
    "add_paired_nav",
    "format_paired_text",
    "gap_rows",
    "pair_history_summary",
    "pair_line",
    "paired_json",
    "render_paired_page",
    "untimed_lines",
]

#: Pairs with items not timed shown in the listing (newest first); the JSON has all.
GAP_ROWS = 5
#: Names shown per cause in a pair's lines.
NAMES_SHOWN = 3

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


def _range(base: str, head: str, length: int = 8) -> str:
    """A pair's commits, ``base..head``, each hash cut to ``length``."""
    return f"{base[:length]}..{head[:length]}"


def _pair(run: PairedRun) -> str:
    return _range(run.base_commit, run.head_commit)


def _timed(run: PairedRun) -> str:
    """``timed nothing``, ``8 of 10 timed`` or ``10 timed``."""
    if run.timed_nothing:
        return "timed nothing"
    done = len(run.estimates)
    return f"{done} timed" if done == run.items else f"{done} of {run.items} timed"


def pair_line(run: PairedRun, path: object, *, rounds: int, second_look: int) -> str:
    """``jaxbench pair-history``'s line for one pair (it ends with the file written)."""
    from jaxbench.analyse.paired_history import flagged_in_pair

    head = f"jaxbench pair-history: {_pair(run)} [{run.env_name}]: "
    if run.error is not None:
        return f"{head}timed nothing: {run.error}; wrote {path}"
    found = flagged_in_pair(run)
    looks = f" (up to +{second_look} for {run.looked_again})" if run.first_look else ""
    done = len(run.estimates)
    timed = f"{done} item(s)" if done == run.items else f"{done} of {run.items} item(s)"
    return (
        f"{head}{timed} timed, {rounds} rounds x {run.per_round}{looks} "
        f"in {run.took:.1f} s (timed calls {run.timed_seconds:.1f} s, both sides); "
        f"{len(found)} regression(s) (Holm over the pair's {done} series); wrote {path}"
    )


def pair_history_summary(measured: Sequence[PairedRun], skipped: int) -> str:
    """``jaxbench pair-history``'s last line: pairs measured, and those that timed nothing."""
    text = f"jaxbench pair-history: {len(measured)} pair(s) measured"
    if skipped:
        text += f", {skipped} on file skipped"
    nothing = [g for g in gaps(measured) if g.run.timed_nothing]
    if not nothing:
        return text
    named = "; ".join(f"{_pair(g.run)} [{g.run.env_name}]: {g.cause}" for g in nothing[:2])
    more = f"; and {len(nothing) - 2} more" if len(nothing) > 2 else ""
    return f"{text}; {len(nothing)} timed nothing: {named}{more}"


def untimed_lines(run: PairedRun) -> list[str]:
    """The pair's items not timed, one line per cause: how many, the cause, a few names."""
    by_cause: dict[tuple[bool, str], list[str]] = {}
    for u in run.untimed:
        name = u.benchmark + (f"({', '.join(u.params)})" if u.params else "")
        by_cause.setdefault((u.skipped, u.cause), []).append(name)
    lines = []
    for (skipped, cause), names in sorted(by_cause.items(), key=lambda kv: (kv[0][0], -len(kv[1]))):
        shown = ", ".join(names[:NAMES_SHOWN])
        more = f" and {len(names) - NAMES_SHOWN} more" if len(names) > NAMES_SHOWN else ""
        what = "skipped by asv" if skipped else "not timed"
        lines.append(f"{len(names)} {what}: {cause} ({shown}{more})")
    return lines


def gap_rows(runs: Sequence[PairedRun], limit: int = GAP_ROWS) -> list[tuple[str, ...]]:
    """Rows of the pairs that did not time every item, the worst and newest first:
    (what was timed, commits, environment, the most common cause)."""
    rows: list[tuple[str, ...]] = []
    for gap in gaps(runs)[: limit or None]:
        rows.append((_timed(gap.run), _pair(gap.run), gap.run.env_name, gap.cause))
    return rows


def _aligned(rows: Sequence[Sequence[str]], indent: str = "") -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        indent + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
        for r in rows
    ]


def format_paired_text(series: Sequence[PairedSeries], runs: Sequence[PairedRun]) -> str:
    """The "paired history" section: pairs that did not time everything, flagged commits."""
    found = flagged(series)
    missing = gaps(runs)
    nothing = sum(1 for g in missing if g.run.timed_nothing)
    head = f"Paired history ({len(runs)} commit pair(s) timed side by side, {len(series)} series):"
    if nothing == len(runs):
        verdict = f"no pair timed anything ({nothing} of {len(runs)} timed nothing)"
    elif not found:
        verdict = "no commit flagged"
    else:
        noun = "commit" if len(found) == 1 else "commits"
        verdict = (
            f"{len(found)} {noun} flagged (each the head of a pair, base..head, "
            "whose own test says regression)"
        )
    text = f"{head} {verdict}"
    if missing:
        parts = [f"{nothing} pair(s) timed nothing"] if nothing else []
        if len(missing) - nothing:
            parts.append(f"{len(missing) - nothing} timed part of their items")
        rows = gap_rows(runs)
        text += f"; {', '.join(parts)}:\n" + "\n".join(_aligned(rows, "  "))
        if len(missing) > len(rows):
            text += (
                f"\n  ... and {len(missing) - len(rows)} more pair(s) "
                "(jaxbench regressions --format json lists them)"
            )
    if not found:
        return text + ("." if not missing else "") + "\n"
    rows = [("benchmark", "pair", "paired ratio", "interval", "p (Holm)", "rounds", "environment")]
    for s, point in found:
        assert point.step is not None
        rows.append(
            (
                s.name,
                _range(point.base_commit, point.commit),
                _ratio(point.step.ratio),
                _interval(point),
                _p(point),
                str(point.step.rounds),
                s.env_name,
            )
        )
    return text + (":" if not missing else "\nFlagged:") + "\n" + "\n".join(_aligned(rows)) + "\n"


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def paired_json(series: Sequence[PairedSeries], runs: Sequence[PairedRun]) -> dict[str, object]:
    """The flagged commits, and the pairs that did not time every item, as JSON data
    (``regressions --format json``'s ``paired_history``)."""
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
                "base_commit": point.base_commit,
                "ratio": _finite(point.step.ratio),
                "low": _finite(point.step.low),
                "high": _finite(point.step.high),
                "p_value": _finite(point.holm_p),
                "raw_p_value": _finite(point.step.p_value),
                "rounds": point.step.rounds,
            }
        )
    not_timed = [
        {
            "base_commit": g.run.base_commit,
            "head_commit": g.run.head_commit,
            "machine": g.run.machine,
            "env_name": g.run.env_name,
            "items": g.run.items,
            "timed": len(g.run.estimates),
            "timed_nothing": g.run.timed_nothing,
            "error": g.run.error,
            "untimed": [
                {"benchmark": u.benchmark, "params": list(u.params), "cause": u.cause,
                 "skipped": u.skipped}
                for u in g.run.untimed
            ],
        }
        for g in gaps(runs)
    ]  # fmt: skip
    return {
        "pairs": len(runs),
        "series": len(series),
        "flagged": flagged_rows,
        "not_timed": not_timed,
    }


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
                f'<rect class="flagged" data-commit="{esc(p.commit)}" x="{x(i) - 6:.1f}" '
                f'y="{y(p.value) - 6:.1f}" width="12" height="12"><title>{esc(label)} '
                "(flagged)</title></rect>"
                f'<text class="flag-label" x="{x(i) + 8:.1f}" y="{y(p.value) - 8:.1f}">'
                f"{esc(p.commit[:hash_length])}</text>"
            )
        else:
            marks.append(
                f'<circle class="point" data-commit="{esc(p.commit)}" cx="{x(i):.1f}" '
                f'cy="{y(p.value):.1f}" r="3"><title>{esc(label)}</title></circle>'
            )
    one = y(1.0)
    return (
        f'<svg class="paired-graph" viewBox="0 0 {_W} {_H}" width="{_W}" height="{_H}" '
        f'role="img" aria-label="chained paired ratio of {esc(s.name)}">'
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
    runs: Sequence[PairedRun],
    project: str = "project",
    hash_length: int = 8,
) -> str:
    """``jaxbench/paired.html``: the pairs that did not time every item, then one graph
    per series, flagged series first."""
    n_pairs = len(runs)
    index = {c: i for i, c in enumerate(commit_order)}
    ordered = sorted(series, key=lambda s: (not s.flagged, s.env_name, s.name))
    found = flagged(series)
    rows = "".join(
        f"<tr><td>{esc(s.name)}</td>"
        f"<td><code>{esc(_range(p.base_commit, p.commit, hash_length))}</code></td>"
        f"<td>{_ratio(p.step.ratio if p.step else math.nan)}</td><td>{esc(_interval(p))}</td>"
        f"<td>{esc(_p(p))}</td><td>{esc(s.env_name)}</td></tr>"
        for s, p in found
    )
    table = (
        '<table class="regressions"><thead><tr><th>benchmark</th><th>pair</th>'
        "<th>paired ratio</th><th>interval</th><th>p</th><th>environment</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
        if found
        else '<p class="none">No pair timed anything: no commit could be flagged.</p>'
        if runs and all(r.timed_nothing for r in runs)
        else '<p class="none">No commit flagged.</p>'
    )
    missing = gaps(runs)
    gap_html = "".join(
        f'<tr class="{"nothing" if g.run.timed_nothing else "partial"}">'
        f"<td>{esc(_timed(g.run))}</td><td><code>{esc(g.run.base_commit[:hash_length])}..."
        f"{esc(g.run.head_commit[:hash_length])}</code></td><td>{esc(g.run.env_name)}</td>"
        f"<td>{esc(g.cause)}</td></tr>"
        for g in missing
    )
    not_timed = (
        f'<section id="not-timed"><h2>Not timed <span class="count">{len(missing)}</span></h2>'
        "<p>These pairs could not time every item; a pair that timed nothing says nothing "
        "about its commit.</p>"
        '<table class="regressions"><thead><tr><th>timed</th><th>pair</th><th>environment</th>'
        f"<th>cause</th></tr></thead><tbody>{gap_html}</tbody></table></section>\n"
        if missing
        else ""
    )
    graphs = "".join(
        f'<section class="paired-series" data-benchmark="{esc(s.name)}" '
        f'data-env="{esc(s.env_name)}"><h3>{esc(s.name)} <small>{esc(s.env_name)} · '
        f"{esc(s.machine)}</small></h3>{_svg(s, index, hash_length)}</section>"
        for s in ordered
    )
    title = f"{esc(project)}: paired history"
    return (
        side_page_head(title)
        + f'<p class="lede">{n_pairs} commit pair(s), each commit timed side by side with the '
        "one before it (jaxbench pair-history). Each graph chains the paired ratios: the "
        "first commit is 1.00, above is slower; the band is the interval. A red square is a "
        "commit whose own pair says regression (the gate and alpha of compare --paired). "
        "asv's graphs keep the unpaired values, for absolute numbers.</p>\n"
        + not_timed
        + f'<section id="flagged"><h2>Flagged commits <span class="count">{len(found)}</span>'
        f"</h2>{table}</section>\n"
        f'<section id="series"><h2>Series</h2>{graphs}</section>\n</body>\n</html>\n'
    )


def add_paired_nav(index_html: str) -> str:
    """asv's (already localized) index with a link to the paired page after ours."""
    return add_nav_link(index_html, PAIRED_NAV_ID, PAIRED_PAGE, "Paired history (jaxbench)")
