"""Partition columns prune by folder values, exactly, with no index needed."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex.build import InProcessRunner, build_with
from skipindex.partitions import HIVE_NULL, partition_values


def test_partition_values_are_unescaped_and_null_aware():
    assert partition_values("a=1/b=x%20y/c=%C3%A9/f.parquet") == {"a": "1", "b": "x y", "c": "é"}
    assert partition_values(f"a={HIVE_NULL}/f.parquet") == {"a": None}
    assert partition_values("f.parquet") == {}


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
