"""Segments: ``_skipindex/segments/<id>.parquet``, one row per indexed data file.

Columns: the file's identity (``path`` relative to the table root, ``size``,
``mtime_ms``), ``num_rows``, ``row_group_rows``, ``error`` (why a file could not
be indexed; its payloads are then null and prune always keeps it), then one
struct column per index definition, named by ``IndexDef.field``.
"""

from __future__ import annotations

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
    "read_segments",
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


def segment_table(
    files: Sequence[dict[str, Any]], payloads: dict[str, tuple[pa.StructType, list[Any]]]
) -> pa.Table:
    """Assemble a segment from per-file base rows and per-index payload lists."""
    columns = [
        pa.array([f[name] for f in files], type=FILE_SCHEMA.field(name).type)
        for name in BASE_FIELDS
    ]
    names = list(BASE_FIELDS)
    for field_name, (struct_type, values) in payloads.items():
        columns.append(pa.array(values, type=struct_type))
        names.append(field_name)
    return pa.Table.from_arrays(columns, names=names)


def write_segment(location: TableLocation, name: str, table: pa.Table) -> SegmentRef:
    """Write a segment; it is invisible to readers until a manifest names it."""
    relative = f"segments/{name}.parquet"
    path = f"{location.index_dir}/{relative}"
    location.fs.create_dir(f"{location.index_dir}/segments", recursive=True)
    # Page checksums: a flipped byte fails the read instead of decoding wrongly.
    # No dictionaries: payloads are distinct blobs, and hashing them cost 8 % of
    # the write for nothing.
    pq.write_table(
        table,
        path,
        filesystem=location.fs,
        compression="zstd",
        write_page_checksum=True,
        use_dictionary=False,
    )
    size = location.fs.get_file_info(path).size
    rows = int(pa.compute.sum(table.column("num_rows")).as_py() or 0) if len(table) else 0
    return SegmentRef(path=relative, files=len(table), rows=rows, bytes=int(size))


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
