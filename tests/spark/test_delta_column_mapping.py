"""Delta column mapping (name and id modes): indexed and pruned by the logical
names, the files read by their physical ones; a rename and a drop after the
build resolve as Delta resolves them (the index follows the field id); read()
and sql() return deltalake's rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import write_deltalake

import skipindex as si
from tests._delta_support import alter_schema, delete_rows, live_table, log_paths

pytestmark = pytest.mark.spark

FILES, ROWS = 4, 200


def _table(root: Path, mode: str) -> Path:
    rng = np.random.default_rng(9)
    for f in range(FILES):
        write_deltalake(
            str(root),
            pa.table(
                {
                    "id": pa.array(np.arange(ROWS) + f * ROWS, pa.int64()),
                    "k": pa.array(rng.integers(f * 10, f * 10 + 12, ROWS), pa.int64()),
                    "s": pa.array([f"s{f}-{i % 7}" for i in range(ROWS)]),
                    "region": pa.array([("eu", "us")[f % 2]] * ROWS),
                }
            ),
            mode="append",
            partition_by=["region"],
            configuration={"delta.columnMapping.mode": mode},
        )
    return root


def _rows(frame: Any) -> list[tuple[Any, ...]]:
    return sorted(map(tuple, frame.collect()), key=repr)


def _check(spark: Any, root: Path, wheres: list[str]) -> None:
    live = live_table(root)
    columns = ", ".join(f"`{n}`" for n in live.column_names)
    si.register(spark, "cm_t", str(root))
    oracle = spark.createDataFrame(live.to_pylist(), _spark_schema(spark, live))
    for where in wheres:
        expected = _rows(oracle.filter(where))
        assert _rows(si.read(spark, str(root), where).select(*live.column_names)) == expected, where
        query = f"SELECT {columns} FROM cm_t WHERE {where}"
        assert _rows(si.sql(spark, query)) == expected, where


def _spark_schema(spark: Any, table: pa.Table) -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(table.schema)


@pytest.mark.parametrize("mode", ["name", "id"])
def test_column_mapping_with_a_rename_and_a_drop_after_the_build(spark, tmp_path, mode):
    root = _table(tmp_path / f"cm_{mode}", mode)
    physical = pq.read_schema(next(root.rglob("*.parquet"))).names
    assert "k" not in physical  # the files name it col-<uuid>
    si.build_index(
        str(root), [si.BitSlicedBitmap("k"), si.Bloom("s"), si.MinMax("id")], spark=spark
    )
    result = si.prune(str(root), "k = 25")
    assert result.kept == 1, result.explain()  # k of file 2 spans 20..31, no other file holds 25
    _check(spark, root, ["k = 25", "s = 's3-4' OR region = 'eu'", "id BETWEEN 390 AND 410"])

    alter_schema(root, rename={"k": "kk", "region": "area"}, drop=["s"])
    result = si.prune(str(root), "kk = 25")
    assert result.kept == 1, result.explain()  # the index on k follows its field id
    assert "bitsliced_bitmap ruled out" in result.explain()
    with pytest.raises(si.UnknownColumnError):
        si.prune(str(root), "k = 25")  # its old name is gone
    with pytest.raises(si.UnknownColumnError):
        si.prune(str(root), "s = 's3-4'")  # dropped
    assert si.prune(str(root), "area = 'eu'").kept == FILES // 2  # the renamed partition column
    _check(spark, root, ["kk = 25", "kk >= 35 AND area = 'us'", "id < 5"])

    # deletion vectors on a column-mapped table: both at once
    delete_rows(root, {log_paths(root)[0]: range(0, ROWS, 2)})
    _check(spark, root, ["kk >= 0", "id % 2 = 0"])
