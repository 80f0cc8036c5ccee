"""The base of the row-level bitmap kinds (equality, range, bit-sliced), and the
skeleton the two bucketed kinds (equality, range-encoded) share."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
from pyroaring import BitMap

from skipindex._types import physical_type
from skipindex.errors import InvalidSpecError
from skipindex.expressions.nodes import (
    BoundComparison,
    BoundIn,
    BoundIsNull,
    BoundLeaf,
)
from skipindex.indexes._bitmap_build import bucketize, list_value, split_nulls
from skipindex.indexes._bitmap_query import FilePayload, Range, SortedValues, select_ranges
from skipindex.indexes._roaring import bitmap_of, to_bytes
from skipindex.indexes.base import FileBatch, RowLevelKind


def check_int_param(kind: str, name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidSpecError(f"{kind}: '{name}' must be an integer >= {minimum}, got {value!r}")
    return value


class BitmapKind(RowLevelKind):
    """Base of the row-level bitmap kinds: null handling and payload access."""

    def value_type(self) -> pa.DataType:
        return physical_type(self.arrow_type)

    def answers(self, leaf: BoundLeaf) -> bool:
        return leaf.column.name == self.column  # every comparison, [NOT] IN, IS [NOT] NULL

    def matching_rows(
        self, leaf: BoundLeaf, files: FileBatch, positions: np.ndarray
    ) -> list[BitMap | None]:
        payloads = files.payloads
        known = files.known()
        columns = {f.name: payloads.field(f.name) for f in payloads.type}
        out: list[BitMap | None] = []
        for i in map(int, positions):
            file = FilePayload(columns, i, int(files.num_rows[i]))
            if not known[i]:
                out.append(None)
            elif isinstance(leaf, BoundIsNull):
                out.append((file.nonnull if leaf.negated else file.nulls).copy())
            else:
                out.append(self.rows(leaf, file))
        return out

    @abstractmethod
    def rows(self, leaf: BoundComparison | BoundIn, file: FilePayload) -> BitMap:
        """The rows of one file satisfying a comparison or [NOT] IN leaf."""

    def searcher(self, values: pa.Array | None) -> SortedValues | None:
        return None if values is None else SortedValues(values, self.domain)


class BucketedBitmapKind(BitmapKind):
    """Equality and range-encoded bitmaps: a file's values grouped into sorted
    buckets (one value each, or equi-depth), each kind storing the buckets'
    bitmaps its own way. Payload: ``<highs_field>``, ``lows``, ``bitmaps``, the
    kind's ``extra_fields``, ``nulls``."""

    highs_field: ClassVar[str]
    extra_fields: ClassVar[tuple[tuple[str, pa.DataType], ...]] = ()

    @abstractmethod
    def bucket_limit(self) -> int:
        """At most this many buckets per file."""

    @abstractmethod
    def store(self, per_bucket: list[BitMap], non_null: int) -> dict[str, Any]:
        """``bitmaps`` (and the extra fields) from one bitmap per bucket."""

    @abstractmethod
    def cover_ranges(self, ranges: list[Range], buckets: int, file: FilePayload) -> BitMap:
        """The rows of the buckets in ``ranges`` (half-open bucket index ranges)."""

    def payload_type(self) -> pa.StructType:
        values = pa.list_(self.value_type())
        return pa.struct(
            [
                (self.highs_field, values),
                ("lows", values),
                ("bitmaps", pa.list_(pa.binary())),
                *self.extra_fields,
                ("nulls", pa.binary()),
            ]
        )

    def build(self, values: pa.Array) -> dict[str, Any]:
        col = split_nulls(values, self.domain)
        buckets = bucketize(col, self.bucket_limit())
        return {
            self.highs_field: list_value(buckets.highs),
            "lows": None if buckets.lows is None else list_value(buckets.lows),
            **self.store(buckets.bitmaps, len(col.positions)),
            "nulls": to_bytes(bitmap_of(col.nulls)) if len(col.nulls) else None,
        }

    def rows(self, leaf: BoundComparison | BoundIn, file: FilePayload) -> BitMap:
        highs = self.searcher(file.values(self.highs_field))
        if highs is None:  # defensive: a payload without values knows nothing
            return file.nonnull.copy()
        lows = self.searcher(file.values("lows")) or highs
        return self.cover_ranges(select_ranges(leaf, lows, highs, highs.size), highs.size, file)
