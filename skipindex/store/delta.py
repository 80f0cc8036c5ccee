"""Delta tables as a source: the files of the current snapshot, read with ``deltalake``.

A Delta table's folder also holds files that earlier commits removed (until
Delta's own VACUUM), so listing the folder would index, and ``read()`` would
read, rows that are no longer in the table. The data files are the snapshot's
*add* actions instead.

The log is the truth about a file's partition values too: each *add* action
carries them as text, cast to the schema's type (an empty text is NULL), and
its path is a URI (``%20`` for a space), never a folder name to infer from.

Deletion vectors mark rows of a file deleted while the file stays as it was:
the index covers every row of it (a deleted row only makes prune keep more),
and the deleted positions travel with the listing, so that prune can keep
exactly the files holding a live match and reads leave the deleted rows out.

Column mapping (``name`` or ``id`` mode) names a file's columns physically
(``col-<uuid>``, with Parquet field ids): the table's schema, with each field's
id and physical name, is what columns are found by (:func:`delta_id_schema`),
so a column renamed or dropped after a build resolves as Delta resolves it.

Refused, never pruned: files outside the table root (shallow clones).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs

from skipindex.errors import NotATableError, UnsupportedTableError

__all__ = [
    "DELTA_LOG",
    "COLUMN_ID",
    "PHYSICAL_NAME",
    "DeltaFiles",
    "delta_arrow_schema",
    "delta_files",
    "delta_id_schema",
    "delta_partition_names",
    "delta_spark_schema_json",
    "delta_table",
    "delta_version",
    "is_delta",
    "latest_version",
]

DELTA_LOG = "_delta_log"
COLUMN_ID = b"delta.columnMapping.id"
PHYSICAL_NAME = b"delta.columnMapping.physicalName"
FIELD_ID = b"PARQUET:field_id"  # how Parquet (and Arrow's reader) carry a field id
_COMMIT = re.compile(r"(\d{20})\.json")


def is_delta(fs: Any, root: str) -> bool:
    return bool(fs.get_file_info(f"{root}/{DELTA_LOG}").type == pafs.FileType.Directory)


@dataclass(frozen=True)
class DeltaFiles:
    """The active files of a snapshot as columns: paths relative to the root,
    decoded; sizes; modification times in ms; and their partition values as the
    log types them (one column per partition column, one row per file, in the
    same order)."""

    paths: pa.StringArray
    sizes: np.ndarray
    mtimes_ms: np.ndarray
    partition_values: pa.Table
    # Rows deletion vectors delete, by path: sorted positions (0-based, row-group order).
    deleted: dict[str, np.ndarray]
    # With column mapping: the schema, each field with its id (see delta_id_schema).
    id_schema: pa.Schema | None = None


def latest_version(fs: Any, root: str) -> int | None:
    """The newest version the log holds a commit for (its greatest
    ``<version>.json``), found by listing ``_delta_log`` alone; None where the
    log cannot be listed so. A version never changes once written, so what is
    read of it may be kept by that number."""
    try:
        infos = fs.get_file_info(pafs.FileSelector(f"{root}/{DELTA_LOG}"))
    except (OSError, pa.ArrowException):
        return None
    versions = [int(m.group(1)) for i in infos if (m := _COMMIT.fullmatch(i.base_name))]
    return max(versions, default=None)


def delta_files(
    uri: str, user_root: str, options: dict[str, str], version: int | None = None
) -> DeltaFiles:
    """Every active file of the snapshot at ``version`` (default: the current
    one), with its partition values."""
    table = _open(uri, user_root, options, version)
    adds = pa.table(table.get_add_actions(flatten=False))
    paths = _decoded(adds.column("path").combine_chunks().cast(pa.string()))
    outside = pc.or_(pc.match_substring(paths, "://"), pc.starts_with(paths, "/"))
    if pc.any(outside).as_py():
        example = paths.filter(outside)[0].as_py()
        raise UnsupportedTableError(
            f"Delta table {user_root} has files outside its folder (e.g. {example}), as a "
            "shallow clone does; skipindex indexes files under the table root only"
        )
    return DeltaFiles(
        paths,
        np.asarray(adds.column("size_bytes").to_numpy(), dtype=np.int64),
        np.asarray(adds.column("modification_time").cast(pa.int64()).to_numpy(), dtype=np.int64),
        _partition_values(adds, list(table.metadata().partition_columns)),
        _deleted_rows(table),
        _id_schema(table),
    )


def _decoded(paths: pa.StringArray) -> pa.StringArray:
    """The log's paths as the files are named: each a URI ("a%20b" names the
    folder "a b"). Only paths with a "%" are decoded one by one (at a million
    files, decoding every path cost a second)."""
    escaped = np.flatnonzero(np.asarray(pc.match_substring(paths, "%"), dtype=bool))
    if len(escaped) == 0:
        return paths
    plain = paths.to_pylist()
    for at in escaped.tolist():
        plain[at] = unquote(plain[at])
    return pa.array(plain, pa.string())


def _partition_values(adds: pa.Table, names: list[str]) -> pa.Table:
    """The typed partition values of every add action, as columns named like the
    table's partition columns (deltalake casts the log's text to the schema's types)."""
    if not names or "partition" not in adds.column_names:
        return pa.table({name: pa.nulls(len(adds)) for name in names})
    struct = adds.column("partition").combine_chunks()
    fields = {struct.type.field(i).name: i for i in range(struct.type.num_fields)}
    return pa.table({name: struct.field(fields[name]) for name in names})


def delta_id_schema(uri: str, user_root: str, options: dict[str, str]) -> pa.Schema | None:
    """A column-mapped table's schema: logical names, each field (nested ones too)
    with its column mapping id as its Parquet field id and its physical name; None
    for a table without column mapping (its files name columns as it does)."""
    return _id_schema(_open(uri, user_root, options))


def _id_schema(table: Any) -> pa.Schema | None:
    if table.metadata().configuration.get("delta.columnMapping.mode") in (None, "", "none"):
        return None
    return pa.schema([_with_field_id(f) for f in pa.schema(table.schema().to_arrow())])


def _with_field_id(field: pa.Field) -> pa.Field:
    metadata = dict(field.metadata or {})
    found = metadata.get(COLUMN_ID)
    if found is not None:
        metadata[FIELD_ID] = found
    arrow_type = field.type
    if pa.types.is_struct(arrow_type):
        children = (arrow_type.field(i) for i in range(arrow_type.num_fields))
        arrow_type = pa.struct([_with_field_id(child) for child in children])
    return pa.field(field.name, arrow_type, field.nullable, metadata or None)


def delta_partition_names(uri: str, user_root: str, options: dict[str, str]) -> list[str]:
    """The table's partition columns, as its log names them."""
    return list(_open(uri, user_root, options).metadata().partition_columns)


def _deleted_rows(table: Any) -> dict[str, np.ndarray]:
    """The positions each file's deletion vector deletes, by path relative to the
    root (deltalake names a file by the table's URI and the log's encoded path)."""
    if "deletionVectors" not in (table.protocol().reader_features or []):
        return {}
    vectors = pa.table(table.deletion_vectors())
    if not len(vectors):
        return {}
    masks = vectors.column("selection_vector").combine_chunks()  # True: the row is kept
    kept = np.asarray(masks.flatten().to_numpy(zero_copy_only=False), dtype=bool)
    offsets = np.asarray(masks.offsets.to_numpy(), dtype=np.int64)
    gone = np.flatnonzero(~kept)
    owner = np.searchsorted(offsets, gone, side="right") - 1
    rows = gone - offsets[owner]
    bounds = np.searchsorted(owner, np.arange(len(vectors) + 1))
    prefix = str(table.table_uri).rstrip("/") + "/"
    deleted = {}
    for at, uri in enumerate(vectors.column("filepath").to_pylist()):
        path = unquote(uri.removeprefix(prefix)) if uri.startswith(prefix) else unquote(uri)
        deleted[path] = rows[bounds[at] : bounds[at + 1]]
    return deleted


_DELTA_OPTION_NAMES = {
    "access_key": "AWS_ACCESS_KEY_ID",
    "secret_key": "AWS_SECRET_ACCESS_KEY",
    "session_token": "AWS_SESSION_TOKEN",
    "region": "AWS_REGION",
    "endpoint_override": "AWS_ENDPOINT_URL",
}


def _delta_options(options: dict[str, str]) -> dict[str, str]:
    """skipindex's resolved S3 options, as delta-rs spells them."""
    out = {_DELTA_OPTION_NAMES[k]: v for k, v in options.items() if k in _DELTA_OPTION_NAMES}
    if out.get("AWS_ENDPOINT_URL", "").startswith("http://"):
        out["AWS_ALLOW_HTTP"] = "true"
    return out


def delta_arrow_schema(uri: str, user_root: str, options: dict[str, str]) -> pa.Schema:
    """The table's schema as the Delta log states it (partition columns typed)."""
    return pa.schema(_open(uri, user_root, options).schema().to_arrow())


def delta_spark_schema_json(uri: str, user_root: str, options: dict[str, str]) -> str:
    """The table's schema as its log holds it: Spark's own StructType JSON."""
    return str(_open(uri, user_root, options).schema().to_json())


def delta_version(uri: str, user_root: str, options: dict[str, str]) -> int:
    """The version of the table's current snapshot."""
    return int(_open(uri, user_root, options).version())


def delta_table(uri: str, user_root: str, options: dict[str, str]) -> Any:
    """The table's current snapshot as a ``deltalake.DeltaTable`` (for Delta's own
    OPTIMIZE, which the maintenance service runs on Delta tables)."""
    return _open(uri, user_root, options)


def _open(uri: str, user_root: str, options: dict[str, str], version: int | None = None) -> Any:
    """The Delta table's snapshot at ``version``, by default its current one (a
    ``deltalake.DeltaTable``)."""
    try:
        from deltalake import DeltaTable
    except ImportError:
        raise NotATableError(
            f"{user_root} is a Delta table (it has {DELTA_LOG}/); reading its snapshot needs "
            "the deltalake package: pip install 'skipindex[delta]'"
        ) from None
    try:
        return DeltaTable(uri, version=version, storage_options=_delta_options(options) or None)
    except Exception as exc:  # deltalake raises its own TableNotFoundError, DeltaError...
        raise NotATableError(f"cannot read the Delta log of {user_root}: {exc}") from exc
