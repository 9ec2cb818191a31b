"""JSON with ``//`` line comments, as asv reads ``asv.conf.json``.

asv itself uses json5 for this; json5 is not installed in the benchmark
environments where :mod:`jaxbench.store.hlo_store` reads the file, so this small
standard-library reader serves both halves.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["loads", "strip_comments"]


def strip_comments(text: str) -> str:
    """asv.conf.json allows ``//`` comments; drop them (strings respected)."""
    out: list[str] = []
    in_string = False
    i = 0
    while i < len(text):
        char = text[i]
        if in_string:
            out.append(char)
            if char == "\\" and i + 1 < len(text):
                out.append(text[i + 1])
                i += 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
            out.append(char)
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        else:
            out.append(char)
        i += 1
    return "".join(out)


def loads(text: str) -> Any:
    """``json.loads`` of ``text`` without its ``//`` comments; ValueError if invalid."""
    return json.loads(strip_comments(text))
