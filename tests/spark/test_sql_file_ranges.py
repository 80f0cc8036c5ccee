"""Ranges from the min-max of a side's kept files prune the other side where its
keys cannot be read (sql/file_ranges.py): sales and their returns, both ordered
by order number, the sales' keys too many bytes to read in the driver."""

from __future__ import annotations

import importlib
import os
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex.sql.catalog import Source
from skipindex.sql.file_ranges import kept_file_ranges
from skipindex.store.location import locate
from tests._support import exact_rows, files_holding, spark_write

pytestmark = pytest.mark.spark

FILES, ROWS = 8, 400  # sales: order numbers 0..3,199 in day order, 400 a file


@pytest.fixture(scope="module")
def shop(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("shop")
    rng = np.random.default_rng(11)
    sales, returns = root / "sales", root / "returns"
    sales.mkdir()
    returns.mkdir()
    orders = np.arange(FILES * ROWS, dtype=np.int64)
    for f in range(FILES):
        at = orders[f * ROWS : (f + 1) * ROWS]
        day = (at // 40).astype(np.int32)  # 10 days a file
        amount = rng.integers(0, 10, ROWS).astype(np.int32)
        order = pa.array(at).to_pylist()
        if f == FILES - 1:
            order[::50] = [None] * len(order[::50])  # NULL keys bound nothing
        table = pa.table({"day": day, "order_no": pa.array(order, pa.int64()), "amount": amount})
        pq.write_table(table, sales / f"part-{f}.parquet")
    # every 4th order returned (some under a near order number): returns follow orders
    returned = np.sort(orders[::4] + rng.integers(0, 3, len(orders[::4])))
    for f, part in enumerate(np.array_split(returned, FILES)):
        pq.write_table(pa.table({"order_no": part.astype(np.int64)}), returns / f"part-{f}.parquet")
    specs = [si.MinMax("day"), si.BitSlicedBitmap("day"), si.MinMax("order_no")]
    si.build_index(str(sales), specs, spark=spark)
    si.build_index(str(returns), [si.MinMax("order_no")], spark=spark)
    si.register(spark, "sales", str(sales))
    si.register(spark, "returns", str(returns))
    return {"sales": sales, "returns": returns}


def _ranged(spark: Any, query: str, **options: Any) -> tuple[si.SqlPlan, Any, Any]:
    """The plan of ``query`` (its rows Spark's), its returns reference, and the
    join whose ranges pruned it."""
    plan = si.sql_plan(spark, query, **options)
    assert exact_rows(plan.frame) == exact_rows(spark.sql(query)), plan.explain()
    (returns,) = [r for r in plan.references if r.written == "returns"]
    (used,) = [j for j in plan.joins if j.fact == "returns" and j.ranges is not None]
    assert returns.result is not None, plan.explain()
    return plan, returns, used


@pytest.fixture
def driver_reads_no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kept sales files are more bytes than the driver reads keys from."""
    policy = importlib.import_module("skipindex.reading.policy")
    monkeypatch.setattr(policy, "DEFAULT", replace(policy.DEFAULT, local_bytes=0))


@pytest.mark.usefixtures("driver_reads_no_keys")
def test_the_kept_sales_files_bound_the_returns_by_their_min_max(spark, shop):
    query = (
        "SELECT count(*) AS n, sum(s.amount) AS total FROM returns r JOIN sales s "
        "ON r.order_no = s.order_no WHERE s.day BETWEEN 25 AND 34 AND s.amount > 6"
    )
    plan, returns, used = _ranged(spark, query)
    assert "min-max of its 2 kept files" in used.note, plan.explain()
    sold = pq.read_table(shop["sales"]).to_pandas()
    wanted = sold[(sold.day >= 25) & (sold.day <= 34) & (sold.amount > 6)]
    holding = files_holding(shop["returns"], "order_no", set(wanted.order_no.dropna().astype(int)))
    assert returns.files is not None
    assert holding <= set(returns.files), plan.explain()  # never a file with a match
    assert returns.result.kept < FILES, plan.explain()  # the other periods skipped


@pytest.mark.usefixtures("driver_reads_no_keys")
def test_a_file_with_null_keys_bounds_only_its_values(spark, shop):
    query = (
        "SELECT count(*) AS n FROM returns r JOIN sales s ON r.order_no = s.order_no "
        "WHERE s.day >= 65 AND s.amount > 2"
    )
    plan, returns, used = _ranged(spark, query)
    # files 6 and 7: 2,400-2,799 and 2,801-3,199 (order 2,800 is NULL there, bounding nothing)
    assert used.ranges == 2, plan.explain()
    assert "BETWEEN 2801 AND 3199" in str(plan.to_dict()["references"]), plan.explain()
    assert 0 < returns.result.kept < FILES, plan.explain()


def test_keys_past_the_bound_read_from_kept_rows_are_given_as_ranges(spark, shop):
    query = (
        "SELECT count(*) AS n FROM returns r JOIN sales s ON r.order_no = s.order_no "
        "WHERE s.day BETWEEN 27 AND 33"
    )
    plan, returns, used = _ranged(spark, query, dynamic_keys=10)  # 280 orders: past the bound
    assert used.note == "read from its kept rows", plan.explain()
    (condition,) = [c for c in returns.conditions if c.origin == "dynamic"]
    assert "280 keys of sales as ranges" in condition.note
    assert "BETWEEN 1080 AND 1359" in plan.explain()  # days 27-33: orders 1,080-1,359
    assert returns.result.kept < FILES


def test_ranges_only_from_files_indexed_as_they_are(spark, shop, tmp_path):
    copy = tmp_path / "sales"
    shutil.copytree(shop["sales"], copy, copy_function=shutil.copy2)  # same sizes, mtimes
    result = si.prune(str(copy), "day BETWEEN 25 AND 34")
    assert len(result.files) == 2
    source = Source(str(copy), locate(str(copy)), (), spark.read.parquet(str(copy)).schema)
    assert kept_file_ranges(source, result, "order_no", False) == [(800, 1599)]  # 2 files
    assert kept_file_ranges(source, result, "ORDER_NO", True) is None  # no such column
    assert kept_file_ranges(source, result, "amount", False) is None  # no min-max on it
    touched = Path(result.files[0])
    stat = touched.stat()
    os.utime(touched, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert kept_file_ranges(source, result, "order_no", False) is None


def test_keys_no_indexed_file_holds_are_left_out_and_an_added_file_keeps_its_rows(
    spark, shop, tmp_path
):
    sales = tmp_path / "sales"
    shutil.copytree(shop["sales"], sales, copy_function=shutil.copy2)  # indexed as they are
    days = tmp_path / "days"
    days.mkdir()
    d = np.arange(2000, dtype=np.int32)  # the sales hold days 0..79
    chosen = ((d >= 3) & (d <= 5)) | ((d >= 40) & (d <= 42)) | ((d >= 1000) & (d <= 1099))
    pq.write_table(pa.table({"d": d, "kind": chosen.astype(np.int32)}), days / "part-0.parquet")
    si.build_index(str(days), [si.BitSlicedBitmap("kind")], spark=spark)
    # A file written after the build, and one rewritten since, each holding a day
    # no file held when indexed: neither is indexed as it is, so both are kept
    # whatever the keys say.
    schema = pq.read_schema(sales / "part-0.parquet")
    late = pa.table(
        {"day": pa.array([1050, 7], pa.int32()), "order_no": [5000, 5001], "amount": [1, 2]}
    )
    pq.write_table(late.cast(schema), sales / "part-late.parquet")
    rewritten = pq.read_table(sales / "part-1.parquet").to_pandas()
    rewritten.loc[::7, "day"] = 1060
    pq.write_table(
        pa.Table.from_pandas(rewritten, schema, preserve_index=False), sales / "part-1.parquet"
    )
    si.register(spark, "sales_late", str(sales))
    si.register(spark, "days", str(days))
    query = (
        "SELECT count(*) AS n, sum(s.amount) AS total FROM sales_late s JOIN days "
        "ON s.day = days.d WHERE days.kind = 1"
    )
    plan = si.sql_plan(spark, query)
    assert exact_rows(plan.frame) == exact_rows(spark.sql(query)), plan.explain()
    rows = pq.read_table(sales).to_pandas()
    matched = rows[rows.day.isin(d[chosen])]
    assert plan.frame.collect()[0]["n"] == len(matched)  # days 1,050 and 1,060 among them
    (reference,) = [r for r in plan.references if r.written == "sales_late"]
    (condition,) = [c for c in reference.conditions if c.origin == "dynamic"]
    assert "106 keys of days" in condition.note, plan.explain()
    assert "(6 within the min-max of its indexed files)" in condition.note, plan.explain()
    assert reference.files is not None
    assert {str(sales / "part-late.parquet"), str(sales / "part-1.parquet")} <= set(
        reference.files
    ), plan.explain()
    assert reference.result is not None
    assert reference.result.kept == 4, plan.explain()


def test_date_keys_no_indexed_file_holds_are_left_out_in_any_zone(spark, tmp_path):
    """Date keys are clipped to the indexed files' min-max as integer keys are:
    a file added after the build keeps its rows, and a session outside UTC reads
    the same dates (a DATE has no zone)."""
    sales, calendar = tmp_path / "dated_sales", tmp_path / "calendar"
    sales.mkdir()
    calendar.mkdir()
    first = np.datetime64("2001-03-01")
    for f in range(4):  # 20 days a file, 2001-03-01 on
        sold = first + np.arange(f * 20, (f + 1) * 20).repeat(5)
        table = pa.table({"sold": pa.array(sold, pa.date32()), "amount": np.arange(100) % 7})
        pq.write_table(table, sales / f"part-{f}.parquet")
    si.build_index(str(sales), [si.MinMax("sold"), si.BitSlicedBitmap("sold")], spark=spark)
    # Days 10..12 (file 0), 65..66 (file 3), and 40 days after every file
    # (2001-07-01 on), one of which only the late file holds.
    offsets = np.arange(-400, 400)
    days = first + offsets
    chosen = ((offsets >= 10) & (offsets <= 12)) | ((offsets >= 65) & (offsets <= 66))
    chosen |= (offsets >= 122) & (offsets < 162)
    pq.write_table(
        pa.table({"d": pa.array(days, pa.date32()), "kind": chosen.astype(np.int32)}),
        calendar / "part-0.parquet",
    )
    si.build_index(str(calendar), [si.BitSlicedBitmap("kind")], spark=spark)
    late = pa.table({"sold": pa.array(first + np.array([130, 400]), pa.date32()), "amount": [3, 4]})
    pq.write_table(late.cast(pq.read_schema(sales / "part-0.parquet")), sales / "part-late.parquet")
    si.register(spark, "dated_sales", str(sales))
    si.register(spark, "calendar", str(calendar))
    query = (
        "SELECT count(*) AS n, sum(s.amount) AS total FROM dated_sales s JOIN calendar c "
        "ON s.sold = c.d WHERE c.kind = 1"
    )
    zones = ("UTC", "Pacific/Kiritimati", "America/Los_Angeles")
    kept = {"part-0.parquet", "part-3.parquet", "part-late.parquet"}
    _, plans = _clipped_in_zones(spark, query, zones, "dated_sales", "45 keys of calendar", 5, kept)
    for plan in plans:
        assert plan.frame.collect()[0]["n"] == 3 * 5 + 2 * 5 + 1, plan.explain()


def _clipped_in_zones(
    spark: Any,
    query: str,
    zones: tuple[str, ...],
    fact: str,
    keys: str,
    within: int,
    kept: set[str],
) -> tuple[list[str], list[si.SqlPlan]]:
    """spark.sql's rows of ``query``, and its plans in each of ``zones``: those rows, the join's
    ``keys`` note with ``within`` of them inside the indexed min-max, and ``kept``
    the files the index keeps of ``fact`` (Spark may read more)."""
    expected = exact_rows(spark.sql(query))
    plans = []
    for zone in zones:
        spark.conf.set("spark.sql.session.timeZone", zone)
        try:
            plan = si.sql_plan(spark, query)
            assert exact_rows(plan.frame) == expected, f"{zone}\n{plan.explain()}"
        finally:
            spark.conf.set("spark.sql.session.timeZone", "UTC")
        (reference,) = [r for r in plan.references if r.written == fact]
        (condition,) = [c for c in reference.conditions if c.origin == "dynamic"]
        assert keys in condition.note, plan.explain()
        assert f"({within} within the min-max of its indexed files)" in condition.note, (
            plan.explain()
        )
        assert reference.result is not None
        assert {Path(f).name for f in reference.result.files} == kept, plan.explain()
        plans.append(plan)
    return expected, plans


def test_dates_written_in_the_legacy_calendar_are_clipped_as_spark_reads_them(spark, tmp_path):
    """Sales written by Spark in LEGACY mode store the year 1000's dates in the
    Julian calendar: the first file's raw days are 1000-03-07..11, six days off the
    03-01..05 Spark reads back. The min-max the keys are clipped to must hold the
    days Spark reads: the raw range would drop 03-01, which that file holds, and
    keep 03-08 and 03-09, which no file holds."""
    sales, calendar = tmp_path / "old_sales", tmp_path / "old_calendar"
    legacy = "spark.sql.parquet.datetimeRebaseModeInWrite"
    previous = spark.conf.get(legacy)
    spark.conf.set(legacy, "LEGACY")
    try:
        for f in range(4):  # days 10f .. 10f+4 after 1000-03-01, two sales a day
            spark_write(
                spark.sql(
                    f"SELECT date_add(DATE'1000-03-01', {10 * f} + CAST(id DIV 2 AS INT)) AS sold, "
                    "id AS amount FROM range(10)"
                ),
                sales / f"part-{f}.parquet",
            )
    finally:
        spark.conf.set(legacy, previous)
    si.build_index(str(sales), [si.MinMax("sold"), si.BitSlicedBitmap("sold")], spark=spark)
    chosen = "d IN (0, 7, 8, 24) OR d BETWEEN 100 AND 119"  # days after 1000-03-01
    spark_write(
        spark.sql(
            f"SELECT date_add(DATE'1000-03-01', d) AS day, CAST({chosen} AS INT) AS kind "
            "FROM (SELECT CAST(id AS INT) - 60 AS d FROM range(200))"
        ),
        calendar / "part-0.parquet",
    )
    si.build_index(str(calendar), [si.BitSlicedBitmap("kind")], spark=spark)
    si.register(spark, "old_sales", str(sales))
    si.register(spark, "old_calendar", str(calendar))
    query = (
        "SELECT s.sold, s.amount FROM old_sales s JOIN old_calendar c "
        "ON s.sold = c.day WHERE c.kind = 1"
    )
    kept = {"part-0.parquet", "part-2.parquet"}
    expected, _ = _clipped_in_zones(
        spark, query, ("UTC", "Asia/Kolkata"), "old_sales", "24 keys of old_calendar", 2, kept
    )
    assert len(expected) == 4  # 1000-03-01 and 03-25, two sales each
