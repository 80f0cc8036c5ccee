"""Segments: ``_skipindex/segments/<id>.parquet``, one row per indexed data file.

Columns: the file's identity (``path`` relative to the table root, ``size``,
``mtime_ms``), ``num_rows``, ``row_group_rows``, ``error`` (why a file could not
be indexed; its payloads are then null and prune always keeps it), then one
struct column per index definition, named by ``IndexDef.field``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from skipindex.errors import IndexCorruptError
from skipindex.indexes import kind_for
from skipindex.store.cache import segment_cache
from skipindex.store.location import TableLocation
from skipindex.store.manifest import Manifest, SegmentRef

__all__ = [
    "BASE_FIELDS",
    "FILE_SCHEMA",
    "copy_segments",
    "read_segment_column",
    "read_segments",
    "SegmentWriter",
    "segment_schema",
    "segment_table",
    "write_segment",
]

FILE_SCHEMA = pa.schema(
    [
        ("path", pa.string()),
        ("size", pa.int64()),
        ("mtime_ms", pa.int64()),
        ("num_rows", pa.int64()),
        ("row_group_rows", pa.list_(pa.int64())),
        ("error", pa.string()),
    ]
)
BASE_FIELDS = tuple(FILE_SCHEMA.names)
IDENTITY_FIELDS = ("path", "size", "mtime_ms", "num_rows", "error")


def segment_schema(payload_types: dict[str, pa.StructType]) -> pa.Schema:
    """A segment's columns: the base fields, then one struct per index field."""
    return pa.schema([*FILE_SCHEMA, *payload_types.items()])


def segment_table(
    files: Sequence[dict[str, Any]], payloads: dict[str, tuple[pa.StructType, list[Any]]]
) -> pa.Table:
    """Assemble a segment from per-file base rows and per-index payload lists."""
    columns = [
        pa.array([f[name] for f in files], type=FILE_SCHEMA.field(name).type)
        for name in BASE_FIELDS
    ]
    columns += [pa.array(values, type=struct_type) for struct_type, values in payloads.values()]
    schema = segment_schema({name: struct_type for name, (struct_type, _) in payloads.items()})
    return pa.Table.from_arrays(columns, schema=schema)


def write_segment(location: TableLocation, name: str, table: pa.Table) -> SegmentRef:
    """Write a segment; it is invisible to readers until a manifest names it."""
    with SegmentWriter(location, name, table.schema) as writer:
        writer.write(table)
    return writer.ref()


class SegmentWriter:
    """A segment written one row group at a time, so that a task indexing many
    files holds only the payloads of the files not yet written (holding a whole
    bin's, 500 MB for 167 files with every kind, made each file 17 ms slower)."""

    def __init__(self, location: TableLocation, name: str, schema: pa.Schema) -> None:
        self._location = location
        self._relative = f"segments/{name}.parquet"
        self._path = f"{location.index_dir}/{self._relative}"
        location.fs.create_dir(f"{location.index_dir}/segments", recursive=True)
        # Page checksums: a flipped byte fails the read instead of decoding wrongly.
        # No dictionaries: payloads are distinct blobs, and hashing them cost 8 % of
        # the write for nothing.
        self._writer = pq.ParquetWriter(
            self._path,
            schema,
            filesystem=location.fs,
            compression="zstd",
            write_page_checksum=True,
            use_dictionary=False,
        )
        self._files = 0
        self._rows = 0

    def __enter__(self) -> SegmentWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        self._writer.close()
        if kind is not None:  # no manifest will name it: do not leave it for vacuum
            with contextlib.suppress(OSError):
                self._location.fs.delete_file(self._path)

    def write(self, table: pa.Table) -> None:
        """Append ``table``'s files as one row group."""
        self._writer.write_table(table, row_group_size=max(len(table), 1))
        self._files += len(table)
        self._rows += int(pa.compute.sum(table.column("num_rows")).as_py() or 0)

    def ref(self) -> SegmentRef:
        """The manifest entry of the closed segment."""
        size = self._location.fs.get_file_info(self._path).size
        return SegmentRef(path=self._relative, files=self._files, rows=self._rows, bytes=int(size))


def copy_segments(
    location: TableLocation,
    manifest: Manifest,
    refs: Sequence[SegmentRef],
    fields: Sequence[str],
    prefix: str,
    keep: Callable[[SegmentRef, pa.Table], pa.Array] | None = None,
    transform: Callable[[SegmentRef, pa.Table], pa.Table] | None = None,
) -> list[SegmentRef]:
    """New segments holding ``fields`` of ``refs``, and only the rows ``keep``
    selects (all by default), passed through ``transform`` if given; segments
    left empty are not written. Build uses it to drop removed files' rows and to
    add new index columns, drop_index to drop index columns."""
    out = []
    for number, ref in enumerate(refs):
        table = read_segments(location, replace(manifest, segments=(ref,)), fields, BASE_FIELDS)
        if keep is not None:
            table = table.filter(keep(ref, table))
        if transform is not None:
            table = transform(ref, table)
        if len(table):
            out.append(write_segment(location, f"{prefix}{number:05d}", table))
    return out


def read_segments(
    location: TableLocation,
    manifest: Manifest,
    fields: Iterable[str] = (),
    base: Sequence[str] = IDENTITY_FIELDS,
) -> pa.Table:
    """The rows of every segment of ``manifest``: ``base`` columns plus ``fields``.

    Only the requested columns are read. Damage raises IndexCorruptError naming
    the segment file.
    """
    columns = list(base) + [f for f in fields if f not in base]
    cached = [c for c in columns if c in BASE_FIELDS]
    in_use: set[tuple[str, ...]] = {
        (location.uri, ref.path, c) for ref in manifest.segments for c in cached
    }
    tables = [_read_one(location, ref, columns, in_use) for ref in manifest.segments]
    if not tables:
        return _empty(manifest, columns)
    return pa.concat_tables(tables, promote_options="none")


def read_segment_column(location: TableLocation, ref: SegmentRef, field: str) -> pa.Array:
    """One column of one segment as one array (index payloads: never cached here)."""
    column = _read_columns(location, ref, [field]).column(field)
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _read_one(
    location: TableLocation, ref: SegmentRef, columns: list[str], in_use: set[tuple[str, ...]]
) -> pa.Table:
    """The requested columns of one segment, the base ones from the cache where
    possible. Index payloads are not cached here: prune keeps them, once, in the
    batches it decodes them into (see :mod:`skipindex.store.cache`)."""
    keys = {c: (location.uri, ref.path, c) for c in columns if c in BASE_FIELDS}
    cached = {c: segment_cache.get(k) for c, k in keys.items()}
    missing = [c for c in columns if cached.get(c) is None]
    if missing:
        table = _read_columns(location, ref, missing)
        for name in missing:
            cached[name] = table.column(name)
            if name in keys:
                segment_cache.put(keys[name], table.column(name), protect=in_use)
    return pa.table({c: cached[c] for c in columns})


def _read_columns(location: TableLocation, ref: SegmentRef, columns: list[str]) -> pa.Table:
    path = f"{location.index_dir}/{ref.path}"
    try:
        table = pq.read_table(
            path, columns=columns, filesystem=location.fs, page_checksum_verification=True
        )
    except FileNotFoundError as exc:
        raise IndexCorruptError(f"index segment is missing: {path}") from exc
    except (pa.ArrowException, OSError, KeyError) as exc:
        raise IndexCorruptError(f"index segment is damaged: {path}: {exc}") from exc
    if len(table) != ref.files or table.column_names != columns:
        raise IndexCorruptError(
            f"index segment {path} does not match its manifest entry "
            f"({len(table)} rows, expected {ref.files})"
        )
    return table


def _empty(manifest: Manifest, columns: list[str]) -> pa.Table:
    types = {name: FILE_SCHEMA.field(name).type for name in BASE_FIELDS}
    for definition in manifest.indexes:
        types[definition.field] = kind_for(definition, manifest.arrow_schema).payload_type()
    return pa.table({name: pa.array([], type=types[name]) for name in columns})
