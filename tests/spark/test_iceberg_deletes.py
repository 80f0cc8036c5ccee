"""Iceberg tables with delete files: position deletes are applied (prune keeps
exactly the files holding a live match where bitmaps answer, read() returns
pyiceberg's scan row for row); equality deletes cannot be applied without an
Iceberg reader, so prune keeps every file that may hold a live match and read()
refuses that kind alone, saying so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex.errors import UnsupportedTableError
from tests._support import iceberg_catalog

pytest.importorskip("pyiceberg")
pytestmark = pytest.mark.spark

FILES, ROWS = 5, 300


def _table(root: Path) -> tuple[Any, dict[str, str]]:
    from pyiceberg.catalog import load_catalog

    properties = iceberg_catalog(root)
    options = dict(properties)
    catalog = load_catalog(options.pop("name"), **options)
    catalog.create_namespace("db")
    rng = np.random.default_rng(3)
    schema = pa.schema([("id", pa.int64()), ("k", pa.int64()), ("s", pa.string())])
    table = catalog.create_table("db.t", schema=schema, properties={"format-version": "2"})
    for f in range(FILES):
        table.append(
            pa.table(
                {
                    "id": pa.array(np.arange(ROWS) + f * ROWS, pa.int64()),
                    "k": pa.array(rng.permutation(np.arange(ROWS) % 30), pa.int64()),
                    "s": [f"s{i % 4}" for i in range(ROWS)],
                },
                schema=schema,
            )
        )
    return catalog.load_table("db.t"), properties


def _local(path: str) -> str:
    return path.removeprefix("file://")


def _scan(table: Any, row_filter: str) -> list[tuple[Any, ...]]:
    rows = table.scan(row_filter=row_filter).to_arrow()
    return sorted(zip(*(rows.column(c).to_pylist() for c in ("id", "k", "s")), strict=True))


def test_position_deletes_are_applied(spark, tmp_path):
    from tests._iceberg_deletes import delete_positions

    table, catalog = _table(tmp_path)
    si.build_index("db.t", [si.BitSlicedBitmap("k"), si.MinMax("id")], catalog=catalog, spark=spark)
    paths = sorted(task.file.file_path for task in table.scan().plan_files())
    k_of = {p: pq.read_table(_local(p)).column("k").to_numpy() for p in paths}
    # file 0 loses every k = 4; file 1 its first 10 rows and every k < 3
    delete_positions(table, {paths[0]: np.flatnonzero(k_of[paths[0]] == 4)})
    table = table.refresh()
    first_ten = set(range(10)) | set(np.flatnonzero(k_of[paths[1]] < 3).tolist())
    delete_positions(table, {paths[1]: first_ten})
    table = table.refresh()
    assert sum(len(t.delete_files) for t in table.scan().plan_files()) == 2

    deleted = {paths[0]: set(np.flatnonzero(k_of[paths[0]] == 4).tolist()), paths[1]: first_ten}
    for where, spark_where, expression in [
        ("k == 4", "k = 4", pc.field("k") == 4),
        ("k < 3", "k < 3", pc.field("k") < 3),
        ("k == 4 or k == 2", "k = 4 OR k = 2", (pc.field("k") == 4) | (pc.field("k") == 2)),
        ("id < 310", "id < 310", pc.field("id") < 310),
    ]:
        holding = set()
        for path in paths:
            rows = pq.read_table(_local(path)).append_column("__row", pa.array(np.arange(ROWS)))
            gone = pa.array(sorted(deleted.get(path, ())), pa.int64())
            live = rows.filter(pc.invert(pc.is_in(rows["__row"], value_set=gone)))
            if live.filter(expression).num_rows:
                holding.add(Path(_local(path)).name)
        result = si.prune("db.t", spark_where, catalog=catalog)
        kept = {Path(f).name for f in result.files}
        assert holding <= kept, f"{spark_where}\n{result.explain()}"
        if "id" not in spark_where:  # bitmaps on k: exactly the files with a live match
            assert kept == holding, f"{spark_where}\n{result.explain()}"
        frame = si.read(spark, "db.t", spark_where, catalog=catalog).select("id", "k", "s")
        assert sorted(map(tuple, frame.collect())) == _scan(table, where), spark_where
    described = si.describe("db.t", catalog=catalog)
    assert described.source["deleted_rows"] == len(deleted[paths[0]]) + len(first_ten)
    assert described.source["files_with_deletes"] == 2


def test_equality_deletes_keep_files_and_read_refuses(spark, tmp_path):
    from tests._iceberg_deletes import delete_equal

    table, catalog = _table(tmp_path)
    si.build_index("db.t", [si.EqualityBitmap("k")], catalog=catalog, spark=spark)
    delete_equal(table, 2, "k", [4], pa.int64())  # field id 2: k
    result = si.prune("db.t", "k = 4", catalog=catalog)
    assert result.kept == FILES  # rows deleted by value count as live: kept, never dropped
    assert si.describe("db.t", catalog=catalog).source["equality_deletes"] == 1
    with pytest.raises(UnsupportedTableError, match="equality delete"):
        si.read(spark, "db.t", "k = 4", catalog=catalog)
