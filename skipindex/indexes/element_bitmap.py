"""Bitmaps of an array column's elements, per file: which rows hold each element.

Payload per file: ``values``, the distinct non-NULL elements (sorted, physical
form), and ``bitmaps``, per element the Roaring bitmap of the rows whose array
holds it (a row is in as many bitmaps as it has distinct elements). A file with
more than ``max_distinct`` distinct elements stores neither (null: every row
might match). Answers ``array_contains``, ``arrays_overlap`` with literal values
and ``exists(a, x -> x = v)`` exactly, row by row, so an AND with conditions on
other columns is answered row by row too.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyroaring import AbstractBitMap, BitMap

from skipindex._types import BoundValue, Domain, physical_type
from skipindex.expressions.nodes import BoundHasElement, BoundLeaf
from skipindex.indexes._bitmap_kind import check_int_param
from skipindex.indexes._column_work import ColumnWork
from skipindex.indexes._elements import element_domain, elements_of
from skipindex.indexes._roaring import from_bytes, to_bytes
from skipindex.indexes.base import FileBatch, IndexSpec, RowLevelKind

__all__ = ["ElementBitmap", "ElementBitmapKind"]

_NOTHING = BitMap()


@dataclass(frozen=True)
class ElementBitmap(IndexSpec):
    """Per distinct element of an array column, the rows that hold it (per file)."""

    max_distinct: int = 4096
    kind: ClassVar[str] = "element_bitmap"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int_param(self.kind, "max_distinct", self.max_distinct, 1)


class ElementBitmapKind(RowLevelKind):
    spec = ElementBitmap
    precision = 30

    options: ElementBitmap

    def indexed_domain(self, column: str, arrow_type: pa.DataType) -> Domain:
        return element_domain(self.kind, column, arrow_type)

    def _element_type(self) -> pa.DataType:
        return physical_type(self.arrow_type.value_type)

    def payload_type(self) -> pa.StructType:
        return pa.struct(
            [("values", pa.list_(self._element_type())), ("bitmaps", pa.list_(pa.binary()))]
        )

    def build(self, values: pa.Array, work: ColumnWork | None = None) -> dict[str, Any]:
        elements, rows = elements_of(values)
        order = np.asarray(pc.sort_indices(elements).to_numpy(zero_copy_only=False))
        ordered = elements.take(pa.array(order))
        if len(ordered) == 0:
            return {"values": [], "bitmaps": []}
        starts = np.flatnonzero(
            np.concatenate(([True], _differs(ordered.slice(1), ordered.slice(0, len(ordered) - 1))))
        )
        if len(starts) > self.options.max_distinct:
            return {"values": None, "bitmaps": None}
        positions = rows[order]
        bounds = [*starts.tolist(), len(ordered)]
        bitmaps = [
            to_bytes(BitMap(positions[a:b].astype(np.uint32)))
            for a, b in itertools.pairwise(bounds)
        ]
        return {"values": ordered.take(pa.array(starts)), "bitmaps": bitmaps}

    def answers(self, leaf: BoundLeaf) -> bool:
        return (
            isinstance(leaf, BoundHasElement)
            and leaf.column.name == self.column
            and not leaf.negated
        )

    def matching_rows(
        self, leaf: BoundLeaf, files: FileBatch, positions: np.ndarray
    ) -> list[AbstractBitMap | None]:
        if not self.answers(leaf):
            return [None] * len(positions)
        assert isinstance(leaf, BoundHasElement)
        wanted = pa.array([self._physical(v) for v in leaf.values], self._element_type())
        listed = files.payloads.field("values")
        stored = files.payloads.field("bitmaps")
        known = files.known()
        out: list[AbstractBitMap | None] = []
        for at in positions.tolist():
            if not known[at] or not listed[at].is_valid:
                out.append(None)  # not indexed, or too many distinct elements
                continue
            values = listed[at].values
            hits = np.flatnonzero(pc.is_in(values, value_set=wanted).to_numpy(zero_copy_only=False))
            if not len(hits):
                out.append(_NOTHING)
                continue
            blobs = stored[at].values
            out.append(BitMap.union(*(from_bytes(blobs[int(h)].as_py()) for h in hits)))
        return out

    def _physical(self, value: BoundValue) -> Any:
        """A bound value as the stored elements hold it (a decimal unscaled)."""
        if isinstance(value, Decimal):
            return int(value.scaleb(self.arrow_type.value_type.scale))
        return value


def _differs(later: pa.Array, earlier: pa.Array) -> np.ndarray:
    return np.asarray(pc.not_equal(later, earlier).to_numpy(zero_copy_only=False), dtype=bool)
