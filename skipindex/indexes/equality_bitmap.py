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

Exact for every comparison, [NOT] IN and [NOT] LIKE within ``max_distinct``;
with buckets the answer is a superset (``!=``, NOT IN and patterns only decide
single-value buckets). A LIKE pattern is matched against the file's distinct
values (:mod:`skipindex.expressions.patterns`), and ORs their bitmaps.
A range ORs the bitmaps of the values in it, or subtracts the others from the
non-null rows when those are fewer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyroaring import AbstractBitMap, BitMap

from skipindex.expressions.nodes import BoundComparison, BoundIn, BoundMatch
from skipindex.indexes._bitmap_kind import BucketedBitmapKind, check_int_param
from skipindex.indexes._bitmap_query import Range, cover
from skipindex.indexes._dense import DenseColumns
from skipindex.indexes._dense_ops import union_of_items
from skipindex.indexes._payloads import FileView, PayloadColumns
from skipindex.indexes._roaring import to_bytes
from skipindex.indexes.base import IndexSpec

__all__ = ["EqualityBitmap", "EqualityBitmapKind"]

DEFAULT_MAX_DISTINCT = 4096


@dataclass(frozen=True)
class EqualityBitmap(IndexSpec):
    """One bitmap of row positions per distinct value (per file)."""

    max_distinct: int = DEFAULT_MAX_DISTINCT
    kind: ClassVar[str] = "equality_bitmap"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int_param(self.kind, "max_distinct", self.max_distinct, 1)


class EqualityBitmapKind(BucketedBitmapKind):
    spec = EqualityBitmap
    precision = 30
    highs_field = "values"
    matches_patterns = True

    options: EqualityBitmap

    def bucket_limit(self) -> int:
        return self.options.max_distinct

    def store(self, per_bucket: list[BitMap], non_null: int) -> dict[str, Any]:
        return {"bitmaps": [to_bytes(bm) for bm in per_bucket]}

    def dense_ranges(
        self,
        starts: np.ndarray,
        ends: np.ndarray,
        sizes: np.ndarray,
        positions: np.ndarray,
        columns: PayloadColumns,
        dense: DenseColumns,
        within: np.ndarray | None = None,
    ) -> np.ndarray | None:

        def items(at: np.ndarray) -> np.ndarray | None:
            return dense.items("bitmaps", at)

        first = columns.lists("bitmaps").starts[positions]
        if len(starts) == 1:  # one range: where fewer, the non-null rows less the others
            selected = np.maximum(ends[0] - starts[0], 0)
            flip = starts[0] + (sizes - ends[0]) + 1 < selected
            if flip.any():
                others_starts = np.stack([np.zeros_like(sizes), ends[0]])
                others_ends = np.stack([starts[0], sizes])
                starts = np.where(flip, others_starts, np.stack([starts[0], starts[0]]))
                ends = np.where(flip, others_ends, np.stack([ends[0], starts[0]]))
                union = union_of_items(items, dense.width, first, starts, ends)
                if union is None:
                    return None
                nonnull = dense.nonnull()
                if nonnull is None:
                    return None
                union[flip] = ~union[flip] & nonnull[positions[flip]]
                return union
        return union_of_items(items, dense.width, first, starts, ends)

    def rows(self, leaf: BoundComparison | BoundIn | BoundMatch, file: FileView) -> AbstractBitMap:
        if not isinstance(leaf, BoundMatch):
            return super().rows(leaf, file)
        values = file.values("values")
        assert values is not None  # files without values are not usable
        return self.cover_ranges(
            pattern_ranges(leaf, values, file.values("lows")), len(values), file
        )

    def cover_ranges(self, ranges: list[Range], buckets: int, file: FileView) -> AbstractBitMap:
        def bitmaps(a: int, b: int) -> list[AbstractBitMap]:
            return file.bitmaps("bitmaps", a, b)

        return cover(ranges, buckets, bitmaps, file, lambda a, b: b - a)


def pattern_ranges(leaf: BoundMatch, values: pa.Array, lows: pa.Array | None) -> list[Range]:
    """The runs of codes whose value matches ``leaf`` (NOT LIKE: does not). A bucket
    of several values (``lows`` differ from ``values``) might hold either: it is in."""
    text = values if pa.types.is_string(values.type) else values.cast(pa.large_string())
    if leaf.case_insensitive:
        hits = _folded_hits(leaf, text)
    else:
        hits = np.asarray(leaf.pattern.matches(text).to_numpy(zero_copy_only=False), dtype=bool)
        if leaf.negated:
            hits = ~hits
    if lows is not None:
        hits |= np.asarray(pc.not_equal(lows, values).to_numpy(zero_copy_only=False))
    edges = np.flatnonzero(np.diff(np.concatenate(([0], hits.view(np.int8), [0]))))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True))


def _folded_hits(leaf: BoundMatch, text: pa.Array) -> np.ndarray:
    """ILIKE over the values: ``lower(value) LIKE pattern``. Spark lowers ASCII
    text letter by letter in every locale, so an ASCII value and an ASCII pattern
    are decided exactly; a value or pattern with other characters might match
    (Spark's ``lower`` of them is not modelled here)."""
    if not leaf.pattern.is_ascii:
        return np.ones(len(text), dtype=bool)
    found = leaf.pattern.matches(pc.ascii_lower(text)).to_numpy(zero_copy_only=False)
    hits = np.asarray(found, dtype=bool)
    if leaf.negated:
        hits = ~hits
    ascii_only = np.asarray(pc.string_is_ascii(text).to_numpy(zero_copy_only=False), dtype=bool)
    return np.asarray(hits | ~ascii_only, dtype=bool)
