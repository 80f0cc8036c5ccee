"""A table si.sql reads whole: a registered view is read as written (it holds its
listing and schema itself), a ``parquet.`` path from the relation held for its
folder instead of one Spark would list and infer again
(skipindex.sql.frames.whole_frame): the rows and the schema must be the view's,
exactly, for every layout Spark reads specially (partition values it types and
unescapes, column case that differs between files, a file with a column the
others lack, INT96 timestamps Spark wrote), in sessions outside UTC; a file
added after a query is read by the next one over the path, and over the view
once it is refreshed; a folder an in-place cluster may be moving is read as
written."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skipindex as si
from tests._support import exact_rows

# where si.sql reads a reference whole (a plain import: skipindex.sql is also a function)
frames_module = importlib.import_module("skipindex.sql.frames")

pytestmark = pytest.mark.spark

ZONES = ["UTC", "Asia/Kathmandu"]


@pytest.fixture
def whole_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths read whole with a known schema since the test began."""
    made: list[str] = []
    real = frames_module.whole_frame

    def counted(spark: Any, source: Any) -> Any:
        frame = real(spark, source)
        if frame is not None:
            made.append(source.path)
        return frame

    monkeypatch.setattr(frames_module, "whole_frame", counted)
    return made


def _write(path: Path, columns: dict[str, pa.Array]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(columns), path)


@pytest.fixture
def lake(spark: Any, tmp_path: Path) -> Path:
    """A partitioned folder (string values that look like numbers and dates, an
    escaped one, Hive's null folder; a date and an int partition column), a file
    whose columns are upper case, one with a column the others lack, and files
    Spark wrote itself with INT96 timestamps."""
    root = tmp_path / "lake"
    folders = [
        "s=007/d=2024-01-02/n=1",
        "s=a%20b/d=2024-01-03/n=2",
        "s=__HIVE_DEFAULT_PARTITION__/d=2024-01-04/n=3",
        "s=1e3/d=2024-01-05/n=10",
    ]
    for number, folder in enumerate(folders):
        ids = pa.array([number * 10 + i for i in range(5)], pa.int64())
        columns = {"id": ids, "v": pa.array([1.5, None, -0.0, float("nan"), 2.0])}
        if number == 1:
            columns = {"ID": ids, "V": columns["v"]}
        if number == 2:
            columns["extra"] = pa.array(["x"] * 5)
        _write(root / folder / f"part-{number}.parquet", columns)
    stamps = spark.sql(
        "SELECT id + 100 AS id, CAST(id AS DOUBLE) AS v, "
        "TIMESTAMP '2021-03-14 02:30:00' + make_interval(0, 0, 0, 0, id) AS ts FROM range(4)"
    )
    spark_written = tmp_path / "spark-written"
    stamps.coalesce(1).write.option("compression", "none").parquet(str(spark_written))
    [part] = spark_written.glob("part-*.parquet")
    target = root / "s=ts/d=2024-01-06/n=4" / "part-spark.parquet"
    target.parent.mkdir(parents=True)
    part.rename(target)
    si.build_index(str(root), [si.MinMax("id")], spark=spark)
    si.register(spark, "lake", str(root))
    return root


QUERIES = [
    "SELECT * FROM {t}",
    "SELECT * FROM {t} WHERE id >= 0",
    "SELECT s, d, n, count(*), max(v) FROM {t} GROUP BY s, d, n",
    "SELECT {t}.id, other.n FROM {t} JOIN {t} AS other ON {t}.id = other.id + 1",
]


@pytest.mark.parametrize("zone", ZONES)
def test_a_table_read_whole_is_its_view_row_for_row(spark, lake, whole_reads, zone):
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        for table in ("lake", f"parquet.`{lake}`"):
            for text in QUERIES:
                query = text.format(t=table) if "JOIN" not in text or table == "lake" else None
                if query is None:
                    continue  # a path is no qualifier
                before = len(whole_reads)
                plan = si.sql_plan(spark, query)
                expected = spark.sql(query)
                assert plan.frame.schema == expected.schema, query
                assert exact_rows(plan.frame) == exact_rows(expected), f"{query}\n{plan.explain()}"
                assert not any(r.replaced for r in plan.references), plan.explain()
                held = len(whole_reads) > before
                assert held == (table != "lake"), f"{query}: not read from the held relation"
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")


def test_a_file_added_after_a_query_is_read_by_the_next(spark, lake, whole_reads):
    path = f"SELECT count(*), max(id) FROM parquet.`{lake}`"
    view = "SELECT count(*), max(id) FROM lake"
    for query in (path, view):
        assert exact_rows(si.sql(spark, query)) == exact_rows(spark.sql(query))
    _write(lake / "s=new/d=2024-02-01/n=5" / "part-9.parquet", {"id": pa.array([999], pa.int64())})
    got = si.sql(spark, path).collect()
    assert got == spark.sql(path).collect()
    assert got[0][1] == 999  # the folder changed: a new relation is held for it
    assert si.sql(spark, view).collect() == spark.sql(view).collect()
    assert si.sql(spark, view).collect()[0][1] != 999  # the view holds its listing...
    spark.sql("REFRESH TABLE lake")
    got = si.sql(spark, view).collect()
    assert got == spark.sql(view).collect()
    assert got[0][1] == 999  # ...until it is refreshed
    assert whole_reads


def test_a_folder_a_cluster_may_be_moving_is_read_as_written(spark, lake, whole_reads):
    (lake / "_skipindex" / "cluster" / "plan-0001").mkdir(parents=True)
    query = f"SELECT count(*) FROM parquet.`{lake}`"
    assert si.sql(spark, query).collect() == spark.sql(query).collect()
    assert not whole_reads
