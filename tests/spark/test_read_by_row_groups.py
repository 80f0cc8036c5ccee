"""read() by row groups: on files Spark wrote (INT96 timestamps, many row
groups), in a session outside UTC, the rows equal Spark's own scan."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex.reading.pages import PagedFile

pytestmark = pytest.mark.spark

ROWS = 6000


# parquet-mr cuts a page every 25 rows: a few candidates sit in few pages.
SMALL_PAGES = {
    "parquet.page.row.count.limit": "25",
    "parquet.page.size.row.check.min": "1",
    "parquet.page.size.row.check.max": "1",
}


def _spark_table(spark, root: Path, rows: int = ROWS, files: int = 3, **options: str) -> None:
    frame = spark.range(0, rows, 1, files).selectExpr(
        "id",
        "CAST(id % 97 AS INT) AS Key",  # the index and the queries say `key`
        "CONCAT('s', CAST(id AS STRING), CASE WHEN id % 5 = 0 THEN 'é' ELSE '' END) AS s",
        "CAST(id / 7 AS DECIMAL(12, 2)) AS dec",
        "TIMESTAMP_SECONDS(id * 3600 + 946684800) AS ts",
        "DATE_ADD(DATE'2000-01-01', CAST(id % 400 AS INT)) AS d",
        "CASE WHEN id % 11 = 0 THEN NULL ELSE CAST(id AS DOUBLE) / 3 END AS x",
    )
    frame.write.options(**{"parquet.block.size": "8192", **options}).parquet(str(root))


@pytest.mark.parametrize("pages", [{}, SMALL_PAGES], ids=["pages-whole", "pages-small"])
def test_rows_read_by_row_groups_are_the_rows_spark_reads(spark, tmp_path, used_row_groups, pages):
    root = tmp_path / "t"
    _spark_table(spark, root, **pages)
    files = sorted(root.glob("*.parquet"))
    assert all(pq.ParquetFile(f).metadata.num_row_groups >= 4 for f in files)
    paged = PagedFile.open(str(files[0]))
    assert paged is not None
    page_rows = paged.page_rows(0, "s")
    paged.close()
    assert page_rows is not None
    assert (max(page_rows) <= 25) == bool(pages)
    si.build_index(str(root), [si.BitSlicedBitmap("id"), si.EqualityBitmap("key")], spark=spark)
    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")
    try:
        table = spark.read.parquet(str(root))
        cases = {  # query -> files read by row groups
            "id BETWEEN 2500 AND 2530 AND ts >= TIMESTAMP '2000-04-15 00:00:00'": 1,
            "key = 5 AND id < 700": 1,
            "id IN (10, 2100, 5999) OR (key = 3 AND id BETWEEN 4100 AND 4200)": 3,
            "id BETWEEN 100 AND 110 OR id >= 4500": 1,  # the last file is read whole
            "key = 96": 0,  # every row group can match: Spark reads the files
        }
        for where, by_groups in cases.items():
            used_row_groups.clear()
            expected = sorted(map(repr, table.filter(where).collect()))
            frame = si.read(spark, str(root), where)
            assert frame.schema == table.schema, where
            assert sorted(map(repr, frame.collect())) == expected, where
            assert used_row_groups == ([by_groups] if by_groups else []), where
            whole = si.read(spark, str(root), where, row_groups=False)
            assert sorted(map(repr, whole.collect())) == expected, where
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)


def test_a_file_spark_wrote_as_one_row_group_is_read_by_its_pages(spark, tmp_path, used_row_groups):
    # Spark's default 128 MB row groups: a file this small is one row group, of
    # ten pages of 20,000 rows; a few candidate rows are read from their pages alone.
    root = tmp_path / "t"
    _spark_table(spark, root, rows=200_000, files=1, **{"parquet.block.size": str(128 << 20)})
    [file] = sorted(root.glob("*.parquet"))
    assert pq.ParquetFile(file).metadata.num_row_groups == 1
    si.build_index(str(root), [si.BitSlicedBitmap("id"), si.EqualityBitmap("key")], spark=spark)
    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")
    try:
        table = spark.read.parquet(str(root))
        cases = {  # query -> read by pages
            "id = 77777": True,
            "id IN (10, 99999) OR (key = 3 AND id BETWEEN 41000 AND 41200)": True,
            "key = 5 AND id < 3000 AND ts >= TIMESTAMP '2000-01-02 00:00:00'": True,  # one page
            "key = 96": False,  # candidate rows in every page
        }
        for where, by_pages in cases.items():
            used_row_groups.clear()
            expected = sorted(map(repr, table.filter(where).collect()))
            assert sorted(map(repr, si.read(spark, str(root), where).collect())) == expected, where
            assert used_row_groups == ([1] if by_pages else []), where
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)


def test_partition_values_come_from_the_path_as_spark_types_them(spark, tmp_path, used_row_groups):
    root = tmp_path / "t"
    folders = ["year=2020/tag=a%20b", "year=2021/tag=__HIVE_DEFAULT_PARTITION__", "year=2021/tag=7"]
    for k, folder in enumerate(folders):
        (root / folder).mkdir(parents=True)
        ids = pa.array(range(k * 1000, (k + 1) * 1000), pa.int64())
        table = pa.table({"id": ids, "Tag": pa.array(["in the file"] * 1000)})  # hidden by tag
        pq.write_table(table, root / folder / "part.parquet", row_group_size=100)
    si.build_index(str(root), [si.EqualityBitmap("id")], spark=spark)
    table = spark.read.parquet(str(root))
    for where, by_groups in {
        "id IN (5, 1500, 2999)": 3,
        "id = 1500 OR (tag IS NULL AND id < 1100)": 1,
        "year = 2021 AND id > 2990": 1,
    }.items():
        used_row_groups.clear()
        expected = sorted(map(repr, table.filter(where).collect()))
        frame = si.read(spark, str(root), where)
        assert frame.schema == table.schema, where
        assert sorted(map(repr, frame.collect())) == expected, where
        assert used_row_groups == [by_groups], where


def test_files_spark_rebases_from_the_legacy_calendar_are_read_by_spark(
    spark, tmp_path, used_row_groups
):
    root = tmp_path / "t"
    keys = (
        "spark.sql.parquet.datetimeRebaseModeInWrite",
        "spark.sql.parquet.int96RebaseModeInWrite",
    )
    previous = {key: spark.conf.get(key) for key in keys}
    for key in keys:
        spark.conf.set(key, "LEGACY")
    try:  # dates and INT96 timestamps before 1582, stored in the hybrid Julian calendar
        spark.range(0, ROWS, 1, 2).selectExpr(
            "id",
            "DATE_ADD(DATE'1000-01-01', CAST(id AS INT)) AS d",
            "TIMESTAMP_SECONDS(id * 86400 - 30610224000) AS ts",
        ).write.option("parquet.block.size", 8192).parquet(str(root))
    finally:
        for key, value in previous.items():
            spark.conf.set(key, value)
    assert all(pq.ParquetFile(f).metadata.num_row_groups >= 4 for f in root.glob("*.parquet"))
    si.build_index(str(root), [si.BitSlicedBitmap("id")], spark=spark)
    table = spark.read.parquet(str(root))
    where = "id BETWEEN 100 AND 110 AND d >= DATE '1000-04-15'"
    assert si.prune(str(root), where).row_groups  # row groups are named...
    expected = sorted(map(repr, table.filter(where).collect()))
    assert len(expected) == 7  # ids 104..110: 1000-04-15 is day 104 of that year
    assert sorted(map(repr, si.read(spark, str(root), where).collect())) == expected
    assert used_row_groups == []  # ...but Spark reads these files itself
