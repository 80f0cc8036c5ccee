"""Equality-encoded bitmaps: one Roaring bitmap of row positions per distinct value.

Payload per file (struct):

* ``values``: list of the column's physical type, the sorted distinct non-null
  values (Spark order: NaN last, -0.0 stored as 0.0);
* ``lows``: null while the file has at most ``max_distinct`` distinct values.
  Beyond that the index degrades to at most ``max_distinct`` equi-depth
  *buckets* of consecutive distinct values (a value holding 1/max_distinct of
  the rows gets a bucket of its own): ``lows[j]`` / ``values[j]`` are bucket j's
  smallest / largest value;
* ``bitmaps``: list<binary>, bitmap j = rows whose value is ``values[j]`` (or
  falls in bucket j), Roaring portable serialization;
* ``nulls``: bitmap of the null rows (null when there are none).

Exact for every comparison and [NOT] IN within ``max_distinct``; with buckets
the answer is a superset (``!=`` / NOT IN only exclude single-value buckets).
A range ORs the bitmaps of the values in it, or subtracts the others from the
non-null rows when those are fewer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import pyarrow as pa
from pyroaring import BitMap

from skipindex.expressions.nodes import BoundComparison, BoundIn
from skipindex.indexes._bitmaps import (
    BitmapKind,
    FilePayload,
    bitmap_of,
    bucketize,
    check_int_param,
    cover,
    list_value,
    select_ranges,
    split_nulls,
    to_bytes,
)
from skipindex.indexes.base import IndexSpec

__all__ = ["EqualityBitmap", "EqualityBitmapKind"]

DEFAULT_MAX_DISTINCT = 4096


@dataclass(frozen=True)
class EqualityBitmap(IndexSpec):
    """One bitmap of row positions per distinct value (per file)."""

    max_distinct: int = DEFAULT_MAX_DISTINCT
    kind: ClassVar[str] = "equality_bitmap"

    def __post_init__(self) -> None:
        check_int_param(self.kind, "max_distinct", self.max_distinct, 1)


class EqualityBitmapKind(BitmapKind):
    kind = "equality_bitmap"
    spec = EqualityBitmap
    precision = 30

    options: EqualityBitmap

    def payload_type(self) -> pa.StructType:
        values = pa.list_(self.value_type())
        return pa.struct(
            [
                ("values", values),
                ("lows", values),
                ("bitmaps", pa.list_(pa.binary())),
                ("nulls", pa.binary()),
            ]
        )

    def build(self, values: pa.Array) -> dict[str, Any]:
        col = split_nulls(values, self.domain)
        buckets = bucketize(col, self.options.max_distinct)
        return {
            "values": list_value(buckets.highs),
            "lows": None if buckets.lows is None else list_value(buckets.lows),
            "bitmaps": [to_bytes(bm) for bm in buckets.bitmaps],
            "nulls": to_bytes(bitmap_of(col.nulls)) if len(col.nulls) else None,
        }

    def rows(self, leaf: BoundComparison | BoundIn, file: FilePayload) -> BitMap:
        highs = self.searcher(file.values("values"))
        if highs is None:  # defensive: a payload without values knows nothing
            return file.nonnull.copy()
        lows = self.searcher(file.values("lows")) or highs
        k = highs.size
        ranges = select_ranges(leaf, lows, highs, k)

        def bitmaps(a: int, b: int) -> list[BitMap]:
            return file.bitmaps("bitmaps", a, b)

        return cover(ranges, k, bitmaps, file, lambda a, b: b - a)
