"""String columns Spark compares by a collation other than byte order.

Spark 4 writes a column's collation into the footer's Spark schema
(``org.apache.spark.sql.parquet.row.metadata``: the field's metadata holds
``__COLLATIONS``, e.g. ``{"s": "spark.UTF8_LCASE"}``), and reads it back: then
``s = 'ABC'`` holds for a row of ``'abc'``, ``'abc ' = 'abc'`` under an RTRIM
collation, and ranges follow the collation's order. An index built on the bytes
would drop such files, so a collated column (anything but ``UTF8_BINARY``) is not
indexed in that file: every question about it might match.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow.parquet as pq

__all__ = ["collated_columns"]

_ROW_METADATA = b"org.apache.spark.sql.parquet.row.metadata"
_BYTE_ORDER = "UTF8_BINARY"


def collated_columns(parquet: pq.ParquetFile) -> dict[str, str]:
    """Top-level column -> the collation Spark compares it (or a field or element
    inside it) by, for every column whose collation is not byte order."""
    found = (parquet.metadata.metadata or {}).get(_ROW_METADATA)
    if not found:
        return {}
    try:
        schema = json.loads(found)
    except ValueError:
        return {}
    out: dict[str, str] = {}
    for field in schema.get("fields", []) if isinstance(schema, dict) else []:
        collation = _collation(field)
        if collation is not None:
            out[str(field.get("name"))] = collation
    return out


def _collation(node: Any) -> str | None:
    """The first collation other than byte order in a field's JSON (its own
    metadata, or a nested field's: a struct's, an array's elements')."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, list):
            stack.extend(current)
        if not isinstance(current, dict):
            continue
        metadata = current.get("metadata")
        collations = metadata.get("__COLLATIONS") if isinstance(metadata, dict) else None
        for name in collations.values() if isinstance(collations, dict) else ():
            if not str(name).upper().endswith(_BYTE_ORDER):
                return str(name)
        stack.extend(current.values())
    return None
