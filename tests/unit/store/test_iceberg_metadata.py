"""Iceberg tables as a source (skipindex.store.iceberg), on tables pyiceberg writes
with a SQL catalog on SQLite: the snapshot's data files, field ids, refusals."""

from __future__ import annotations

import pickle
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pytest

from skipindex.errors import NotATableError
from skipindex.store.iceberg import (
    iceberg_arrow_schema,
    iceberg_files,
    is_iceberg_folder,
    open_iceberg,
)
from tests._support import iceberg_catalog

pytest.importorskip("pyiceberg")


def evolved_table(tmp_path: Path) -> dict[str, str]:
    """Four appends, v renamed to w, one more append, a delete of id < 500."""
    from pyiceberg.catalog import load_catalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import IntegerType, LongType, NestedField, StringType

    properties = iceberg_catalog(tmp_path)
    catalog = load_catalog(properties.pop("name"), **properties)
    catalog.create_namespace("db")
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "v", IntegerType(), required=False),
        NestedField(3, "s", StringType(), required=False),
    )
    table = catalog.create_table("db.t", schema=schema)
    for k in range(4):
        ids = pa.array(range(k * 1000, (k + 1) * 1000), pa.int64())
        values = pa.array(range(k * 1000, (k + 1) * 1000), pa.int32())
        table.append(pa.table({"id": ids, "v": values, "s": [f"s{i % 7}" for i in range(1000)]}))
    with table.update_schema() as update:
        update.rename_column("v", "w")
    table = catalog.load_table("db.t")
    ids = pa.array(range(4000, 5000), pa.int64())
    table.append(
        pa.table({"id": ids, "w": pa.array(range(9000, 10000), pa.int32()), "s": ["x"] * 1000})
    )
    table.delete("id < 500")
    return iceberg_catalog(tmp_path)


def test_the_snapshots_files_only_and_the_schema_by_field_id(tmp_path):
    catalog = evolved_table(tmp_path)
    root, source = open_iceberg("db.t", catalog)
    found = iceberg_files(source, root)
    assert len(found.files) == 5  # the rewritten first file, not its old version
    assert found.delete_files == 0
    assert found.deleted == {}
    on_disk = list((tmp_path / "warehouse" / "db" / "t" / "data").glob("*.parquet"))
    assert len(on_disk) == 6
    assert all(size > 0 for _, size in found.files)
    schema = iceberg_arrow_schema(source)
    assert schema.names == ["id", "w", "s"]
    assert schema.field("w").metadata[b"PARQUET:field_id"] == b"2"


def test_an_earlier_snapshot_and_a_metadata_file_name_the_same_table(tmp_path):
    catalog = evolved_table(tmp_path)
    root, current = open_iceberg("db.t", catalog)
    history = current.loaded().snapshots()
    root_first, first = open_iceberg("db.t", catalog, snapshot_id=history[0].snapshot_id)
    assert root_first == root
    assert len(iceberg_files(first, root).files) == 1
    assert iceberg_arrow_schema(first).names == ["id", "v", "s"]  # the schema of that snapshot
    by_metadata = open_iceberg(current.metadata_location, None)[1]
    assert by_metadata.snapshot_id == current.snapshot_id
    shipped = pickle.loads(pickle.dumps(current))  # as Spark ships it to a worker
    assert shipped.table is None
    assert iceberg_files(shipped, root) == iceberg_files(current, root)


def test_a_folder_holding_an_iceberg_table_is_recognised(tmp_path):
    evolved_table(tmp_path)
    fs = pafs.LocalFileSystem()
    assert is_iceberg_folder(fs, str(tmp_path / "warehouse" / "db" / "t"))
    assert not is_iceberg_folder(fs, str(tmp_path))


def test_unknown_tables_and_snapshots_are_named_in_the_error(tmp_path):
    catalog = evolved_table(tmp_path)
    with pytest.raises(NotATableError, match=r"no table 'db\.nope'"):
        open_iceberg("db.nope", catalog)
    with pytest.raises(NotATableError, match="no snapshot 42"):
        open_iceberg("db.t", catalog, snapshot_id=42)
    with pytest.raises(NotATableError, match=r"metadata\.json"):
        open_iceberg("db.t", None)


def test_a_rename_without_a_new_snapshot_reads_with_the_current_schema(tmp_path):
    """A rename commits no snapshot: the current snapshot is read with the table's
    current schema (w), time travel to it with the snapshot's own (v)."""
    from pyiceberg.catalog import load_catalog

    catalog = evolved_table(tmp_path)
    options = dict(catalog)
    table = load_catalog(options.pop("name"), **options).load_table("db.t")
    with table.update_schema() as update:
        update.rename_column("w", "z")
    _, current = open_iceberg("db.t", catalog)
    assert iceberg_arrow_schema(current).names == ["id", "z", "s"]
    _, as_of = open_iceberg("db.t", catalog, snapshot_id=current.snapshot_id)
    assert iceberg_arrow_schema(as_of).names == ["id", "w", "s"]


def test_as_of_a_time_is_the_snapshot_current_then(tmp_path):
    import datetime

    import skipindex as si
    from skipindex.errors import InvalidSpecError
    from skipindex.store.iceberg import snapshot_as_of

    catalog = evolved_table(tmp_path)
    history = open_iceberg("db.t", catalog)[1].loaded().snapshots()
    stamp = history[1].timestamp_ms
    # the last snapshot committed at or before that millisecond (appends can share one)
    expected = [s.snapshot_id for s in history if s.timestamp_ms <= stamp][-1]
    assert snapshot_as_of("db.t", catalog, stamp) == expected
    moment = datetime.datetime.fromtimestamp(stamp / 1000, datetime.UTC)
    assert snapshot_as_of("db.t", catalog, moment) == expected
    assert snapshot_as_of("db.t", catalog, moment.isoformat().replace("+00:00", "Z")) == expected
    # prune as of that time lists that snapshot's files (no index: every one kept)
    root, then = open_iceberg("db.t", catalog, snapshot_id=expected)
    files = len(iceberg_files(then, root).files)
    assert si.prune("db.t", "id >= 0", catalog=catalog, as_of=stamp).total == files
    root_now, now = open_iceberg("db.t", catalog)
    assert files < len(iceberg_files(now, root_now).files)
    with pytest.raises(NotATableError, match="no snapshot at or before"):
        snapshot_as_of("db.t", catalog, history[0].timestamp_ms - 1)
    with pytest.raises(InvalidSpecError, match="has no time zone"):
        snapshot_as_of("db.t", catalog, "2024-06-01 12:00:00")
    with pytest.raises(InvalidSpecError, match="not both"):
        si.prune("db.t", "id >= 0", catalog=catalog, as_of=stamp, snapshot_id=expected)


def test_a_snapshot_is_planned_once_and_a_commit_is_seen(tmp_path, monkeypatch):
    from skipindex.store import iceberg

    planned: list[int] = []
    plan = iceberg.snapshot_files

    def counting(table, snapshot_id, name):
        planned.append(snapshot_id)
        return plan(table, snapshot_id, name)

    monkeypatch.setattr(iceberg, "snapshot_files", counting)
    catalog = evolved_table(tmp_path)
    root, source = open_iceberg("db.t", catalog)
    first = iceberg_files(source, root)
    again = iceberg_files(open_iceberg("db.t", catalog)[1], root)  # opened anew, same snapshot
    assert again == first
    assert planned == [source.snapshot_id]  # pyiceberg planned it once
    from pyiceberg.catalog import load_catalog

    properties = dict(catalog)
    table = load_catalog(properties.pop("name"), **properties).load_table("db.t")
    ids = pa.array(range(5000, 5010), pa.int64())
    table.append(pa.table({"id": ids, "w": pa.array(range(10), pa.int32()), "s": ["y"] * 10}))
    _, after = open_iceberg("db.t", catalog)  # a commit: a new metadata file and snapshot
    assert len(iceberg_files(after, root).files) == len(first.files) + 1
    assert planned == [source.snapshot_id, after.snapshot_id]
    # SKIPINDEX_CACHE_BYTES=0: nothing kept, each call plans again
    from skipindex.store.cache import ColumnCache

    monkeypatch.setattr(iceberg, "planned_cache", ColumnCache(0))
    assert iceberg_files(after, root) == iceberg_files(after, root)
    assert planned == [source.snapshot_id, after.snapshot_id, after.snapshot_id, after.snapshot_id]
