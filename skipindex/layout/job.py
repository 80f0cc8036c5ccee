"""The Spark side of ``cluster``: read, sample, write, and fingerprint rows.

Rows are read and written by Spark, never by pyarrow: the new files must hold
the values Spark reads from the old ones (INT96, LEGACY-rebased dates,
partition values typed over the whole table), and only Spark can promise that.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from skipindex.layout.keys import FILE, GROUP, HELPER_COLUMNS, KEY, PATH, SLOT, KeyModel
from skipindex.spark.session import job_description, read_parquet_paths, worker_errors

__all__ = [
    "Fingerprint",
    "fingerprint",
    "functions_for",
    "hash_slots",
    "quoted",
    "read_files",
    "sample",
    "write_groups",
]

Fingerprint = tuple[int, int, int]


def functions_for(frame: Any) -> Any:
    """Spark's functions module for this frame's flavour. A process can hold a
    classic and a Spark Connect session at once, and a classic Column in a
    Connect plan (or the reverse) fails, so never rely on the default."""
    if type(frame).__module__.startswith("pyspark.sql.connect"):
        from pyspark.sql.connect import functions as connect_functions

        return connect_functions
    from pyspark.sql import functions as classic_functions

    return classic_functions


def quoted(functions: Any, name: str) -> Any:
    """The top-level column ``name``, even when it holds a dot or a backtick."""
    return functions.col("`" + name.replace("`", "``") + "`")


def read_files(spark: Any, root: str, files: Sequence[str], schema: Any) -> Any:
    """The rows of ``files`` (user paths under ``root``), typed by ``schema`` (the
    whole table's, partition columns included), with no listing job."""
    reader = spark.read.option("basePath", root).schema(schema)
    return read_parquet_paths(spark, reader, list(files))


def sample(frame: Any, by: Sequence[str], fraction: float, seed: int) -> pa.Table:
    """A uniform sample of the ``by`` columns and each row's file, as Arrow."""
    F = functions_for(frame)  # noqa: N806
    columns = [quoted(F, c).alias(c) for c in by] + [F.col("_metadata.file_path").alias(PATH)]
    picked = frame.select(*columns)
    if fraction < 1:
        picked = picked.sample(fraction=fraction, seed=seed)
    return picked.toArrow()


def hash_slots(spark: Any, partitions: int) -> list[int]:
    """For each partition number p, a LONG whose Spark hash puts it in partition p
    of ``repartition(partitions, col)``: asking Spark, rather than copying its
    Murmur3, keeps this true whatever Spark does."""
    found: dict[int, int] = {}
    span = partitions * 32
    start = 0
    while len(found) < partitions:
        rows = (  # one stage, no shuffle: a few thousand small rows
            spark.range(start, start + span, 1, 1)
            .selectExpr("id", f"pmod(hash(id), {partitions}) AS p")
            .collect()
        )
        for candidate, p in rows:
            found.setdefault(int(p), int(candidate))
        start += span
    return [found[p] for p in range(partitions)]


def write_groups(
    frame: Any,
    model: KeyModel,
    outputs: int,
    drop: Sequence[str],
    target: str,
    description: str,
) -> None:
    """Every output file written as ``<target>/_si_group=G/_si_file=F/part-*.parquet``:
    one Spark partition per output file, its rows sorted by key, then by the
    ``by`` columns themselves."""
    from pyspark.sql.types import LongType, StructField, StructType

    F = functions_for(frame)  # noqa: N806
    spark = frame.sparkSession
    with_path = frame.select("*", F.col("_metadata.file_path").alias(PATH))
    schema = StructType(
        [*with_path.schema.fields, *(StructField(c, LongType(), False) for c in HELPER_COLUMNS)]
    )
    keyed = with_path.mapInArrow(model.assign, schema)
    # Bin-packing sorts by nothing but the (constant) file: Spark's sort is stable
    # then, and rows keep the order they had in their source files.
    order = [GROUP, FILE, KEY, *(quoted(F, c) for c in model.by)] if model.by else [GROUP, FILE]
    laid_out = (
        keyed.repartition(outputs, SLOT).sortWithinPartitions(*order).drop(PATH, SLOT, KEY, *drop)
    )
    with job_description(spark, description), worker_errors(spark):
        laid_out.write.mode("error").partitionBy(GROUP, FILE).parquet(target)


def fingerprint(frame: Any) -> Fingerprint:
    """Row count and two order-independent sums of per-row hashes over every
    column: equal multisets of rows give equal fingerprints."""
    from pyspark.sql.types import MapType

    F = functions_for(frame)  # noqa: N806
    columns = [
        F.to_json(quoted(F, f.name)) if isinstance(f.dataType, MapType) else quoted(F, f.name)
        for f in frame.schema.fields
    ]
    wide = "decimal(38,0)"  # a LONG sum would overflow (and fail under ANSI)
    row = frame.agg(
        F.count(F.lit(1)),
        F.sum(F.xxhash64(*columns).cast(wide)),
        F.sum(F.hash(*columns).cast(wide)),
    ).first()
    return int(row[0]), int(row[1] or 0), int(row[2] or 0)
