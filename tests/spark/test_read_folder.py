"""read() where prune keeps (nearly) every file: the folder as plain Spark reads it,
its inferred schema reused only while the files and the session's settings are the
same. Every read is held to plain Spark's rows and schema, through added, rewritten
and non-Parquet files, partition folders, setting changes and Delta tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import write_deltalake

import skipindex as si
from skipindex.reading.folder import schema_cache
from tests._support import exact_rows

EVERY_FILE = "id >= 0"


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    schema_cache.clear()


def _write(path: Path, start: int, rows: int = 50, **extra: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    columns = {"id": pa.array(np.arange(start, start + rows), pa.int64()), **extra}
    pq.write_table(pa.table(columns), path)


def _same_as_plain(spark: Any, root: Path, where: str = EVERY_FILE, plain: Any = None) -> Any:
    """read()'s frame, after checking it holds plain Spark's rows and schema."""
    frame = si.read(spark, root, where)
    expected = (plain if plain is not None else spark.read.parquet(str(root))).where(where)
    assert frame.schema == expected.schema, where
    assert exact_rows(frame) == exact_rows(expected), where
    return frame


def _jobs_building(spark: Any, build: Any) -> tuple[Any, int]:
    """What ``build()`` returns, and how many Spark jobs ran while it did."""
    tracker = spark.sparkContext.statusTracker()
    before = set(tracker.getJobIdsForGroup(None))
    value = build()
    return value, len(set(tracker.getJobIdsForGroup(None)) - before)


def test_a_second_read_of_the_same_files_infers_no_schema(spark, tmp_path):
    root = tmp_path / "t"
    for k in range(4):
        _write(root / f"p{k}.parquet", k * 50)
    si.build_index(root, [si.MinMax("id")], spark=spark)
    _same_as_plain(spark, root)
    _, plain_jobs = _jobs_building(spark, lambda: spark.read.parquet(str(root)).where(EVERY_FILE))
    frame, jobs = _jobs_building(spark, lambda: si.read(spark, root, EVERY_FILE))
    assert plain_jobs >= 1  # Spark infers a folder's schema with a job
    assert jobs == 0
    assert exact_rows(frame) == exact_rows(spark.read.parquet(str(root)))
    assert frame.inputFiles() == spark.read.parquet(str(root)).inputFiles()
    # Another predicate, 3 of the 4 files kept: still the folder, and the same schema.
    assert si.prune(root, "id >= 60").kept == 3
    frame, jobs = _jobs_building(spark, lambda: si.read(spark, root, "id >= 60"))
    assert jobs == 0
    assert frame.inputFiles() == spark.read.parquet(str(root)).inputFiles()
    _same_as_plain(spark, root, "id >= 60")


def test_added_and_rewritten_files_are_read_as_plain_spark_reads_them(spark, tmp_path):
    root = tmp_path / "t"
    for k in range(3):
        _write(root / f"p{k}.parquet", k * 50)
    si.build_index(root, [si.MinMax("id")], spark=spark)
    _same_as_plain(spark, root)
    # A new file with another column, named to come first: Spark may take its schema.
    _write(root / "a-new.parquet", 1000, flag=pa.array([True] * 50))
    _same_as_plain(spark, root)
    _same_as_plain(spark, root)
    # Rewritten in place with one more column (size and mtime change), then indexed again.
    (root / "a-new.parquet").unlink()
    _write(root / "p0.parquet", 0, note=pa.array(["rewritten"] * 50))
    for _ in range(2):
        _same_as_plain(spark, root, "id >= 0 AND id < 70")
    si.build_index(root, spark=spark)
    for _ in range(2):
        _same_as_plain(spark, root, "id >= 0 AND id < 70")
    (root / "p2.parquet").unlink()  # fewer files than indexed
    for where in (EVERY_FILE, EVERY_FILE, "id >= 20"):
        _same_as_plain(spark, root, where)


def test_a_changed_setting_infers_again(spark, tmp_path):
    root = tmp_path / "t"
    _write(root / "p0.parquet", 0, blob=pa.array([b"x"] * 50, pa.binary()))
    _write(
        root / "p1.parquet", 50, blob=pa.array([b"y"] * 50, pa.binary()), more=pa.array([1] * 50)
    )
    si.build_index(root, [si.MinMax("id")], spark=spark)
    key = "spark.sql.parquet.binaryAsString"
    merge = "spark.sql.parquet.mergeSchema"
    try:
        for binary_as_string, merged in (("false", "false"), ("true", "false"), ("true", "true")):
            spark.conf.set(key, binary_as_string)
            spark.conf.set(merge, merged)
            for _ in range(2):
                _same_as_plain(spark, root)
    finally:
        spark.conf.unset(key)
        spark.conf.unset(merge)
    _same_as_plain(spark, root)


def test_partition_folders_keep_the_types_plain_spark_infers(spark, tmp_path):
    root = tmp_path / "t"
    for year in (2020, 2021):
        for k in range(2):
            _write(root / f"year={year}" / f"p{k}.parquet", year * 1000 + k * 50)
    si.build_index(root, [si.MinMax("id")], spark=spark)
    for where in (EVERY_FILE, EVERY_FILE, "year >= 2020"):
        frame = _same_as_plain(spark, root, where)
        assert frame.columns == ["id", "year"]
    _write(root / "year=unknown" / "p0.parquet", 9000)  # year becomes a string column
    for where in (EVERY_FILE, EVERY_FILE):
        frame = _same_as_plain(spark, root, where)
        assert dict(frame.dtypes)["year"] == "string"


def test_files_not_parquet_are_left_out_as_before(spark, tmp_path):
    root = tmp_path / "t"
    for k in range(3):
        _write(root / f"p{k}.parquet", k * 50)
    (root / "notes.txt").write_text("not data")
    si.build_index(root, [si.MinMax("id")], spark=spark)
    files = [str(root / f"p{k}.parquet") for k in range(3)]
    for _ in range(2):
        _same_as_plain(spark, root, plain=spark.read.parquet(*files))
    assert schema_cache.nbytes == 0  # read the kept paths, never the folder


def test_a_delta_table_reads_its_snapshot_every_time(spark, tmp_path):
    root = tmp_path / "events"
    for k in range(3):
        batch = pa.table({"id": pa.array(range(k * 10, k * 10 + 10), pa.int64())})
        write_deltalake(str(root), batch, mode="append")
    si.build_index(root, [si.MinMax("id")], spark=spark)
    write_deltalake(str(root), pa.table({"id": pa.array(range(5), pa.int64())}), mode="overwrite")
    for _ in range(2):
        frame = si.read(spark, root, EVERY_FILE)
        assert sorted(r.id for r in frame.collect()) == list(range(5))
    assert schema_cache.nbytes == 0
