"""Result files parsed with orjson, asv's NaN kept apart from ``null``.

A cold scan of a large history spends most of its reading time in
``json.loads`` (``bench/bench_scan_parts.py``); orjson parses the same files
several times faster. asv writes a skipped benchmark as the bare token
``NaN`` (Python's ``json``; not JSON), which orjson rejects, and ``null`` for a
failed one, so the two must not be merged. :func:`loads` replaces each ``NaN``
token by :data:`NAN_SENTINEL` (``-DBL_MAX``, a number no timing holds) and
the reader maps it back (:func:`restore_nan`). It is exact or it does not
happen: when a ``NaN`` might sit inside a string (an escaped quote anywhere,
or an odd number of quotes before it), when the file already holds the
sentinel's text, or when orjson still refuses it (``Infinity``), the file is
parsed with ``json.loads`` instead.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

__all__ = ["NAN_SENTINEL", "loads", "restore_nan"]

#: What a ``NaN`` token reads as after :func:`loads` (restored by :func:`restore_nan`).
NAN_SENTINEL = -1.7976931348623157e308
_SENTINEL_TEXT = b"-1.7976931348623157e+308"
_NAN = b"NaN"


def _nan_tokens_outside_strings(raw: bytes) -> bool:
    """True when every ``NaN`` in ``raw`` lies outside a JSON string."""
    if b'\\"' in raw:
        return False
    quotes = 0
    start = 0
    pos = raw.find(_NAN)
    while pos >= 0:
        quotes += raw.count(b'"', start, pos)
        if quotes % 2:
            return False
        start = pos
        pos = raw.find(_NAN, pos + len(_NAN))
    return True


def loads(raw: bytes) -> Any:
    """The JSON document of ``raw``; ``NaN`` reads as :data:`NAN_SENTINEL`.

    Raises ValueError when ``raw`` is not JSON (as ``json.loads``).
    """
    # here, not at module level: the measuring half (asv's benchmark environments,
    # where jaxbench is installed without its dependencies) imports store modules
    import orjson

    if _NAN not in raw:
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            return json.loads(raw)  # json's own error (or Infinity, which orjson refuses)
    if _SENTINEL_TEXT not in raw and _nan_tokens_outside_strings(raw):
        try:
            return orjson.loads(raw.replace(_NAN, _SENTINEL_TEXT))
        except orjson.JSONDecodeError:
            pass
    return json.loads(raw)


def restore_nan(column: np.ndarray[Any, np.dtype[np.float64]]) -> list[int]:
    """Put NaN back where :func:`loads` read a ``NaN`` token; their indices."""
    marks = np.flatnonzero(column == NAN_SENTINEL)
    column[marks] = np.nan
    return [int(j) for j in marks]
