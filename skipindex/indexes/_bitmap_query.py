"""Query side of the bitmap kinds: a searcher maps a literal to ``(lt, le)`` code
counts, :func:`select_ranges` turns a leaf into half-open ranges of codes, and
:func:`cover` picks the cheaper of "union of the selected" and "non-null rows
minus the others"."""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable, Iterable
from fractions import Fraction
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
from pyroaring import AbstractBitMap, BitMap

from skipindex._types import Domain
from skipindex.expressions.nodes import (
    BoundComparison,
    BoundIn,
    BoundValue,
    Op,
)
from skipindex.indexes._bitmap_build import NUMERIC_DOMAINS
from skipindex.indexes._payloads import FileView
from skipindex.indexes._roaring import union

Range = tuple[int, int]


class Searcher(Protocol):
    """How many codes sort strictly below (``lt``) / at or below (``le``) a literal."""

    def lt(self, value: BoundValue) -> int: ...
    def le(self, value: BoundValue) -> int: ...


def floor_ceil(value: Any, scale: int = 0) -> tuple[float, float]:
    """Floor and ceiling of ``value * 10**scale`` (ints; NaN counts as +inf)."""
    if isinstance(value, int) and scale == 0:
        return value, value
    if isinstance(value, float) and not math.isfinite(value):
        edge = -math.inf if value == -math.inf else math.inf
        return edge, edge
    exact = Fraction(value) * 10**scale
    return math.floor(exact), math.ceil(exact)


class SortedValues:
    """Searches a file's sorted distinct values (an Arrow array) with literals."""

    def __init__(self, values: pa.Array, domain: Domain) -> None:
        self.size = len(values)
        self._domain = domain
        self._values = values
        self._np: np.ndarray | None = None
        if domain in NUMERIC_DOMAINS:
            raw = np.asarray(values.to_numpy(zero_copy_only=False))
            if domain is Domain.FLOAT:
                raw = raw.astype(np.float64)  # float32 columns compare in double
            elif domain is Domain.BOOLEAN:
                raw = raw.astype(np.int8)
            self._np = raw

    def lt(self, value: BoundValue) -> int:
        return self._search(value, right=False)

    def le(self, value: BoundValue) -> int:
        return self._search(value, right=True)

    def _search(self, value: BoundValue, right: bool) -> int:
        arr = self._np
        if arr is None:  # decimals, strings, binary: O(log n) scalars, no full decode
            find = bisect.bisect_right if right else bisect.bisect_left
            return find(self._values, value, key=lambda item: item.as_py())
        side: Any = "right" if right else "left"
        if self._domain is Domain.FLOAT:
            return int(np.searchsorted(arr, float(value), side=side))
        if self.size == 0:
            return 0
        low, high = floor_ceil(int(value) if isinstance(value, bool) else value)
        probe = low if right else high
        if not int(arr[0]) <= probe <= int(arr[-1]):  # also keeps probe within arr's dtype
            return 0 if probe < int(arr[0]) else self.size
        return int(np.searchsorted(arr, np.array(int(probe), dtype=arr.dtype), side=side))


def merge(ranges: Iterable[Range]) -> list[Range]:
    """Sorted, non-empty, non-touching ranges."""
    out: list[Range] = []
    for a, b in sorted(r for r in ranges if r[0] < r[1]):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def complement(ranges: list[Range], k: int) -> list[Range]:
    """The gaps of sorted disjoint ``ranges`` within ``[0, k)``."""
    edges = [0, *itertools.chain.from_iterable(ranges), k]
    return [(a, b) for a, b in zip(edges[::2], edges[1::2], strict=True) if a < b]


def select_ranges(
    leaf: BoundComparison | BoundIn, lows: Searcher, highs: Searcher, k: int
) -> list[Range]:
    """The buckets that may hold rows satisfying ``leaf``. Bucket j holds values in
    ``[lows_j, highs_j]`` (both increasing); exact when every bucket holds one value
    (pass one searcher twice), else a superset where ``!=`` / NOT IN exclude only
    buckets holding just the excluded value."""

    def equal(v: BoundValue) -> Range:
        return highs.lt(v), lows.le(v)

    def single(v: BoundValue) -> Range:
        a, b = equal(v)
        if b != a + 1 or (lows is not highs and (lows.lt(v) != a or highs.le(v) != b)):
            return (0, 0)
        return (a, b)

    if isinstance(leaf, BoundIn):
        if leaf.negated:
            return complement(merge(single(v) for v in leaf.values), k)
        return merge(equal(v) for v in leaf.values)
    v, op = leaf.value, leaf.op
    if op is Op.NE:
        return complement(merge([single(v)]), k)
    if op is Op.EQ:
        return merge([equal(v)])
    if op in (Op.LT, Op.LE):
        return merge([(0, lows.lt(v) if op is Op.LT else lows.le(v))])
    return merge([(highs.le(v) if op is Op.GT else highs.lt(v), k)])


def cover(
    ranges: list[Range],
    k: int,
    rows: Callable[[int, int], list[AbstractBitMap]],
    file: FileView,
    cost: Callable[[int, int], int],
) -> AbstractBitMap:
    """Rows of the selected buckets: the union of ``rows(range)``, or the
    non-null rows minus the other buckets when that decodes fewer bitmaps."""
    if not ranges:
        return BitMap()
    others = complement(ranges, k)
    if not others:
        return file.nonnull
    if sum(cost(a, b) for a, b in others) + 1 < sum(cost(a, b) for a, b in ranges):
        return file.nonnull - union([bm for a, b in others for bm in rows(a, b)])
    selected = [bm for a, b in ranges for bm in rows(a, b)]
    # Stored bitmaps are frozen and results are never changed in place: one
    # bitmap can be returned as it is.
    return selected[0] if len(selected) == 1 else union(selected)
