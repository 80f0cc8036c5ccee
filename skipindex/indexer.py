"""Index a bin of data files into one segment. Runs inside a Spark task (or
directly, in tests); imports no Spark.

Each file is read once, only its indexed columns, the way Spark reads them
(:mod:`skipindex.spark_view`: INT96, calendar rebasing, case-insensitive names,
struct fields). A column missing from a file is all NULL there (what Spark
reads); a column Spark would read differently or refuse, and a file that is not
Parquet at all, get a null payload, which prune answers with "might match".
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import pyarrow as pa

from skipindex._types import to_physical
from skipindex.column_paths import field_at, split_name
from skipindex.indexes import kind_for
from skipindex.indexes._column_work import ColumnWork
from skipindex.indexes.base import IndexKind
from skipindex.spark_view import SparkView, open_file, read_columns, rows_of, value_set
from skipindex.store.location import DataFile, TableLocation, locate
from skipindex.store.manifest import IndexDef, SegmentRef
from skipindex.store.segments import SegmentWriter, segment_schema, segment_table

__all__ = ["IndexJob", "SegmentWritten", "index_bins", "index_files"]


@dataclass(frozen=True)
class IndexJob:
    """Everything a task needs, in plain picklable values (shipped by Spark)."""

    uri: str
    user_root: str
    schema: pa.Schema
    definitions: tuple[IndexDef, ...]
    build_id: str
    view: SparkView = field(default_factory=SparkView)
    storage_options: tuple[tuple[str, str], ...] = ()  # as resolved on the driver


@dataclass(frozen=True)
class SegmentWritten:
    """What a task reports: the segment it wrote, the column bytes it read, its time."""

    segment: SegmentRef
    bytes_read: int
    seconds: float

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> SegmentWritten:
        doc = json.loads(text)
        return cls(SegmentRef(**doc["segment"]), int(doc["bytes_read"]), float(doc["seconds"]))


# Payload bytes a task holds before writing them as a row group of its segment.
ROW_GROUP_BYTES = 32 << 20


def index_bins(
    job: IndexJob, bins: Iterator[tuple[int, list[DataFile]]]
) -> Iterator[SegmentWritten]:
    """mapPartitions body: one segment per bin, yielding its description."""
    location = locate(job.uri, dict(job.storage_options))
    kinds = [kind_for(d, job.schema) for d in job.definitions]
    for bin_id, files in bins:
        started = time.perf_counter()
        ref, bytes_read = index_files(location, job, kinds, files, f"{job.build_id}-{bin_id:05d}")
        yield SegmentWritten(ref, bytes_read, time.perf_counter() - started)


def index_files(
    location: TableLocation,
    job: IndexJob,
    kinds: Sequence[IndexKind],
    files: Sequence[DataFile],
    name: str,
) -> tuple[SegmentRef, int]:
    """Index ``files`` into the segment ``name``; its entry and the column bytes read.

    Files are written in row groups of about ROW_GROUP_BYTES of payloads (sized
    from the first file's), so a bin of many files never sits in memory whole."""
    types = {d.field: k.payload_type() for d, k in zip(job.definitions, kinds, strict=True)}
    bytes_read = 0
    per_group = 1
    pending: list[tuple[dict[str, Any], list[Any]]] = []
    with SegmentWriter(location, name, segment_schema(types)) as writer:
        for number, data_file in enumerate(files):
            row, payloads, read = _index_file(location, kinds, job, data_file)
            bytes_read += read
            pending.append((row, payloads))
            if len(pending) >= per_group or number == len(files) - 1:
                table = _segment_rows(types, pending)
                writer.write(table)
                if number == 0:
                    per_group = max(1, ROW_GROUP_BYTES // max(table.nbytes, 1))
                pending = []
        if not files:
            writer.write(_segment_rows(types, []))
    return writer.ref(), bytes_read


def _segment_rows(
    types: dict[str, pa.StructType], files: list[tuple[dict[str, Any], list[Any]]]
) -> pa.Table:
    """The segment rows of indexed files (base row, payloads in ``types`` order)."""
    columns = {
        name: (struct_type, [payloads[at] for _, payloads in files])
        for at, (name, struct_type) in enumerate(types.items())
    }
    return segment_table([row for row, _ in files], columns)


def _index_file(
    location: TableLocation,
    kinds: Sequence[IndexKind],
    job: IndexJob,
    data_file: DataFile,
) -> tuple[dict[str, Any], list[Any], int]:
    row: dict[str, Any] = {
        "path": data_file.path,
        "size": data_file.size,
        "mtime_ms": data_file.mtime_ms,
        "num_rows": 0,
        "row_group_rows": [],
        "error": None,
    }
    columns = list(dict.fromkeys(k.column for k in kinds))
    wanted = [(split_name(c), field_at(job.schema, c).type) for c in columns]
    dictionaries = [
        split_name(c)
        for c in columns
        if all(k.values_only or k.dictionary_rows for k in kinds if k.column == c)
    ]
    source = location.fs_path(data_file.path)
    try:
        parquet = open_file(source, filesystem=location.fs)
        metadata = parquet.metadata
        reopen = functools.partial(open_file, source, location.fs)
        arrays, bytes_read = read_columns(parquet, wanted, job.view, dictionaries, reopen)
    except (pa.ArrowException, OSError) as exc:
        row["error"] = f"not a readable Parquet file: {exc}"
        return row, [None] * len(kinds), 0
    row["num_rows"] = metadata.num_rows
    row["row_group_rows"] = [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)]
    # Each column in physical form once, shared by its kinds; a str says why not.
    # Dictionary columns (strings) are already physical.
    physical = {
        column: value if isinstance(value, str | pa.DictionaryArray) else to_physical(value)
        for column, value in zip(columns, arrays.values(), strict=True)
    }
    notes = [column for column in physical.values() if isinstance(column, str)]
    row["error"] = "; ".join(dict.fromkeys(notes)) or None
    return row, _build_payloads(kinds, physical), bytes_read


def _build_payloads(
    kinds: Sequence[IndexKind], physical: dict[str, pa.Array | str]
) -> list[dict[str, Any] | None]:
    """Each kind's payload (None for a column that could not be read), in the
    order of ``kinds``. Kinds on one plain column share one ColumnWork, and the
    row-level kinds run first: a Bloom filter then reuses their sort."""
    works: dict[str, ColumnWork] = {}
    payloads: list[dict[str, Any] | None] = [None] * len(kinds)
    for at in sorted(range(len(kinds)), key=lambda i: not kinds[i].row_level):
        kind = kinds[at]
        column = physical[kind.column]
        if isinstance(column, str):
            continue
        if isinstance(column, pa.DictionaryArray):
            if kind.values_only:
                payloads[at] = kind.build(value_set(column))
            else:
                payloads[at] = kind.build(column if kind.dictionary_rows else rows_of(column))
        else:
            work = works.setdefault(kind.column, ColumnWork(column, kind.domain))
            payloads[at] = kind.build(column, work)
    return payloads
