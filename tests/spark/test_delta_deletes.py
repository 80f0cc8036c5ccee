"""Delta tables with deletion vectors: the index covers every row of a file, prune
keeps every file holding a live match (with bitmaps: exactly those), and read()
and sql() return deltalake's live rows; a DELETE that rewrote no file is seen by
the next prune, with no rebuild."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake

import skipindex as si
from skipindex.maintain.changes import latest_commit
from skipindex.maintain.policy import TablePolicy
from tests._delta_support import delete_rows, live_table, log_paths

pytestmark = pytest.mark.spark

FILES, ROWS = 6, 400


def _table(root: Path) -> Path:
    """Six files, each with every k of 0..39 ten times and a region per file."""
    rng = np.random.default_rng(5)
    for f in range(FILES):
        write_deltalake(
            str(root),
            pa.table(
                {
                    "id": pa.array(np.arange(ROWS) + f * ROWS, pa.int64()),
                    "k": pa.array(rng.permutation(np.arange(ROWS) % 40), pa.int64()),
                    "region": pa.array(["a b" if f % 2 else "c"] * ROWS),
                }
            ),
            mode="append",
            partition_by=["region"],
        )
    return root


def _deleted(root: Path) -> dict[str, set[int]]:
    """The oracle's deleted positions per file (deltalake's reader of the vectors)."""
    table = pa.table(DeltaTable(str(root)).deletion_vectors())
    prefix = str(DeltaTable(str(root)).table_uri)
    return {
        unquote(uri.removeprefix(prefix)): {i for i, keep in enumerate(mask) if not keep}
        for uri, mask in zip(
            table.column("filepath").to_pylist(),
            table.column("selection_vector").to_pylist(),
            strict=True,
        )
    }


def _holding(root: Path, where: pc.Expression) -> set[str]:
    """Files holding a live row for which ``where`` holds."""
    deleted = _deleted(root)
    adds = pa.table(DeltaTable(str(root)).get_add_actions(flatten=True))
    region = dict(zip(adds["path"].to_pylist(), adds["partition.region"].to_pylist(), strict=True))
    out = set()
    for path in log_paths(root):
        plain = unquote(path)
        rows = pq.read_table(root / plain).append_column("__row", pa.array(np.arange(ROWS)))
        rows = rows.append_column("region", pa.array([region[path]] * ROWS))
        gone = pa.array(sorted(deleted.get(plain, ())), pa.int64())
        live = rows.filter(pc.invert(pc.is_in(rows["__row"], value_set=gone)))
        if live.filter(where).num_rows:
            out.add(str(root / plain))
    return out


def _rows(frame: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in frame.select("id", "k", "region").collect())


def _expected(spark: Any, root: Path, where: str) -> list[tuple[Any, ...]]:
    live = live_table(root).select(["id", "k", "region"])
    return _rows(
        spark.createDataFrame(live.to_pylist(), "id long, k long, region string").filter(where)
    )


def test_prune_read_and_sql_see_only_live_rows(spark, tmp_path):
    root = _table(tmp_path / "dv")
    si.build_index(str(root), [si.BitSlicedBitmap("k"), si.MinMax("id")], spark=spark)
    paths = log_paths(root)
    k_of = {p: pq.read_table(root / unquote(p)).column("k").to_numpy() for p in paths}
    # File 0 loses every row with k = 7 (a DELETE ... WHERE k = 7 on that file),
    # file 1 every row with k < 20, inline; file 2 a few rows, in a prefixed folder.
    delete_rows(root, {paths[0]: np.flatnonzero(k_of[paths[0]] == 7)})
    delete_rows(root, {paths[1]: np.flatnonzero(k_of[paths[1]] < 20)}, inline=True)
    delete_rows(root, {paths[2]: [0, 1, 399]}, prefix="ab")
    assert DeltaTable(str(root)).version() == FILES + 2
    si.register(spark, "dv_t", str(root))
    for where, expression in {
        "k = 7": pc.field("k") == 7,
        "k < 20 AND region = 'a b'": (pc.field("k") < 20) & (pc.field("region") == "a b"),
        "k = 7 OR id = 401": (pc.field("k") == 7) | (pc.field("id") == 401),
        "id >= 0": pc.field("id") >= 0,
    }.items():
        holding = _holding(root, expression)
        result = si.prune(str(root), where)
        kept = set(result.files)
        assert holding <= kept, f"{where}\n{result.explain()}"
        if "id" not in where:  # k has exact bitmaps: exactly the files with a live match
            assert kept == holding, f"{where}\n{result.explain()}"
        expected = _expected(spark, root, where)
        assert _rows(si.read(spark, str(root), where)) == expected, where
        query = f"SELECT * FROM dv_t WHERE {where}"
        assert _rows(si.sql(spark, query)) == expected, where
    explained = si.prune(str(root), "k = 7").explain()
    assert "deleted_row IS NULL" in explained  # the live-rows condition ANDed in
    # files 0 and 1 hold k = 7 only in deleted rows: ruled out row by row
    assert "+ 2 only by combining row-level bitmaps" in explained
    # min-max alone cannot see which rows are gone: it keeps more, never less
    assert _holding(root, pc.field("id") == 401) <= set(si.prune(str(root), "id = 401").files)
    assert si.read(spark, str(root), "id = 401").count() == 0  # deleted: never read back


def test_a_new_deletion_vector_needs_no_rebuild_and_is_a_commit(spark, tmp_path):
    root = _table(tmp_path / "dv")
    si.build_index(str(root), [si.EqualityBitmap("k")], spark=spark)
    policy = TablePolicy(name=str(root), path=str(root))
    before = latest_commit(policy).id
    paths = log_paths(root)
    assert len(si.prune(str(root), "k = 3").files) == FILES
    k0 = pq.read_table(root / unquote(paths[0])).column("k").to_numpy()
    delete_rows(root, {paths[0]: np.flatnonzero(k0 == 3)})
    assert latest_commit(policy).id != before  # the service sees a new commit
    result = si.prune(str(root), "k = 3")
    assert result.covered == FILES  # the file is unchanged: still indexed
    assert str(root / unquote(paths[0])) not in result.files
    assert len(result.files) == FILES - 1
    assert si.build_index(str(root), spark=spark).files_indexed == 0  # nothing to re-index
    assert si.read(spark, str(root), "k = 3").count() == (FILES - 1) * 10


def test_deleted_rows_are_found_by_the_file_not_by_a_data_column_named_metadata(spark, tmp_path):
    # A table that kept another table's _metadata as data: its values name no file of
    # this one, so a join on them would delete nothing (or the wrong rows).
    from skipindex.reading.deletes import without_deleted

    path = str(tmp_path / "lineage.parquet")
    struct = pa.struct([("file_path", pa.string()), ("row_index", pa.int64())])
    lineage = pa.array([{"file_path": path, "row_index": 0}] * 3, struct)
    pq.write_table(pa.table({"x": pa.array([1, 2, 3], pa.int64()), "_metadata": lineage}), path)
    scan = spark.read.parquet(path)
    live = without_deleted(spark, scan, [path], {path: np.array([1])})
    assert sorted(row.x for row in live.collect()) == [1, 3]
