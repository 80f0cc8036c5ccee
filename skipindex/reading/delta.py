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
from collections.abc import Mapping
from datetime import date
from decimal import Decimal
from functools import reduce
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skipindex.expressions.casts import str_to_date
from skipindex.reading.deletes import without_deleted
from skipindex.spark.partitions import HIVE_NULL, unescape
from skipindex.spark.session import empty_frame, read_parquet_paths

__all__ = ["delta_rows", "logical_schema", "physical_schema"]

_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?[0-9]+(?:\.([0-9]+))?")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_EPOCH = date(1970, 1, 1)


def delta_rows(
    spark: Any,
    root: str,
    files: list[str],
    partitions: pa.Table,
    schema: Any,
    deleted: Mapping[str, np.ndarray] | None = None,
    physical: Any = None,
) -> Any:
    """The live rows of ``files`` (user paths under ``root``), typed by ``schema``
    (the table's Spark schema from its log) with the partition columns' values
    taken from ``partitions`` (one row per file, one column per partition
    column), less the rows ``deleted`` lists by file (its deletion vectors).
    ``physical``: with column mapping, ``schema`` as the files name its columns
    (see :func:`physical_schema`), read and then renamed."""
    schema = _nullable(schema)
    if not files:
        return empty_frame(spark, schema)
    deleted = deleted or {}
    if physical is None and (
        not partitions.num_columns or _folders_agree(root, files, partitions, schema)
    ):
        reader = spark.read.option("basePath", root).schema(schema)
        return without_deleted(spark, read_parquet_paths(spark, reader, files), files, deleted)
    return _by_partition_values(spark, files, partitions, schema, deleted, physical)


_MAPPING = ("delta.columnMapping.id", "delta.columnMapping.physicalName")


def logical_schema(raw: Any) -> Any:
    """A Delta log's schema (Spark's StructType) as readers show it: without the
    column mapping's metadata (ids, physical names)."""
    from pyspark.sql.types import StructType

    def strip(field: dict[str, Any]) -> dict[str, Any]:
        kept = {k: v for k, v in field.get("metadata", {}).items() if k not in _MAPPING}
        return {**field, "metadata": kept, "type": _walk(field["type"], strip)}

    return StructType.fromJson(_walk(raw.jsonValue(), strip))


def physical_schema(raw: Any) -> Any:
    """A column-mapped table's schema as its files name the columns (each field,
    at any depth, by its physical name), field for field as ``raw``; None where
    no field has a physical name."""
    from pyspark.sql.types import StructType

    named = [False]

    def rename(field: dict[str, Any]) -> dict[str, Any]:
        metadata = field.get("metadata", {})
        name = metadata.get(_MAPPING[1], field["name"])
        named[0] |= _MAPPING[1] in metadata
        kept = {k: v for k, v in metadata.items() if k not in _MAPPING}
        return {**field, "name": name, "metadata": kept, "type": _walk(field["type"], rename)}

    renamed = StructType.fromJson(_walk(raw.jsonValue(), rename))
    return renamed if named[0] else None


def _walk(data_type: Any, edit: Any) -> Any:
    """A Spark type's JSON with ``edit`` applied to every struct field in it."""
    if not isinstance(data_type, dict):
        return data_type
    kind = data_type.get("type")
    if kind == "struct":
        return {**data_type, "fields": [edit(f) for f in data_type["fields"]]}
    if kind == "array":
        return {**data_type, "elementType": _walk(data_type["elementType"], edit)}
    if kind == "map":
        key, value = data_type["keyType"], data_type["valueType"]
        return {**data_type, "keyType": _walk(key, edit), "valueType": _walk(value, edit)}
    return data_type


def _nullable(schema: Any) -> Any:
    """``schema`` with every field nullable, as Spark reads any Parquet file."""
    from pyspark.sql.types import StructField, StructType

    return StructType([StructField(f.name, f.dataType, True, f.metadata) for f in schema.fields])


def _by_partition_values(
    spark: Any,
    files: list[str],
    partitions: pa.Table,
    schema: Any,
    deleted: Mapping[str, np.ndarray],
    physical: Any,
) -> Any:
    """Files grouped by their partition values, each group's values as literals
    (and, with column mapping, each column read by its physical name)."""
    from pyspark.sql import functions as F  # noqa: N812
    from pyspark.sql.types import StructType

    names = {n.lower() for n in partitions.column_names}
    spelled = physical.fields if physical is not None else schema.fields
    pairs = list(zip(schema.fields, spelled, strict=True))
    data = StructType([read for field, read in pairs if field.name.lower() not in names])
    column_of = {n.lower(): n for n in partitions.column_names}
    indexed = partitions.append_column("__file", pa.array(range(len(files)), pa.int64()))
    if partitions.num_columns:
        groups = indexed.group_by(partitions.column_names, use_threads=False).aggregate(
            [("__file", "list")]
        )
    else:
        groups = pa.table({"__file_list": [list(range(len(files)))]})
    frames = []
    for group in groups.to_pylist():
        paths = [files[i] for i in group["__file_list"]]
        scan = read_parquet_paths(spark, spark.read.schema(data), paths)
        scan = without_deleted(spark, scan, paths, deleted)
        columns = [
            _literal(F, group[column_of[field.name.lower()]], field.dataType).alias(field.name)
            if field.name.lower() in names
            else _quoted(F, read.name).cast(field.dataType).alias(field.name)
            for field, read in pairs
        ]
        frames.append(scan.select(*columns))
    return reduce(lambda a, b: a.unionByName(b), frames)


def _quoted(F: Any, name: str) -> Any:  # noqa: N803
    return F.col("`" + name.replace("`", "``") + "`")


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
