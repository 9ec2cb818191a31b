"""One graph URL builder: a benchmark's graph in ``asv publish``'s HTML (pure).

asv's ``www/asv.js`` reads the location hash with ``parse_hash_string``
(``decodeURIComponent`` of every key and value) and writes it with
``format_hash_string``: ``#<benchmark>?<key>=<value>&...``. Keys are the
environment's parameters (``machine``, ``python``, requirements ...), then
``p-<param name>`` per benchmark parameter, then ``commits=<a>-<b>`` to
highlight a range. Every key and value here is percent-encoded as
``encodeURIComponent`` would, and also ``'``, ``(`` and ``)`` (which
``decodeURIComponent`` reads the same), so a URL is inert in HTML attributes
and in a markdown link alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote

__all__ = ["encode_component", "graph_url"]


def encode_component(text: str) -> str:
    """Percent-encode all but ``A-Z a-z 0-9 - _ . ! ~ *``."""
    return quote(text, safe="-_.!~*")


def graph_url(
    index: str,
    benchmark: str,
    *,
    env_params: Sequence[tuple[str, str]] = (),
    param_names: Sequence[str] = (),
    params: Sequence[str] = (),
    commits: tuple[str | None, str] | None = None,
    hash_length: int = 8,
) -> str:
    """``{index}#{benchmark}?{env params}&p-{name}={value}&commits={a}-{b}``.

    ``commits`` is (first, last) of the highlighted range; a first of None
    highlights the last alone. ``index`` is used as given (a page path or a
    dashboard URL; strip a trailing ``/`` before if the hash must follow it).
    """
    pairs = list(env_params)
    pairs += [(f"p-{name}", value) for name, value in zip(param_names, params, strict=False)]
    if commits is not None:
        first, last = commits
        span = last[:hash_length]
        if first is not None:
            span = f"{first[:hash_length]}-{span}"
        pairs.append(("commits", span.lower()))
    query = "&".join(f"{encode_component(k)}={encode_component(v)}" for k, v in pairs)
    return f"{index}#{encode_component(benchmark)}?{query}"
