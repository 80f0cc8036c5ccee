"""Machinery shared by the row-level bitmap kinds (equality, range, bit-sliced).

Bitmaps are stored as Roaring *portable* serialization bytes (pyroaring
``BitMap.serialize``, cookie 12346/12347: readable from Java, Go, C); nothing is
pickled. Build: one stable sort groups a file's non-null rows by value
(:func:`rank_values`), then :func:`bucketize` makes one bitmap per value or per
equi-depth bucket. Prune: a searcher maps a literal to ``(lt, le)`` code counts,
:func:`select_ranges` turns a leaf into half-open ranges of codes, each kind
turns ranges into rows, and :func:`cover` picks the cheaper of "union of the
selected" and "non-null rows minus the others".
"""

from __future__ import annotations

import array
import bisect
import itertools
import math
from abc import abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any, Protocol, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyroaring import BitMap

from skipindex._types import Domain, normalise_floats, physical_type, to_physical
from skipindex.errors import IndexCorruptError, InvalidSpecError
from skipindex.expressions.nodes import (
    BoundComparison,
    BoundIn,
    BoundIsNull,
    BoundLeaf,
    BoundValue,
    Op,
)
from skipindex.indexes.base import FileBatch, IndexKind

Range = tuple[int, int]

# Domains whose sorted distinct values are searched with numpy.
_NUMERIC = frozenset({Domain.INT, Domain.DATE, Domain.TIMESTAMP, Domain.FLOAT, Domain.BOOLEAN})

assert array.array("I").itemsize == 4  # row positions are uint32


def bitmap_of(positions: np.ndarray) -> BitMap:
    """A bitmap from sorted row positions (the fastest pyroaring constructor)."""
    if len(positions) == 0:
        return BitMap()
    return BitMap(array.array("I", np.ascontiguousarray(positions, dtype=np.uint32).tobytes()))


def to_bytes(bitmap: BitMap) -> bytes:
    """Roaring portable serialization, run containers where they are smaller."""
    bitmap.run_optimize()
    return bitmap.serialize()


def from_bytes(data: bytes | None) -> BitMap:
    """A stored bitmap; IndexCorruptError when the bytes are not a Roaring bitmap."""
    if data is None:
        return BitMap()
    try:
        return BitMap.deserialize(data)
    except (ValueError, IndexError, OverflowError) as exc:
        raise IndexCorruptError(f"a stored Roaring bitmap does not decode: {exc}") from exc


def union(bitmaps: list[BitMap]) -> BitMap:
    """A new bitmap (never one of the inputs) holding the union."""
    return BitMap.union(*bitmaps) if bitmaps else BitMap()  # one input: a copy


@dataclass(frozen=True)
class Encoded:
    """A file's column split into null and non-null rows."""

    nulls: np.ndarray  # uint32 positions
    positions: np.ndarray  # uint32 positions of the non-null rows
    valid: pa.Array  # the non-null values, physical type, floats normalised
    keys: np.ndarray | None  # numeric sort keys of ``valid`` (None: strings, wide decimals)


def split_nulls(values: pa.Array | pa.ChunkedArray, domain: Domain) -> Encoded:
    values = to_physical(values)
    mask = np.asarray(values.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    positions = np.flatnonzero(mask).astype(np.uint32)
    nulls = np.flatnonzero(~mask).astype(np.uint32)
    valid = values.drop_null() if len(nulls) else values
    keys: np.ndarray | None = None
    if domain is Domain.FLOAT:
        keys = normalise_floats(np.asarray(valid.to_numpy(zero_copy_only=False)))
        valid = pa.array(keys, type=valid.type)
    elif domain in _NUMERIC:
        keys = np.asarray(valid.to_numpy(zero_copy_only=False))
    elif domain is Domain.DECIMAL:
        keys = decimal_unscaled(valid)
    return Encoded(nulls, positions, valid, keys)


def decimal_unscaled(valid: pa.Array) -> np.ndarray | None:
    """A null-free decimal array's unscaled integers as int64 (None: some do not fit)."""
    width = valid.type.byte_width
    words = np.frombuffer(valid.buffers()[1], dtype="<i8" if width >= 8 else "<i4")
    if width <= 8:
        return np.asarray(words[valid.offset : valid.offset + len(valid)], dtype=np.int64)
    per = width // 8
    rows = words[valid.offset * per : (valid.offset + len(valid)) * per].reshape(-1, per)
    low = rows[:, 0]
    fits = np.all(rows[:, 1:] == (low >> 63)[:, None])  # high words only sign-extend
    return np.ascontiguousarray(low) if fits else None


@dataclass(frozen=True)
class Ranked:
    """The non-null rows grouped by value: rows of distinct value j (in Spark
    order, NaN last) are ``order[starts[j]:starts[j + 1]]``, ascending."""

    distinct: pa.Array
    order: np.ndarray  # indices into the non-null rows, stably sorted by value
    starts: np.ndarray  # int64, one more than there are distinct values


def rank_values(col: Encoded) -> Ranked:
    """One stable sort of the non-null rows (by numeric key, or by the rank of
    their dictionary entry for strings, binary and wide decimals)."""
    keys = col.keys
    if keys is None:  # Arrow sorts the dictionary; argsort inverts that permutation
        encoded = pc.dictionary_encode(col.valid)
        rank = np.argsort(np.asarray(pc.sort_indices(encoded.dictionary).to_numpy()))
        keys = rank[np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)]
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    change = ordered[1:] != ordered[:-1]
    if ordered.dtype.kind == "f":  # NaN = NaN
        change &= ~(np.isnan(ordered[1:]) & np.isnan(ordered[:-1]))
    inner = np.flatnonzero(change) + 1
    starts = np.concatenate(([0], inner, [len(order)]) if len(order) else ([0],))
    starts = starts.astype(np.int64)
    return Ranked(col.valid.take(pa.array(order[starts[:-1]])), order, starts)


def group_distinct(counts: np.ndarray, buckets: int) -> np.ndarray:
    """Equi-depth grouping of sorted distinct values into at most ``buckets``
    contiguous groups; returns the group id of each distinct value, 0..G-1.

    A heavy value (at least 1/buckets of the rows) gets a group of its own, so
    ``=`` / ``!=`` on it stay exact; the others share ``buckets - heavy`` groups.
    """
    total = max(int(counts.sum()), 1)
    heavy = counts * buckets >= total
    share = max(buckets - int(heavy.sum()), 1)
    before = np.cumsum(counts) - counts
    raw = (before * share) // total
    breaks = (np.diff(raw) != 0) | heavy[1:] | heavy[:-1]
    return np.concatenate(([0], np.cumsum(breaks))).astype(np.int64)


@dataclass(frozen=True)
class Buckets:
    """Consecutive distinct values grouped into buckets, one bitmap each."""

    lows: pa.Array | None  # smallest value per bucket; None: one value per bucket
    highs: pa.Array  # largest value per bucket
    bitmaps: list[BitMap]


def bucketize(col: Encoded, max_buckets: int) -> Buckets:
    """One bucket per distinct value when there are at most ``max_buckets``,
    else equi-depth buckets (see :func:`group_distinct`)."""
    ranked = rank_values(col)
    grouped = col.positions[ranked.order]  # ascending within each value
    size = len(ranked.distinct)
    if size <= max_buckets:
        offsets = ranked.starts
        bitmaps = [bitmap_of(grouped[a:b]) for a, b in itertools.pairwise(offsets)]
        return Buckets(None, ranked.distinct, bitmaps)
    group = group_distinct(np.diff(ranked.starts), max_buckets)
    edges = np.append(np.flatnonzero(np.diff(group, prepend=-1)), size)
    offsets = ranked.starts[edges]  # a bucket spans several values: re-sort its positions
    bitmaps = [bitmap_of(np.sort(grouped[a:b])) for a, b in itertools.pairwise(offsets)]
    lows, highs = (ranked.distinct.take(pa.array(ix)) for ix in (edges[:-1], edges[1:] - 1))
    return Buckets(lows, highs, bitmaps)


def list_value(values: pa.Array) -> Any:
    """A value list as the builder's ``pa.array(payloads, type=...)`` takes it."""
    if pa.types.is_integer(values.type) or pa.types.is_floating(values.type):
        return values.to_numpy(zero_copy_only=False)
    return values.to_pylist()


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
        if domain in _NUMERIC:
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
    rows: Callable[[int, int], list[BitMap]],
    file: FilePayload,
    cost: Callable[[int, int], int],
) -> BitMap:
    """Rows of the selected buckets: the union of ``rows(range)``, or the
    non-null rows minus the other buckets when that decodes fewer bitmaps."""
    if not ranges:
        return BitMap()
    others = complement(ranges, k)
    if not others:
        return file.nonnull.copy()
    if sum(cost(a, b) for a, b in others) + 1 < sum(cost(a, b) for a, b in ranges):
        return file.nonnull - union([bm for a, b in others for bm in rows(a, b)])
    return union([bm for a, b in ranges for bm in rows(a, b)])


class FilePayload:
    """One file's payload: lazy field access and lazily decoded bitmaps."""

    def __init__(self, columns: dict[str, pa.Array], index: int, num_rows: int) -> None:
        self.n = num_rows
        self._columns = columns
        self._index = index
        self._decoded: dict[tuple[str, int], BitMap] = {}

    def scalar(self, name: str) -> Any:
        return self._columns[name][self._index].as_py()

    def values(self, name: str) -> pa.Array | None:
        """A list field's items (None when the list is null)."""
        return cast("pa.Array | None", self._columns[name][self._index].values)

    def bitmap(self, name: str, j: int) -> BitMap:
        """Item ``j`` of a list<binary> field, decoded once."""
        decoded = self._decoded.get((name, j))
        return decoded if decoded is not None else self.bitmaps(name, j, j + 1)[0]

    def bitmaps(self, name: str, a: int, b: int) -> list[BitMap]:
        """Items ``a..b-1`` of a list<binary> field, decoded once (in bulk)."""
        if any((name, j) not in self._decoded for j in range(a, b)):
            items = self.values(name)
            assert items is not None
            for j, data in enumerate(items.slice(a, b - a).to_pylist(), start=a):
                self._decoded.setdefault((name, j), from_bytes(data))
        return [self._decoded[name, j] for j in range(a, b)]

    @cached_property
    def nulls(self) -> BitMap:
        return from_bytes(self.scalar("nulls"))

    @cached_property
    def nonnull(self) -> BitMap:
        return BitMap(range(self.n)) - self.nulls


def check_int_param(kind: str, name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidSpecError(f"{kind}: '{name}' must be an integer >= {minimum}, got {value!r}")
    return value


class BitmapKind(IndexKind):
    """Base of the row-level bitmap kinds: null handling and payload access."""

    row_level = True

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
