"""A Delta table's files as one DataFrame, partition values from its log.

Spark reading Delta's files as plain Parquet would take partition values from
the folder names, and the log, not the folders, is the truth: a STRING column
``month`` in ``month=12`` folders is ``'12'``, not ``12``; delta-rs writes a
value ``'a b'`` as the folder ``a%20b`` and an empty text as NULL; other
writers name folders at random. So each file's values are checked against what
Spark would read from its folders (Spark's ``PartitioningUtils`` given the
table's schema: the raw text unescaped, then cast to the column's type). Where
every file agrees, Spark reads them the usual way (``basePath`` and the
schema: one scan). Where any does not, the files are read without partition
discovery, grouped by their partition values, and each group gets its values
as literals, the groups unioned: always the log's values, at some planning
cost.
"""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal
from functools import reduce
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from skipindex.expressions.casts import str_to_date
from skipindex.spark.partitions import HIVE_NULL, unescape
from skipindex.spark.session import read_parquet_paths

__all__ = ["delta_rows"]

_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?[0-9]+(?:\.([0-9]+))?")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_EPOCH = date(1970, 1, 1)


def delta_rows(spark: Any, root: str, files: list[str], partitions: pa.Table, schema: Any) -> Any:
    """The rows of ``files`` (user paths under ``root``), typed by ``schema`` (the
    table's Spark schema from its log) with the partition columns' values taken
    from ``partitions`` (one row per file, one column per partition column)."""
    schema = _nullable(schema)
    if not files:
        return spark.createDataFrame([], schema)
    if not partitions.num_columns or _folders_agree(root, files, partitions, schema):
        reader = spark.read.option("basePath", root).schema(schema)
        return read_parquet_paths(spark, reader, files)
    return _by_partition_values(spark, files, partitions, schema)


def _nullable(schema: Any) -> Any:
    """``schema`` with every field nullable, as Spark reads any Parquet file."""
    from pyspark.sql.types import StructField, StructType

    return StructType([StructField(f.name, f.dataType, True, f.metadata) for f in schema.fields])


def _by_partition_values(spark: Any, files: list[str], partitions: pa.Table, schema: Any) -> Any:
    """Files grouped by their partition values, each group's values as literals."""
    from pyspark.sql import functions as F  # noqa: N812
    from pyspark.sql.types import StructType

    names = {n.lower() for n in partitions.column_names}
    data = StructType([f for f in schema.fields if f.name.lower() not in names])
    groups = (
        partitions.append_column("__file", pa.array(range(len(files)), pa.int64()))
        .group_by(partitions.column_names, use_threads=False)
        .aggregate([("__file", "list")])
    )
    column_of = {n.lower(): n for n in partitions.column_names}
    frames = []
    for group in groups.to_pylist():
        paths = [files[i] for i in group["__file_list"]]
        scan = read_parquet_paths(spark, spark.read.schema(data), paths)
        columns = [
            _literal(F, group[column_of[f.name.lower()]], f.dataType).alias(f.name)
            if f.name.lower() in names
            else F.col("`" + f.name.replace("`", "``") + "`")
            for f in schema.fields
        ]
        frames.append(scan.select(*columns))
    return reduce(lambda a, b: a.unionByName(b), frames)


def _literal(F: Any, value: Any, spark_type: Any) -> Any:  # noqa: N803
    """A nullable column holding ``value`` as ``spark_type`` (a literal alone would
    be NOT NULL, unlike a column Spark reads)."""
    name = spark_type.simpleString()
    if value is None:
        return F.lit(None).cast(spark_type)
    if name == "timestamp_ntz":  # zone-free: from its text, never from the local zone
        literal = F.lit(value.isoformat(sep=" ")).cast(spark_type)
    elif name == "timestamp":  # an instant: from its microseconds
        literal = F.timestamp_micros(F.lit(_micros(value)))
    elif name == "date":  # from its text: py4j's java.sql.Date is Julian before 1582
        literal = F.lit(value.isoformat()).cast(spark_type)
    elif isinstance(value, Decimal):
        literal = F.lit(format(value, "f")).cast(spark_type)
    else:
        literal = F.lit(value).cast(spark_type)
    return F.when(F.lit(True), literal)


def _micros(value: Any) -> int:
    return int(pa.scalar(value, pa.timestamp("us", tz="UTC")).cast(pa.int64()).as_py())


def _folders_agree(root: str, files: list[str], partitions: pa.Table, schema: Any) -> bool:
    """Whether Spark, reading ``files`` with ``basePath`` and ``schema``, takes
    exactly ``partitions`` from their folder names. Checked once per folder; a
    type whose cast from text is not modelled here never agrees."""
    prefix = len(root.rstrip("/")) + 1
    folders = pc.utf8_slice_codeunits(pa.array(files, pa.string()), prefix)
    folders = pc.replace_substring_regex(folders, r"/[^/]*$", "")
    distinct = (
        partitions.append_column("__folder", folders)
        .group_by(["__folder", *partitions.column_names], use_threads=False)
        .aggregate([])
    )
    if len(distinct) != len(pc.unique(folders)):
        return False  # one folder, files of different values
    types = {f.name: f.dataType.simpleString() for f in schema.fields}
    names = partitions.column_names
    for row in distinct.to_pylist():
        parts = [part.partition("=") for part in row["__folder"].split("/")]
        if [unescape(name) for name, _, _ in parts] != names or any(not sep for _, sep, _ in parts):
            return False
        for (_, _, raw), name in zip(parts, names, strict=True):
            if not _reads_as(raw, row[name], types.get(name, "")):
                return False
    return True


def _reads_as(raw: str, value: Any, type_name: str) -> bool:
    """Whether Spark casts the folder text ``raw`` to exactly ``value``."""
    if value is None:
        return raw == HIVE_NULL
    if raw in ("", HIVE_NULL):
        return False
    text = unescape(raw)
    if type_name == "string":
        return bool(text == value)
    if type_name in ("tinyint", "smallint", "int", "bigint"):
        return _INTEGER.fullmatch(text) is not None and int(text) == value
    if type_name == "boolean":
        return text in ("true", "false") and (text == "true") == value
    if type_name == "date":
        if _DATE.fullmatch(text) is None:
            return False
        days = str_to_date(text)
        return days is not None and days == (value - _EPOCH).days
    if type_name.startswith("decimal"):
        found = _DECIMAL.fullmatch(text)
        scale = int(type_name.rstrip(")").rpartition(",")[2] or 0)  # decimal(p,s)
        return found is not None and len(found.group(1) or "") <= scale and Decimal(text) == value
    return False  # floats, timestamps, binary: Spark's text casts not modelled here
