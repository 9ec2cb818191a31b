"""A whole results directory as columns, read through a cache kept beside it.

The regression scan needs, per series, only the value and asv's weight at each
commit: no samples, no ``Point`` objects. :func:`load_series_table` is a view of
the one reader, :mod:`jaxbench.store.results`: it walks the directory with its
rules (:class:`~jaxbench.store.results.ResultsWalk`, as
:func:`~jaxbench.store.results.load_history` does) and reads every result file
once (:func:`~jaxbench.store.results.scan_result_file`) into
concatenated NumPy columns: per point a file index, a value (NaN: failed) and
a weight (NaN: unknown); per series an offset.

The cache, ``<results>/.jaxbench-scan-cache.npz`` (a NumPy archive read with
``allow_pickle=False``: it holds numbers and one JSON header, never code), is
keyed by each result file's path and the SHA-256 digest of its bytes, never by
a date: every file is read and hashed on every scan. Files whose digest is in
the cache are not parsed again; new or changed ones are, removed ones are
dropped, and the columns are rebuilt from both, sorted the same way as a cold
read, so the answer is the same. A cache that is missing, corrupt, of another
format or another results directory is ignored and rewritten. It also holds
the step fits of earlier scans, keyed by the digest of each fitted segment's
values and weights (see :mod:`jaxbench.analyse.detect`).
"""

from __future__ import annotations

import array
import contextlib
import hashlib
import io
import json
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from jaxbench.errors import ResultsError
from jaxbench.store import fastjson, fsio
from jaxbench.store.benchmarks_json import read_benchmarks_json_or_warn
from jaxbench.store.results import FileScan, ResultsWalk, SeriesKey, scan_result_file

__all__ = [
    "CACHE_FORMAT",
    "CACHE_NAME",
    "BatchMap",
    "FileEntry",
    "SeriesTable",
    "load_series_table",
    "save_fits",
]

#: How work is spread: ``run(fn, batches)`` yields ``fn(batch)`` for each batch, in
#: order. The jobs hand in one that uses worker processes
#: (:func:`jaxbench.jobs.parallel.forked_batches`); None: this process, in turn.
BatchMap = Callable[
    [Callable[[Sequence[Any]], list[Any]], Sequence[Sequence[Any]]], Iterable[list[Any]]
]

#: Name of the cache file inside the results directory (not ``*.json``: asv ignores it).
CACHE_NAME = ".jaxbench-scan-cache.npz"
#: Bumped whenever what the cache holds or how a file is read changes.
CACHE_FORMAT = 2

FloatArray = np.ndarray[Any, np.dtype[np.float64]]
IntArray = np.ndarray[Any, np.dtype[np.int64]]

#: a fitted segment's steps, keyed by the digest of its values and weights
Fits = dict[bytes, tuple[tuple[int, int, float, float, float], ...]]


@dataclass(frozen=True)
class FileEntry:
    """One result file that the table holds points of."""

    name: str  # relative to the results directory
    digest: str
    machine: str
    env_name: str
    commit: str
    date: int
    fingerprint: str | None
    non_finite: tuple[tuple[str, bool], ...]


@dataclass(frozen=True)
class SeriesTable:
    """Every series of a results directory, as columns.

    Points of series ``i`` are ``offsets[i]:offsets[i + 1]`` of ``file_idx``,
    ``values`` and ``weights``, ordered by their file's (date, commit).
    """

    results_dir: Path
    files: tuple[FileEntry, ...]
    keys: tuple[SeriesKey, ...]
    offsets: IntArray
    file_idx: IntArray
    values: FloatArray
    weights: FloatArray
    units: Mapping[str, str]
    warnings: tuple[str, ...] = ()
    infinite_files: tuple[Path, ...] = ()
    fits: Fits = field(default_factory=dict)
    #: True when the cache answered for every file (nothing parsed)
    from_cache: bool = False
    #: False when the scan must neither read nor write the cache
    use_cache: bool = True
    #: the whole directory when this table is a selection of it (the cache holds the whole)
    whole: SeriesTable | None = None

    def commits(self) -> tuple[str, ...]:
        """Full commit hashes, oldest first (by commit date, then hash), as History.commits."""
        dates: dict[str, int] = {}
        for f in self.files:
            dates.setdefault(f.commit, f.date)
        return tuple(sorted(dates, key=lambda c: (dates[c], c)))

    def longest(self) -> int:
        """The most commits with a value (not NaN) of any one series; 0 without series."""
        if not self.keys:
            return 0
        known = np.concatenate([[0], np.cumsum(~np.isnan(self.values))])
        return int((known[self.offsets[1:]] - known[self.offsets[:-1]]).max())

    def points(self, i: int) -> tuple[IntArray, FloatArray, FloatArray]:
        """(file indices, values, weights) of series ``i``."""
        a, b = int(self.offsets[i]), int(self.offsets[i + 1])
        return self.file_idx[a:b], self.values[a:b], self.weights[a:b]

    def select(self, machine: str | None, env_name: str | None) -> SeriesTable:
        """Only the series of one machine and/or environment."""
        if machine is None and env_name is None:
            return self
        chosen = [
            i
            for i, k in enumerate(self.keys)
            if (machine is None or k.machine == machine)
            and (env_name is None or k.env_name == env_name)
        ]
        parts = [(int(self.offsets[i]), int(self.offsets[i + 1])) for i in chosen]
        lengths = np.asarray([b - a for a, b in parts], dtype=np.int64)
        idx = (
            np.concatenate([np.arange(a, b, dtype=np.int64) for a, b in parts])
            if parts
            else np.zeros(0, dtype=np.int64)
        )
        return SeriesTable(
            results_dir=self.results_dir,
            files=self.files,
            keys=tuple(self.keys[i] for i in chosen),
            offsets=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
            file_idx=self.file_idx[idx],
            values=self.values[idx],
            weights=self.weights[idx],
            units=self.units,
            warnings=self.warnings,
            infinite_files=self.infinite_files,
            fits=self.fits,
            from_cache=self.from_cache,
            use_cache=self.use_cache,
            whole=self.whole or self,
        )


# ---------------------------------------------------------------------------
# building the columns


def _digest(data: bytes) -> str:
    # SHA-256: 4x BLAKE2b's speed here (the CPU's SHA extensions; 1,381 against 331 MiB/s)
    return hashlib.sha256(data).hexdigest()


class _Builder:
    """Columns grown file by file (array-backed, no per-point objects)."""

    def __init__(self) -> None:
        self.index: dict[tuple[str, str, str, tuple[str, ...], str | None], int] = {}
        self.rows_seen: dict[Any, array.array[int]] = {}
        self.series_id = array.array("q")
        self.file_idx = array.array("q")
        self.values = array.array("d")
        self.weights = array.array("d")

    def add(self, scan: FileScan, file_index: int) -> None:
        index, rows_seen = self.index, self.rows_seen
        machine, env = scan.machine, scan.env_name
        ids = array.array("q")
        for bench, version, combos in scan.rows:
            row_key = (machine, env, bench, version, combos)
            row_ids = rows_seen.get(row_key)
            if row_ids is None:
                found = []
                for combo in combos:
                    ident = (machine, env, bench, combo, version)
                    i = index.get(ident)
                    if i is None:
                        i = index[ident] = len(index)
                    found.append(i)
                row_ids = rows_seen[row_key] = array.array("q", found)
            ids.extend(row_ids)
        keep = scan.keep
        if keep.all():
            self.series_id.extend(ids)
            self.values.frombytes(scan.values.tobytes())
            self.weights.frombytes(scan.weights.tobytes())
        else:
            self.series_id.frombytes(np.frombuffer(ids, dtype=np.int64)[keep].tobytes())
            self.values.frombytes(scan.values[keep].tobytes())
            self.weights.frombytes(scan.weights[keep].tobytes())
        self.file_idx.extend(array.array("q", [file_index]) * int(keep.sum()))


def _assemble(
    keys: list[SeriesKey],
    series_id: IntArray,
    file_idx: IntArray,
    values: FloatArray,
    weights: FloatArray,
    files: list[FileEntry],
) -> tuple[
    tuple[FileEntry, ...], tuple[SeriesKey, ...], IntArray, IntArray, FloatArray, FloatArray
]:
    """Files sorted by (date, commit, name), series by key, points by (series, file).

    A series without points (every one skipped) is dropped, as the scan never fits it.
    """
    counts_all = np.bincount(series_id, minlength=len(keys)) if len(keys) else np.zeros(0)
    live = [i for i in range(len(keys)) if counts_all[i] > 0]
    key_order = sorted(live, key=lambda i: keys[i])
    key_rank = np.full(len(keys), -1, dtype=np.int64)
    key_rank[np.asarray(key_order, dtype=np.int64)] = np.arange(len(key_order), dtype=np.int64)
    file_order = sorted(
        range(len(files)), key=lambda i: (files[i].date, files[i].commit, files[i].name)
    )
    file_rank = np.empty(len(files), dtype=np.int64)
    file_rank[np.asarray(file_order, dtype=np.int64)] = np.arange(len(files), dtype=np.int64)
    new_sid = key_rank[series_id] if len(series_id) else series_id
    new_fidx = file_rank[file_idx] if len(file_idx) else file_idx
    order = np.lexsort((new_fidx, new_sid))
    counts = np.bincount(new_sid, minlength=len(key_order)) if len(key_order) else np.zeros(0)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return (
        tuple(files[i] for i in file_order),
        tuple(keys[i] for i in key_order),
        offsets,
        new_fidx[order].astype(np.int64),
        values[order],
        weights[order],
    )


# ---------------------------------------------------------------------------
# the cache


@dataclass(frozen=True)
class _Cached:
    files: list[FileEntry]
    keys: list[SeriesKey]
    offsets: IntArray
    file_idx: IntArray
    values: FloatArray
    weights: FloatArray
    fits: Fits


def _read_cache(results_dir: Path) -> _Cached | None:
    """The cache, or None when it is missing, corrupt, foreign or of another format."""
    path = results_dir / CACHE_NAME
    try:
        raw = path.read_bytes()
        with np.load(io.BytesIO(raw), allow_pickle=False) as archive:
            meta = json.loads(bytes(archive["meta"]).decode("utf-8"))
            if meta.get("format") != CACHE_FORMAT or meta.get("results_dir") != str(
                results_dir.resolve()
            ):
                return None
            offsets = archive["offsets"].astype(np.int64)
            file_idx = archive["file_idx"].astype(np.int64)
            values = archive["values"].astype(np.float64)
            weights = archive["weights"].astype(np.float64)
            fit_keys = archive["fit_keys"].astype(np.uint8)
            fit_offsets = archive["fit_offsets"].astype(np.int64)
            fit_steps = archive["fit_steps"].astype(np.float64)
        files = [
            FileEntry(
                name=str(f[0]),
                digest=str(f[1]),
                machine=str(f[2]),
                env_name=str(f[3]),
                commit=str(f[4]),
                date=int(f[5]),
                fingerprint=None if f[6] is None else str(f[6]),
                non_finite=tuple((str(b), bool(s)) for b, s in f[7]),
            )
            for f in meta["files"]
        ]
        keys = [
            SeriesKey(str(k[0]), str(k[1]), str(k[2]), tuple(str(p) for p in k[3]), k[4])
            for k in meta["keys"]
        ]
        n = len(values)
        if (
            len(offsets) != len(keys) + 1
            or offsets[0] != 0
            or offsets[-1] != n
            or np.any(np.diff(offsets) < 0)
            or len(file_idx) != n
            or len(weights) != n
            or (n and (file_idx.min() < 0 or file_idx.max() >= len(files)))
            or fit_keys.ndim != 2
            or fit_keys.shape[1] != 16
            or len(fit_offsets) != len(fit_keys) + 1
            or (len(fit_offsets) and fit_offsets[-1] != len(fit_steps))
            or (len(fit_steps) and fit_steps.shape[1:] != (5,))
        ):
            return None
        fits: Fits = {}
        for j, fkey in enumerate(fit_keys):
            rows = fit_steps[fit_offsets[j] : fit_offsets[j + 1]]
            fits[fkey.tobytes()] = tuple(
                (int(r[0]), int(r[1]), float(r[2]), float(r[3]), float(r[4])) for r in rows
            )
        return _Cached(files, keys, offsets, file_idx, values, weights, fits)
    except (OSError, ValueError, KeyError, TypeError, IndexError, zipfile.BadZipFile, EOFError):
        return None


def _write_cache(table: SeriesTable, fits: Fits) -> None:
    """Write the cache; a results directory that cannot be written is left alone."""
    meta = {
        "format": CACHE_FORMAT,
        "results_dir": str(table.results_dir.resolve()),
        "files": [
            [
                f.name,
                f.digest,
                f.machine,
                f.env_name,
                f.commit,
                f.date,
                f.fingerprint,
                [list(x) for x in f.non_finite],
            ]
            for f in table.files
        ],
        "keys": [
            [k.machine, k.env_name, k.benchmark, list(k.params), k.version] for k in table.keys
        ],
    }
    fit_items = sorted(fits.items())
    fit_offsets = np.concatenate(
        [[0], np.cumsum([len(steps) for _k, steps in fit_items], dtype=np.int64)]
    ).astype(np.int64)
    fit_steps = np.asarray(
        [list(step) for _k, steps in fit_items for step in steps], dtype=np.float64
    ).reshape(-1, 5)
    buffer = io.BytesIO()
    np.savez(
        buffer,
        meta=np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8),
        offsets=table.offsets,
        file_idx=table.file_idx.astype(np.int32),
        values=table.values,
        weights=table.weights,
        # (n, 16) bytes, not an "S16" array: NumPy strips trailing NUL bytes from those
        fit_keys=np.frombuffer(b"".join(k for k, _s in fit_items), dtype=np.uint8).reshape(-1, 16),
        fit_offsets=fit_offsets,
        fit_steps=fit_steps,
    )
    with contextlib.suppress(OSError):  # a read-only results directory: no cache
        fsio.write_bytes_atomic(table.results_dir / CACHE_NAME, buffer.getvalue())


def save_fits(table: SeriesTable, fits: Fits) -> None:
    """Store the whole table and the step fits of this scan, unless nothing changed.

    ``fits`` are those the scan used; when ``table`` is a selection (one machine or
    environment), the cached fits of the rest are kept too.
    """
    if not table.use_cache:
        return
    whole = table.whole or table
    if table.whole is not None:
        fits = {**table.fits, **fits}
    if whole.from_cache and fits.keys() == table.fits.keys():
        return
    _write_cache(whole, fits)


# ---------------------------------------------------------------------------
# reading a directory


#: (digest, outcome): outcome None when the cache's digest matches (not parsed), a
#: FileScan, or a warning ("" for a file with no points)
_Read = tuple[str, "FileScan | str | None"]

#: Fewest bytes to parse before worker processes pay for themselves (about 1 s of parsing).
PARALLEL_MIN_BYTES = 64 << 20


def _read_one(job: tuple[Path, str, str, str | None]) -> _Read:
    """Read, hash and (unless the cache has it) parse one result file."""
    path, _rel, name, known = job
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return "", f"skipped: {path}: cannot read ({exc}); delete it and re-run"
    digest = _digest(raw)
    if digest == known:
        return digest, None
    try:
        data = fastjson.loads(raw)
    except ValueError:
        return digest, (
            f"skipped: {path}: not valid JSON (truncated?); delete the file and "
            "re-run 'asv run' for that commit"
        )
    del raw
    try:
        scan = scan_result_file(path, name, data)
    except ResultsError as exc:
        return digest, f"skipped: {exc}"
    if not len(scan.values):
        return digest, ""
    return digest, scan


def _read_many(jobs: Sequence[tuple[Path, str, str, str | None]]) -> list[_Read]:
    return [_read_one(job) for job in jobs]


def _bytes_to_parse(jobs: list[tuple[Path, str, str, str | None]]) -> int:
    """Size of the files the cache does not know (those it does are hashed, not parsed)."""
    total = 0
    for path, _rel, _name, known in jobs:
        if known is None:
            with contextlib.suppress(OSError):
                total += path.stat().st_size
    return total


def _read_all(
    jobs: list[tuple[Path, str, str, str | None]], parallel: BatchMap | None
) -> Iterable[_Read]:
    """Each job's outcome, in order: through ``parallel`` when there is much to parse.

    Parsing JSON holds one core; on a large history the files are handed to
    ``parallel`` in batches (the jobs pass worker processes).
    """
    if parallel is None or _bytes_to_parse(jobs) < PARALLEL_MIN_BYTES:
        yield from map(_read_one, jobs)
        return
    size = max(1, min(32, len(jobs) // 64))
    batches = [jobs[i : i + size] for i in range(0, len(jobs), size)]
    for outcomes in parallel(_read_many, batches):
        yield from outcomes


def load_series_table(
    results_dir: Path,
    *,
    machine: str | None = None,
    env_name: str | None = None,
    use_cache: bool = True,
    parallel: BatchMap | None = None,
) -> SeriesTable:
    """Every series of ``results_dir`` as columns (see module doc), through the cache.

    ``parallel``: how to spread the parsing of many files (:data:`BatchMap`;
    None: in this process).

    Same rules and messages as :func:`~jaxbench.store.results.load_history`:
    damaged files are skipped with a warning; nothing to read is a
    :class:`ResultsError`. The cache always holds the whole directory;
    ``machine`` and ``env_name`` select afterwards.
    """
    walk = ResultsWalk.of(results_dir)
    results_dir = walk.results_dir
    cached = _read_cache(results_dir) if use_cache else None
    cached_by_name = {f.name: (i, f) for i, f in enumerate(cached.files)} if cached else {}

    benchmarks, units_problem = read_benchmarks_json_or_warn(results_dir / "benchmarks.json")
    units = benchmarks.units()
    units_warning = [units_problem] if units_problem else []

    reused: list[tuple[int, FileEntry]] = []  # (index in cache, entry)
    fresh: list[FileEntry] = []
    builder = _Builder()  # the fresh files' points, added as each file is read
    jobs: list[tuple[Path, str, str, str | None]] = []  # (path, rel, machine, cached digest)
    for machine_dir, name, path in walk.files():
        rel = f"{machine_dir.name}/{path.name}"
        hit = cached_by_name.get(rel)
        known = hit[1].digest if hit is not None and hit[1].machine == name else None
        jobs.append((path, rel, name, known))
    for (path, rel, name, _known), (digest, outcome) in zip(
        jobs, _read_all(jobs, parallel), strict=True
    ):
        entry: FileEntry
        scan: FileScan | None = None
        if isinstance(outcome, str):
            if outcome:
                walk.warnings.append(outcome)
            continue
        if outcome is None:
            hit = cached_by_name[rel]
            entry = hit[1]
        else:
            scan = outcome
            entry = FileEntry(
                name=rel,
                digest=digest,
                machine=scan.machine,
                env_name=scan.env_name,
                commit=scan.commit,
                date=scan.date,
                fingerprint=scan.fingerprint,
                non_finite=tuple(dict.fromkeys(scan.non_finite)),
            )
        if not walk.keep(path, name, entry.commit, entry.env_name):
            continue
        walk.non_finite(path, entry.non_finite)
        if scan is None:
            reused.append((cached_by_name[rel][0], entry))
        else:
            builder.add(scan, len(fresh))
            fresh.append(entry)
        del scan

    table = _combine(results_dir, cached, reused, fresh, builder, units)
    del builder
    infinite = walk.infinite_files()
    selected_machines = {f.machine for f in table.files}
    if not table.keys or (machine is not None and machine not in selected_machines):
        raise walk.nothing_found(machine, env_name)
    table = replace(
        table,
        warnings=tuple(units_warning + walk.warnings),
        infinite_files=infinite,
        fits=cached.fits if cached else {},
        from_cache=cached is not None and not fresh and len(reused) == len(cached.files),
        use_cache=use_cache,
    )
    selected = table.select(machine, env_name)
    if not selected.keys:
        raise walk.nothing_found(machine, env_name)
    return selected


def _combine(
    results_dir: Path,
    cached: _Cached | None,
    reused: list[tuple[int, FileEntry]],
    fresh: list[FileEntry],
    builder: _Builder,
    units: Mapping[str, str],
) -> SeriesTable:
    """Columns from the reused part of the cache plus the freshly parsed files."""
    files: list[FileEntry] = [entry for _i, entry in reused]
    keys: list[SeriesKey] = []
    parts_sid: list[IntArray] = []
    parts_fidx: list[IntArray] = []
    parts_val: list[FloatArray] = []
    parts_w: list[FloatArray] = []
    key_index: dict[SeriesKey, int] = {}
    if cached is not None and reused:
        remap = np.full(len(cached.files), -1, dtype=np.int64)
        for new_i, (old_i, _entry) in enumerate(reused):
            remap[old_i] = new_i
        counts = np.diff(cached.offsets)
        old_sid = np.repeat(np.arange(len(cached.keys), dtype=np.int64), counts)
        new_fidx = remap[cached.file_idx]
        keep = new_fidx >= 0
        kept_sid = old_sid[keep]
        used = np.unique(kept_sid)
        sid_map = np.full(len(cached.keys), -1, dtype=np.int64)
        for i in used:
            sid_map[i] = len(keys)
            key_index[cached.keys[i]] = len(keys)
            keys.append(cached.keys[i])
        parts_sid.append(sid_map[kept_sid])
        parts_fidx.append(new_fidx[keep])
        parts_val.append(cached.values[keep])
        parts_w.append(cached.weights[keep])
    if fresh:
        first_fresh = len(files)
        files.extend(fresh)
        ident_keys = [SeriesKey(m, e, b, p, v) for (m, e, b, p, v) in builder.index]
        local_map = np.empty(len(ident_keys), dtype=np.int64)
        for j, key in enumerate(ident_keys):
            i = key_index.get(key)
            if i is None:
                i = key_index[key] = len(keys)
                keys.append(key)
            local_map[j] = i
        parts_sid.append(local_map[np.frombuffer(builder.series_id, dtype=np.int64)])
        builder.series_id = array.array("q")
        parts_fidx.append(np.frombuffer(builder.file_idx, dtype=np.int64) + first_fresh)
        builder.file_idx = array.array("q")
        parts_val.append(np.frombuffer(builder.values, dtype=np.float64).copy())
        builder.values = array.array("d")
        parts_w.append(np.frombuffer(builder.weights, dtype=np.float64).copy())
        builder.weights = array.array("d")
    if parts_sid:
        sid = np.concatenate(parts_sid) if len(parts_sid) > 1 else parts_sid[0]
        fidx = np.concatenate(parts_fidx) if len(parts_fidx) > 1 else parts_fidx[0]
        val = np.concatenate(parts_val) if len(parts_val) > 1 else parts_val[0]
        w = np.concatenate(parts_w) if len(parts_w) > 1 else parts_w[0]
        del parts_sid, parts_fidx, parts_val, parts_w
    else:
        sid = fidx = np.zeros(0, dtype=np.int64)
        val = w = np.zeros(0, dtype=np.float64)
    s_files, s_keys, offsets, s_fidx, s_val, s_w = _assemble(keys, sid, fidx, val, w, files)
    return SeriesTable(
        results_dir=results_dir,
        files=s_files,
        keys=s_keys,
        offsets=offsets,
        file_idx=s_fidx,
        values=s_val,
        weights=s_w,
        units=units,
    )
