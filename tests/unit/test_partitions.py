"""Partition columns prune by folder values, exactly, with no index needed."""

from __future__ import annotations

from pathlib import Path
from zoneinfo import ZoneInfo

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex.indexing.build import InProcessRunner, build_with
from skipindex.spark.partitions import HIVE_NULL, partition_columns, unescape

UTC = ZoneInfo("UTC")


def _typed(*values: str, zone: ZoneInfo = UTC) -> tuple[pa.DataType | None, list[object]]:
    [column] = partition_columns([f"p={v}/f.parquet" for v in values], time_zone=zone)
    return column.type, column.values.to_pylist()


def test_unescaping_is_one_character_per_escape_as_in_spark():
    assert unescape("x%20y") == "x y"
    assert unescape("%C3%A9") == "\u00c3\u00a9"  # what Spark reads for pyarrow's `é` folder
    assert unescape("100%") == "100%"  # not an escape


def test_values_are_typed_as_spark_infers_them():
    assert _typed("9", "10") == (pa.int32(), [9, 10])
    assert _typed("9", "10000000000") == (pa.int64(), [9, 10_000_000_000])
    assert _typed("1.5", "NaN")[0] == pa.float64()
    assert _typed("2024-01-01")[0] == pa.date32()
    assert _typed(HIVE_NULL, "3") == (pa.int32(), [None, 3])
    # a later string folder turns the column into strings, numbers in Spark's spelling
    assert _typed("007", "10", "abc") == (pa.string(), ["7", "10", "abc"])
    # bigint + double is a string to Spark, and the double in Java's spelling: not modelled
    assert _typed("1.5", "10000000000")[0] is None
    # wall-clock partition timestamps are read in the session zone
    kind, [value] = _typed("2024-01-01 00%3A00%3A00", zone=ZoneInfo("Asia/Kolkata"))
    assert kind == pa.timestamp("us", tz="UTC")
    assert value.isoformat() == "2023-12-31T18:30:00+00:00"


def test_spellings_skipindex_does_not_model_leave_the_column_untyped():
    for odd in ("1e3", "1.5d", "0x1p3", "2024-01-01 00%3A00%3A00.5"):
        kind, _ = _typed(odd, "1")
        assert kind is None, odd


@pytest.fixture
def partitioned(tmp_path: Path) -> Path:
    root = tmp_path / "t"
    for year in ("2020", "2021", HIVE_NULL):
        for region in ("eu", "us"):
            folder = root / f"year={year}" / f"region={region}"
            folder.mkdir(parents=True)
            pq.write_table(pa.table({"id": [1, 2]}), folder / "p.parquet")
    build_with(str(root), [si.MinMax("id")], InProcessRunner())
    return root


def _kept(root: Path, where: str) -> set[str]:
    return {str(Path(f).relative_to(root).parent) for f in si.prune(str(root), where).files}


def test_partition_predicates_keep_exactly_the_matching_folders(partitioned: Path):
    assert _kept(partitioned, "year = 2021") == {"year=2021/region=eu", "year=2021/region=us"}
    assert _kept(partitioned, "year > 2020 AND region = 'us'") == {"year=2021/region=us"}
    assert _kept(partitioned, "year IS NULL") == {
        f"year={HIVE_NULL}/region=eu",
        f"year={HIVE_NULL}/region=us",
    }
    assert _kept(partitioned, "region IN ('eu') AND id = 3") == set()  # id range is 1..2
    assert len(_kept(partitioned, "year <> 2020 OR id = 1")) == 6


def test_partition_columns_cannot_be_indexed(partitioned: Path):
    with pytest.raises(si.UnknownColumnError, match="'year': it is a partition column"):
        build_with(str(partitioned), [si.MinMax("year")], InProcessRunner())
