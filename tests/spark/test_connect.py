"""Spark Connect: build, prune with Connect Columns, and read through a Connect session.

The Connect server that ships with pyspark runs in its own process (the
``connect_server`` fixture of tests/conftest.py), and this process talks to it
as a pure client, next to the classic session the other tests share.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import skipindex as si
from tests._support import six_event_files

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def connect(connect_server: tuple[int, str]) -> Iterator[Any]:
    port, token = connect_server
    os.environ["SPARK_CONNECT_AUTHENTICATE_TOKEN"] = token
    try:
        from pyspark.sql.connect.session import SparkSession

        session = SparkSession.builder.remote(f"sc://localhost:{port}").getOrCreate()
        yield session
        session.stop()
    finally:
        os.environ.pop("SPARK_CONNECT_AUTHENTICATE_TOKEN", None)


def test_build_prune_and_read_through_spark_connect(connect, spark, tmp_path):
    from pyspark.sql.connect import functions as F  # noqa: N812

    root = six_event_files(tmp_path / "t")
    report = si.build_index(
        root,
        [
            si.MinMax("id"),
            si.MinMax("day"),
            si.MinMax("ts"),
            si.EqualityBitmap("mode"),
            si.Bloom("id"),
        ],
        spark=connect,
    )
    assert report.files_indexed == 6
    cases = [
        (F.col("id") == 250, "id = 250"),
        (F.col("id").isin(5, 505), "id IN (5, 505)"),
        (
            (F.col("day") >= F.lit(dt.date(2024, 1, 35 - 4 - 10))) & (F.col("mode") == "SHIP"),
            "day >= DATE '2024-01-21' AND mode = 'SHIP'",
        ),
        (F.col("ts") < F.lit(dt.datetime(2024, 3, 10, 2)), "ts < TIMESTAMP '2024-03-10 02:00:00'"),
        (
            ~F.col("mode").startswith("AI") & (F.col("id") < 200),
            "NOT startswith(mode, 'AI') AND id < 200",
        ),
        (F.col("id").cast("string") == "7", "CAST(id AS STRING) = '7'"),
        (F.expr("id BETWEEN 101 AND 120"), "id BETWEEN 101 AND 120"),
    ]
    zone = connect.conf.get("spark.sql.session.timeZone")
    for column, sql in cases:
        by_column = si.prune(root, column)  # the Connect session's zone, as Spark would
        by_sql = si.prune(root, sql, time_zone=zone)
        assert by_column.files == by_sql.files, sql
        assert by_column.time_zone == zone
        table = connect.read.parquet(str(root))
        assert si.read(connect, root, column).count() == table.filter(column).count(), sql
        # (a naive datetime in a Connect Column is read in the client's zone, SQL text in
        # the session's: the two forms may differ, each must match Spark on its own)
        assert si.read(connect, root, sql).count() == table.filter(sql).count(), sql
    assert si.prune(root, F.col("id") == 250).kept == 1
    assert si.prune(root, F.col("s.f") == 3).kept == 6  # an unindexed field: might match


def test_read_by_row_groups_through_spark_connect(connect, tmp_path, used_row_groups):
    root = tmp_path / "t"
    root.mkdir()
    for k in range(2):
        ids = pa.array(range(k * 1000, (k + 1) * 1000), pa.int64())
        stamps = pc.multiply(ids, 3_600_000_000).cast(pa.timestamp("us", "UTC"))
        pq.write_table(
            pa.table({"id": ids, "ts": stamps}), root / f"p{k}.parquet", row_group_size=100
        )
    si.build_index(str(root), [si.EqualityBitmap("id")], spark=connect)
    # New York's midnight is 05:00 UTC, id 5's instant: it does not match in this session.
    where = "id IN (5, 6, 1999) AND ts > TIMESTAMP '1970-01-01 00:00:00'"
    expected = sorted(map(repr, connect.read.parquet(str(root)).filter(where).collect()))
    assert len(expected) == 2
    assert sorted(map(repr, si.read(connect, str(root), where).collect())) == expected
    assert used_row_groups == [2]


def test_cluster_through_spark_connect(connect, tmp_path):
    root = six_event_files(tmp_path / "t")
    before = sorted(map(repr, connect.read.parquet(str(root)).select("id", "mode").collect()))
    report = si.cluster(
        root, tmp_path / "z", by=["mode", "id"], target_file_bytes=2_000, spark=connect
    )
    assert report.plan.state == "completed"
    clustered = connect.read.parquet(str(tmp_path / "z"))
    assert sorted(map(repr, clustered.select("id", "mode").collect())) == before
    assert si.prune(tmp_path / "z", "mode = 'SHIP'").kept < report.files_written


def test_expression_indexes_through_spark_connect(connect, tmp_path):
    """Spark Connect computes an expression index's values too (``_metadata``
    and ``mapInArrow`` work there), in the Connect session's time zone."""
    root = six_event_files(tmp_path / "t")
    si.build_index(
        root,
        [si.EqualityBitmap(expr="lower(mode)"), si.EqualityBitmap(expr="hour(ts)")],
        spark=connect,
    )
    table = connect.read.parquet(str(root))
    zone = connect.conf.get("spark.sql.session.timeZone")
    described = si.describe(root).to_dict()["indexes"]
    assert {d["expression"]: d["time_zone"] for d in described} == {
        "lower(mode)": zone,
        "hour(ts)": zone,
    }
    for where in ["lower(mode) = 'ship'", "hour(ts) = 7", "hour(ts) IN (0, 23)"]:
        result = si.prune(root, where, time_zone=zone)
        truth = {
            Path(r.f).name
            for r in table.filter(where).selectExpr("_metadata.file_name AS f").collect()
        }
        assert {Path(f).name for f in result.files} == truth, where
        assert "might match" not in result.explain(), where


def test_sql_over_a_registered_view_through_spark_connect(connect, tmp_path):
    # A Connect client holds no listing (no JVM here): each prune lists, and the
    # view less its skipped files travels with the query as a DataFrame.
    root = six_event_files(tmp_path / "t")
    si.build_index(root, [si.MinMax("id"), si.EqualityBitmap("mode")], spark=connect)
    si.register(connect, "events_connect", str(root))
    for query in (
        "SELECT id, mode FROM events_connect WHERE id < 150",
        "SELECT e.id FROM events_connect e JOIN events_connect f ON e.id = f.id "
        "WHERE f.mode = 'SHIP' AND e.id >= 400",
    ):
        plan = si.sql_plan(connect, query)
        assert any(r.result is not None and r.result.kept < 6 for r in plan.references), query
        got = sorted(tuple(row) for row in plan.frame.collect())
        assert got == sorted(tuple(row) for row in connect.sql(query).collect()), query
