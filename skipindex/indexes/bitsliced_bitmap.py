"""Bit-sliced range-encoded bitmaps over integer value codes, evaluated with
RangeEval-Opt (Chan & Ioannidis, "Bitmap index design and evaluation", SIGMOD
1998 / "An efficient bitmap encoding scheme for selection queries", 1999;
O'Neil & Quass, "Improved query performance with variant indexes", 1997).

Every non-null row gets an integer code in ``0..K-1`` of width ``m`` bits.
Slice ``B_i`` = the non-null rows whose code has bit i == 0 (range encoding
of one base-2 digit); null rows are in no slice (as if their code were all
ones), so every result of RangeEval-Opt already excludes them.

Codes:

* integer-valued domains (INT, DATE, TIMESTAMP, DECIMAL as unscaled integers):
  ``code = value - min`` with ``min`` stored; no values list, which keeps the
  payload well under the column's own Parquet size (60k random keys in
  1..200000: 18 slices of ~8 KB). Chosen when the extra slices cost less than
  the values list rank codes would need (``value - min`` then spans ``2**m``
  codes, most of them empty, which costs nothing at query time);
* otherwise (strings, binary, floats, booleans, sparse wide integer ranges):
  ``code`` = rank among the file's sorted distinct values, stored as ``values``.

A literal maps to a code boundary by arithmetic or searchsorted, so a literal
absent from the file still gives an exact range. ``code <= c`` costs about m
bitmap operations; ``=``, ``!=``, ranges, BETWEEN, IN and NOT IN are unions and
differences of at most two such results per (merged) range of codes.

Payload per file (struct): ``min`` (physical type; set with offset codes),
``values`` (list of the physical type; set with rank codes), ``slices``
(list<binary>, B_0 .. B_{m-1}), ``nulls`` (binary, null when there are none).
Exact for every comparison, [NOT] IN and IS [NOT] NULL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyroaring import AbstractBitMap, BitMap

from skipindex._types import Domain
from skipindex.expressions.nodes import BoundComparison, BoundIn, BoundMatch, BoundValue
from skipindex.indexes._bitmap_build import Encoded, Ranked, decimal_unscaled, list_value
from skipindex.indexes._bitmap_kind import BitmapKind, payload_columns
from skipindex.indexes._bitmap_query import (
    Range,
    Searcher,
    SortedValues,
    cover,
    floor_ceil,
    select_ranges,
)
from skipindex.indexes._code_search import Codes, Either, OffsetMinimums, SortedLists
from skipindex.indexes._column_work import ColumnWork
from skipindex.indexes._dense import DenseColumns
from skipindex.indexes._dense_members import file_values, integer_keys, member_rows
from skipindex.indexes._dense_sliced import SlicedFiles
from skipindex.indexes._payloads import FileView, PayloadColumns
from skipindex.indexes._roaring import bitmap_of, mask_bytes, to_bytes
from skipindex.indexes.base import FileBatch, IndexSpec

__all__ = ["BitSlicedBitmap", "BitSlicedBitmapKind"]

MAX_SPAN = 2**62
# Domains whose values are integers (decimals: unscaled) so codes can be value - min.
INTEGRAL = frozenset({Domain.INT, Domain.DATE, Domain.TIMESTAMP, Domain.DECIMAL})


class OffsetCodes:
    """Codes ``value - minimum`` over ``size`` consecutive integers (decimals
    unscaled): a literal maps to a code by arithmetic, no values list needed."""

    def __init__(self, minimum: int, size: int, scale: int = 0) -> None:
        self.size = size
        self._minimum = minimum
        self._scale = scale

    def lt(self, value: BoundValue) -> int:
        return self._clamp(floor_ceil(value, self._scale)[1] - self._minimum)

    def le(self, value: BoundValue) -> int:
        return self._clamp(floor_ceil(value, self._scale)[0] - self._minimum + 1)

    def _clamp(self, count: float) -> int:
        return int(min(max(count, 0), self.size))


def _rank_codes(ranked: Ranked) -> np.ndarray:
    """Each non-null row's rank among the distinct values."""
    codes = np.empty(len(ranked.order), dtype=np.int64)
    codes[ranked.order] = np.repeat(np.arange(len(ranked.distinct)), np.diff(ranked.starts))
    return codes


@dataclass(frozen=True)
class BitSlicedBitmap(IndexSpec):
    """Base-2 bit-sliced range-encoded bitmaps (about log2(cardinality) bitmaps)."""

    kind: ClassVar[str] = "bitsliced_bitmap"


class BitSlicedBitmapKind(BitmapKind):
    spec = BitSlicedBitmap
    precision = 30

    def payload_type(self) -> pa.StructType:
        value = self.value_type()
        return pa.struct(
            [
                ("min", value),
                ("values", pa.list_(value)),
                ("slices", pa.list_(pa.binary())),
                ("nulls", pa.binary()),
            ]
        )

    def build(self, values: pa.Array, work: ColumnWork | None = None) -> dict[str, Any]:
        work = work or ColumnWork(values, self.domain)
        col = work.encoded
        minimum, distinct, codes = self._offset_codes(col)
        if codes is None:
            ranked = work.ranked
            distinct, codes = list_value(ranked.distinct), _rank_codes(ranked)
            top = len(ranked.distinct) - 1
        else:
            top = int(codes.max())
        return {
            "min": minimum,
            "values": distinct,
            "slices": self._slices(col, codes, max(top, 0).bit_length()),
            "nulls": to_bytes(bitmap_of(col.nulls)) if len(col.nulls) else None,
        }

    @staticmethod
    def _slices(col: Encoded, codes: np.ndarray, m: int) -> list[bytes]:
        """B_i = the non-null rows whose code has bit i == 0, serialized from a
        row mask per slice (bits by shifts of uint32 codes where they fit)."""
        if m <= 32:
            codes = codes.astype(np.uint32)
        rows = len(col.positions) + len(col.nulls)
        dense = len(col.nulls) == 0  # non-null rows are 0..n-1: codes are the mask
        out = []
        for i in range(m):
            zero = ((codes >> codes.dtype.type(i)) & 1) == 0
            if dense:
                mask = zero
            else:
                mask = np.zeros(rows, dtype=bool)
                mask[col.positions] = zero
            out.append(mask_bytes(mask))
        return out

    def _offset_codes(self, col: Encoded) -> tuple[Any, Any, np.ndarray | None]:
        """``(min, None, value - min)`` when offset codes pay off, else no codes."""
        keys = col.keys
        if self.domain not in INTEGRAL or keys is None or len(keys) == 0:
            return None, None, None
        low_at = int(np.argmin(keys))
        low = keys[low_at]
        span = int(keys.max()) - int(low)
        if span >= MAX_SPAN:
            return None, None, None
        if keys.dtype == np.uint64:  # every value >= low: no wrap-around
            codes = (keys - low).astype(np.int64)
        else:  # widen first: int8 [-98, 30] spans 128
            codes = keys.astype(np.int64) - np.int64(low)
        if span >= len(keys) and not _offsets_pay(codes, span, col.valid.type.byte_width):
            return None, None, None
        minimum = col.valid[low_at].as_py() if self.domain is Domain.DECIMAL else int(low)
        return minimum, None, codes

    def scale(self) -> int:
        return getattr(self.arrow_type, "scale", 0) if self.domain is Domain.DECIMAL else 0

    def codes(self, columns: PayloadColumns) -> Codes:
        slices = columns.lists("slices").lengths
        ranked = columns.lists("values")
        offset = columns.field("min").is_valid().to_numpy(zero_copy_only=False) & ~ranked.valid
        scale = self.scale()
        unscaled = _unscaled(columns, scale)
        searcher = Either(
            ~offset,
            SortedLists(ranked, self.domain),
            OffsetMinimums(unscaled, np.left_shift(1, slices), scale),
        )
        sizes = np.where(ranked.valid, ranked.lengths, np.left_shift(1, slices))
        return Codes(searcher, searcher, sizes, columns.known & (ranked.valid | offset))

    def rows(self, leaf: BoundComparison | BoundIn | BoundMatch, file: FileView) -> AbstractBitMap:
        assert not isinstance(leaf, BoundMatch)  # not answered (matches_patterns)
        values = file.values("values")
        codes: Searcher
        if values is not None:
            codes = SortedValues(values, self.domain)
            k = len(values)
        else:
            k = 1 << len(file.values("slices") or ())
            minimum = int(floor_ceil(file.scalar("min"), self.scale())[0])
            codes = OffsetCodes(minimum, k, self.scale())
        return self.rows_of_ranges(select_ranges(leaf, codes, codes, k), k, file)

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
        lists = columns.lists("slices")
        slices = dense.slices("slices", lists.starts, lists.lengths)
        nonnull = dense.nonnull()
        if slices is None or nonnull is None:
            return None
        files = SlicedFiles(slices, lists.lengths, nonnull, positions)
        return files.between(starts, ends, within)

    def dense_members(
        self,
        leaf: BoundIn,
        files: FileBatch,
        positions: np.ndarray,
        dense: DenseColumns,
        within: np.ndarray | None = None,
    ) -> np.ndarray | None:
        """A long IN list by each candidate row's code (:mod:`._dense_members`)."""
        if self.domain not in INTEGRAL:
            return None
        keys = integer_keys(leaf.values, self.scale())
        if keys is None:
            return None
        columns = payload_columns(files)
        values = columns.memo.get("member-values")
        if values is None:
            values = file_values(columns, _unscaled(columns, self.scale()))
            columns.memo["member-values"] = values if values is not None else False
        if not values:
            return None  # before decoding any slice
        lists = columns.lists("slices")
        slices = dense.slices("slices", lists.starts, lists.lengths)
        nonnull, full = dense.nonnull(), dense.full()
        if slices is None or nonnull is None or full is None:
            return None
        usable = self.file_codes(files).usable[positions]
        rows = nonnull[positions]
        if within is not None:
            rows &= within
        rows[~usable] = 0
        out = member_rows(slices, rows, positions, values, keys)
        out[~usable] = full[positions[~usable]]
        return out

    def rows_of_ranges(self, ranges: list[Range], k: int, file: FileView) -> AbstractBitMap:
        evaluate = RangeEval(file)

        def between(a: int, b: int) -> list[AbstractBitMap]:
            if b == a + 1:
                return [evaluate.equal(a)]
            if b == k:
                return [file.nonnull - evaluate.at_most(a - 1)]
            return [evaluate.at_most(b - 1) - evaluate.at_most(a - 1)]

        return cover(ranges, k, between, file, lambda a, b: 1)


def _offsets_pay(codes: np.ndarray, span: int, width: int) -> bool:
    """Whether offset codes ``0..span`` cost no more than rank codes: the extra
    slices (one bit of ``n`` rows each) against the values list rank codes store.

    The distinct count d decides, and offsets only pay more as d grows, so a
    lower bound often settles it: the occupied buckets of ``codes >> shift``
    (a bincount, where an exact count of 60k random keys took 8 ms)."""
    n = len(codes)

    def pays(distinct: int) -> bool:
        extra = span.bit_length() - (distinct - 1).bit_length()
        return extra * n / 8 <= distinct * width

    shift = 0 if span < 4 * n else span.bit_length() - (4 * n).bit_length() + 1  # < 4n buckets
    occupied = int(np.count_nonzero(np.bincount(codes >> shift)))
    if shift == 0 or pays(occupied):  # exact, or a lower bound that already pays
        return pays(occupied)
    ordered = np.sort(codes)
    return pays(1 + int(np.count_nonzero(ordered[1:] != ordered[:-1])))


def _unscaled(columns: PayloadColumns, scale: int) -> np.ndarray | list[int]:
    """Each file's ``min`` as an integer (decimals unscaled; 0 where none). Decimals
    that fit in 64 bits come straight from the Arrow buffer (one Python Fraction
    per file cost seconds at 100,000 files)."""
    field = columns.field("min")
    if pa.types.is_decimal(field.type):
        valid = np.asarray(field.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        keys = decimal_unscaled(pc.fill_null(field, pa.scalar(0, field.type)))
        if keys is not None:
            return np.asarray(np.where(valid, keys, 0), dtype=np.int64)
    elif pa.types.is_signed_integer(field.type):  # the integers themselves
        return np.asarray(pc.fill_null(field, 0).to_numpy(zero_copy_only=False), dtype=np.int64)
    return [int(floor_ceil(m, scale)[0]) if m is not None else 0 for m in columns.scalars("min")]


class RangeEval:
    """RangeEval-Opt over one file's slices (all m are decoded: every query needs them)."""

    def __init__(self, file: FileView) -> None:
        slices = file.values("slices")
        self.m = 0 if slices is None else len(slices)
        self.slices = file.bitmaps("slices", 0, self.m)
        self.nonnull = file.nonnull

    def at_most(self, c: int) -> AbstractBitMap:
        """The non-null rows with code <= c."""
        if c < 0:
            return BitMap()
        if c >= (1 << self.m) - 1:
            return self.nonnull
        result: BitMap | None = None  # None = every row (only 1-bits seen so far)
        for i, bit_slice in enumerate(self.slices):
            if (c >> i) & 1:
                if result is not None:
                    result |= bit_slice
            elif result is None:
                result = BitMap(bit_slice)
            else:
                result &= bit_slice
        assert result is not None  # c < 2**m - 1 has a 0 bit
        return result

    def equal(self, c: int) -> AbstractBitMap:
        """The non-null rows with code == c, in one pass: in every slice where c's
        bit is 0, in none where it is 1."""
        zeros = [s for i, s in enumerate(self.slices) if not (c >> i) & 1]
        ones = [s for i, s in enumerate(self.slices) if (c >> i) & 1]
        if c >= 1 << self.m:
            return BitMap()
        result = BitMap.intersection(*zeros) if zeros else BitMap(self.nonnull)
        return result - BitMap.union(*ones) if ones else result
