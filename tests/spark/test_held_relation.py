"""The relation si.read and si.sql hold per folder (reading/held.py), and the
skipped files left out of it by ``_metadata.file_path``: on names Spark escapes
(spaces, ``%``, ``#``, non-ASCII, escaped partition values), Spark's file index
opens exactly the kept files and the rows are Spark's own; a folder that changes
is held anew."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex.reading import held as held_module
from tests._support import exact_rows, files_opened

pytestmark = pytest.mark.spark

FOLDERS = ["s=x", "s=a%20b", "s=é ü", "s=1#2"]


@pytest.fixture
def odd(spark: Any, tmp_path: Path) -> Path:
    root = tmp_path / "ta b%c#é"
    for number, folder in enumerate(FOLDERS):
        target = root / folder / f"part {number}#x%20é'q.parquet"
        target.parent.mkdir(parents=True)
        ids = pa.array(range(number * 10, number * 10 + 10), pa.int64())
        pq.write_table(pa.table({"id": ids, "v": pa.array([number] * 10, pa.int32())}), target)
    si.build_index(str(root), [si.MinMax("id")], spark=spark)
    return root


@pytest.mark.parametrize("zone", ["UTC", "America/Los_Angeles"])
def test_skipped_files_are_left_out_by_sparks_own_spelling(spark, odd, zone):
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        for where in ("id >= 10 AND id < 30", "id = 35 OR id = 5", "id > 1000"):
            expected = spark.read.parquet(str(odd)).where(where)
            result = si.prune(str(odd), where)
            got = si.read(spark, str(odd), where, row_groups=False)
            assert exact_rows(got) == exact_rows(expected), where
            if result.kept:
                assert files_opened(got) == result.kept < 4, where
            query = f"SELECT id, s FROM parquet.`{odd}` WHERE {where}"
            plan = si.sql_plan(spark, query, row_groups=False)
            assert exact_rows(plan.frame) == exact_rows(spark.sql(query)), plan.explain()
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")


def test_a_folder_is_held_once_and_again_when_it_changes(spark, odd, monkeypatch):
    made: list[Any] = []
    real = held_module.held_folder

    def counted(session: Any, location: Any) -> Any:
        frame = real(session, location)
        if not made or made[-1] is not frame:
            made.append(frame)
        return frame

    monkeypatch.setattr(held_module, "held_folder", counted)
    monkeypatch.setattr("skipindex.reading.read.held_folder", counted)
    where = "id < 15"
    first = exact_rows(si.read(spark, str(odd), where))
    assert exact_rows(si.read(spark, str(odd), where)) == first
    assert len(made) == 1  # the second read holds the same relation
    extra = pa.table({"id": pa.array([1], pa.int64()), "v": pa.array([9], pa.int32())})
    pq.write_table(extra, odd / "s=x" / "later.parquet")
    again = exact_rows(si.read(spark, str(odd), where))
    assert again == exact_rows(spark.read.parquet(str(odd)).where(where))
    assert len(again) == len(first) + 1
    assert len(made) == 2


def test_a_folder_changed_while_spark_lists_it_is_not_held(spark, odd, monkeypatch):
    states = iter([("before", (), (), ""), ("after", (), (), "")])
    monkeypatch.setattr(held_module, "folder_state", lambda *_: next(states))
    from skipindex.store.location import locate

    assert held_module.held_folder(spark, locate(str(odd))) is None


@pytest.mark.parametrize("column", ["_metadata", "_METADATA"])
def test_a_data_column_named_metadata_is_never_filtered_on(spark, tmp_path, column):
    # A table that kept Spark's _metadata as data (lineage, say): Spark resolves
    # _metadata.file_path to that column, not to the file's path, so leaving skipped
    # files out by it would drop this file's rows whose value names a skipped file.
    root = tmp_path / "lineage"
    root.mkdir()
    skipped = root / "a.parquet"
    kept = root / "b.parquet"
    named = held_module.spark_file_path(str(skipped))
    struct = pa.struct([("file_path", pa.string())])
    for target, ids, value in ((skipped, [1, 2], "x"), (kept, [10, 11], named)):
        lineage = pa.array([{"file_path": value}] * 2, struct)
        pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), column: lineage}), target)
    si.build_index(str(root), [si.MinMax("id")], spark=spark)
    where = "id >= 10"
    assert si.prune(str(root), where).kept == 1
    expected = exact_rows(spark.read.parquet(str(root)).where(where))
    assert len(expected) == 2
    assert exact_rows(si.read(spark, str(root), where, row_groups=False)) == expected
    query = f"SELECT * FROM parquet.`{root}` WHERE {where}"
    assert exact_rows(si.sql(spark, query, row_groups=False)) == expected
    si.register(spark, "lineage", str(root))
    query = f"SELECT * FROM lineage WHERE {where}"
    assert exact_rows(si.sql(spark, query, row_groups=False)) == expected


def _filters_on_files(frame: Any) -> bool:
    return "file_path" in frame._jdf.queryExecution().optimizedPlan().toString()


@pytest.mark.parametrize("name_seconds", [0.0, 1.0])
def test_kept_files_are_named_where_a_filter_on_every_row_costs_more(spark, odd, name_seconds):
    # The held relation's filter on each row's file is evaluated on every row read;
    # past what naming the kept files costs (the policy's name_seconds), they are
    # named instead: no filter, the same rows, only the kept files opened.
    policy = si.PlanningPolicy(name_seconds=name_seconds)
    where = "id >= 10 AND id < 30"
    result = si.prune(str(odd), where)
    assert result.kept == 2
    assert 0 < result.kept_bytes < result.listed_bytes
    expected = exact_rows(spark.read.parquet(str(odd)).where(where))
    got = si.read(spark, str(odd), where, row_groups=False, policy=policy)
    assert exact_rows(got) == expected
    assert files_opened(got) == result.kept
    assert _filters_on_files(got) is (name_seconds > 0)
    si.register(spark, "odd_named", str(odd))
    query = f"SELECT id, s FROM odd_named WHERE {where}"
    plan = si.sql_plan(spark, query, row_groups=False, policy=policy)
    assert exact_rows(plan.frame) == exact_rows(spark.sql(query)), plan.explain()
    assert files_opened(plan.frame) == result.kept
    assert _filters_on_files(plan.frame) is (name_seconds > 0)
