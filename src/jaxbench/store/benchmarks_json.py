"""asv's ``benchmarks.json``: what each benchmark is, read once, one way.

``asv run`` writes ``results/benchmarks.json`` (format 2): one entry per
benchmark with its ``type``, ``unit``, ``param_names``, ``params``,
``repeat``, ``version``... Units, graph-link parameter names and round sizes
all come from this one reader. A missing or damaged file is a
:class:`ResultsError` naming the file and the fix (:func:`read_benchmarks_json`).
The analysing commands still read the results without it, as
``docs/reliability.md`` says: :func:`read_benchmarks_json_or_warn` gives an
empty :class:`BenchmarksJson` and the warning they show (track units unknown, graph
links without parameters, default round sizes).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from jaxbench.errors import ResultsError

__all__ = [
    "BENCHMARKS_FORMAT",
    "BenchmarkInfo",
    "BenchmarksJson",
    "read_benchmarks_json",
    "read_benchmarks_json_or_warn",
    "unit_of",
]

#: The ``version`` of benchmarks.json that asv >= 0.5 writes.
BENCHMARKS_FORMAT = 2
_FIX = "regenerate it with 'asv run --bench just-discover' (or any 'asv run')"


@dataclass(frozen=True)
class BenchmarkInfo:
    """One benchmark's entry, as far as jaxbench uses it."""

    name: str
    type: str
    unit: str
    param_names: tuple[str, ...]
    #: samples per asv round when ``repeat`` is a fixed count, else None
    #: (0: asv decides; a (min, max, time) triple): the rounds cannot be split back.
    round_size: int | None
    has_repeat: bool
    #: each parameter's values, as asv's reprs (``()`` for an unparametrised one)
    params: tuple[tuple[str, ...], ...] = ()

    def combinations(self) -> list[tuple[str, ...]]:
        """Every parameter set, in asv's order (``[()]`` for an unparametrised one)."""
        return [tuple(c) for c in itertools.product(*self.params)] if self.params else [()]


@dataclass(frozen=True)
class BenchmarksJson:
    """Every benchmark of a benchmarks.json, in name order (empty: no file)."""

    benchmarks: tuple[BenchmarkInfo, ...] = ()

    def units(self) -> dict[str, str]:
        """Benchmark -> unit (``"seconds"``, ``"bytes"``, a track's unit; ``""`` if none)."""
        return {b.name: b.unit for b in self.benchmarks}

    def param_names(self) -> dict[str, tuple[str, ...]]:
        """Benchmark -> its parameter names (for asv's graph links)."""
        return {b.name: b.param_names for b in self.benchmarks}

    def round_sizes(self) -> tuple[tuple[str, int | None], ...]:
        """Time benchmark -> samples per asv round (its ``repeat``), None when not fixed.

        asv appends ``repeat`` samples per round when ``repeat`` is a fixed
        count. A time benchmark without ``repeat`` is left out (it gets the
        default round size).
        """
        return tuple(
            (b.name, b.round_size) for b in self.benchmarks if b.type == "time" and b.has_repeat
        )


#: The unit asv gives each benchmark type it names by prefix (asv.benchmarks'
#: ``unit`` class attributes); a track's unit is its own, so it has none here.
_ASV_TYPE_UNITS = (
    ("time_", "seconds"),
    ("timeraw_", "seconds"),
    ("peakmem_", "bytes"),
    ("mem_", "bytes"),
)


def unit_of(units: Mapping[str, str], benchmark: str) -> str:
    """The unit of ``benchmark``: its benchmarks.json entry, else asv's unit for its type.

    Results keep benchmarks that a later benchmarks.json no longer lists
    (renamed or removed); asv names the type by the method's prefix and a
    time or memory benchmark's unit follows from it. ``""`` when neither says.
    """
    unit = units.get(benchmark)
    if unit:
        return unit
    method = benchmark.rsplit(".", 1)[-1]
    return next((u for prefix, u in _ASV_TYPE_UNITS if method.startswith(prefix)), "")


def _info(name: str, entry: object) -> BenchmarkInfo:
    data = entry if isinstance(entry, dict) else {}
    unit = data.get("unit")
    names = data.get("param_names")
    repeat = data.get("repeat")
    fixed = isinstance(repeat, int) and not isinstance(repeat, bool) and repeat > 0
    kind = data.get("type")
    params = data.get("params")
    values = (
        tuple(tuple(str(v) for v in p) if isinstance(p, list) else () for p in params)
        if isinstance(params, list)
        else ()
    )
    return BenchmarkInfo(
        name=name,
        type=kind if isinstance(kind, str) else "",
        unit=unit if isinstance(unit, str) else "",
        param_names=tuple(str(n) for n in names) if isinstance(names, list) else (),
        round_size=repeat if fixed else None,
        has_repeat="repeat" in data,
        params=values,
    )


def read_benchmarks_json(path: Path) -> BenchmarksJson:
    """Read asv's benchmarks.json at ``path``.

    Raises :class:`ResultsError` naming the file and the fix when it is
    missing, unreadable, not JSON, not an object or not format
    :data:`BENCHMARKS_FORMAT`.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ResultsError(f"{path}: missing; {_FIX}") from None
    except (OSError, UnicodeDecodeError, ValueError):
        raise ResultsError(f"{path}: not valid JSON (truncated?); {_FIX}") from None
    if not isinstance(data, dict):
        raise ResultsError(f"{path}: not an asv benchmarks.json; {_FIX}")
    version = data.get("version")
    if version != BENCHMARKS_FORMAT:
        raise ResultsError(
            f"{path}: benchmarks.json format {version!r}, expected {BENCHMARKS_FORMAT}; {_FIX}"
        )
    return BenchmarksJson(
        tuple(_info(name, entry) for name, entry in sorted(data.items()) if name != "version")
    )


def read_benchmarks_json_or_warn(path: Path) -> tuple[BenchmarksJson, str | None]:
    """:func:`read_benchmarks_json`, or an empty one and the warning to show instead."""
    try:
        return read_benchmarks_json(path), None
    except ResultsError as exc:
        return BenchmarksJson(), f"{exc} (track units unknown until then)"
