"""cluster(): every row kept exactly, files that skip, plans that survive a crash."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import skipindex as si
from tests._support import exact_rows


def _messy_table(spark: Any, root: Path, rows: int = 6000, seed: int = 5) -> Path:
    """Written by Spark (INT96 timestamps), partitioned, with NULLs, NaN, -0.0,
    90 % of one value, non-ASCII strings with a long shared prefix, decimals, dates."""
    rng = np.random.default_rng(seed)
    skewed = np.where(rng.random(rows) < 0.9, 42, rng.integers(-1000, 1000, rows))
    floats = rng.normal(size=rows)
    floats[rng.random(rows) < 0.05] = np.nan
    floats[rng.random(rows) < 0.02] = -0.0
    words = ["ä", "日本", "z", "ééé", ""]
    numbers = rng.integers(0, 10**6, rows)
    text = [f"https://www.example.com/catalogue/{words[i % 5]}{v}" for i, v in enumerate(numbers)]
    seconds = rng.integers(0, 10**8, rows) + int(datetime(2000, 1, 1, tzinfo=UTC).timestamp())
    table = pa.table(
        {
            "k": pa.array(skewed, pa.int64()),
            "f": pa.array(floats),
            "s": pa.array([None if i % 37 == 0 else t for i, t in enumerate(text)]),
            "d": pa.array(
                [Decimal(int(v)).scaleb(-2) for v in rng.integers(-(10**6), 10**6, rows)],
                pa.decimal128(12, 2),
            ),
            "day": pa.array(
                [date(1990 + int(v) % 40, 1 + int(v) % 12, 1) for v in rng.integers(0, 10**4, rows)]
            ),
            "ts": pa.array(seconds * 10**6, pa.timestamp("us", tz="UTC")),
            "p": pa.array([("a", "b b", "c=é")[i % 3] for i in range(rows)]),
        }
    )
    arrow_written = root.parent / f"{root.name}-arrow"
    arrow_written.mkdir()
    pq.write_table(table, arrow_written / "rows.parquet")
    spark.read.parquet(str(arrow_written)).repartition(4).write.partitionBy("p").parquet(str(root))
    return root


def _check_skipping(path: Path, where: str, at_most: float) -> float:
    result = si.prune(path, where)
    share = result.kept / result.total
    assert share <= at_most, (where, result.kept, result.total)
    return share


def test_cluster_to_a_new_folder_keeps_every_row(spark, tmp_path):
    src = _messy_table(spark, tmp_path / "src")
    dst = tmp_path / "dst"
    report = si.cluster(src, dst, by=["k", "S", "f"], target_file_bytes=30_000, spark=spark)
    assert report.plan.state == "completed"
    assert report.rows == 6000
    assert report.files_written > len(report.plan.groups)  # several files per partition
    assert exact_rows(spark.read.parquet(str(dst))) == exact_rows(spark.read.parquet(str(src)))
    # Partition folders keep their names; the source is untouched.
    assert sorted(p.name for p in dst.iterdir() if p.name.startswith("p=")) == sorted(
        p.name for p in src.iterdir() if p.name.startswith("p=")
    )
    assert len(list(src.rglob("*.parquet"))) == 12
    # The result is indexed with min-max on the by columns, and prune is sound on it.
    kinds = {(d["column"], d["kind"]) for d in si.describe(dst).indexes}
    assert kinds == {("k", "minmax"), ("s", "minmax"), ("f", "minmax")}
    for where in (
        "k BETWEEN -10 AND 10",
        "s < 'https://www.example.com/catalogue/ä5'",
        "isnan(f) OR s IS NULL",
        "f = 0.0",
    ):
        expected = spark.read.parquet(str(dst)).filter(where).count()
        assert si.read(spark, dst, where).count() == expected, where


def test_cluster_in_place_keeps_rows_and_hides_nothing(spark, tmp_path):
    src = _messy_table(spark, tmp_path / "src", seed=9)
    before = exact_rows(spark.read.parquet(str(src)))
    si.build_index(src, [si.Bloom("s")], spark=spark)
    report = si.cluster(src, by=["day", "d"], curve="zorder", target_file_bytes=40_000, spark=spark)
    assert report.plan.state == "completed"
    assert report.plan.destination is None
    listed = sorted(
        p.relative_to(src).as_posix() for p in src.rglob("*.parquet") if "_skipindex" not in p.parts
    )
    assert listed
    assert all(p.split("/")[-1].startswith("si-cluster-") for p in listed)
    assert exact_rows(spark.read.parquet(str(src))) == before
    # The old files were moved aside, the index now covers the new ones (the old
    # Bloom definition plus min-max on the by columns).
    described = si.describe(src)
    assert described.files_indexed == described.files_listed == len(listed)
    assert {d["kind"] for d in described.indexes} == {"bloom", "minmax"}
    assert "last cluster" in str(described)
    assert si.read(spark, src, "day < DATE'1995-01-01'").count() == (
        spark.read.parquet(str(src)).filter("day < DATE'1995-01-01'").count()
    )
    # The old files wait under _skipindex/ until vacuum, then they are gone.
    replaced = list((src / "_skipindex" / "cluster").glob("*/replaced/p=*/*.parquet"))
    assert len(replaced) == 12
    removed = si.vacuum(src)
    assert sum("/replaced/" in r for r in removed) == 12
    assert not list((src / "_skipindex" / "cluster").glob("*/replaced"))
    assert exact_rows(spark.read.parquet(str(src))) == before


def _uniform(root: Path, files: int, rows: int, seed: int = 3) -> Path:
    """Rows in random order: every file spans every column's whole range."""
    rng = np.random.default_rng(seed)
    root.mkdir()
    prefix = "http://www.example.com/products/catalogue/2024/"  # 45 shared characters
    for i in range(files):
        pq.write_table(
            pa.table(
                {
                    "a": rng.integers(0, 10_000, rows),
                    "b": rng.integers(0, 10_000, rows),
                    "url": [f"{prefix}{v:06d}" for v in rng.integers(0, 10**6, rows)],
                }
            ),
            root / f"part-{i:03d}.parquet",
        )
    return root


def test_two_columns_both_skip_even_with_a_long_shared_prefix(spark, tmp_path):
    src = _uniform(tmp_path / "src", files=8, rows=20_000)
    dst = tmp_path / "dst"
    si.cluster(src, dst, by=["url", "b"], target_file_bytes=120_000, spark=spark)
    files = si.describe(dst).files_listed
    assert files >= 12
    prefix = "http://www.example.com/products/catalogue/2024/"
    # 1/16 of each column's range: a good 2-D layout keeps about a quarter of the files.
    _check_skipping(dst, f"url BETWEEN '{prefix}100000' AND '{prefix}160000'", 0.5)
    _check_skipping(dst, "b BETWEEN 1000 AND 1600", 0.5)


def test_bin_packing_small_files_per_partition(spark, tmp_path):
    root = tmp_path / "t"
    rng = np.random.default_rng(0)
    for i in range(1000):
        folder = root / f"region={('north', 'south', 'east', 'we st')[i % 4]}"
        folder.mkdir(parents=True, exist_ok=True)
        pq.write_table(
            pa.table({"v": rng.integers(0, 100, 50), "i": [i] * 50}),
            folder / f"small-{i:04d}.parquet",
        )
    big = root / "region=north" / "big.parquet"
    pq.write_table(pa.table({"v": rng.integers(0, 100, 400_000), "i": [-1] * 400_000}), big)
    big_stat = big.stat()
    before = exact_rows(spark.read.parquet(str(root)).groupBy("region", "i").count())
    small_size = (root / "region=north" / "small-0000.parquet").stat().st_size
    target = small_size * 40
    assert big_stat.st_size > target
    report = si.cluster(root, target_file_bytes=target, spark=spark)
    assert report.plan.curve == "none"
    assert report.plan.untouched == ("region=north/big.parquet",)
    assert big.stat().st_mtime_ns == big_stat.st_mtime_ns  # large files left alone
    after = {p.parent.name: [] for p in root.glob("region=*/*.parquet")}
    for p in root.glob("region=*/*.parquet"):
        if p != big:
            after[p.parent.name].append(p.stat().st_size)
    assert sorted(after) == ["region=east", "region=north", "region=south", "region=we st"]
    for sizes in after.values():  # 250 files of a partition became about 250/40 files
        assert 4 <= len(sizes) <= 10
        assert max(sizes) <= 1.5 * target
    assert exact_rows(spark.read.parquet(str(root)).groupBy("region", "i").count()) == before


def test_a_registered_view_over_a_table_clustered_in_place_answers_as_sparks_view(spark, tmp_path):
    # The view and si.sql hold the listing taken at register(): after the files moved,
    # both answer alike (Spark fails to open the moved files), and once the name is
    # refreshed both read the new files, with the same rows as before.
    src = _messy_table(spark, tmp_path / "src", seed=9)
    si.build_index(src, [si.MinMax("day")], spark=spark)
    si.register(spark, "messy_in_place", str(src))
    query = "SELECT d, day FROM messy_in_place WHERE day < DATE'1995-01-01'"
    before = exact_rows(spark.sql(query))
    assert before
    assert exact_rows(si.sql(spark, query)) == before
    si.cluster(src, by=["day", "d"], curve="zorder", target_file_bytes=40_000, spark=spark)

    def outcome(frame: Any) -> Any:
        try:
            return exact_rows(frame())
        except Exception:
            return "failed"

    assert outcome(lambda: si.sql(spark, query)) == outcome(lambda: spark.sql(query))
    spark.sql("REFRESH TABLE messy_in_place")
    plan = si.sql_plan(spark, query)
    assert exact_rows(plan.frame) == exact_rows(spark.sql(query)) == before
    assert plan.references[0].result is not None
    assert all("si-cluster-" in f for f in plan.references[0].result.files)
