"""A Delta table's partition values come from its log, never from its folder names.

deltalake's reader is the reference: its rows (evaluated by Spark, with the
log's schema) are what read() and sql() must return, and every file holding a
live match must survive prune(), with and without an index, in two session zones.
"""

from __future__ import annotations

import datetime
import shutil
import tempfile
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from hypothesis import given, settings
from hypothesis import strategies as st

import skipindex as si
from skipindex.errors import UnsupportedTableError
from skipindex.indexing.build import InProcessRunner, build_with
from skipindex.reading.read import delta_spark_schema
from skipindex.store.location import locate
from tests._support import examples

pytestmark = pytest.mark.spark

ZONES = ("UTC", "America/Los_Angeles")


@contextmanager
def session_zone(spark: Any, zone: str) -> Any:
    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        yield
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)


def _live(spark: Any, root: Path) -> Any:
    """deltalake's rows of the table, as a Spark DataFrame typed by the log, with
    each row's file (relative to the root, decoded) in a last column ``__file``."""
    dataset = DeltaTable(str(root)).to_pyarrow_dataset()
    schema = delta_spark_schema(locate(str(root)))
    rows = dataset.to_table(columns=[*schema.names, "__filename"]).to_pylist()
    with_file = schema.add("__file", "string")
    return spark.createDataFrame([tuple(r.values()) for r in rows], with_file)


def _rows(frame: Any) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in frame.collect()), key=repr)


def _check(spark: Any, root: Path, wheres: list[str], zones: tuple[str, ...]) -> None:
    """Per condition and zone: prune keeps every file holding a live match, and
    read() and sql() return deltalake's rows (one Spark job finds both)."""
    si.register(spark, "delta_t", str(root))
    live = _live(spark, root)
    for zone in zones:
        with session_zone(spark, zone):
            for where in wheres:
                matching = [tuple(r) for r in live.filter(where).collect()]
                rows = sorted((r[:-1] for r in matching), key=repr)
                holding = {str(root / r[-1]) for r in matching}
                kept = set(si.prune(str(root), where, time_zone=zone).files)
                assert holding <= kept, f"{where} ({zone}): dropped {sorted(holding - kept)}"
                assert _rows(si.read(spark, str(root), where)) == rows, f"read {where} ({zone})"
                query = f"SELECT * FROM delta_t WHERE {where}"
                assert _rows(si.sql(spark, query)) == rows, f"sql {where} ({zone})"


def test_a_string_partition_column_is_compared_as_a_string(spark, tmp_path):
    """delta-rs's delta-0.8.0-partitioned case: STRING year/month/day in folders
    month=2, month=4, month=12; '2' >= '12' is true for strings."""
    root = tmp_path / "partitioned"
    months = ["1", "2", "2", "4", "4", "12", "12", "12", "11"]
    table = pa.table(
        {
            "value": [str(i) for i in range(len(months))],
            "year": ["2020"] * 3 + ["2021"] * 6,
            "month": months,
            "day": ["1", "3", "5", "5", "4", "4", "20", "20", "2"],
        }
    )
    write_deltalake(str(root), table, partition_by=["year", "month", "day"])
    expected = (
        DeltaTable(str(root))
        .to_pyarrow_table()
        .filter(pa.compute.greater_equal(pa.compute.field("month"), "12"))
    )
    assert expected.num_rows == 7  # '2' and '4' >= '12' as strings; '1' and '11' are not

    assert si.read(spark, str(root), "month >= '12'").count() == 7  # no index yet
    si.build_index(str(root), [si.MinMax("value"), si.Bloom("value")], spark=spark)
    result = si.prune(str(root), "month >= '12'")
    assert "month >= '12'" in result.explain()  # bound as a string, not the number 12
    assert si.read(spark, str(root), "month >= '12'").count() == 7
    assert si.read(spark, str(root), "month = '2'").count() == 2
    assert si.read(spark, str(root), "month = 2").count() == 2  # Spark casts the literal
    assert dict(si.read(spark, str(root), "value = '5'").first().asDict())["month"] == "12"
    _check(spark, root, ["month >= '12'", "month < '2' AND day > '2'", "day IN ('20', '4')"], ZONES)


# Values that look like another type: as the column's own type they must stay themselves.
STRINGS = ["007", "7", "1e3", "2024-01-01", "true", "", None, "12", "2", "a b", "é/%", "-1"]
DATES = [datetime.date(2024, 1, 1), datetime.date(1, 1, 1), datetime.date(1969, 12, 31), None]
INTS = [7, -3, 0, 12, 2_000_000_000, None]
# delta-rs cannot write a negative decimal with a fraction ('-0.5' -> '0.-5'): none here.
DECIMALS = [Decimal("0.07"), Decimal("7.00"), Decimal("1000.50"), Decimal("12.00"), None]
BOOLEANS = [True, False, None]

COLUMNS = {
    "s": (pa.string(), STRINGS),
    "d": (pa.date32(), DATES),
    "n": (pa.int32(), INTS),
    "dec": (pa.decimal128(7, 2), DECIMALS),
    "b": (pa.bool_(), BOOLEANS),
}


def _sql(value: Any, arrow_type: pa.DataType) -> str:
    if value is None:
        return "NULL"
    if pa.types.is_string(arrow_type):
        return "'" + value.replace("'", "''") + "'"
    if pa.types.is_date(arrow_type):
        return f"DATE '{value.isoformat()}'"
    if pa.types.is_decimal(arrow_type):
        return f"CAST('{value}' AS DECIMAL(7,2))"
    return str(value).lower() if isinstance(value, bool) else str(value)


@st.composite
def tables(draw: Any) -> tuple[list[str], list[pa.Table], list[str]]:
    """Partition columns of one to two types, a few commits of rows, and conditions
    on the partition columns (with a data column now and then)."""
    chosen = draw(st.lists(st.sampled_from(sorted(COLUMNS)), min_size=1, max_size=2, unique=True))
    commits = []
    for _ in range(draw(st.integers(1, 2))):
        rows = draw(st.integers(1, 6))
        columns = {"v": pa.array(draw(st.lists(st.integers(0, 9), min_size=rows, max_size=rows)))}
        for name in chosen:
            arrow_type, pool = COLUMNS[name]
            values = draw(st.lists(st.sampled_from(pool), min_size=rows, max_size=rows))
            columns[name] = pa.array(values, arrow_type)
        commits.append(pa.table(columns))
    wheres = []
    for _ in range(draw(st.integers(1, 3))):
        name = draw(st.sampled_from(chosen))
        arrow_type, pool = COLUMNS[name]
        literal = _sql(draw(st.sampled_from([v for v in pool if v is not None])), arrow_type)
        if pa.types.is_boolean(arrow_type):
            condition = draw(st.sampled_from([f"{name}", f"NOT {name}", f"{name} = {literal}"]))
        else:
            operator = draw(st.sampled_from(["=", "<", ">=", "!="]))
            condition = f"{name} {operator} {literal}"
        condition = draw(st.sampled_from([condition, f"{name} IS NULL", f"{condition} AND v > 4"]))
        wheres.append(condition)
    return chosen, commits, wheres


@settings(max_examples=examples(12))
@given(drawn=tables())
def test_partition_values_of_every_type_are_the_logs(spark, drawn):
    chosen, commits, wheres = drawn
    root = Path(tempfile.mkdtemp(prefix="delta-partitions-")) / "t"
    try:
        for commit in commits:
            write_deltalake(str(root), commit, mode="append", partition_by=chosen)
        _check(spark, root, wheres, ZONES[:1])  # no index: the listing's values alone
        build_with(str(root), [si.MinMax("v"), si.EqualityBitmap("v")], InProcessRunner())
        _check(spark, root, wheres, ZONES)
    finally:
        shutil.rmtree(root.parent, ignore_errors=True)


def test_build_describe_and_cluster_take_partition_columns_from_the_log(spark, tmp_path):
    root = tmp_path / "events"
    table = pa.table({"v": [1, 2, 3, 4], "month": ["2", "4", "12", "12"]})
    write_deltalake(str(root), table, partition_by=["month"])
    with pytest.raises(si.SkipIndexError, match="partition column"):
        si.build_index(str(root), [si.MinMax("month")], spark=spark)
    si.build_index(str(root), [si.MinMax("v")], spark=spark)
    described = si.describe(str(root)).to_dict()["partition_columns"]
    assert [(p["name"], p["type"], p["from"]) for p in described] == [
        ("month", "STRING", "the Delta log")
    ]
    # Written as a Parquet folder, month=2 would read back as INT 2: refused, by name.
    with pytest.raises(UnsupportedTableError, match=r"partition column month \(STRING"):
        si.cluster(str(root), str(tmp_path / "out"), by=["v"], spark=spark)
