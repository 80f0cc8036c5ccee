"""Spark's type over the whole table, without a JVM (issue 30, section 2).

``tests/spark/test_spark_types.py`` checks these against Spark itself; here the
type-widening logic is pinned down: the join of two types holds every value of
both, a table's recorded type widens when a later file needs it (and the index
is rebuilt in it), columns with no index never rule a literal out by width,
INT96 values Spark's writer wrapped are read as Spark reads them, and an index
recorded by an older skipindex is brought up to date by the next build.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import skipindex as si
import skipindex.indexing.build as build_module
from skipindex.indexing.build import InProcessRunner, build_with
from skipindex.spark.int96 import spark_int96
from skipindex.spark.widening import (
    OPEN_DECIMAL,
    binding_schema,
    cast_exactly,
    join_types,
    spark_type,
    types_from_text,
    types_to_text,
    with_type_at,
)
from skipindex.store import schema as schema_module
from skipindex.store.location import locate
from skipindex.store.manifest import load_latest

KINDS = (si.MinMax, si.Bloom, si.EqualityBitmap, si.RangeBitmap, si.BitSlicedBitmap)
LONG_MAX, LONG_MIN = 2**63 - 1, -(2**63)


def _write(root: Path, name: str, values: list[Any], arrow_type: pa.DataType) -> None:
    root.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"x": pa.array(values, arrow_type)}), root / name)


def _kept(root: Path, where: str) -> set[str]:
    return {Path(f).name for f in si.prune(str(root), where, time_zone="UTC").files}


def _build(root: Path, kinds: Any = KINDS) -> si.BuildReport:
    return build_with(str(root), [k("x") for k in kinds], InProcessRunner())


def _recorded(root: Path) -> pa.DataType:
    manifest = load_latest(locate(str(root)))
    assert manifest is not None
    return manifest.arrow_schema.field("x").type


# ------------------------------------------------------------------ the join of two types

TYPES = [
    pa.int8(),
    pa.int16(),
    pa.int32(),
    pa.int64(),
    pa.uint8(),
    pa.uint16(),
    pa.uint32(),
    pa.float32(),
    pa.float64(),
    pa.decimal128(5, 2),
    pa.decimal128(10, 2),
    pa.decimal128(9, 4),
    pa.decimal128(38, 0),
    pa.decimal128(38, 10),
    pa.timestamp("ms", tz="UTC"),
    pa.timestamp("us", tz="UTC"),
    pa.timestamp("us", tz="+00:00"),
    pa.timestamp("ms"),
    pa.timestamp("us"),
    pa.date32(),
    pa.string(),
]


def _extremes(arrow_type: pa.DataType) -> pa.Array:
    """A few values at the edges of what ``arrow_type`` holds."""
    if pa.types.is_integer(arrow_type):
        info = np.iinfo(arrow_type.to_pandas_dtype())
        return pa.array([int(info.min), int(info.max), 0, None], arrow_type)
    if pa.types.is_floating(arrow_type):
        finfo = np.finfo(arrow_type.to_pandas_dtype())
        values = [float(finfo.max), float(finfo.tiny), -0.0, float("nan"), float("inf"), None]
        return pa.array(values, arrow_type)
    if pa.types.is_decimal(arrow_type):
        p, s = arrow_type.precision, arrow_type.scale
        top, bottom = (Decimal(f"{sign}{10**p - 1}E-{s}") for sign in ("", "-"))
        return pa.array([top, bottom, Decimal(f"1E-{s}"), None], arrow_type)
    if pa.types.is_timestamp(arrow_type):
        return pa.array([LONG_MAX // 1000, LONG_MIN // 1000 + 1, 1, None], arrow_type)
    if pa.types.is_date32(arrow_type):
        return pa.array([2**31 - 1, -(2**31), None], pa.int32()).cast(arrow_type)
    return pa.array(["", "é", None], arrow_type)


@given(st.sampled_from(TYPES), st.sampled_from(TYPES))
def test_the_join_holds_every_value_of_both_types(left, right):
    joined = join_types(left, right)
    if joined is None:
        return
    assert join_types(right, left) is not None
    assert join_types(joined, left) == joined  # the join is above both...
    assert join_types(joined, right) == joined
    for side in (left, right):  # ...and holds their values exactly
        values = _extremes(side)
        cast = cast_exactly(values, joined, ("x",))
        assert not isinstance(cast, str), (side, joined, cast)
        back = cast.cast(values.type)
        assert back.equals(values) or pa.types.is_floating(side)


def test_joins_follow_what_spark_reads():
    assert spark_type(pa.timestamp("ms", tz="UTC")) == pa.timestamp("us", tz="UTC")
    assert spark_type(pa.timestamp("ns")) == pa.timestamp("us")
    assert join_types(pa.timestamp("ms"), pa.timestamp("us")) == pa.timestamp("us")
    assert join_types(pa.timestamp("ms", tz="UTC"), pa.timestamp("us")) is None  # NTZ vs zoned
    assert join_types(pa.decimal128(5, 2), pa.decimal128(10, 2)) == pa.decimal128(10, 2)
    assert join_types(pa.decimal128(5, 2), pa.decimal128(9, 4)) == pa.decimal128(9, 4)
    assert join_types(pa.decimal128(7, 2), pa.decimal128(6, 4)) == pa.decimal128(9, 4)
    assert join_types(pa.decimal128(38, 0), pa.decimal128(38, 10)) is None  # 48 digits
    assert join_types(pa.int32(), pa.int64()) == pa.int64()
    assert join_types(pa.int8(), pa.uint8()) == pa.int16()
    assert join_types(pa.int64(), pa.uint64()) is None
    assert join_types(pa.float32(), pa.float64()) == pa.float64()
    assert join_types(pa.int32(), pa.float64()) is None  # different families: not joined
    assert join_types(pa.date32(), pa.timestamp("us")) is None


def test_a_cast_that_loses_a_value_says_which_type_holds_it():
    wide = pa.array([Decimal("12345678.90")], pa.decimal128(10, 2))
    refused = cast_exactly(wide, pa.decimal128(5, 2), ("x",))
    assert isinstance(refused, str)
    assert refused.wider == pa.decimal128(10, 2)
    doubles = pa.array([0.1], pa.float64())  # Arrow's "safe" cast rounds it to a float
    refused = cast_exactly(doubles, pa.float32(), ("x",))
    assert isinstance(refused, str)
    assert refused.wider == pa.float64()
    exact = cast_exactly(pa.array([1.5, float("nan"), None]), pa.float32(), ("x",))
    assert not isinstance(exact, str)
    nanos = cast_exactly(pa.array([1], pa.timestamp("ns")), pa.timestamp("us"), ("x",))
    assert isinstance(nanos, str)
    assert "nanosecond" in nanos
    assert nanos.wider is None
    far = cast_exactly(pa.array([2**62], pa.timestamp("ms")), pa.timestamp("us"), ("x",))
    assert isinstance(far, str)
    assert far.wider is None


def test_reported_types_survive_the_trip_from_a_task():
    types = {"x": pa.decimal128(12, 4), "s.f": pa.int64()}
    assert types_from_text(types_to_text(types)) == types
    assert types_from_text(types_to_text({})) == {}


def test_a_nested_field_is_retyped_in_place():
    nested = pa.struct([("f", pa.int32()), ("g", pa.string())])
    schema = pa.schema([("s", nested), ("y", pa.int8())])
    retyped = with_type_at(schema, "s.f", pa.int64())
    assert retyped.field("s").type.field("f").type == pa.int64()
    assert retyped.field("s").type.field("g").type == pa.string()
    assert with_type_at(schema, "y", pa.int16()).field("y").type == pa.int16()


def test_columns_without_an_index_bind_in_an_open_type():
    schema = pa.schema(
        [
            ("d", pa.decimal128(5, 2)),
            ("i", pa.int8()),
            ("t", pa.timestamp("ms", tz="UTC")),
            ("s", pa.struct([("f", pa.decimal128(5, 2)), ("g", pa.decimal128(5, 2))])),
        ]
    )
    bound = binding_schema(schema, ["i", "s.f"])
    assert bound.field("d").type == OPEN_DECIMAL
    assert bound.field("i").type == pa.int8()  # indexed: the recorded type
    assert bound.field("t").type == pa.timestamp("us", tz="UTC")
    assert bound.field("s").type.field("f").type == pa.decimal128(5, 2)
    assert bound.field("s").type.field("g").type == OPEN_DECIMAL


def test_a_literal_no_first_file_holds_does_not_skip_an_unindexed_column(tmp_path):
    root = tmp_path / "t"
    root.mkdir()
    narrow = pa.table({"x": pa.array([Decimal("1.00")], pa.decimal128(5, 2)), "y": [1]})
    wide = pa.table({"x": pa.array([Decimal("12345678.95")], pa.decimal128(10, 2)), "y": [2]})
    pq.write_table(narrow, root / "a.parquet")
    pq.write_table(wide, root / "b.parquet")
    build_with(str(root), [si.MinMax("y")], InProcessRunner())
    for where in ("x > 1000", "x = 12345678.95", "x = 1.125 OR x > 1000", "y = 2 AND x > 99999"):
        assert "b.parquet" in _kept(root, where), where
    assert _kept(root, "y = 2 AND x > 1000") == {"b.parquet"}


# ------------------------------------------------------------------ building in Spark's type


def test_timestamps_are_recorded_in_microseconds_whatever_the_first_file_holds(tmp_path):
    root = tmp_path / "t"
    _write(root, "a.parquet", [0, 1000], pa.timestamp("ms", tz="UTC"))
    _write(root, "b.parquet", [999], pa.timestamp("us", tz="UTC"))
    _build(root)
    assert _recorded(root) == pa.timestamp("us", tz="UTC")
    assert si.describe(str(root)).files_indexed == 2
    assert _kept(root, "x = TIMESTAMP '1970-01-01 00:00:00.000999'") == {"b.parquet"}
    assert _kept(root, "x = TIMESTAMP '1970-01-01 00:00:01'") == {"a.parquet"}


def test_a_later_file_that_needs_a_wider_type_widens_it_and_reindexes(tmp_path):
    root = tmp_path / "t"
    _write(root, "a.parquet", [Decimal("1.00"), Decimal("999.99")], pa.decimal128(5, 2))
    _build(root)
    _write(root, "b.parquet", [Decimal("12345678.90")], pa.decimal128(10, 2))
    _write(root, "c.parquet", [Decimal("1.1250")], pa.decimal128(9, 4))
    report = build_with(str(root), None, InProcessRunner())
    assert report.files_indexed == 3
    assert report.files_replaced == 1
    assert _recorded(root) == pa.decimal128(12, 4)
    assert si.describe(str(root)).files_indexed == 3
    result = si.prune(str(root), "x > 1000", time_zone="UTC")
    assert {Path(f).name for f in result.files} == {"b.parquet"}
    assert not result.warnings  # every file is indexed in the wider type
    assert _kept(root, "x = 1.125") == {"c.parquet"}
    assert _kept(root, "x = 1.12") == set()
    manifest = load_latest(locate(str(root)))
    assert manifest is not None
    assert {d.arrow_type for d in manifest.indexes} == {"decimal128(12, 4)"}
    # A build with nothing new keeps the type and reads nothing.
    assert build_with(str(root), None, InProcessRunner()).files_indexed == 0


def test_files_the_first_files_narrow_integer_type_would_wrap_are_kept(tmp_path):
    root = tmp_path / "t"
    _write(root, "a.parquet", [1, 2], pa.int8())
    _write(root, "b.parquet", [300], pa.int16())  # Spark reads it, as TINYINT, as 44
    _write(root, "c.parquet", [7], pa.int16())  # fits TINYINT: read exactly
    _build(root)
    assert _recorded(root) == pa.int16()
    for where in ("x = 44", "x = 300", "x > 100", "x < 0"):
        assert "b.parquet" in _kept(root, where), where
    assert _kept(root, "x = 7") == {"b.parquet", "c.parquet"}
    notes = si.prune(str(root), "x = 7", time_zone="UTC").warnings
    assert any("first file's type TINYINT" in n for n in notes), notes


def test_nanosecond_timestamps_are_not_indexed(tmp_path):
    root = tmp_path / "t"
    _write(root, "a.parquet", [0], pa.timestamp("us", tz="UTC"))
    _write(root, "b.parquet", [1_500], pa.timestamp("ns", tz="UTC"))
    _build(root)
    assert _recorded(root) == pa.timestamp("us", tz="UTC")
    assert _kept(root, "x = TIMESTAMP '1970-01-01 00:00:00'") == {"a.parquet", "b.parquet"}
    notes = si.prune(str(root), "x > TIMESTAMP '2000-01-01 00:00:00'", time_zone="UTC").warnings
    assert any("nanosecond" in n for n in notes), notes


def test_an_index_recorded_by_an_older_skipindex_is_brought_up_to_date(tmp_path, monkeypatch):
    root = tmp_path / "t"
    _write(root, "a.parquet", [Decimal("1.00")], pa.decimal128(5, 2))
    _write(root, "b.parquet", [Decimal("12345678.90")], pa.decimal128(10, 2))
    # What an older skipindex recorded: the first file's type, b not indexed,
    # and no mark saying the recorded types hold every value.
    monkeypatch.setattr(build_module, "_widened", lambda schema, wider: schema)
    monkeypatch.setattr(schema_module, "SPARK_TYPES", b"older")
    _build(root, [si.MinMax])
    assert _recorded(root) == pa.decimal128(5, 2)
    monkeypatch.undo()
    report = build_with(str(root), None, InProcessRunner())
    assert report.files_indexed == 2  # b read again, which widened the type
    assert _recorded(root) == pa.decimal128(10, 2)
    result = si.prune(str(root), "x > 1000", time_zone="UTC")
    assert {Path(f).name for f in result.files} == {"b.parquet"}
    assert not result.warnings
    assert build_with(str(root), None, InProcessRunner()).files_indexed == 0  # once only


def test_an_older_index_of_millisecond_timestamps_is_reindexed_in_microseconds(tmp_path):
    root = tmp_path / "t"
    _write(root, "a.parquet", [0, 1000], pa.timestamp("ms", tz="UTC"))
    _build(root)
    location = locate(str(root))
    manifest = load_latest(location)
    assert manifest is not None
    from skipindex.store.manifest import commit

    older = pa.schema([pa.field("x", pa.timestamp("ms", tz="UTC"))])  # and unmarked
    commit(location, replace(manifest, version=manifest.version + 1, arrow_schema=older))
    _write(root, "b.parquet", [999], pa.timestamp("us", tz="UTC"))
    report = build_with(str(root), None, InProcessRunner())
    assert report.files_indexed == 2
    assert _recorded(root) == pa.timestamp("us", tz="UTC")
    assert _kept(root, "x = TIMESTAMP '1970-01-01 00:00:00.000999'") == {"b.parquet"}


# ------------------------------------------------------------------ INT96 as Spark reads it

_EPOCH_DAY, _US_PER_DAY = 2440588, 86_400 * 10**6


def _wrap(value: int, bits: int = 64) -> int:
    return (value + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1)


def _spark_writes(micros: int) -> tuple[int, int]:
    """Spark's ``toJulianDay``: (day as an Int, nanos as a Long), with Java's
    wrapping addition and truncating division."""
    julian = _wrap(micros + _EPOCH_DAY * _US_PER_DAY)
    days = julian // _US_PER_DAY if julian >= 0 else -((-julian) // _US_PER_DAY)
    rest = julian - days * _US_PER_DAY
    return _wrap(days, 32), rest * 1000


def _pyarrow_reads(days: int, nanos: int) -> tuple[int, int]:
    """What pyarrow reads from that INT96, in microseconds and in milliseconds:
    day and nanoseconds unsigned, arithmetic modulo 2**64."""
    day = (days % 2**32) - _EPOCH_DAY
    unsigned = nanos % 2**64
    return _wrap(day * _US_PER_DAY + unsigned // 1000), _wrap(day * 86_400_000 + unsigned // 10**6)


def _decode(micros: int) -> int | str:
    us, ms = _pyarrow_reads(*_spark_writes(micros))
    got = spark_int96(pa.array([us], pa.timestamp("us")), pa.array([ms], pa.timestamp("ms")))
    return got if isinstance(got, str) else int(got.view(pa.int64())[0].as_py())


@given(st.integers(LONG_MIN + 1, LONG_MAX))
@example(LONG_MAX)
@example(LONG_MIN + 1)
@example(LONG_MAX - _EPOCH_DAY * _US_PER_DAY + 1)  # the first value whose Julian day wraps
@example(-_EPOCH_DAY * _US_PER_DAY)  # Julian day 0
@example(-_EPOCH_DAY * _US_PER_DAY - 1)  # the last microsecond before it
@example(0)
def test_int96_values_are_read_as_spark_reads_them(micros):
    got = _decode(micros)
    if isinstance(got, str):
        # Not told apart: the day before Julian day 0, one day of 4128 BC that
        # pyarrow reads the same, and a negative Julian day whose nanoseconds are
        # 0 or read like 0 (whole days before 4713 BC, or wrapped).
        julian = _wrap(micros + _EPOCH_DAY * _US_PER_DAY)
        ambiguous = (0, _US_PER_DAY - 84_873_709_551)
        assert (
            -_US_PER_DAY < julian < 0
            or julian // _US_PER_DAY in (213_502, 213_503)
            or (julian < 0 and julian % _US_PER_DAY in ambiguous)
        ), micros
    else:
        assert got == micros


def test_int96_reads_that_pyarrow_gets_right_are_kept_as_they_are():
    micros = pa.array([0, None, 10**15, -(10**16)], pa.timestamp("us"))
    millis = pa.array([0, None, 10**12, -(10**13)], pa.timestamp("ms"))
    assert spark_int96(micros, millis) is micros


@pytest.mark.parametrize("micros", [LONG_MAX, LONG_MIN + 1])
def test_the_extremes_survive_a_spark_written_file(micros):
    assert _decode(micros) == micros
