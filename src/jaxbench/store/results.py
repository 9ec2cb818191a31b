"""The one reader of asv results directories, without the benchmarked git repository.

An asv results directory looks like::

    results/benchmarks.json                       names, params, units, versions
    results/<machine>/machine.json                one per machine
    results/<machine>/<hash8>-<env_name>.json     one per commit and environment

Result files come in two formats. Format 2 (asv >= 0.5) stores each benchmark
as a positional row following ``result_columns``. Format 1 (asv <= 0.4) stores
``results[name] = {"result": ..., "stats": ..., "params": ...}``; asv 0.6.6's
``Results.load`` refuses it ("Run `asv update`"), and ``asv update`` would
rewrite the files. Here a format-1 file is converted *in memory* with asv's own
converter (``asv.results.Results.update_to_2``, the function ``asv update``
uses) and never rewritten: nothing in a results directory is modified by
reading it. The format-2 rows are then read the way ``Results.load`` reads
them, with every field checked, so that a damaged file gives a one-line
:class:`~jaxbench.errors.ResultsError` (or a warning when it is one bad file
among good ones) rather than a traceback.

A *series* is one line on a graph: one machine, one environment, one
benchmark, one parameter combination and one benchmark version
(:class:`SeriesKey`). Points from different environments or versions never
share a series, so a change of environment or of benchmark code can never look
like a step.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jaxbench.errors import ResultsError
from jaxbench.store.benchmarks_json import (
    BenchmarksJson,
    read_benchmarks_json,
    read_benchmarks_json_or_warn,
    unit_of,
)

__all__ = [
    "FINGERPRINT_KEY",
    "RESULTS_FORMAT",
    "FileScan",
    "History",
    "Point",
    "ResultsWalk",
    "SeriesKey",
    "find_commit",
    "load_history",
    "load_result_file",
    "machine_result_files",
    "read_env_params",
    "read_units",
    "scan_result_file",
]

#: The result-file format this reader understands natively (asv's ``Results.api_version``).
RESULTS_FORMAT = 2
_MACHINE_FORMAT = 1
_SKIP_FILES = frozenset({"machine.json", "benchmarks.json"})
#: The key of a result file's ``params`` (copied by asv from machine.json) that
#: identifies the host; a series is never step-fitted across a change of it.
FINGERPRINT_KEY = "fingerprint"
_RERUN = "delete the file and re-run 'asv run' for that commit"


@dataclass(frozen=True, order=True)
class SeriesKey:
    """One line on a graph: never mixes machines, environments or versions."""

    machine: str
    env_name: str
    benchmark: str
    params: tuple[str, ...]
    version: str | None

    @property
    def entry_name(self) -> str:
        """The benchmark name as asv publish names a graph entry: ``name(p1, p2)``."""
        if not self.params:
            return self.benchmark
        return f"{self.benchmark}({', '.join(self.params)})"


@dataclass(frozen=True)
class Point:
    """One series at one commit.

    ``value`` is None when asv has no number: the benchmark *failed* (asv
    wrote ``null``), or it was *skipped* (asv wrote ``NaN``: its setup raised
    ``NotImplementedError``, or the parameter was not selected; see
    ``asv.results`` "None if benchmark failed or NaN if it was skipped" and
    ``asv_runner.run._run``). ``skipped`` tells the two apart; an infinite
    value counts as failed.
    """

    key: SeriesKey
    commit: str
    date: int
    value: float | None
    samples: tuple[float, ...] = ()
    ci_99: tuple[float, float] | None = None
    q_25_75: tuple[float, float] | None = None
    number: int | None = None
    repeat: int | None = None
    unit: str = ""
    skipped: bool = False
    #: When asv started the benchmark's last round (ms since the epoch, asv's
    #: ``started_at``) and how long all its rounds took (seconds, asv's
    #: ``duration``); None where the file does not say. Every point of one
    #: row shares them (:mod:`jaxbench.analyse.runs` reads them).
    started_at: int | None = None
    duration: float | None = None

    @property
    def failed(self) -> bool:
        """No value and not skipped: asv recorded a failure (or an infinite value)."""
        return self.value is None and not self.skipped


@dataclass(frozen=True)
class History:
    """Every point read from a results directory, and what was wrong with it."""

    points: tuple[Point, ...]
    warnings: tuple[str, ...] = field(default=())
    #: result files holding an infinite value (read as failed; asv publish hangs on them)
    infinite_files: tuple[Path, ...] = field(default=())
    #: the directory's benchmarks.json (empty, with a warning, when it cannot be read)
    benchmarks: BenchmarksJson = field(default=BenchmarksJson())

    def series(self) -> dict[SeriesKey, list[Point]]:
        """Points grouped by series, each list sorted by (date, commit)."""
        grouped: dict[SeriesKey, list[Point]] = {}
        for point in self.points:
            grouped.setdefault(point.key, []).append(point)
        for points in grouped.values():
            points.sort(key=lambda p: (p.date, p.commit))
        return dict(sorted(grouped.items()))

    def machines(self) -> tuple[str, ...]:
        """Machine names, sorted."""
        return tuple(sorted({p.key.machine for p in self.points}))

    def env_names(self) -> tuple[str, ...]:
        """Environment names, sorted."""
        return tuple(sorted({p.key.env_name for p in self.points}))

    def commits(self) -> tuple[str, ...]:
        """Full commit hashes, oldest first (by commit date, then hash)."""
        dates: dict[str, int] = {}
        for p in self.points:
            dates.setdefault(p.commit, p.date)
        return tuple(sorted(dates, key=lambda c: (dates[c], c)))

    def commit_dates(self) -> dict[str, int]:
        """Commit date (ms since epoch) of every commit."""
        return {p.commit: p.date for p in self.points}


# ---------------------------------------------------------------------------
# benchmarks.json and machine.json


def _load_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ResultsError(f"{path}: file not found; check the path") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultsError(f"{path}: cannot read ({exc}); {_RERUN}") from None
    try:
        return json.loads(text)
    except ValueError:
        raise ResultsError(f"{path}: not valid JSON (truncated?); {_RERUN}") from None


def read_units(benchmarks_json: Path) -> dict[str, str]:
    """Benchmark name -> unit (``"seconds"``, ``"bytes"``, a track's unit) from benchmarks.json.

    Raises :class:`ResultsError` naming the file when it cannot be used
    (:func:`jaxbench.store.benchmarks_json.read_benchmarks_json`).
    """
    return read_benchmarks_json(benchmarks_json).units()


def _machine_name(machine_dir: Path) -> str:
    """The machine name recorded in ``machine_dir/machine.json``."""
    path = machine_dir / "machine.json"
    fix = f"run 'asv machine --machine {machine_dir.name}' or restore the file"
    if not path.is_file():
        raise ResultsError(f"{path}: missing, so its result files were skipped; {fix}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        raise ResultsError(f"{path}: not valid JSON (truncated?); {fix}") from None
    if not isinstance(data, dict) or not isinstance(data.get("machine"), str):
        raise ResultsError(f"{path}: no machine name in it; {fix}")
    if data.get("version") != _MACHINE_FORMAT:
        raise ResultsError(
            f"{path}: machine.json format {data.get('version')!r}, expected "
            f"{_MACHINE_FORMAT}; {fix}"
        )
    name: str = data["machine"]
    return name


# ---------------------------------------------------------------------------
# one result file


def _as_float(value: Any) -> float | None:
    """A finite float, or None for a missing, NaN or infinite value."""
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _format2(data: Any, path: Path) -> dict[str, Any]:
    """The file's content as a format-2 dict (format 1 converted in memory)."""
    if not isinstance(data, dict):
        raise ResultsError(f"{path}: not an asv result file (no JSON object); {_RERUN}")
    version = data.get("version")
    if version == 1:
        from asv.results import Results

        try:
            converted: dict[str, Any] = Results.update_to_2(dict(data))
        except Exception as exc:  # asv's converter raises whatever a bad field makes it
            raise ResultsError(
                f"{path}: format-1 result file that cannot be converted ({exc}); {_RERUN}"
            ) from None
        return converted
    if version == RESULTS_FORMAT:
        return data
    if isinstance(version, int | float) and version > RESULTS_FORMAT:
        raise ResultsError(
            f"{path}: result format {version} is newer than this reader understands "
            f"({RESULTS_FORMAT}); upgrade asv and jaxbench"
        )
    raise ResultsError(f"{path}: unknown result format {version!r}; {_RERUN}")


def _column(row: dict[str, Any], name: str, n: int, path: Path, bench: str) -> list[Any]:
    """One per-parameter column of a result row, as a list of length ``n``."""
    value = row.get(name)
    if value is None:
        return [None] * n
    if not isinstance(value, list) or len(value) != n:
        raise ResultsError(f"{path}: {name!r} of {bench} has the wrong length; {_RERUN}")
    return value


def _pair(a: Any, b: Any) -> tuple[float, float] | None:
    fa, fb = _as_float(a), _as_float(b)
    return None if fa is None or fb is None else (fa, fb)


def _int_or_none(value: Any) -> int | None:
    number = _as_float(value)
    return None if number is None else int(number)


def _read_result_file(
    path: Path, units: Mapping[str, str], machine: str | None
) -> tuple[list[Point], list[tuple[str, bool]]]:
    """Points of one result file, and (benchmark, skipped) of each NaN or infinite value."""
    data = _format2(_load_json(path), path)
    try:
        return _points_from_format2(data, path, units, machine)
    except ResultsError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise ResultsError(f"{path}: malformed result file ({exc!r}); {_RERUN}") from None


def _header_of_format2(data: dict[str, Any], path: Path, machine: str | None) -> _Header:
    """commit, env, date, machine, params and columns of a format-2 dict, checked."""
    commit = data["commit_hash"]
    env_name = data["env_name"]
    date = data["date"]
    params = data["params"]
    columns = data["result_columns"]
    results = data["results"]
    if not isinstance(commit, str) or not commit:
        raise ResultsError(f"{path}: no commit_hash; {_RERUN}")
    if not isinstance(env_name, str):
        raise ResultsError(f"{path}: no env_name; {_RERUN}")
    if not _is_number(date) or not math.isfinite(date):
        raise ResultsError(f"{path}: no commit date; {_RERUN}")
    if not isinstance(params, dict) or not isinstance(results, dict):
        raise ResultsError(f"{path}: 'params' or 'results' is not an object; {_RERUN}")
    if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
        raise ResultsError(f"{path}: bad 'result_columns'; {_RERUN}")
    file_machine = params.get("machine")
    if machine is None:
        if not isinstance(file_machine, str):
            raise ResultsError(f"{path}: no machine name in 'params'; {_RERUN}")
        machine = file_machine
    elif file_machine != machine:
        raise ResultsError(
            f"{path}: machine is {file_machine!r}, not {machine!r} as in machine.json; "
            "move the file to the right machine directory"
        )
    fingerprint = params.get(FINGERPRINT_KEY)
    return _Header(
        commit=commit,
        env_name=env_name,
        date=int(date),
        machine=machine,
        fingerprint=str(fingerprint) if fingerprint not in (None, "") else None,
        columns=columns,
        results=results,
    )


@dataclass(frozen=True)
class _Header:
    commit: str
    env_name: str
    date: int
    machine: str
    fingerprint: str | None
    columns: list[str]
    results: dict[str, Any]


def _rows_of_format2(
    header: _Header, path: Path
) -> Iterator[tuple[str, str | None, tuple[tuple[str, ...], ...], dict[str, Any]]]:
    """(benchmark, version, parameter combinations, row by column name) of each result row."""
    columns = header.columns
    for bench, raw_row in header.results.items():
        if not isinstance(raw_row, list):
            raise ResultsError(f"{path}: result row of {bench} is not a list; {_RERUN}")
        row = dict(zip(columns, raw_row, strict=False))
        combos = _combos_of(row.get("params") or [])
        if combos is None:
            raise ResultsError(f"{path}: 'params' of {bench} is malformed; {_RERUN}")
        version = row.get("version")
        if version is not None and not isinstance(version, str):
            raise ResultsError(f"{path}: version of {bench} is not a string; {_RERUN}")
        yield bench, version, combos, row


def _points_from_format2(
    data: dict[str, Any], path: Path, units: Mapping[str, str], machine: str | None
) -> tuple[list[Point], list[tuple[str, bool]]]:
    header = _header_of_format2(data, path, machine)
    commit, env_name, date = header.commit, header.env_name, header.date
    points: list[Point] = []
    non_finite: list[tuple[str, bool]] = []
    for bench, version, combos, row in _rows_of_format2(header, path):
        n = len(combos)
        values = _column(row, "result", n, path, bench)
        samples = _column(row, "samples", n, path, bench)
        ci_a = _column(row, "stats_ci_99_a", n, path, bench)
        ci_b = _column(row, "stats_ci_99_b", n, path, bench)
        q25 = _column(row, "stats_q_25", n, path, bench)
        q75 = _column(row, "stats_q_75", n, path, bench)
        numbers = _column(row, "stats_number", n, path, bench)
        repeats = _column(row, "stats_repeat", n, path, bench)
        started_at = _int_or_none(row.get("started_at"))
        duration = _as_float(row.get("duration"))
        key_base = (header.machine, env_name, bench)
        for j, combo in enumerate(combos):
            raw = values[j]
            if raw is not None and not _is_number(raw):
                raise ResultsError(f"{path}: result of {bench} is not a number; {_RERUN}")
            value = _as_float(raw)
            skipped = raw is not None and math.isnan(raw)
            if raw is not None and value is None:
                non_finite.append((bench, skipped))
            sample_list = samples[j]
            if sample_list is not None and not isinstance(sample_list, list):
                raise ResultsError(f"{path}: samples of {bench} are not a list; {_RERUN}")
            clean_samples = tuple(
                s for s in (_as_float(x) for x in (sample_list or [])) if s is not None
            )
            points.append(
                Point(
                    key=SeriesKey(*key_base, params=combo, version=version),
                    commit=commit,
                    date=date,
                    value=value,
                    samples=clean_samples,
                    ci_99=_pair(ci_a[j], ci_b[j]),
                    q_25_75=_pair(q25[j], q75[j]),
                    number=_int_or_none(numbers[j]),
                    repeat=_int_or_none(repeats[j]),
                    unit=unit_of(units, bench),
                    skipped=skipped,
                    started_at=started_at,
                    duration=duration,
                )
            )
    return points, non_finite


@dataclass(frozen=True)
class FileScan:
    """What the regression scan needs from one result file (no samples, no Point objects).

    ``rows`` holds one entry per benchmark: (benchmark, version, parameter
    combinations). ``values`` and ``weights`` are NumPy arrays with one entry
    per combination of every row, in row order: the value is NaN for a failed
    point, the weight asv's ``2 / |ci_99_b - ci_99_a|`` or NaN where asv's
    ``get_weight`` gives None. ``keep`` is False for skipped points (asv's
    NaN), which the scan leaves out of every series.
    """

    commit: str
    env_name: str
    date: int
    machine: str
    fingerprint: str | None
    rows: tuple[tuple[str, str | None, tuple[tuple[str, ...], ...]], ...]
    values: Any
    weights: Any
    keep: Any
    #: (benchmark, skipped) of each NaN or infinite value, as load_history warns about them
    non_finite: tuple[tuple[str, bool], ...]
    #: failed points (asv's null, or an infinite value)
    failed: int


_NUMBER_TYPES = frozenset({float, int, type(None)})
_COMBOS: dict[Any, tuple[tuple[str, ...], ...]] = {}


def _combos_of(bench_params: Any) -> tuple[tuple[str, ...], ...] | None:
    """itertools.product of a row's parameter lists (None: not lists of strings).

    Remembered by the lists' contents (rows repeat from file to file), so the
    checks run once per distinct parameter lists.
    """
    if not isinstance(bench_params, list) or not all(isinstance(p, list) for p in bench_params):
        return None
    try:
        ident = tuple(map(tuple, bench_params))
        found = _COMBOS.get(ident)
    except TypeError:  # an unhashable value (a list or dict): not a string
        return None
    if found is None:
        if not all(isinstance(v, str) for p in ident for v in p):
            return None
        if len(_COMBOS) > 10_000:
            _COMBOS.clear()
        found = _COMBOS[ident] = tuple(itertools.product(*ident))
    return found


def _interval_bound(column: list[Any]) -> Any:
    """A ci_99 column as float64; anything that is not a finite number reads NaN (no weight)."""
    import numpy as np

    if set(map(type, column)) <= _NUMBER_TYPES:
        return np.asarray(column, dtype=np.float64)
    return np.asarray([_as_float(v) for v in column], dtype=np.float64)


def scan_result_file(path: Path, machine: str | None, data: Any = None) -> FileScan:
    """A result file read for the scan: same checks as :func:`load_history`, less kept.

    ``data`` is the file's parsed JSON when the caller has read it already.
    Raises :class:`ResultsError` naming the file when it cannot be read.
    """
    import numpy as np

    from jaxbench.store.fastjson import restore_nan

    if data is None:
        data = _load_json(path)
    fmt2 = _format2(data, path)
    try:
        header = _header_of_format2(fmt2, path, machine)
        rows: list[tuple[str, str | None, tuple[tuple[str, ...], ...]]] = []
        raw_values: list[Any] = []
        raw_a: list[Any] = []
        raw_b: list[Any] = []
        owner: list[str] = []
        for bench, version, combos, row in _rows_of_format2(header, path):
            n = len(combos)
            raw_values += _column(row, "result", n, path, bench)
            raw_a += _column(row, "stats_ci_99_a", n, path, bench)
            raw_b += _column(row, "stats_ci_99_b", n, path, bench)
            rows.append((bench, version, combos))
        if not set(map(type, raw_values)) <= _NUMBER_TYPES:
            for bench, _version, combos in rows:
                owner += [bench] * len(combos)
            j = next(i for i, v in enumerate(raw_values) if type(v) not in _NUMBER_TYPES)
            raise ResultsError(f"{path}: result of {owner[j]} is not a number; {_RERUN}")
        values = np.asarray(raw_values, dtype=np.float64)
        for j in restore_nan(values):  # asv's NaN, read by fastjson.loads
            raw_values[j] = math.nan
        ci_a, ci_b = _interval_bound(raw_a), _interval_bound(raw_b)
        restore_nan(ci_a)
        restore_nan(ci_b)
        with np.errstate(divide="ignore", invalid="ignore"):
            weights = 2 / np.abs(ci_b - ci_a)
        # asv's get_weight: None for an infinite bound or a zero width
        weights[~(np.isfinite(ci_a) & np.isfinite(ci_b)) | (ci_a == ci_b)] = np.nan
        keep = np.ones(len(values), dtype=bool)
        non_finite: list[tuple[str, bool]] = []
        failed = 0
        bad = np.flatnonzero(~np.isfinite(values)).tolist()
        if bad:
            for bench, _version, combos in rows:
                owner += [bench] * len(combos)
            for j in bad:
                raw = raw_values[j]
                if raw is None:
                    failed += 1
                    continue
                skipped = math.isnan(raw)
                non_finite.append((owner[j], skipped))
                if skipped:
                    keep[j] = False
                else:
                    failed += 1
                    values[j] = math.nan
    except ResultsError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise ResultsError(f"{path}: malformed result file ({exc!r}); {_RERUN}") from None
    return FileScan(
        commit=header.commit,
        env_name=header.env_name,
        date=header.date,
        machine=header.machine,
        fingerprint=header.fingerprint,
        rows=tuple(rows),
        values=values,
        weights=weights,
        keep=keep,
        non_finite=tuple(non_finite),
        failed=failed,
    )


def load_result_file(path: Path, benchmarks_json: Path | None = None) -> list[Point]:
    """Points of one asv result file (format 1 or 2), for comparing two files.

    The machine is taken from the file itself. Units come from
    ``benchmarks_json`` when given, else from asv's benchmark type (``""``
    for a track). NaN (asv: skipped)
    becomes a skipped point and an infinite value a failed one (both
    ``value=None``). Raises :class:`ResultsError` naming
    the file and the fix when it cannot be read.
    """
    path = Path(path)
    units = read_units(Path(benchmarks_json)) if benchmarks_json is not None else {}
    points, _warnings = _read_result_file(path, units, None)
    return points


# ---------------------------------------------------------------------------
# a whole directory


def _result_files(machine_dir: Path) -> list[Path]:
    return sorted(
        p for p in machine_dir.iterdir() if p.suffix == ".json" and p.name not in _SKIP_FILES
    )


def machine_result_files(
    results_dir: Path, warnings: list[str]
) -> Iterator[tuple[Path, str, list[Path]]]:
    """(machine directory, machine name, its result files), machine by machine, sorted.

    A directory without result files is passed over; one whose
    ``machine.json`` is missing or unusable is passed over with a warning
    appended to ``warnings`` (as asv's own reader skips such a machine).
    """
    for machine_dir in sorted(p for p in results_dir.iterdir() if p.is_dir()):
        files = _result_files(machine_dir)
        if not files:
            continue
        try:
            name = _machine_name(machine_dir)
        except ResultsError as exc:
            warnings.append(str(exc))
            continue
        yield machine_dir, name, files


@dataclass
class ResultsWalk:
    """One pass over a results directory, with the rules every reader of it keeps.

    :func:`load_history` (points, samples included: compare) and
    :func:`jaxbench.store.series_table.load_series_table` (columns: the scan)
    are two views of the same files read by this module; both walk them
    here, so they pass over the same files with the same warnings and refuse
    the same directories with the same one-line messages.
    """

    results_dir: Path
    warnings: list[str] = field(default_factory=list)
    machines_found: set[str] = field(default_factory=set)
    envs_found: set[str] = field(default_factory=set)
    n_files: int = 0
    _kept: dict[tuple[str, str, str], str] = field(default_factory=dict)
    #: (machine directory, benchmark) -> the files where its value is infinite
    _infinite: dict[tuple[str, str], list[Path]] = field(default_factory=dict)

    @classmethod
    def of(cls, results_dir: Path) -> ResultsWalk:
        """A walk of ``results_dir``; ResultsError with the fix when it is not a directory."""
        results_dir = Path(results_dir)
        if not results_dir.is_dir():
            raise ResultsError(
                f"{results_dir}: no such results directory; run 'asv run' first or pass "
                "--results DIR"
            )
        return cls(results_dir)

    def files(self) -> Iterator[tuple[Path, str, Path]]:
        """(machine directory, machine name, result file) of every result file, sorted."""
        for machine_dir, name, paths in machine_result_files(self.results_dir, self.warnings):
            self.machines_found.add(name)
            for path in paths:
                self.n_files += 1
                yield machine_dir, name, path

    def keep(self, path: Path, machine: str, commit: str, env_name: str) -> bool:
        """False (and a warning) for a second file of one commit, machine and environment."""
        self.envs_found.add(env_name)
        ident = (machine, commit, env_name)
        if ident in self._kept:
            self.warnings.append(
                f"{path}: second result file for commit {commit[:8]} in {env_name} "
                f"(kept {self._kept[ident]}); delete one of the two"
            )
            return False
        self._kept[ident] = path.name
        return True

    def non_finite(self, path: Path, found: Iterable[tuple[str, bool]]) -> None:
        """Note a kept file's NaN (asv: skipped, normal) and infinite (bad data) values."""
        for bench, skipped in dict.fromkeys(found):
            if not skipped:
                self._infinite.setdefault((path.parent.name, bench), []).append(path)

    def infinite_files(self) -> tuple[Path, ...]:
        """Every kept file with an infinite value, after a warning per machine and benchmark."""
        for (machine_dir, bench), paths in sorted(self._infinite.items()):
            paths.sort()
            self.warnings.append(
                f"{self.results_dir / machine_dir}: {bench} is infinite in {len(paths)} result "
                f"file(s) (first: {paths[0].name}), treated as failed; re-run 'asv run' for "
                "those commits"
            )
        return tuple(sorted({p for paths in self._infinite.values() for p in paths}))

    def nothing_found(self, machine: str | None, env_name: str | None) -> ResultsError:
        """The error when nothing (or nothing of ``machine`` / ``env_name``) was read."""
        return ResultsError(
            _nothing_found(
                self.results_dir,
                machine,
                env_name,
                self.n_files,
                self.machines_found,
                self.envs_found,
                self.warnings,
            )
        )


def load_history(
    results_dir: Path, *, machine: str | None = None, env_name: str | None = None
) -> History:
    """Every point of an asv results directory, optionally one machine / environment.

    A damaged result file among good ones is skipped with a warning; so are
    the files of a machine directory without a usable ``machine.json``. Two
    files for one commit, machine and environment: the one whose file name
    sorts first is kept, with a warning. Raises :class:`ResultsError` when
    there is nothing to read (no directory, no result files, nothing that
    matches ``machine`` / ``env_name``).
    """
    walk = ResultsWalk.of(results_dir)
    benchmarks, units_problem = read_benchmarks_json_or_warn(walk.results_dir / "benchmarks.json")
    units = benchmarks.units()
    points: list[Point] = []
    for _machine_dir, name, path in walk.files():
        if machine is not None and name != machine:
            continue
        try:
            file_points, file_non_finite = _read_result_file(path, units, name)
        except ResultsError as exc:
            walk.warnings.append(f"skipped: {exc}")
            continue
        if not file_points:
            continue
        first = file_points[0]
        env = first.key.env_name
        if env_name is not None and env != env_name:
            walk.envs_found.add(env)
            continue
        if not walk.keep(path, name, first.commit, env):
            continue
        points.extend(file_points)
        walk.non_finite(path, file_non_finite)
    # NaN is asv's "skipped" (setup raised NotImplementedError, e.g. a figure XLA
    # does not report on this backend): normal, shown as "skipped" by compare, so
    # no warning. An infinite value is bad data: one warning per benchmark.
    infinite = walk.infinite_files()
    if not points:
        raise walk.nothing_found(machine, env_name)
    return History(
        points=tuple(points),
        warnings=tuple(([units_problem] if units_problem else []) + walk.warnings),
        infinite_files=infinite,
        benchmarks=benchmarks,
    )


def _nothing_found(
    results_dir: Path,
    machine: str | None,
    env_name: str | None,
    n_files: int,
    machines: Iterable[str],
    envs: Iterable[str],
    warnings: Sequence[str],
) -> str:
    if machine is not None and machine not in machines:
        known = ", ".join(sorted(machines)) or "none"
        return f"{results_dir}: no results for machine {machine!r} (machines: {known}); pick one"
    if env_name is not None and env_name not in envs:
        known = ", ".join(sorted(envs)) or "none"
        return (
            f"{results_dir}: no results for environment {env_name!r} (environments: {known}); "
            "pick one"
        )
    if n_files and warnings:
        return (
            f"no readable result files in {results_dir} ({n_files} skipped); first: {warnings[-1]}"
        )
    if warnings:
        return warnings[-1]
    return f"{results_dir}: no asv result files in it; run 'asv run' first or pass --results DIR"


def find_commit(history: History, prefix: str) -> str:
    """The full hash of the one commit in ``history`` starting with ``prefix``.

    Raises :class:`ResultsError` when no commit or several commits match.
    """
    wanted = prefix.strip().lower()
    if not wanted:
        raise ResultsError("empty commit; give a commit hash or a prefix of one")
    matches = sorted({c for c in history.commits() if c.lower().startswith(wanted)})
    if not matches:
        raise ResultsError(
            f"no results for commit {prefix!r}; run 'asv run {prefix}^!' or pick a commit "
            "that has results"
        )
    if len(matches) > 1:
        shown = ", ".join(m[:12] for m in matches[:5])
        raise ResultsError(f"commit prefix {prefix!r} is ambiguous ({shown}); give more characters")
    return matches[0]


def read_env_params(results_dir: Path) -> dict[tuple[str, str], dict[str, str]]:
    """(machine, env_name) -> the graph parameters asv publish gives its graphs.

    Those are a result file's ``params`` (machine, python, requirements ...)
    and ``env-<NAME>`` for each environment variable, read from one result
    file per machine and environment (the name ends in ``-<env_name>.json``).
    Unreadable files are skipped: the links then filter on the machine only.
    """
    found: dict[tuple[str, str], dict[str, str]] = {}
    seen: set[tuple[Path, str]] = set()
    for path in sorted(results_dir.glob("*/*.json")):
        if path.name == "machine.json" or "-" not in path.stem:
            continue
        env_suffix = path.stem.split("-", 1)[1]
        if (path.parent, env_suffix) in seen:
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            params = data["params"]
            env_name = data.get("env_name") or env_suffix
            machine = params["machine"]
            env_vars = data.get("env_vars") or {}
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
            continue
        seen.add((path.parent, env_suffix))
        graph: dict[str, str] = {k: "" if v is None else str(v) for k, v in params.items()}
        graph.update({f"env-{k}": str(v) for k, v in env_vars.items()})
        found[(str(machine), str(env_name))] = graph
    return found
