"""Range-encoded bitmaps: bitmap j = the rows whose value is <= boundary j.

Boundaries ``b_0 < ... < b_{k-1}`` are the file's distinct values when there
are at most ``bins`` of them (then every answer is exact), else equi-depth
boundaries taken from the quantiles of the file's values (``b_{k-1}`` = max;
a value holding 1/bins of the rows gets a bin of its own, so ``=`` on it stays
exact; there may be fewer than ``bins`` bins). Bin j holds the values in
``(b_{j-1}, b_j]``; rows of bins a..b-1 are ``C_{b-1} - C_{a-1}``, so any range
costs at most two bitmaps. ``=``, IN, ``!=`` and NOT IN are answered as ranges
of bins (a superset inside a bin when binned; ``!=`` / NOT IN only exclude
single-value bins). Size: up to (k-1) x rows/8 bytes for an unclustered file
(one Roaring bitset container per 64Ki rows per bitmap), a few bytes per bitmap
for a sorted one.

Payload per file (struct):

* ``bounds``: list of the column's physical type, the boundaries (Spark order);
* ``lows``: null when exact; when binned, the smallest value of each bin, so a
  literal falling in the gap between two bins matches nothing;
* ``bitmaps``: list<binary> of k-1 cumulative bitmaps ``C_j`` for j < k-1
  (``C_{k-1}`` is every non-null row and is not stored). Roaring compresses
  them well (runs when the file is sorted); to keep them small, from index
  ``flip_from`` on (where ``C_j`` holds more than half the non-null rows) the
  complement ``U_j = non-null - C_j`` (rows with value > b_j) is stored instead;
* ``flip_from``: int32, see above;
* ``nulls``: bitmap of the null rows (null when there are none).

The naive cardinality x rows encoding is never materialised.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
from pyroaring import AbstractBitMap, BitMap

from skipindex.indexes._bitmap_kind import BucketedBitmapKind, check_int_param
from skipindex.indexes._bitmap_query import Range, cover
from skipindex.indexes._payloads import FileView
from skipindex.indexes._roaring import to_bytes
from skipindex.indexes.base import IndexSpec

__all__ = ["RangeBitmap", "RangeBitmapKind"]

DEFAULT_BINS = 64


@dataclass(frozen=True)
class RangeBitmap(IndexSpec):
    """Range-encoded bitmaps over at most ``bins`` boundaries (per file)."""

    bins: int = DEFAULT_BINS
    kind: ClassVar[str] = "range_bitmap"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int_param(self.kind, "bins", self.bins, 2)


class RangeBitmapKind(BucketedBitmapKind):
    spec = RangeBitmap
    precision = 20
    highs_field = "bounds"
    extra_fields = (("flip_from", pa.int32()),)

    options: RangeBitmap

    def bucket_limit(self) -> int:
        return self.options.bins

    def store(self, per_bucket: list[BitMap], non_null: int) -> dict[str, Any]:
        k = len(per_bucket)
        # C_j for j < flip_from, then U_j = rows above b_j for flip_from <= j < k-1.
        cumulative = np.cumsum([len(bm) for bm in per_bucket[:-1]])
        flip_from = int(np.searchsorted(cumulative, non_null / 2, side="right"))
        stored: list[bytes] = []
        running = BitMap()
        for j in range(flip_from):
            running |= per_bucket[j]
            stored.append(to_bytes(running))
        above: list[bytes] = []
        running = BitMap()
        for j in range(k - 2, flip_from - 1, -1):
            running |= per_bucket[j + 1]
            above.append(to_bytes(running))
        return {"bitmaps": stored + above[::-1], "flip_from": flip_from}

    def cover_ranges(self, ranges: list[Range], buckets: int, file: FileView) -> AbstractBitMap:
        k = buckets
        flip_from = int(file.scalar("flip_from") or 0)

        def between(a: int, b: int) -> list[AbstractBitMap]:
            """Rows of bins a..b-1: C_{b-1} - C_{a-1} (C_{-1} empty, C_{k-1} non-null)."""
            if b == k:  # non-null - C_{a-1}
                if a == 0:
                    return [file.nonnull]
                low = file.bitmap("bitmaps", a - 1)
                return [low if a - 1 >= flip_from else file.nonnull - low]
            high = file.bitmap("bitmaps", b - 1)
            high_flipped = b - 1 >= flip_from
            if a == 0:
                return [file.nonnull - high if high_flipped else high]
            low = file.bitmap("bitmaps", a - 1)
            if a - 1 >= flip_from:  # both stored as complements: U_{a-1} - U_{b-1}
                return [low - high]
            if high_flipped:
                return [file.nonnull - high - low]
            return [high - low]

        return cover(ranges, k, between, file, lambda a, b: 1)
