"""Build through Spark's own reader, or model Spark's rules over pyarrow? Measured.

Issue 8 asked for the choice on evidence. Three things are timed on the same
files in one local[2] session (medians of alternating runs):

* ``scan``: Spark reading the indexed columns to a ``noop`` sink (the floor);
* ``skipindex``: ``build_index`` with min-max + Bloom on those columns (pyarrow
  inside Spark tasks, Spark's rules modelled by ``skipindex.spark.view``);
* ``spark reader``: the other design's *lower bound*: ``mapInArrow`` over
  ``spark.read.parquet(...).select(cols, _metadata.file_path)`` computing only
  per-file min/max (no Bloom filters, no bitmaps), merged per file by a shuffle
  because Spark may split one file across tasks.

    python bench/spark_view.py            # 40 files x 250k rows, prints a table
    python bench/spark_view.py --files 10 --rows 100000
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from measure import machine

import skipindex as si

COLUMNS = ["key", "ship", "mode", "price"]


def make_table(root: Path, files: int, rows: int) -> None:
    rng = np.random.default_rng(7)
    root.mkdir(parents=True)
    modes = np.array(["AIR", "MAIL", "RAIL", "SHIP", "TRUCK", "REG AIR", "FOB"])
    for k in range(files):
        table = pa.table(
            {
                "key": rng.integers(0, 10**9, rows, dtype=np.int64),
                "ship": pa.array(rng.integers(8000, 11000, rows, dtype=np.int32)).cast(pa.date32()),
                "mode": pa.array(modes[rng.integers(0, len(modes), rows)]),
                "price": pa.array(rng.integers(0, 10**8, rows, dtype=np.int64))
                .cast(pa.decimal128(19, 0))
                .cast(pa.decimal128(12, 2)),
                "comment": pa.array(np.char.add("c", rng.integers(0, 10**6, rows).astype(str))),
            }
        )
        pq.write_table(table, root / f"part-{k:04d}.parquet", row_group_size=rows // 2)


def scan(spark: Any, root: Path) -> None:
    frame = spark.read.parquet(str(root)).select(*COLUMNS)
    frame.write.format("noop").mode("overwrite").save()


def skipindex_build(spark: Any, root: Path) -> None:
    shutil.rmtree(root / "_skipindex", ignore_errors=True)
    specs = [si.MinMax(c) for c in COLUMNS] + [si.Bloom(c) for c in ("key", "mode", "price")]
    si.build_index(str(root), specs, spark=spark)


def spark_reader_minmax(spark: Any, root: Path) -> None:
    from pyspark.sql import functions as F  # noqa: N812

    frame = spark.read.parquet(str(root)).select(
        *COLUMNS, F.col("_metadata.file_path").alias("file")
    )
    out_schema = "file string, " + ", ".join(
        f"{c}_min {t}, {c}_max {t}"
        for c, t in zip(COLUMNS, ("bigint", "date", "string", "decimal(12,2)"), strict=True)
    )

    def per_file(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            table = pa.Table.from_batches([batch])
            grouped = table.group_by("file").aggregate([(c, "min_max") for c in COLUMNS])
            columns = {"file": grouped.column("file")}
            for c in COLUMNS:
                stats = grouped.column(f"{c}_min_max").combine_chunks()
                columns[f"{c}_min"] = stats.field("min")
                columns[f"{c}_max"] = stats.field("max")
            yield from pa.table(columns).to_batches()

    partial = frame.mapInArrow(per_file, out_schema)
    merged = partial.groupBy("file").agg(
        *(F.min(f"{c}_min") for c in COLUMNS), *(F.max(f"{c}_max") for c in COLUMNS)
    )
    merged.collect()


def median_seconds(runs: int, steps: dict[str, Callable[[], None]]) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(runs):  # alternate, so drift hits every step alike
        for name, step in steps.items():
            started = time.perf_counter()
            step()
            times[name].append(time.perf_counter() - started)
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--rows", type=int, default=250_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from skipindex.spark.session import local_session

    spark = local_session(2)
    work = Path(tempfile.mkdtemp(prefix="spark-view-bench-"))
    try:
        root = work / "t"
        make_table(root, args.files, args.rows)
        size = sum(p.stat().st_size for p in root.glob("*.parquet"))
        for warm in (scan, skipindex_build, spark_reader_minmax):  # JVM and worker warm-up
            warm(spark, root)
        steps = {
            "scan (noop sink)": lambda: scan(spark, root),
            "skipindex build (min-max + Bloom)": lambda: skipindex_build(spark, root),
            "Spark-reader build (min-max only)": lambda: spark_reader_minmax(spark, root),
        }
        medians = median_seconds(args.runs, steps)
        floor = medians["scan (noop sink)"]
        lines = [
            f"{args.files} files x {args.rows:,} rows, {size / 1e6:.0f} MB, local[2], "
            f"medians of {args.runs} alternating runs; {machine()['machine']}",
            "",
            "| step | median s | vs scan |",
            "|---|---|---|",
            *(f"| {name} | {s:.2f} | {s / floor:.2f}x |" for name, s in medians.items()),
        ]
        print("\n".join(lines))
        header = "# Build design: pyarrow with Spark's rules vs Spark's reader\n\n"
        command = f"`python bench/spark_view.py --files {args.files} --rows {args.rows}`\n\n"
        (Path(__file__).parent / "SPARK_VIEW.md").write_text(header + command + "\n".join(lines))
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
