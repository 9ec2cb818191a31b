"""The upgrades page of the published site: each ``jaxbench upgrade`` verdict (pure).

:func:`render_upgrades_page` is ``jaxbench/upgrades.html``: one section per
measured upgrade, newest first, titled as the comment is (``jax 0.9.2 ->
0.10.2 at <commit>``), with its summary and the rows that moved, the worst
first (regressions by ratio, then the rest by kind of verdict); rows that did
not change are counted, not listed. No script, same-origin stylesheet only
(``default-src 'self'``); every name is HTML-escaped.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any

from jaxbench.render.env_names import envs_compared
from jaxbench.render.html import add_nav_link, esc, side_page_head
from jaxbench.render.units import format_ratio, format_value
from jaxbench.store.upgrades import UpgradeRecord

__all__ = ["UPGRADES_NAV_ID", "UPGRADES_PAGE", "add_upgrades_nav", "render_upgrades_page"]

UPGRADES_PAGE = "jaxbench/upgrades.html"
UPGRADES_NAV_ID = "nav-li-jaxbench-upgrades"

#: Verdicts not listed row by row (counted in the section's last line).
_QUIET = frozenset({"unchanged", "not significant"})
#: Order of the listed verdicts: what makes the new version worse first.
_ORDER = ("regression", "changed", "moved, not tested", "inconclusive", "removed", "new")


def _rank(row: Mapping[str, Any]) -> tuple[int, float, str]:
    verdict = str(row.get("verdict", ""))
    order = _ORDER.index(verdict) if verdict in _ORDER else len(_ORDER)
    ratio = row.get("ratio")
    return order, -(ratio if isinstance(ratio, int | float) else 0.0), str(row.get("benchmark"))


def _name(row: Mapping[str, Any]) -> str:
    params = row.get("params") or []
    return (
        f"{row.get('benchmark')}({', '.join(map(str, params))})"
        if params
        else str(row.get("benchmark"))
    )


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _p(row: Mapping[str, Any]) -> str:
    p = _number(row.get("p_family"))
    p = _number(row.get("p_value")) if p is None else p
    return "" if p is None else f"{p:.2g}"


def _section(record: UpgradeRecord, hash_length: int) -> str:
    rows: Sequence[Mapping[str, Any]] = record.compare.get("rows") or []
    listed = sorted((r for r in rows if r.get("verdict") not in _QUIET), key=_rank)
    base, head = envs_compared(record.base_env, record.head_env)
    when = datetime.datetime.fromtimestamp(record.date / 1000, tz=datetime.UTC)
    body = "".join(
        f'<tr class="{"regression" if r.get("verdict") == "regression" else "other"}">'
        f"<td>{esc(_name(r))}</td><td>{esc(r.get('kind'))}</td>"
        f"<td>{esc(format_value(_number(r.get('base')), str(r.get('unit', ''))))}</td>"
        f"<td>{esc(format_value(_number(r.get('head')), str(r.get('unit', ''))))}</td>"
        f"<td>{esc(format_ratio(_number(r.get('ratio'))))}</td>"
        f"<td>{esc(r.get('verdict'))}</td><td>{esc(_p(r))}</td></tr>"
        for r in listed
    )
    table = (
        '<table class="regressions"><thead><tr><th>benchmark</th><th>kind</th>'
        f"<th>{esc(base)}</th><th>{esc(head)}</th><th>ratio</th><th>verdict</th>"
        f"<th>p</th></tr></thead><tbody>{body}</tbody></table>"
        if listed
        else ""
    )
    quiet = len(rows) - len(listed)
    verdict = "worse in the new environment" if record.status else "nothing worse"
    return (
        f'<section class="upgrade" data-commit="{esc(record.commit)}" '
        f'data-status="{record.status}">'
        f"<h2>{esc(record.title)} at <code>{esc(record.commit[:hash_length])}</code></h2>"
        f'<p class="lede">{esc(verdict)}: {esc(record.compare.get("summary", ""))} '
        f"({esc(base)} is the base, {esc(head)} the head; measured side by side on "
        f"{esc(record.machine)}, {when:%Y-%m-%d %H:%M} UTC)</p>"
        f"{table}<p>{quiet} row(s) unchanged or within noise.</p></section>\n"
    )


def render_upgrades_page(
    records: Sequence[UpgradeRecord], *, project: str = "project", hash_length: int = 8
) -> str:
    """``jaxbench/upgrades.html``: one section per record, in the order given (newest
    first from :func:`jaxbench.store.upgrades.load_upgrades`)."""
    title = f"{esc(project)}: upgrades"
    return (
        side_page_head(title)
        + f'<p class="lede">{len(records)} upgrade(s): one commit measured in two environments '
        "side by side (jaxbench upgrade), e.g. the pinned jax against a newer one. Each lists "
        "the rows that moved, the worst first.</p>\n"
        + "".join(_section(r, hash_length) for r in records)
        + "</body>\n</html>\n"
    )


def add_upgrades_nav(index_html: str) -> str:
    """asv's (already localized) index with a link to the upgrades page after ours."""
    return add_nav_link(index_html, UPGRADES_NAV_ID, UPGRADES_PAGE, "Upgrades (jaxbench)")
