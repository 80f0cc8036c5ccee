"""Hive-style partition columns (``year=2024/...``): free, exact file pruning.

A file's partition values are in its path, so they need no index: at prune
time they become a min-max payload with min = max = the value (or all NULL for
``__HIVE_DEFAULT_PARTITION__``). Types come from Spark's schema recorded at
build time; without it, integers and dates are recognised and anything else
stays a string. A value that does not parse as its type is "unknown" (kept).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from urllib.parse import unquote

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skipindex._types import to_physical
from skipindex.evaluate import IndexColumn
from skipindex.indexes.base import FileBatch
from skipindex.indexes.minmax import MinMaxKind

__all__ = ["partition_fields", "partition_index", "partition_values"]

HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
_SPARK_TYPES = {
    "byte": pa.int8(),
    "short": pa.int16(),
    "integer": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "string": pa.string(),
    "boolean": pa.bool_(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us", tz="UTC"),
    "timestamp_ntz": pa.timestamp("us"),
}
_DECIMAL = re.compile(r"^decimal\((\d+),\s*(\d+)\)$")
_INT = re.compile(r"^-?\d{1,18}$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def partition_values(relative_path: str) -> dict[str, str | None]:
    """``a=1/b=x%20y/f.parquet`` -> {"a": "1", "b": "x y"} (Spark unescapes %XX)."""
    values: dict[str, str | None] = {}
    for part in relative_path.split("/")[:-1]:
        name, sep, value = part.partition("=")
        if sep and name:
            values[unquote(name)] = None if value == HIVE_NULL else unquote(value)
    return values


def partition_fields(
    spark_schema: str | None, data_schema: pa.Schema, paths: Sequence[str]
) -> list[pa.Field]:
    """The partition columns of a table: Spark's types when known, else inferred."""
    sample = partition_values(paths[0]) if paths else {}
    names = [n for n in sample if n not in data_schema.names]
    spark_types: dict[str, pa.DataType] = {}
    if spark_schema:
        for field in json.loads(spark_schema)["fields"]:
            arrow = _from_spark(field["type"])
            if arrow is not None:
                spark_types[field["name"]] = arrow
    return [pa.field(n, spark_types.get(n) or _infer(n, paths)) for n in names]


def partition_index(field: pa.Field, paths: Sequence[str], num_rows: np.ndarray) -> IndexColumn:
    """A min-max view of one partition column over the files at ``paths``."""
    raw = pa.array([partition_values(p).get(field.name) for p in paths], pa.string())
    try:
        typed = raw.cast(field.type) if field.type != pa.string() else raw
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        typed = None
    kind = MinMaxKind(field.name, field.type, {})
    if typed is None:  # unparseable values: the index knows nothing
        payloads = pa.nulls(len(paths), kind.payload_type())
    else:
        physical = to_physical(typed)
        if pa.types.is_string(physical.type):
            physical = physical.cast(pa.binary())
        is_null = pc.is_null(physical).to_numpy(zero_copy_only=False)
        counts = np.where(is_null, num_rows, 0)
        nans = pa.array(np.zeros(len(paths), dtype=np.int64))
        payloads = pa.StructArray.from_arrays(
            [physical, physical, pa.array(counts, pa.int64()), nans],
            fields=list(kind.payload_type()),
        )
    return IndexColumn(kind, FileBatch(num_rows, payloads))


def _from_spark(spark_type: object) -> pa.DataType | None:
    if not isinstance(spark_type, str):
        return None
    match = _DECIMAL.match(spark_type)
    if match:
        return pa.decimal128(int(match.group(1)), int(match.group(2)))
    return _SPARK_TYPES.get(spark_type)


def _infer(name: str, paths: Sequence[str]) -> pa.DataType:
    values = {partition_values(p).get(name) for p in paths} - {None}
    if values and all(v is not None and _INT.match(v) for v in values):
        return pa.int64()
    if values and all(v is not None and _DATE.match(v) for v in values):
        return pa.date32()
    return pa.string()
