"""Spark's type over the whole table, not the first file's (issue 30, section 2).

Spark reads every file of a table in one type per column: the first file's
(by path), or with ``mergeSchema`` the merge of every file's. A literal means
what it means against that type, and each file's values are what Spark reads
from it in that type. The oracle is Spark under both settings, where it can
read the table at all: every file it finds a matching row in must be kept.
One Spark job answers all the predicates of a table state at once.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex._types import domain_of
from skipindex.indexes import KINDS as KIND_CLASSES
from skipindex.indexing.build import build_with
from skipindex.indexing.runners import InProcessRunner
from tests._support import spark_write

pytestmark = pytest.mark.spark

KINDS = (si.MinMax, si.Bloom, si.EqualityBitmap, si.RangeBitmap, si.BitSlicedBitmap)


def every_kind(column: str, arrow_type: pa.DataType) -> list[Any]:
    domain = domain_of(arrow_type)
    return [k(column) for k in KINDS if domain in KIND_CLASSES[k(column).kind].domains]


def spark_matches(spark: Any, root: Path, wheres: Sequence[str]) -> tuple[list[set[str]], int]:
    """Per predicate, the files Spark finds a matching row in under any setting
    it can read the table with (``mergeSchema`` off, on); and how many could."""
    from pyspark.sql import functions as F  # noqa: N812

    matches: list[set[str]] = [set() for _ in wheres]
    readable = 0
    for merge in ("false", "true"):
        try:
            frame = spark.read.option("mergeSchema", merge).parquet(str(root))
            tests = [F.expr(w).alias(f"c{i}") for i, w in enumerate(wheres)]
            rows = frame.select(F.input_file_name().alias("f"), *tests).collect()
        except Exception as exc:  # Spark refuses the table (or one of its files) so
            if not type(exc).__module__.startswith(("pyspark", "py4j")):
                raise
            continue
        readable += 1
        for row in rows:
            name = os.path.relpath(unquote(urlparse(row.f).path), root)
            for i in range(len(wheres)):
                if row[f"c{i}"] is True:
                    matches[i].add(name)
    return matches, readable


def assert_never_drops(
    spark: Any, root: Path, wheres: Sequence[str], *, readable: bool = True
) -> list[set[str]]:
    """prune keeps every file Spark matches; the kept files per predicate. Spark
    must be able to read the table one way or the other unless not ``readable``."""
    expected, settings = spark_matches(spark, root, wheres)
    assert settings or not readable, "Spark reads this table under neither setting"
    kept_all = []
    for where, files in zip(wheres, expected, strict=True):
        result = si.prune(str(root), where, time_zone="UTC")
        kept = {os.path.relpath(f, root) for f in result.files}
        missing = files - kept
        assert not missing, f"{where}: dropped {missing}\n{result.explain()}"
        kept_all.append(kept)
    return kept_all


def write(root: Path, name: str, values: list[Any], arrow_type: pa.DataType) -> None:
    root.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"x": pa.array(values, arrow_type)}), root / name)


def build(root: Path, arrow_type: pa.DataType) -> si.BuildReport:
    return build_with(str(root), every_kind("x", arrow_type), InProcessRunner())


def test_millisecond_and_microsecond_files_are_read_as_microseconds(spark, tmp_path):
    root = tmp_path / "t"
    ms, us = pa.timestamp("ms", tz="UTC"), pa.timestamp("us", tz="UTC")
    write(root, "a.parquet", [0, 1000, None], ms)  # what pandas and many writers produce
    write(root, "b.parquet", [999], us)
    wheres = [
        "x = TIMESTAMP '1970-01-01 00:00:00.000999'",
        "x > TIMESTAMP '1970-01-01 00:00:00.0005'",
        "x < TIMESTAMP '1970-01-01 00:00:00.001'",
        "x IN (TIMESTAMP '1970-01-01 00:00:00.000999', TIMESTAMP '1970-01-01 00:00:01')",
        "x BETWEEN TIMESTAMP '1970-01-01 00:00:00.000001' AND '1970-01-01 00:00:00.000999'",
        "x <> TIMESTAMP '1970-01-01 00:00:00'",
    ]
    build(root, us)  # the first file is in milliseconds
    kept = assert_never_drops(spark, root, wheres)
    assert kept[0] == {"b.parquet"}  # and the index is exact: both files are indexed
    assert si.describe(str(root)).files_indexed == 2
    # The same table indexed one file at a time: b arrives after a's index exists.
    shutil.rmtree(root / "_skipindex")
    (root / "b.parquet").rename(tmp_path / "b.parquet")
    build(root, us)
    (tmp_path / "b.parquet").rename(root / "b.parquet")
    si.build_index(str(root), spark=spark)
    assert assert_never_drops(spark, root, wheres)[0] == {"b.parquet"}


def test_decimals_widened_by_schema_evolution_keep_their_files(spark, tmp_path):
    root = tmp_path / "t"
    write(root, "a.parquet", [Decimal("1.00"), Decimal("999.99")], pa.decimal128(5, 2))
    build(root, pa.decimal128(5, 2))
    # Later files widen the column: read with mergeSchema, Spark takes DECIMAL(10,2).
    write(root, "b.parquet", [Decimal("12345678.90"), None], pa.decimal128(10, 2))
    report = si.build_index(str(root), spark=spark)  # the tasks report the wider type
    assert report.files_indexed == 2  # the wider type re-indexed the table
    wheres = [
        "x > 1000",
        "x = 12345678.90",
        "x >= 999.99",
        "x IN (1.00, 12345678.90)",
        "x < 5",
        "x <> 1.00",
    ]
    kept = assert_never_drops(spark, root, wheres)
    assert kept[0] == {"b.parquet"}
    # A file sorting first with a larger scale: Spark, without mergeSchema, reads
    # every file as its DECIMAL(12,4) (merging scales fails); so must the index.
    write(root, "0.parquet", [Decimal("1.1250")], pa.decimal128(12, 4))
    build(root, pa.decimal128(5, 2))
    kept = assert_never_drops(spark, root, [*wheres, "x = 1.125", "x > 1.1 AND x < 1.2"])
    assert kept[-1] == {"0.parquet"}


def test_timestamps_at_the_edge_of_sparks_range(spark, tmp_path):
    """Long.MaxValue microseconds (Delta's own data-skipping case) and
    Long.MinValue + 1, as Spark writes them (INT96 by default, and INT64)."""
    last = "TIMESTAMP '294247-01-10 04:00:54.775807'"
    first = "TIMESTAMP '-290308-12-21 19:59:05.224193'"
    wheres = [
        "ts >= TIMESTAMP '2019-09-09 01:02:03.457001'",
        f"ts >= {last}",
        f"ts = {last}",
        f"ts IN ({last}, TIMESTAMP '2001-09-09 01:46:40')",
        f"ts > {first}",
        f"ts = {first}",
        "ts < TIMESTAMP '1970-01-01 00:00:00'",
        "n = 9223372036854775807",
        "n >= 9223372036854775807",
        "n = -9223372036854775808",
        "n < -9223372036854775807",
        "n IN (-9223372036854775808, 0)",
    ]
    for encoding in ("INT96", "TIMESTAMP_MICROS"):
        root = tmp_path / encoding
        root.mkdir()
        for name, ts, n in (
            ("max", last, "9223372036854775807L"),
            ("min", first, "-9223372036854775808L"),
            ("mid", "TIMESTAMP '2001-09-09 01:46:40'", "0L"),
        ):
            frame = spark.sql(f"SELECT {ts} AS ts, {n} AS n UNION ALL SELECT NULL, NULL")
            spark_write(frame, root / f"{name}.parquet", outputTimestampType=encoding)
        specs = every_kind("ts", pa.timestamp("us", tz="UTC")) + every_kind("n", pa.int64())
        si.build_index(str(root), specs, spark=spark)
        assert si.describe(str(root)).files_indexed == 3
        kept = assert_never_drops(spark, root, wheres)
        assert kept[1] == kept[2] == {"max.parquet"}, encoding  # exact, not merely kept
        assert kept[5] == {"min.parquet"}, encoding


# --------------------------------------------------------------- mixed physical types

MS, US = pa.timestamp("ms", tz="UTC"), pa.timestamp("us", tz="UTC")
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _ts(micros: int) -> str:
    moment = EPOCH + timedelta(microseconds=micros)
    return f"TIMESTAMP '{moment.strftime('%Y-%m-%d %H:%M:%S.%f')}'"


# family: (narrow type, narrow values, wide type, wide values, literal text, extra literals)
FAMILIES: dict[str, tuple[pa.DataType, list[Any], pa.DataType, list[Any], Callable[[Any], str]]] = {
    "timestamp ms/us": (
        MS,
        [0, 1_000, 2_000],
        US,
        [999, 1_001, 5_000_000],
        lambda v: _ts(int(v) * (1000 if isinstance(v, _Ms) else 1)),
    ),
    "decimal(5,2)/(10,2)": (
        pa.decimal128(5, 2),
        [Decimal("-1.50"), Decimal("999.99")],
        pa.decimal128(10, 2),
        [Decimal("12345678.90"), Decimal("-99999999.99"), Decimal("5.00")],
        str,
    ),
    "decimal(5,2)/(9,4)": (
        pa.decimal128(5, 2),
        [Decimal("1.50"), Decimal("999.99")],
        pa.decimal128(9, 4),
        [Decimal("1.1250"), Decimal("12345.0001")],
        str,
    ),
    "int32/int64": (
        pa.int32(),
        [-5, 2**31 - 1],
        pa.int64(),
        [2**40, -(2**63), 7],
        str,
    ),
    "int8/int16": (pa.int8(), [-128, 5], pa.int16(), [300, -300, 44], str),
    "float/double": (pa.float32(), [1.5, -0.25], pa.float64(), [0.1, 1e300, 1.5], repr),
}


class _Ms(int):
    """A millisecond count (the narrow timestamp files' values)."""


def _predicates(values: list[Any], literal: Callable[[Any], str]) -> list[str]:
    texts = sorted({literal(v) for v in values})
    wheres = ["x IS NULL", "x IS NOT NULL", f"x IN ({', '.join(texts[:3])})"]
    for text in texts:
        wheres += [f"x = {text}", f"x > {text}", f"x <= {text}", f"x <> {text}"]
    return wheres


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("incremental", [False, True], ids=["one build", "incremental"])
def test_mixed_physical_types_never_drop_a_matching_file(spark, tmp_path, family, incremental):
    """Files a and c in the narrow type, b in the wide one (values the narrow one
    cannot hold). Spark reads the table in a's type (or merged), and once a is
    gone in b's: whatever it reads, prune keeps every file it matches."""
    narrow, small, wide, large, literal = FAMILIES[family]
    root = tmp_path / "t"
    if pa.types.is_timestamp(narrow):
        small = [_Ms(v) for v in small]
    write(root, "a.parquet", [*small[:1], None], narrow)
    write(root, "c.parquet", small, narrow)
    if incremental:
        build(root, narrow)
    write(root, "b.parquet", [*large, None], wide)
    build(root, narrow)
    wheres = _predicates([*small, *large], literal)
    assert_never_drops(spark, root, wheres, readable=False)
    (root / "a.parquet").unlink()  # now b's type is the first file's
    assert_never_drops(spark, root, wheres)


def test_read_by_row_groups_returns_wrapped_int96_timestamps_as_spark_does(
    spark, tmp_path, used_row_groups
):
    """pyarrow reads INT96 values Spark's writer wrapped (Long.MaxValue micros) as
    other times: read() by row groups must hand Spark the values Spark reads."""
    last = "TIMESTAMP '294247-01-10 04:00:54.775807'"
    frame = spark.range(0, 3000, 1, 1).selectExpr(
        f"CASE WHEN id = 1500 THEN {last} WHEN id = 1501 THEN NULL "
        "ELSE TIMESTAMP_SECONDS(id * 3600) END AS ts",
        "CAST(id AS INT) AS k",
    )
    root = tmp_path / "t"
    assert spark.conf.get("spark.sql.parquet.outputTimestampType") == "INT96"  # the default
    frame.write.option("parquet.block.size", "8192").parquet(str(root))  # many row groups
    si.build_index(str(root), [si.BitSlicedBitmap("k")], spark=spark)
    micros = ("unix_micros(ts) AS us", "k")  # Python's datetime stops at year 9999
    for where in ("k = 1500", "k BETWEEN 1499 AND 1501", "k = 7"):
        got = si.read(spark, str(root), where).selectExpr(*micros).collect()
        expected = spark.read.parquet(str(root)).where(where).selectExpr(*micros).collect()
        assert sorted(map(repr, got)) == sorted(map(repr, expected)), where
    assert used_row_groups, "read() did not take the row-group path"
