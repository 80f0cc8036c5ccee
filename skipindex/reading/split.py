"""Reading one split: the row groups and rows of one kept file that can match,
typed as Spark reads them (see :mod:`skipindex.reading.row_groups` for which
files are read so, and :mod:`skipindex.reading.source` for the data source
that runs this in Spark's tasks). Imports no Spark."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pyroaring import BitMap

from skipindex.errors import TableChangedError, UnsupportedTableError
from skipindex.reading.footers import stamp
from skipindex.reading.pages import PagedFile
from skipindex.reading.row_groups import Split, in_files_of
from skipindex.spark.int96 import spark_int96
from skipindex.spark.settings import SparkView
from skipindex.spark.view import file_schema, int96_columns, open_file, spark_columns, without_views

__all__ = ["read_split"]


def read_split(split: Split, target: pa.Schema, view: SparkView) -> Iterator[pa.RecordBatch]:
    """The split's rows, one batch per row group, typed as ``target``."""
    parquet = open_file(split.path)
    meta = parquet.metadata
    if stamp(split.path) != (split.size, split.mtime_ms) or meta.num_rows != split.num_rows:
        raise TableChangedError(f"{split.path} changed since it was pruned; read the table again")
    constants = {}
    if split.constants:
        partition_values = pa.ipc.open_stream(split.constants).read_all()
        constants = {n.lower(): partition_values.column(n) for n in partition_values.column_names}
    in_files = in_files_of(target, constants)
    picks = spark_columns(parquet, in_files, view)
    if isinstance(picks, str):
        raise TableChangedError(f"{split.path}: {picks} (it was readable when pruned)")
    pick_of = dict(zip(in_files.names, picks, strict=True))
    read = sorted({p for p in picks if p is not None})
    if not split.groups:
        return
    typed = pa.schema([file_schema(parquet).field(name) for name in read])
    short = _short_strings(meta, split.groups[0], typed)
    # One thread per task (Spark runs a task per core), the column chunks fetched
    # in one go, and few-valued strings kept as dictionaries until the take.
    parquet = open_file(split.path, metadata=meta, pre_buffer=True, read_dictionary=short)
    paged = PagedFile.open(split.path)
    int96 = sorted(int96_columns(parquet) & set(read))
    rows = np.asarray(BitMap.deserialize(split.rows).to_array(), dtype=np.int64)
    per_group = _rows_per_group(meta, rows)
    try:
        for group in split.groups:
            wanted = per_group[group]
            if not len(wanted):
                continue
            values = _group_values(parquet, paged, group, wanted, read, short)
            for name in int96:  # pyarrow and Spark read wrapped INT96 values differently
                values[name] = _int96_values(split.path, meta, group, wanted, name, values[name])
            table = pa.table([values[name] for name in read], names=read).cast(typed)
            columns = [_column(field, table, pick_of, constants, len(wanted)) for field in target]
            yield pa.RecordBatch.from_arrays(columns, schema=target)
    finally:
        if paged is not None:
            paged.close()


def _int96_values(
    path: str, meta: pq.FileMetaData, group: int, wanted: np.ndarray, name: str, micros: pa.Array
) -> pa.Array:
    """An INT96 column's values at ``wanted`` as Spark reads them: pyarrow reads
    the timestamps Spark's writer wrapped (past year 287,000) as other times,
    so they are told apart from a second reading in milliseconds (one more
    read of this column's chunk; see :mod:`skipindex.spark.int96`)."""
    millis = open_file(path, metadata=meta, coerce_int96_timestamp_unit="ms")
    again = millis.read_row_group(group, columns=[name], use_threads=False)
    exact = spark_int96(micros, again.column(name).take(pa.array(wanted)).combine_chunks())
    if isinstance(exact, str):
        raise UnsupportedTableError(f"{path}: column '{name}': {exact}; read it with Spark")
    return exact


def _group_values(
    parquet: pq.ParquetFile,
    paged: PagedFile | None,
    group: int,
    wanted: np.ndarray,
    read: list[str],
    short: list[str],
) -> dict[str, pa.Array]:
    """Per column in ``read``, its values at rows ``wanted`` of row group
    ``group``: from the few pages holding them where that pays, else from
    the whole column chunks, read together."""
    values = {}
    if paged is not None:
        for name in read:
            column = paged.column_values(group, name, wanted, dictionary=name in short)
            if column is not None:
                values[name] = column
    rest = [name for name in read if name not in values]
    if rest:
        whole = without_views(parquet.read_row_group(group, columns=rest, use_threads=False))
        taken = whole.take(pa.array(wanted))
        values.update((name, taken.column(name).combine_chunks()) for name in rest)
    return values


# Dictionary-encoded strings of at most this many bytes per value (the indices,
# not the text) decode faster as dictionaries: 40 % of a row group's time, where
# 4 of its 16 columns are such strings.
_SHORT_BYTES_PER_VALUE = 4


def _short_strings(meta: pq.FileMetaData, group: int, typed: pa.Schema) -> list[str]:
    """Top-level string columns stored as little more than dictionary indices."""
    chunks = meta.row_group(group)
    out = []
    for at in range(chunks.num_columns):
        chunk = chunks.column(at)
        name = chunk.path_in_schema
        if name not in typed.names or not pa.types.is_string(typed.field(name).type):
            continue
        per_value = chunk.total_uncompressed_size / max(chunk.num_values, 1)
        if chunk.has_dictionary_page and per_value <= _SHORT_BYTES_PER_VALUE:
            out.append(name)
    return out


def _column(
    field: pa.Field,
    table: pa.Table,
    pick_of: dict[str, str | None],
    constants: dict[str, pa.ChunkedArray],
    rows: int,
) -> pa.Array:
    """One output column: a partition value repeated, a file column, or NULLs."""
    constant = constants.get(field.name.lower())
    if constant is not None:
        return constant.combine_chunks().take(pa.array(np.zeros(rows, np.int64))).cast(field.type)
    pick = pick_of[field.name]
    if pick is None:
        return pa.nulls(rows, field.type)
    return table.column(pick).combine_chunks().cast(field.type)


def _rows_per_group(meta: pq.FileMetaData, rows: np.ndarray) -> list[np.ndarray]:
    """``rows`` (sorted file row numbers) split by row group, each counted from
    its row group's first row."""
    starts = np.cumsum([0] + [meta.row_group(g).num_rows for g in range(meta.num_row_groups)])
    bounds = np.searchsorted(rows, starts)
    return [rows[bounds[g] : bounds[g + 1]] - starts[g] for g in range(meta.num_row_groups)]
