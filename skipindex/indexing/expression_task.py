"""Index the values Spark computed for expression indexes. Runs inside a Spark
task (``mapInArrow``); imports no Spark.

The task receives rows ``(file_path, row_index, v0, v1, ...)``: every row of
the files hashed to it, sorted by file and row position, ``v<i>`` the value of
the i-th expression as Spark computed it. It takes them file by file, checks
that the positions are 0..n-1 (else the file gets no payload: "might match"),
builds each kind's payload from the values exactly as the column indexer builds
them from a column (:func:`skipindex.indexing.indexer.build_payloads`), and
writes one segment. The build merges its payload columns into the column
segments by path (:mod:`skipindex.indexing.merging`), where the files' row
counts are checked against their footers'.

Spark reports each file as a URI, percent-encoded (``file:/t/p%3Da%20b/f.parquet``);
it is mapped back to the build's relative path by decoding it and dropping the
scheme, else by the longest tail that is a path of the build.
"""

from __future__ import annotations

import itertools
import re
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

import numpy as np
import pyarrow as pa

from skipindex._types import to_physical
from skipindex.indexes import kind_for
from skipindex.indexes.base import IndexKind
from skipindex.indexing.indexer import SegmentWritten, build_payloads, segment_rows
from skipindex.store.listing import DataFile
from skipindex.store.location import locate
from skipindex.store.manifest import IndexDef
from skipindex.store.segments import SegmentWriter, segment_schema

__all__ = [
    "ExpressionJob",
    "ExpressionRun",
    "ExpressionType",
    "FileMatcher",
    "index_rows",
    "value_column",
]

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
FILES_PER_GROUP = 16  # files per row group of the segment a task writes


def value_column(at: int) -> str:
    """The name of the i-th expression's values in the rows a task receives."""
    return f"v{at}"


@dataclass(frozen=True)
class ExpressionJob:
    """Everything an expression task needs, in plain picklable values."""

    uri: str
    user_root: str
    schema: pa.Schema  # with the expressions' fields
    definitions: tuple[IndexDef, ...]  # expression definitions only
    keys: tuple[str, ...]  # v<i> holds the values of keys[i]
    files: tuple[DataFile, ...]
    build_id: str
    storage_options: tuple[tuple[str, str], ...] = ()
    texts: tuple[str, ...] = ()  # the expression of each key, as written (Spark runs these)
    time_zone: str = "UTC"  # the session zone Spark computes them in
    read_schema: str | None = None  # Spark's StructType (JSON) of the data columns to read with


@dataclass(frozen=True)
class ExpressionType:
    """What Spark makes of an expression over the table: its values' Arrow type,
    and whether they depend on the session time zone."""

    arrow_type: pa.DataType
    zone_dependent: bool


@dataclass(frozen=True)
class ExpressionRun:
    """What one evaluation stage wrote, and the files Spark failed on (path -> why)."""

    written: list[SegmentWritten]
    failed: dict[str, str] = field(default_factory=dict)


def _normal(path: str) -> str:
    """A path without its scheme and leading slashes (``s3a://b/t`` and ``s3://b/t``
    are ``b/t``)."""
    return _SCHEME.sub("", path).lstrip("/")


class FileMatcher:
    """Spark's file URIs -> the build's data files (whose paths are file names as
    they are: never decoded, ``f%20x.parquet`` is not ``f x.parquet``)."""

    def __init__(self, user_root: str, files: Sequence[DataFile]) -> None:
        root = user_root.rstrip("/")
        self.exact = {_normal(f"{root}/{f.path}"): f for f in files}
        self.relative = {f.path: f for f in files}

    def __call__(self, spark_path: str) -> DataFile | None:
        path = _normal(unquote(spark_path))
        found = self.exact.get(path)
        if found is not None:
            return found
        parts = path.split("/")
        for at in range(len(parts)):
            found = self.relative.get("/".join(parts[at:]))
            if found is not None:
                return found
        return None


def index_rows(job: ExpressionJob, batches: Iterable[pa.RecordBatch]) -> SegmentWritten | None:
    """One segment of the files whose rows ``batches`` hold (None: no rows)."""
    started = time.perf_counter()
    location = locate(job.uri, dict(job.storage_options))
    kinds = [kind_for(d, job.schema) for d in job.definitions]
    types = {d.field: k.payload_type() for d, k in zip(job.definitions, kinds, strict=True)}
    matcher = FileMatcher(job.user_root, job.files)
    name = f"{job.build_id}-e{uuid.uuid4().hex[:12]}"
    values_bytes = 0
    with ExitStack() as stack:  # a failed task deletes what it wrote
        writers: list[SegmentWriter] = []

        def write(pending: list[tuple[dict[str, Any], list[Any]]]) -> None:
            if not writers:
                writers.append(
                    stack.enter_context(SegmentWriter(location, name, segment_schema(types)))
                )
            writers[0].write(segment_rows(types, pending))

        pending: list[tuple[dict[str, Any], list[Any]]] = []
        for path, chunks in _files(batches):
            data_file = matcher(path)
            if data_file is None:
                continue  # not a file of this build: nothing to say about it
            pending.append(_index_file(job, kinds, data_file, chunks))
            values_bytes += sum(c.nbytes for c in chunks)
            if len(pending) >= FILES_PER_GROUP:
                write(pending)
                pending = []
        if pending:
            write(pending)
    if not writers:
        return None
    return SegmentWritten(writers[0].ref(), values_bytes, time.perf_counter() - started)


def _files(batches: Iterable[pa.RecordBatch]) -> Iterator[tuple[str, list[pa.RecordBatch]]]:
    """The rows of each file in turn (rows arrive sorted by file)."""
    current: str | None = None
    chunks: list[pa.RecordBatch] = []
    for batch in batches:
        if batch.num_rows == 0:
            continue
        paths = np.asarray(batch.column(0).to_numpy(zero_copy_only=False), dtype=object)
        starts = [0, *(np.flatnonzero(paths[1:] != paths[:-1]) + 1).tolist(), len(paths)]
        for begin, end in itertools.pairwise(starts):
            path = str(paths[begin])
            if path != current:
                if current is not None:
                    yield current, chunks
                current, chunks = path, []
            chunks.append(batch.slice(begin, end - begin))
    if current is not None:
        yield current, chunks


def _index_file(
    job: ExpressionJob,
    kinds: Sequence[IndexKind],
    data_file: DataFile,
    chunks: list[pa.RecordBatch],
) -> tuple[dict[str, Any], list[Any]]:
    rows = pa.Table.from_batches(chunks)
    count = rows.num_rows
    row: dict[str, Any] = {
        "path": data_file.path,
        "size": data_file.size,
        "mtime_ms": data_file.mtime_ms,
        "num_rows": count,
        "row_group_rows": [],
        "error": None,
    }
    positions = rows.column(1).to_numpy()
    if not np.array_equal(positions, np.arange(count, dtype=positions.dtype)):
        row["error"] = (
            "expression indexes: the rows Spark read from it are not its rows 0..n-1 once each"
        )
        return row, [None] * len(kinds)
    physical: dict[str, pa.Array | str] = {}
    for at, key in enumerate(job.keys):
        values = rows.column(2 + at).combine_chunks()
        target = job.schema.field(key).type
        try:
            physical[key] = to_physical(values if values.type == target else values.cast(target))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            physical[key] = f"expression {job.texts[at] if job.texts else key}: {exc}"
    notes = [v for v in physical.values() if isinstance(v, str)]
    row["error"] = "; ".join(notes) or None
    return row, build_payloads(kinds, physical)
