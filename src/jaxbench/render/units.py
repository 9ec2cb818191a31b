"""Numbers for people: one value formatter and one ratio formatter (pure).

Every page and table of jaxbench (the pull-request comment, ``jaxbench
compare``'s text table, the regressions page and list) shows values through
:func:`format_value`, so a figure reads the same everywhere: seconds scaled to
s/ms/µs/ns, bytes to B/KiB/MiB/GiB (binary, as ``peakmem`` is), whole counts
exactly (a work count that changed by one must not read as unchanged), any
other value with four significant digits and its unit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["format_difference", "format_ratio", "format_spread", "format_value"]

_SECONDS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))
_BINARY = ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"))
_NO_UNIT = ("", "unit", "unitless")
_SCALED = frozenset(name for _, name in (*_SECONDS, *_BINARY)) | {"B"}


def _scale(value: float, unit: str) -> tuple[float, str] | None:
    """``value`` in a readable multiple of ``unit`` (seconds, bytes), or None.

    The multiple is chosen on the value as shown (three significant digits),
    so 999.96 µs reads ``1.00 ms``, never ``1000 µs``.
    """
    if unit == "seconds":
        for scale, suffix in _SECONDS:
            if _shown_at_least_one(value / scale) or suffix == "ns":
                return value / scale, suffix
    if unit == "bytes":
        for scale, suffix in _BINARY:
            if _shown_at_least_one(value / scale):
                return value / scale, suffix
        return value, "B"
    return None


def _shown_at_least_one(number: float) -> bool:
    return abs(float(_digits(number))) >= 1.0


def format_value(value: float | None, unit: str) -> str:
    """``37.0 µs``, ``14.0 KiB``, ``1023 KiB``, ``512 B``, ``98304 flops``, ``1.5``.

    Seconds and bytes keep three significant digits with their trailing
    zeros; None reads ``failed``; ``track_answer_unchecked``'s 1 and 0 (unit
    ``unchecked``) read ``unchecked``, ``checked``.
    """
    if value is None:
        return "failed"
    if unit == "unchecked" and value in (0.0, 1.0):
        return "unchecked" if value else "checked"
    if not math.isfinite(value):
        return f"{value} {unit}".strip() if unit not in _NO_UNIT else str(value)
    scaled = _scale(value, unit)
    if scaled is not None:
        number, suffix = scaled
        return f"{number:.0f} B" if suffix == "B" else f"{_digits(number)} {suffix}"
    text = f"{int(value)}" if value == int(value) and abs(value) < 1e15 else f"{value:.4g}"
    return text if unit in _NO_UNIT else f"{text} {unit}"


def _digits(x: float, sig: int = 3) -> str:
    """``x`` with ``sig`` significant digits, trailing zeros kept (``37.0``, ``0.400``).

    A number of ``sig`` digits or more before the point is shown whole
    (``1023``, ``1000``), never in exponent notation.
    """
    text = f"{x:#.{sig}g}"
    if "e" in text and abs(x) >= 1:
        return f"{x:.0f}"
    return text.rstrip(".") if "e" not in text else text


def format_spread(value: float | None, samples: Sequence[float], unit: str) -> str:
    """``37.0±0.4µs`` as ``asv compare`` shows it: the value and half its interquartile range.

    Without two finite samples, the value alone (:func:`format_value`).
    """
    finite = sorted(s for s in samples if math.isfinite(s))
    if value is None or not math.isfinite(value) or len(finite) < 2:
        return format_value(value, unit)
    from statistics import quantiles

    q1, _, q3 = quantiles(finite, n=4, method="inclusive")
    err = (q3 - q1) / 2
    scaled = _scale(value, unit)
    number, suffix = scaled if scaled is not None else (value, "" if unit in _NO_UNIT else unit)
    factor = number / value if value else 1.0
    shown = _digits(number)
    decimals = len(shown.split(".")[1]) if "." in shown and "e" not in shown else 0
    err_text = f"{err * factor:.{max(decimals, 0)}f}" if err * factor >= 10**-decimals else "0"
    if err and err_text.strip("0.") == "":  # below the value's last digit: one digit of it
        err_text = f"{err * factor:.1g}"
    space = " " if suffix and suffix not in _SCALED else ""
    return f"{shown}±{err_text}{space}{suffix}"


def format_ratio(ratio: float | None, *, gate: float | None = None, exact: bool = False) -> str:
    """``1.20x``: two decimals, always; ``""`` with no ratio.

    More digits only where two decimals would hide what decided the verdict:
    an ``exact`` figure (a work count) that changed but reads ``1.00x``, or a
    ratio that reads as its ``gate`` (``1.02x``) while being beyond or within it.
    """
    if ratio is None:
        return ""
    if not math.isfinite(ratio):
        return "inf" if ratio > 0 else "n/a"
    text = f"{ratio:.2f}"
    landmarks = ([1.0] if exact else []) + ([gate, 1 / gate] if gate else [])
    for mark in landmarks:
        if ratio != mark and text == f"{mark:.2f}":
            for decimals in range(3, 10):
                text = f"{ratio:.{decimals}f}"
                if text != f"{mark:.{decimals}f}":
                    break
            break
    return f"{text}x"


def format_difference(base: float, head: float, unit: str) -> str:
    """``+52.0 KiB``, ``-8.00 KiB``, ``same``: head - base with its sign and unit.

    For values whose ratio means nothing (zero, or below the figure's floor),
    where ``0 B -> 52.0 KiB`` would read ``inf`` and ``8.00 KiB -> 0 B`` ``0.00x``.
    """
    diff = head - base
    if diff == 0:
        return "same"
    sign = "-" if diff < 0 else "+"
    return f"{sign}{format_value(abs(diff), unit)}"
