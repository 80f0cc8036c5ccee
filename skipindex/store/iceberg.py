"""Iceberg tables as a source: the data files of one snapshot, read with ``pyiceberg``.

An Iceberg table's folder holds the files of every snapshot, and its Parquet
columns are named as they were when each file was written (a column renamed
since keeps its old name in older files): listing the folder and matching
columns by name gives wrong answers. So an Iceberg table is named by its
catalog (``catalog=``: a name pyiceberg's configuration knows, or the
catalog's properties) or by a ``metadata.json``; its data files are those of
the snapshot (the current one unless ``snapshot_id=``), its columns are matched
by Iceberg field id, and a folder that is an Iceberg table is refused when
named as a plain folder.

The state of the table is fixed when it is opened (:class:`IcebergSource`
records the metadata file and the snapshot), so one call of a verb sees one
snapshot throughout, and Spark workers reopen exactly it.
"""

from __future__ import annotations

import datetime
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlparse

import pyarrow as pa
import pyarrow.fs as pafs

from skipindex.errors import InvalidSpecError, NotATableError, UnsupportedTableError
from skipindex.store.cache import LIMIT, ColumnCache
from skipindex.store.iceberg_files import IcebergFiles, snapshot_files

__all__ = [
    "FIELD_ID",
    "CatalogSpec",
    "IcebergSource",
    "field_ids",
    "iceberg_arrow_schema",
    "IcebergFiles",
    "iceberg_files",
    "is_iceberg_folder",
    "open_iceberg",
    "plain_path",
    "planned_cache",
    "snapshot_as_of",
    "spelled_by_field_id",
]

METADATA_DIR = "metadata"
FIELD_ID = b"PARQUET:field_id"  # how Parquet (and Arrow's reader) carry a field id
CatalogSpec = str | Mapping[str, str]


@dataclass(frozen=True)
class IcebergSource:
    """One state of an Iceberg table: its metadata file, the snapshot read, and
    how the user named it (for messages)."""

    metadata_location: str
    snapshot_id: int | None
    name: str
    # Time travel: read with the snapshot's schema, as Iceberg readers do; else
    # with the table's current one (a rename commits no snapshot).
    as_of: bool = False
    delete_files: int = 0  # delete files that apply to the snapshot's data files
    table: Any = field(default=None, compare=False, repr=False)  # pyiceberg Table, not shipped

    def __getstate__(self) -> dict[str, Any]:  # workers reopen from the metadata file
        state = dict(self.__dict__)
        state["table"] = None
        return state

    def loaded(self) -> Any:
        """The pyiceberg table (opened from the metadata file once per process)."""
        if self.table is None:
            from pyiceberg.table import StaticTable

            object.__setattr__(self, "table", StaticTable.from_metadata(self.metadata_location))
        return self.table


AsOf = datetime.datetime | str | int  # an aware time, ISO 8601 with an offset, or epoch ms


def snapshot_as_of(
    name: str, catalog: CatalogSpec | None, when: AsOf, snapshot_id: int | None = None
) -> int:
    """The id of the snapshot that was current at ``when`` (Iceberg's time
    travel: the last one committed at or before it)."""
    if snapshot_id is not None:
        raise InvalidSpecError("give snapshot_id or as_of, not both")
    moment = _epoch_ms(when)
    _, source = open_iceberg(name, catalog)
    found = source.loaded().snapshot_as_of_timestamp(moment)
    if found is None:
        raise NotATableError(f"Iceberg table {name} has no snapshot at or before {when}")
    return int(found.snapshot_id)


def _epoch_ms(when: AsOf) -> int:
    if isinstance(when, int):
        return when
    moment = when
    if isinstance(when, str):
        try:
            moment = datetime.datetime.fromisoformat(when.strip().replace("Z", "+00:00"))
        except ValueError:
            raise InvalidSpecError(f"as_of {when!r} is not an ISO 8601 time") from None
    assert isinstance(moment, datetime.datetime)
    if moment.tzinfo is None:
        raise InvalidSpecError(
            f"as_of {when!r} has no time zone: give one (2024-06-01T12:00:00+00:00) or epoch "
            "milliseconds; snapshots are stamped in UTC"
        )
    return int(moment.timestamp() * 1000)


def open_iceberg(
    name: str, catalog: CatalogSpec | None, snapshot_id: int | None = None
) -> tuple[str, IcebergSource]:
    """The table's root location and its state, from a catalog (``catalog``: a
    name pyiceberg's configuration resolves, or the catalog's properties) and
    identifier ``name`` (``db.table``), or from a ``metadata.json`` path."""
    try:
        from pyiceberg.exceptions import NoSuchTableError
    except ImportError as exc:
        raise UnsupportedTableError(
            "Iceberg tables need pyiceberg: pip install 'skipindex[iceberg]'"
        ) from exc
    if catalog is not None:
        from pyiceberg.catalog import load_catalog

        properties = dict(catalog) if isinstance(catalog, Mapping) else {}
        catalog_name = catalog if isinstance(catalog, str) else properties.pop("name", "default")
        try:
            table = load_catalog(catalog_name, **properties).load_table(name)
        except NoSuchTableError as exc:
            raise NotATableError(f"Iceberg catalog {catalog_name!r} has no table {name!r}") from exc
    elif name.endswith(".metadata.json"):
        from pyiceberg.table import StaticTable

        try:
            table = StaticTable.from_metadata(name)
        except (OSError, ValueError) as exc:
            raise NotATableError(f"cannot read Iceberg metadata {name}: {exc}") from exc
    else:
        raise NotATableError(
            f"{name} is not an Iceberg metadata.json; pass catalog= to name a table"
        )
    if snapshot_id is not None and table.snapshot_by_id(snapshot_id) is None:
        raise NotATableError(f"Iceberg table {name} has no snapshot {snapshot_id}")
    current = table.current_snapshot()
    chosen = snapshot_id if snapshot_id is not None else (current.snapshot_id if current else None)
    source = IcebergSource(
        table.metadata_location, chosen, name, as_of=snapshot_id is not None, table=table
    )
    return table.location().rstrip("/"), source


def is_iceberg_folder(fs: Any, root: str) -> bool:
    """Whether a folder holds an Iceberg table (``metadata/*.metadata.json``)."""
    selector = pafs.FileSelector(f"{root}/{METADATA_DIR}", allow_not_found=True)
    try:
        found = fs.get_file_info(selector)
    except (OSError, pa.ArrowException):
        return False
    return any(info.path.endswith(".metadata.json") for info in found)


def iceberg_files(source: IcebergSource, root: str) -> IcebergFiles:
    """The snapshot's data files with paths relative to ``root`` and modification
    time 0 (data files are immutable in Iceberg and named uniquely, so path and
    size identify them), and their deleted rows by the same paths."""
    if source.snapshot_id is None:
        return IcebergFiles([])
    key = (source.metadata_location, str(source.snapshot_id), root)
    cached = planned_cache.get(key)
    if cached is None:
        cached = _planned_files(source, source.snapshot_id, root)
        planned_cache.put(key, cached)
    return cached


# pyiceberg's scan planning reads every manifest (0.1 s on a test table, more
# with more manifests), and one read() asks for the same snapshot twice (prune, then
# the check for equality deletes), si.sql once per reference. A metadata file and
# its snapshots never change (a commit writes a new metadata file: a new key), so
# the answer is kept, its deleted rows read-only, within a sixteenth of the caches'
# budget (SKIPINDEX_CACHE_BYTES; 0 keeps none).
planned_cache: ColumnCache[IcebergFiles] = ColumnCache(LIMIT // 16)


def _planned_files(source: IcebergSource, snapshot_id: int, root: str) -> IcebergFiles:
    found = snapshot_files(source.loaded(), snapshot_id, source.name)
    prefix = plain_path(root).rstrip("/") + "/"
    relative = {}
    for path, _ in found.files:
        plain = plain_path(path)
        if not plain.startswith(prefix):
            raise UnsupportedTableError(
                f"Iceberg table {source.name} has data files outside its location "
                f"(e.g. {path}); skipindex indexes files under the table root only"
            )
        relative[path] = plain[len(prefix) :]
    for rows in found.deleted.values():
        rows.setflags(write=False)
    return replace(
        found,
        files=sorted((relative[path], size) for path, size in found.files),
        deleted={relative[path]: rows for path, rows in found.deleted.items()},
    )


def iceberg_arrow_schema(source: IcebergSource) -> pa.Schema:
    """The schema to read the snapshot with (the table's current one; the
    snapshot's own for time travel) as Arrow, each field with its field id."""
    from pyiceberg.io.pyarrow import schema_to_pyarrow

    table = source.loaded()
    schema = table.schema()
    snapshot = table.snapshot_by_id(source.snapshot_id) if source.snapshot_id else None
    if source.as_of and snapshot is not None and snapshot.schema_id is not None:
        schema = table.schemas().get(snapshot.schema_id, schema)
    arrow = schema_to_pyarrow(schema, include_field_ids=True)
    return pa.schema([_plain_field(f) for f in arrow])


def _plain_field(field: pa.Field) -> pa.Field:
    """pyiceberg's large strings, binaries and lists as the plain types Spark's
    reading gives (field ids kept); timestamps with a zone in UTC."""
    kind = field.type
    if pa.types.is_large_string(kind):
        kind = pa.string()
    elif pa.types.is_large_binary(kind):
        kind = pa.binary()
    elif pa.types.is_timestamp(kind) and kind.tz is not None:
        kind = pa.timestamp("us", tz="UTC")
    elif pa.types.is_struct(kind):
        kind = pa.struct([_plain_field(kind.field(i)) for i in range(kind.num_fields)])
    elif pa.types.is_large_list(kind) or pa.types.is_list(kind):
        kind = pa.list_(_plain_field(kind.value_field))
    return field.with_type(kind)


def field_ids(schema: pa.Schema) -> dict[int, tuple[str, ...]]:
    """Iceberg field id -> the path of the (possibly nested) field carrying it."""
    out: dict[int, tuple[str, ...]] = {}
    stack: list[tuple[tuple[str, ...], pa.Field]] = [((f.name,), f) for f in schema]
    while stack:
        path, field = stack.pop()
        if field.metadata and FIELD_ID in field.metadata:
            out[int(field.metadata[FIELD_ID])] = path
        if pa.types.is_struct(field.type):
            children = (field.type.field(i) for i in range(field.type.num_fields))
            stack.extend(((*path, child.name), child) for child in children)
    return out


ABSENT = "\x00not in this file"  # a column name no file has


def spelled_by_field_id(
    file_schema: pa.Schema, table_schema: pa.Schema, keys: list[tuple[str, ...]]
) -> dict[tuple[str, ...], tuple[str, ...]]:
    """Each table column path (``keys``) as this file spells it, found by field id
    (a column renamed since the file was written keeps its id), else, in a file
    without ids, by the physical name a Delta table's column mapping gives it; a
    path found neither way becomes one no file has, so it reads as NULLs."""
    in_file = field_ids(file_schema)
    in_table = {path: i for i, path in field_ids(table_schema).items()}
    physical = _physical_paths(table_schema)
    named = _paths(file_schema)
    out: dict[tuple[str, ...], tuple[str, ...]] = {}
    for key in keys:
        found = in_table.get(key)
        spelled = in_file.get(found) if found is not None else None
        if spelled is None and not in_file and physical.get(key) in named:
            spelled = physical[key]
        out[key] = spelled or (ABSENT,)
    return out


_PHYSICAL_NAME = b"delta.columnMapping.physicalName"


def _physical_paths(schema: pa.Schema) -> dict[tuple[str, ...], tuple[str, ...]]:
    """Logical path -> physical path, for fields a column mapping names."""
    out: dict[tuple[str, ...], tuple[str, ...]] = {}
    stack: list[tuple[tuple[str, ...], tuple[str, ...], pa.Field]] = [
        ((f.name,), (_physical(f),), f) for f in schema
    ]
    while stack:
        path, spelled, field = stack.pop()
        out[path] = spelled
        if pa.types.is_struct(field.type):
            children = (field.type.field(i) for i in range(field.type.num_fields))
            stack.extend(((*path, c.name), (*spelled, _physical(c)), c) for c in children)
    return out


def _physical(field: pa.Field) -> str:
    found = (field.metadata or {}).get(_PHYSICAL_NAME)
    return found.decode() if found is not None else str(field.name)


def _paths(schema: pa.Schema) -> set[tuple[str, ...]]:
    found = set()
    stack: list[tuple[tuple[str, ...], pa.Field]] = [((f.name,), f) for f in schema]
    while stack:
        path, field = stack.pop()
        found.add(path)
        if pa.types.is_struct(field.type):
            children = (field.type.field(i) for i in range(field.type.num_fields))
            stack.extend(((*path, child.name), child) for child in children)
    return found


def plain_path(path: str) -> str:
    """A path or URI without its ``file:`` scheme, normalised."""
    parsed = urlparse(path)
    if parsed.scheme in ("", "file"):
        return posixpath.normpath(parsed.path if parsed.scheme else path)
    return path
