"""Index a bin of data files into one segment. Runs inside a Spark task (or
directly, in tests); imports no Spark.

Each file is read once, only its indexed columns, the way Spark reads them
(:mod:`skipindex.spark.view`: INT96, calendar rebasing, case-insensitive names,
struct fields) and in the table's recorded type. A column missing from a file is
all NULL there (what Spark reads); a column Spark would read differently or
refuse, and a file that is not Parquet at all, get a null payload, which prune
answers with "might match". A file whose values need a wider type than the
recorded one says which (:attr:`SegmentWritten.widened`): the build then widens
the recorded type and indexes again, so that prune never rules out a literal
some indexed file holds.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import pyarrow as pa

from skipindex._types import spark_type_name, to_physical
from skipindex.column_paths import field_at, resolve_path, split_name
from skipindex.indexes import kind_for
from skipindex.indexes._column_work import ColumnWork
from skipindex.indexes.base import IndexKind
from skipindex.spark.settings import SparkView
from skipindex.spark.view import open_file, read_columns, rows_of, value_set
from skipindex.spark.widening import NotIndexed, join_types, types_to_text
from skipindex.store.iceberg import spelled_by_field_id
from skipindex.store.location import DataFile, TableLocation, locate
from skipindex.store.manifest import IndexDef, SegmentRef
from skipindex.store.segments import SegmentWriter, segment_schema, segment_table

__all__ = [
    "IndexJob",
    "SegmentWritten",
    "build_payloads",
    "index_bins",
    "index_files",
    "segment_rows",
]


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
    # The first file's types: what Spark reads every file in without mergeSchema.
    first: pa.Schema = field(default_factory=lambda: pa.schema([]))
    # An Iceberg table: columns are matched by the field ids ``schema`` carries.
    by_field_id: bool = False


@dataclass(frozen=True)
class SegmentWritten:
    """What a task reports: the segment it wrote, the column bytes it read, its
    time, and the wider types some files' values need (:func:`types_to_text`)."""

    segment: SegmentRef
    bytes_read: int
    seconds: float
    widened: str = ""

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> SegmentWritten:
        doc = json.loads(text)
        return cls(
            SegmentRef(**doc["segment"]),
            int(doc["bytes_read"]),
            float(doc["seconds"]),
            str(doc.get("widened", "")),
        )


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
        widened: dict[str, pa.DataType] = {}
        ref, bytes_read = index_files(
            location, job, kinds, files, f"{job.build_id}-{bin_id:05d}", widened
        )
        seconds = time.perf_counter() - started
        yield SegmentWritten(ref, bytes_read, seconds, types_to_text(widened))


def index_files(
    location: TableLocation,
    job: IndexJob,
    kinds: Sequence[IndexKind],
    files: Sequence[DataFile],
    name: str,
    widened: dict[str, pa.DataType] | None = None,
) -> tuple[SegmentRef, int]:
    """Index ``files`` into the segment ``name``; its entry and the column bytes read.
    Columns whose values need a wider type than ``job.schema`` gives are added to
    ``widened`` (column key -> the type they need).

    Files are written in row groups of about ROW_GROUP_BYTES of payloads (sized
    from the first file's), so a bin of many files never sits in memory whole."""
    types = {d.field: k.payload_type() for d, k in zip(job.definitions, kinds, strict=True)}
    bytes_read = 0
    per_group = 1
    pending: list[tuple[dict[str, Any], list[Any]]] = []
    wider = {} if widened is None else widened
    with SegmentWriter(location, name, segment_schema(types)) as writer:
        for number, data_file in enumerate(files):
            row, payloads, read = _index_file(location, kinds, job, data_file, wider)
            bytes_read += read
            pending.append((row, payloads))
            if len(pending) >= per_group or number == len(files) - 1:
                table = segment_rows(types, pending)
                writer.write(table)
                if number == 0:
                    per_group = max(1, ROW_GROUP_BYTES // max(table.nbytes, 1))
                pending = []
        if not files:
            writer.write(segment_rows(types, []))
    return writer.ref(), bytes_read


def segment_rows(
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
    widened: dict[str, pa.DataType],
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
        if job.by_field_id:  # as the file spells each column, whatever it is called now
            spelled = spelled_by_field_id(parquet.schema_arrow, job.schema, [p for p, _ in wanted])
            named = {split_name(c): spelled[split_name(c)] for c in columns}
            wanted = [(named[path], kind) for path, kind in wanted]
            dictionaries = [named[path] for path in dictionaries]
        arrays, bytes_read = read_columns(parquet, wanted, job.view, dictionaries, reopen)
    except (pa.ArrowException, OSError) as exc:
        row["error"] = f"not a readable Parquet file: {exc}"
        return row, [None] * len(kinds), 0
    row["num_rows"] = metadata.num_rows
    row["row_group_rows"] = [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)]
    # Each column in physical form once, shared by its kinds; a str says why not.
    # Dictionary columns (strings) are already physical.
    physical: dict[str, pa.Array | str] = {}
    for column, read in zip(columns, arrays.values(), strict=True):
        if isinstance(read, NotIndexed) and read.wider is not None:
            known = widened.get(column)
            joined = read.wider if known is None else join_types(known, read.wider)
            widened[column] = read.wider if joined is None else joined
        value = read
        if not isinstance(read, str) and not job.by_field_id:  # Iceberg promotes ints itself
            value = _as_first_reads(read, column, job)
        physical[column] = (
            value if isinstance(value, str | pa.DictionaryArray) else to_physical(value)
        )
    notes = [column for column in physical.values() if isinstance(column, str)]
    row["error"] = "; ".join(dict.fromkeys(notes)) or None
    return row, build_payloads(kinds, physical), bytes_read


def _as_first_reads(values: pa.Array, column: str, job: IndexJob) -> pa.Array | str:
    """An integer column whose values the first file's narrower integer type
    does not hold is not indexed: Spark, reading every file in that type, wraps
    them (a SMALLINT 300 read as TINYINT is 44) or fails."""
    if not pa.types.is_integer(values.type):
        return values
    found = resolve_path(job.first, split_name(column), case_sensitive=job.view.case_sensitive)
    first = found[1].type if found is not None else None
    if first is None or first == values.type or not pa.types.is_integer(first):
        return values
    try:
        values.cast(first, safe=True)
    except pa.ArrowInvalid:
        return (
            f"column '{column}' holds values the table's first file's type "
            f"{spark_type_name(first)} does not, and Spark reads every file in that type; "
            "not indexed"
        )
    return values


def build_payloads(
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
