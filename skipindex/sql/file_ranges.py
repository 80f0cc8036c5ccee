"""A filtered side's join keys bounded by its kept files' min-max, reading no row.

Where the keys of a join's filtered side cannot be had (a condition no bitmap
answers, more keys than the bound, a side too large to read in the driver or
to query for keys), its kept files still bound them: every row the side
contributes is in a file its prune kept, and that row's key lies within the
file's ``[min, max]`` as the side's min-max index holds it (the values Spark
reads). ``fact BETWEEN min AND max OR ...`` over the kept files is then a
superset of ``fact IN (keys)``: it keeps more of the other side's files, never
fewer. It is worth something where the two sides are ordered alike by the key
and min-max answers it on the side pruned (TPC-DS's catalog order numbers,
which follow the date on sales and returns alike: December 2001's two files of
catalog_sales bound the returns of its orders, q49); the caller asks only where
the side's files are clustered by the key.

Only for integer and date columns of a table this index describes by column
name (not Iceberg's field ids, nor a Delta table's mapped columns), never a
partition column, and only where every kept file is indexed as it is now.
"""

from __future__ import annotations

import datetime
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skipindex.errors import SkipIndexError
from skipindex.pruning.result import PruneResult
from skipindex.sql.catalog import Source, same_name, spark_type
from skipindex.store.delta import delta_id_schema
from skipindex.store.manifest import load_latest
from skipindex.store.segments import read_segments

__all__ = ["kept_file_ranges"]

_RANGED = frozenset({"tinyint", "smallint", "int", "bigint", "date"})
_EPOCH = datetime.date(1970, 1, 1)


def kept_file_ranges(
    source: Source, result: PruneResult | None, column: str, case_sensitive: bool
) -> list[tuple[Any, Any]] | None:
    """``(min, max)`` of ``column`` in each file ``result`` kept of ``source``
    that holds a non-NULL value there, sorted and with overlaps joined (None:
    some kept file's bounds are not known)."""

    def named(name: str) -> bool:
        return same_name(name, column, case_sensitive)

    if result is None or any(named(p.name) for p in result.partitions):
        return None  # a partition column (found now) hides a data column of its name
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
        if not result.files:
            return []
        segments = read_segments(location, manifest, fields)
        paths = [location.relative(f) for f in result.files]
        infos = location.fs.get_file_info([location.fs_path(p) for p in paths])
    except (SkipIndexError, OSError):
        return None
    spans = _spans(segments, fields[0], paths, infos)
    if spans is None or typed != "date":
        return spans
    return [(_EPOCH + datetime.timedelta(lo), _EPOCH + datetime.timedelta(hi)) for lo, hi in spans]


def _spans(
    segments: pa.Table, field: str, paths: list[str], infos: list[Any]
) -> list[tuple[int, int]] | None:
    """The joined (min, max) of the files at ``paths`` (their current ``infos``)."""
    rows = pc.index_in(pa.array(paths, pa.string()), value_set=segments.column("path"))
    if rows.null_count:
        return None  # a kept file the index does not hold
    sizes = segments.column("size").take(rows).to_numpy()
    mtimes = segments.column("mtime_ms").take(rows).to_numpy()
    now_sizes = np.array([-1 if i.size is None else i.size for i in infos], np.int64)
    now_mtimes = np.array([(i.mtime_ns or 0) // 1_000_000 for i in infos], np.int64)
    if not (np.array_equal(sizes, now_sizes) and np.array_equal(mtimes, now_mtimes)):
        return None  # changed since it was indexed: its bounds are another file's
    payloads = segments.column(field).combine_chunks().take(rows)
    if payloads.null_count or segments.column("error").take(rows).null_count != len(paths):
        return None
    counted = segments.column("num_rows").take(rows).to_numpy()
    nulls = payloads.field("null_count").to_numpy(zero_copy_only=False)
    lows = payloads.field("min").to_pylist()
    highs = payloads.field("max").to_pylist()
    spans = []
    for low, high, rows_in, nulls_in in zip(lows, highs, counted, nulls, strict=True):
        if rows_in == nulls_in:
            continue  # only NULLs: no key
        if low is None or high is None:
            return None
        spans.append((low, high))
    return _joined(spans)


def _joined(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` sorted, overlapping or adjacent ones (integers, days) joined."""
    out: list[tuple[int, int]] = []
    for low, high in sorted(spans):
        if out and low <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], high))
        else:
            out.append((low, high))
    return out
