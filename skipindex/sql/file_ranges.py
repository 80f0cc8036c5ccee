"""A filtered side's join keys bounded by its kept files' min-max, reading no row.

Where the keys of a join's filtered side cannot be had (a condition no bitmap
answers, more keys than the bound, a side too large to read in the driver or
to query for keys), its kept files still bound them: every row the side
contributes is in a file its prune kept, and that row's key lies within the
file's ``[min, max]`` as the side's min-max index holds it (the values Spark
reads). ``fact BETWEEN min AND max OR ...`` over the kept files is then a
superset of ``fact IN (keys)``: it keeps more of the other side's files, never
fewer. It is worth something where the two sides are ordered alike by the key
and min-max answers it on the side pruned (order numbers that follow the date
on sales and returns alike: a month's two files of sales bound the returns of
its orders); the caller asks only where the side's files are clustered by the
key.

Only for integer and date columns of a table this index describes by column
name (not Iceberg's field ids, nor a Delta table's mapped columns), never a
partition column, and only where every kept file is indexed as it is now.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skipindex.errors import SkipIndexError
from skipindex.pruning.batches import batch_key
from skipindex.pruning.result import PruneResult
from skipindex.pruning.spread import field_ranges, joined_ranges
from skipindex.sql.catalog import Source, same_name, spark_type
from skipindex.store.cache import batch_cache
from skipindex.store.delta import delta_id_schema
from skipindex.store.location import TableLocation
from skipindex.store.manifest import Manifest, load_latest
from skipindex.store.segments import read_segments

__all__ = ["FileBounds", "file_bounds", "indexed_ranges", "kept_file_ranges", "keys_within"]

_RANGED = frozenset({"tinyint", "smallint", "int", "bigint", "date"})
_EPOCH = datetime.date(1970, 1, 1)


@dataclass(frozen=True)
class FileBounds:
    """Per file, the ``[min, max]`` of an integer or date column (dates as days)
    as its min-max index holds it, and whether it holds a non-NULL value there
    (a file of only NULLs holds no key: its bounds are 0)."""

    lows: np.ndarray  # int64
    highs: np.ndarray  # int64
    holding: np.ndarray  # bool

    def joined(self) -> list[tuple[int, int]]:
        """The bounds of the files holding a value, sorted, overlaps joined."""
        lows, highs = self.lows[self.holding].tolist(), self.highs[self.holding].tolist()
        return joined_ranges(list(zip(lows, highs, strict=True)))


def kept_file_ranges(
    source: Source, result: PruneResult | None, column: str, case_sensitive: bool
) -> list[tuple[Any, Any]] | None:
    """``(min, max)`` of ``column`` in each file ``result`` kept of ``source``
    that holds a non-NULL value there, sorted and with overlaps joined (None:
    some kept file's bounds are not known)."""
    if result is None or any(same_name(p.name, column, case_sensitive) for p in result.partitions):
        return None  # a partition column (found now) hides a data column of its name
    found = _minmax_field(source, column, case_sensitive)
    if found is None:
        return None
    if not result.files:
        return []
    bounds = _file_bounds(source, found, result.files)
    return None if bounds is None else _typed(bounds.joined(), found[2])


def file_bounds(
    source: Source, files: Sequence[str] | None, column: str, case_sensitive: bool
) -> FileBounds | None:
    """The bounds of ``column`` in each of ``files`` of ``source`` (paths as a
    prune gives them), in their order, or in every file the index holds, as it
    was indexed (``files`` None) (None: no min-max holds the column by name, or
    some file's bounds are not known: not indexed, or changed since)."""
    found = _minmax_field(source, column, case_sensitive)
    return None if found is None else _file_bounds(source, found, files)


def _file_bounds(
    source: Source, found: tuple[Manifest, str, str], files: Sequence[str] | None
) -> FileBounds | None:
    manifest, field, _ = found
    location = source.location
    try:
        indexed = _indexed(location, manifest, field)
        if files is None:
            rows = np.arange(len(indexed.known))
        else:
            paths = [location.relative(f) for f in files]
            found_at = pc.index_in(pa.array(paths, pa.string()), value_set=indexed.paths)
            if found_at.null_count:
                return None  # a file the index does not hold
            rows = np.asarray(found_at.to_numpy(zero_copy_only=False), dtype=np.int64)
            infos = location.fs.get_file_info([location.fs_path(p) for p in paths])
            now_sizes = np.array([-1 if i.size is None else i.size for i in infos], np.int64)
            now_mtimes = np.array([(i.mtime_ns or 0) // 1_000_000 for i in infos], np.int64)
            if not (
                np.array_equal(indexed.sizes[rows], now_sizes)
                and np.array_equal(indexed.mtimes[rows], now_mtimes)
            ):
                return None  # changed since it was indexed: its bounds are another file's
    except (SkipIndexError, OSError):
        return None
    bounds = indexed.bounds
    if bounds is None or not indexed.known[rows].all():
        return None
    return FileBounds(bounds.lows[rows], bounds.highs[rows], bounds.holding[rows])


def indexed_ranges(
    source: Source, column: str, case_sensitive: bool
) -> list[tuple[Any, Any]] | None:
    """``(min, max)`` of ``column`` in every file the index holds, sorted and with
    overlaps joined (None: some indexed file's bounds are not known).

    A key outside these ranges is in no indexed file as it was indexed; a file
    changed or added since is not indexed as it is now, and every prune keeps
    such a file whatever its condition. So dropping those keys from a list
    keeps the same files (a date dimension's 200 Novembers, 5 of them within the
    sales' dates). Not for a Delta table: ruling out its mapped columns opens its
    log, for every list, which costs more than the keys left out save."""
    if source.location.is_delta:
        return None
    found = _minmax_field(source, column, case_sensitive)
    if found is None:
        return None
    manifest, field, typed = found
    return _typed(field_ranges(source.location, manifest, field), typed)


def _minmax_field(
    source: Source, column: str, case_sensitive: bool
) -> tuple[Manifest, str, str] | None:
    """The manifest, min-max field and Spark type of ``column`` where a min-max
    index holds it by name (not a partition column, not Iceberg's field ids nor a
    Delta table's mapped columns) and it is an integer or date column."""

    def named(name: str) -> bool:
        return same_name(name, column, case_sensitive)

    typed = spark_type(source.schema, column, case_sensitive)
    location = source.location
    if typed not in _RANGED or location.iceberg is not None:
        return None
    try:
        manifest = load_latest(location)
        if manifest is None or any(map(named, manifest.partition_columns)):
            return None
        fields = [
            d.field
            for d in manifest.indexes
            if d.kind == "minmax" and d.expression is None and named(d.column)
        ]
        if len(fields) != 1 or (
            location.is_delta
            and delta_id_schema(location.uri, location.user_root, dict(location.options))
        ):
            return None
    except (SkipIndexError, OSError):
        return None
    return manifest, fields[0], typed


def _typed(spans: list[tuple[int, int]] | None, typed: str) -> list[tuple[Any, Any]] | None:
    """``spans`` as Spark's values: days since the epoch as dates for a date column."""
    if spans is None or typed != "date":
        return spans
    return [(_EPOCH + datetime.timedelta(lo), _EPOCH + datetime.timedelta(hi)) for lo, hi in spans]


@dataclass(frozen=True)
class _Indexed:
    """A min-max field over every file the index holds, in segment order."""

    paths: pa.Array
    sizes: np.ndarray
    mtimes: np.ndarray
    known: np.ndarray  # indexed without error, its bounds known where it holds a value
    bounds: FileBounds | None  # None: not an integer (or date) field

    @property
    def nbytes(self) -> int:
        """What the cache counts it at."""
        arrays = [self.sizes, self.mtimes, self.known]
        if self.bounds is not None:
            arrays += [self.bounds.lows, self.bounds.highs, self.bounds.holding]
        return int(self.paths.nbytes) + sum(int(a.nbytes) for a in arrays)


def _indexed(location: TableLocation, manifest: Manifest, field: str) -> _Indexed:
    """The field's bounds over every indexed file, kept in prune's cache (within
    ``SKIPINDEX_CACHE_BYTES``) beside its batches: segment files are written once
    under unique names, and a query asks for the same sides' bounds join by join."""
    key = (*batch_key(location, manifest, field), "file bounds")
    cached = batch_cache.get(key)
    if isinstance(cached, _Indexed):
        return cached
    segments = read_segments(location, manifest, [field])
    payloads = segments.column(field).combine_chunks()
    counted = segments.column("num_rows").to_numpy()
    nulls = pc.fill_null(payloads.field("null_count"), 0).to_numpy(zero_copy_only=False)
    holding = np.asarray(counted != nulls, dtype=bool)
    lows, highs = payloads.field("min"), payloads.field("max")
    bounded = np.asarray(
        pc.and_(lows.is_valid(), highs.is_valid()).to_numpy(zero_copy_only=False), dtype=bool
    )
    known = (
        np.asarray(payloads.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        & np.asarray(segments.column("error").is_null().to_numpy(), dtype=bool)
        & (bounded | ~holding)
    )
    low_ints, high_ints = _integers(lows), _integers(highs)
    bounds = None
    if low_ints is not None and high_ints is not None:
        bounds = FileBounds(
            np.where(holding, low_ints, 0), np.where(holding, high_ints, 0), holding
        )
    indexed = _Indexed(
        segments.column("path").combine_chunks(),
        np.asarray(segments.column("size").to_numpy(), np.int64),
        np.asarray(segments.column("mtime_ms").to_numpy(), np.int64),
        known,
        bounds,
    )
    batch_cache.put(key, indexed)
    return indexed


def _integers(values: pa.Array) -> np.ndarray | None:
    """Integer (or date: days) bounds as int64, 0 where NULL (None: another type)."""
    if pa.types.is_date32(values.type):
        values = values.view(pa.int32())
    if not pa.types.is_integer(values.type) or pa.types.is_uint64(values.type):
        return None
    filled = pc.fill_null(values, 0).cast(pa.int64())
    return np.asarray(filled.to_numpy(zero_copy_only=False), dtype=np.int64)


def keys_within(values: list[Any], ranges: list[tuple[Any, Any]]) -> list[Any]:
    """Those of ``values`` (keys: ints, or dates) that fall in one of ``ranges``
    (sorted and disjoint, as :func:`indexed_ranges` gives them); ``values`` as
    they are where they are of neither kind."""
    dtype: np.dtype[Any]
    if all(type(v) is int for v in values):
        dtype = np.dtype(np.int64)
    elif all(type(v) is datetime.date for v in values):
        dtype = np.dtype("datetime64[D]")
    else:
        return values
    if not ranges:
        return []
    try:
        keys = np.array(values, dtype=dtype)
        lows = np.array([low for low, _ in ranges], dtype=dtype)
        highs = np.array([high for _, high in ranges], dtype=dtype)
    except OverflowError:  # an int past 64 bits: kept
        return values
    at = np.searchsorted(lows, keys, side="right") - 1
    inside = (at >= 0) & (keys <= highs[np.maximum(at, 0)])
    return list(keys[inside].tolist())  # Python ints, or dates, again
