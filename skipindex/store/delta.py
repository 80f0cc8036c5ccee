"""Delta tables as a source: the files of the current snapshot, read with ``deltalake``.

A Delta table's folder also holds files that earlier commits removed (until
Delta's own VACUUM), so listing the folder would index, and ``read()`` would
read, rows that are no longer in the table. The data files are the snapshot's
*add* actions instead. What skipindex cannot represent is refused, never pruned:

* deletion vectors: a file's rows minus the deleted ones is not what
  ``spark.read.parquet`` of that file returns;
* column mapping: Parquet column names are not the table's column names;
* files outside the table root (shallow clones).

The log is the truth about a file's partition values too: each *add* action
carries them as text, cast to the schema's type (an empty text is NULL), and
its path is a URI (``%20`` for a space), never a folder name to infer from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.fs as pafs

from skipindex.errors import NotATableError, UnsupportedTableError

__all__ = [
    "DELTA_LOG",
    "DeltaFiles",
    "delta_arrow_schema",
    "delta_files",
    "delta_partition_names",
    "delta_spark_schema_json",
    "delta_table",
    "delta_version",
    "is_delta",
]

DELTA_LOG = "_delta_log"


def is_delta(fs: Any, root: str) -> bool:
    return bool(fs.get_file_info(f"{root}/{DELTA_LOG}").type == pafs.FileType.Directory)


@dataclass(frozen=True)
class DeltaFiles:
    """The active files of a snapshot: (path relative to the root, decoded; size;
    modification time in ms) each, and their partition values as the log types
    them (one column per partition column, one row per file, in the same order)."""

    files: list[tuple[str, int, int]]
    partition_values: pa.Table


def delta_files(uri: str, user_root: str, options: dict[str, str]) -> DeltaFiles:
    """Every active file of the current snapshot, with its partition values."""
    table = _open(uri, user_root, options)
    mapping = table.metadata().configuration.get("delta.columnMapping.mode", "none")
    if mapping not in (None, "", "none"):
        raise UnsupportedTableError(
            f"{user_root} is a Delta table with column mapping (mode {mapping!r}): its Parquet "
            "columns are not named as the table's, so skipindex cannot index it"
        )
    adds = pa.table(table.get_add_actions(flatten=False))
    _refuse_deletion_vectors(table, adds, user_root)
    # The log holds each path as a URI: "a%20b" names the folder "a b".
    paths = [unquote(p) for p in adds.column("path").to_pylist()]
    outside = [p for p in paths if "://" in p or p.startswith("/")]
    if outside:
        raise UnsupportedTableError(
            f"Delta table {user_root} has files outside its folder (e.g. {outside[0]}), as a "
            "shallow clone does; skipindex indexes files under the table root only"
        )
    sizes = adds.column("size_bytes").to_pylist()
    times = adds.column("modification_time").cast(pa.int64()).to_pylist()
    return DeltaFiles(
        list(zip(paths, sizes, times, strict=True)),
        _partition_values(adds, list(table.metadata().partition_columns)),
    )


def _partition_values(adds: pa.Table, names: list[str]) -> pa.Table:
    """The typed partition values of every add action, as columns named like the
    table's partition columns (deltalake casts the log's text to the schema's types)."""
    if not names or "partition" not in adds.column_names:
        return pa.table({name: pa.nulls(len(adds)) for name in names})
    struct = adds.column("partition").combine_chunks()
    fields = {struct.type.field(i).name: i for i in range(struct.type.num_fields)}
    return pa.table({name: struct.field(fields[name]) for name in names})


def delta_partition_names(uri: str, user_root: str, options: dict[str, str]) -> list[str]:
    """The table's partition columns, as its log names them."""
    return list(_open(uri, user_root, options).metadata().partition_columns)


def _refuse_deletion_vectors(table: Any, adds: pa.Table, user_root: str) -> None:
    if "deletionVectors" not in (table.protocol().reader_features or []):
        return
    columns = [n for n in adds.column_names if n.lower().startswith("deletionvector")]
    if columns:  # the snapshot says which files carry one
        carrying = max(len(adds) - adds.column(n).null_count for n in columns)
        if carrying == 0:
            return
        which = f"on {carrying} files"
    else:  # enabled, and nothing says which files carry one: assume any may
        which = "enabled (and the log reader does not say which files carry them)"
    raise UnsupportedTableError(
        f"Delta table {user_root} has deletion vectors {which}: reading its files as Parquet "
        "would return deleted rows, so skipindex refuses it; purge them first "
        "(REORG TABLE ... APPLY (PURGE)) and disable the feature"
    )


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


def _open(uri: str, user_root: str, options: dict[str, str]) -> Any:
    """The Delta table's current snapshot (a ``deltalake.DeltaTable``)."""
    try:
        from deltalake import DeltaTable
    except ImportError:
        raise NotATableError(
            f"{user_root} is a Delta table (it has {DELTA_LOG}/); reading its snapshot needs "
            "the deltalake package: pip install 'skipindex[delta]'"
        ) from None
    try:
        return DeltaTable(uri, storage_options=_delta_options(options) or None)
    except Exception as exc:  # deltalake raises its own TableNotFoundError, DeltaError...
        raise NotATableError(f"cannot read the Delta log of {user_root}: {exc}") from exc
