"""A filtered side's join keys read from its kept rows, without a Spark job.

Where the filtered side of an equi-join is an indexed table whose prune left
few bytes to read (a dimension) and bitmaps answer each of its conditions, its
keys are read with pyarrow from the kept files, only at the rows the bitmaps
narrowed each file to: a superset of the rows Spark's key query would find
(bins of a range bitmap hold a few more), so of its keys, and a superset of
keys only ever keeps more files of the other side. Where no condition is
answered by a bitmap its rows would be every row, and Spark finds the keys (a
condition none answers beside one that does leaves the bitmap's rows).
A Spark job costs 100-300 ms even for a date dimension's 2,556 rows; reading
one column of a few small files costs milliseconds.

Only where pyarrow reads the column exactly as Spark does (spark/view.py: the
same type, no calendar rebase, one match for the name); a partition column, a
file changed since its rows were counted or more than ``bound`` keys leave the
question to Spark (:func:`~skipindex.sql.dynamic.join_keys`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skipindex.errors import SkipIndexError
from skipindex.expressions.nodes import Predicate
from skipindex.pruning.prune import PruneResult
from skipindex.reading.policy import active
from skipindex.spark.settings import SparkView
from skipindex.spark.view import open_file, spark_columns, without_views
from skipindex.sql.catalog import Source, same_name, spark_type
from skipindex.store import query_log
from skipindex.store.cache import LIMIT, ColumnCache
from skipindex.store.delta import delta_id_schema

__all__ = ["Found", "local_keys"]

# Key columns kept in memory between queries, at most (bytes; less where
# SKIPINDEX_CACHE_BYTES is less, none where it is 0).
CACHED_BYTES = 64 << 20
# Kinds that answer a condition with the rows that meet it.
ROW_LEVEL = frozenset({"equality_bitmap", "bitsliced_bitmap", "range_bitmap"})
# Those whose rows are exactly the rows that meet it (a range bitmap's bins hold more).
EXACT = frozenset({"equality_bitmap", "bitsliced_bitmap"})

_TYPES = {
    "tinyint": pa.int8(),
    "smallint": pa.int16(),
    "int": pa.int32(),
    "bigint": pa.int64(),
    "date": pa.date32(),
    "string": pa.string(),
}


@dataclass(frozen=True)
class Found:
    """Keys read here: at most the bound of them, or None where there are more;
    then, where asked, at most that many ranges holding them all."""

    keys: list[Any] | None
    spans: list[tuple[int, int]] | None = None
    counted: int = 0  # the keys the spans hold


def local_keys(
    source: Source,
    result: PruneResult | None,
    column: str,
    view: SparkView,
    bound: int,
    spans: int | None = None,
    whole_files: bool = False,
    where: str | Predicate | None = None,
) -> Found | None:
    """The distinct non-NULL values of ``column`` over the rows ``result`` kept of
    ``source`` (a superset of those its conditions hold on), if at most ``bound``;
    None where Spark must be asked. More than ``bound`` is an answer only where
    every condition has an exact bitmap (equality, bit-sliced): then Spark's key
    query finds as many. With ``spans``, more than ``bound`` integer keys are
    still read, and given as at most ``spans`` ranges split at their widest gaps
    (for a column ranges answer: two years of a fact's orders, past the bound,
    bound their returns, whose order numbers follow the same dates). With
    ``whole_files``, a kept file whose every row can match (min-max: a year
    spanning the file) is read whole, else Spark is asked: the caller allows it
    where the keys prune a side nothing else has narrowed (returns, by the orders
    of a year's sales), the only place reading and pruning with those long lists
    was seen to pay. ``where``: what ``result`` was pruned with, if not its text
    (a predicate, parsed already)."""
    if result is None:
        return None
    if not result.files:
        return Found([])
    kinds = [set(leaf.kinds) for leaf in result.leaves]
    if not any(ROW_LEVEL & k for k in kinds):
        return None  # no condition a bitmap answers: its rows would be every row
    if any(result.rows_of(f) is None for f in result.files):
        result = _every_row_level(source, result, view, where)
        if result is None:
            return None
    widened = any(result.rows_of(f) is None for f in result.files)  # a file read whole
    # Where every condition has an exact bitmap, a file a row-by-row prune left whole
    # is one the bitmaps found (about) every row of to match: reading its keys costs
    # milliseconds where Spark's key query over the same rows costs a job, and more
    # than the bound of them there means more in Spark's too. Only that is taken from
    # such a read unless ``whole_files``: fewer keys are left to Spark as before (a
    # long list from whole files, pruning a side already narrowed, did not pay).
    # Keys only ever decide what is skipped, never a row: a wrong guess costs time.
    exact = all(EXACT & k for k in kinds)
    if widened and not (whole_files or exact):
        return None
    only_past_bound = widened and not whole_files
    target = _arrow_type(source.schema, column, view.case_sensitive)
    if target is None or any(
        same_name(p.name, column, view.case_sensitive) for p in result.partitions
    ):
        return None
    location = source.location
    if location.is_delta and delta_id_schema(
        location.uri, location.user_root, dict(location.options)
    ):
        return None  # column mapping: the files name the key otherwise; Spark reads it
    paths = [location.fs_path(location.relative(file)) for file in result.files]
    try:
        infos = location.fs.get_file_info(paths)
    except OSError:
        return None
    if sum(i.size or 0 for i in infos) > active().local_bytes:
        return None
    ranged = spans is not None and pa.types.is_integer(target)
    found: set[Any] = set()
    for file, path, info in zip(result.files, paths, infos, strict=True):
        values = _values(location.fs, path, info, file, result, column, target, view)
        if values is None:
            return None
        found.update(values)
        if len(found) > bound and not ranged:
            # a whole file's keys are more than its matching rows': Spark may find fewer
            return Found(None) if exact else None
    if only_past_bound:
        return None  # at most the bound: Spark is asked, as without this read
    if len(found) <= bound:
        return Found(sorted(found))
    ordered = np.array(sorted(found), dtype=np.int64)
    return Found(None, _widest_runs(ordered, spans or 1), len(found))


def _widest_runs(values: np.ndarray, count: int) -> list[tuple[int, int]]:
    """Sorted distinct integers as at most ``count`` ranges, split at the widest gaps."""
    gaps = np.diff(values)
    wide = np.flatnonzero(gaps > 1)
    cut = np.sort(wide[np.argsort(-gaps[wide], kind="stable")[: count - 1]])
    starts = [int(values[0]), *(int(v) for v in values[cut + 1])]
    ends = [*(int(v) for v in values[cut]), int(values[-1])]
    return list(zip(starts, ends, strict=True))


def _every_row_level(
    source: Source, result: PruneResult, view: SparkView, where: str | Predicate | None
) -> PruneResult | None:
    """``result`` again, with the row sets of every kept file (prune's default stops
    at a sample of a file's rows once it finds a match there)."""
    try:
        with query_log.paused():  # the same query again, already logged
            given = result.predicate if where is None else where  # a predicate: bound as is
            return source.prune(given, view.time_zone, view.case_sensitive, row_level="always")
    except (SkipIndexError, OSError):
        return None


def _values(
    fs: Any,
    path: str,
    info: Any,
    file: str,
    result: PruneResult,
    column: str,
    target: pa.DataType,
    view: SparkView,
) -> list[Any] | None:
    rows = result.rows_of(file)
    listed = result.listed.get(file)
    if rows is not None and (listed is None or listed != (info.size, info.mtime_ns // 1_000_000)):
        return None  # the rows were counted in another version of the file
    stamp = (path, str(info.size), str(info.mtime_ns), column, str(target), repr(view))
    values = _read.get(stamp)
    if values is None:
        try:
            parquet = open_file(path, fs)
            picks = spark_columns(parquet, pa.schema([pa.field(column, target)]), view)
            if isinstance(picks, str):
                return None
            if picks[0] is None:
                return []  # the file lacks the column: Spark reads NULLs
            values = without_views(parquet.read(columns=[picks[0]])).column(0)
        except (OSError, ValueError, pa.ArrowException):
            return None
        _read.put(stamp, values)
    if rows is not None:
        values = values.take(pa.array(rows, pa.uint32()))
    return list(pc.unique(values.drop_null()).to_pylist())


# Key columns read from dimension files, by file version (path, size, mtime) and
# how they were read: the same dimension is read by query after query (5-7 ms a file).
_read: ColumnCache[pa.ChunkedArray] = ColumnCache(min(CACHED_BYTES, LIMIT))


def _arrow_type(schema: Any, column: str, case_sensitive: bool) -> pa.DataType | None:
    spelled = spark_type(schema, column, case_sensitive)
    if spelled is not None and spelled.startswith("decimal("):
        precision, scale = spelled[len("decimal(") : -1].split(",")
        return pa.decimal128(int(precision), int(scale))
    return _TYPES.get(spelled or "")
