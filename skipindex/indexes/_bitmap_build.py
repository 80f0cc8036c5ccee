"""Build side of the bucketed bitmap kinds: one stable sort groups a file's non-null
rows by value (:func:`rank_values`), then :func:`bucketize` makes one bitmap per
value, or per equi-depth bucket when there are more values than buckets."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyroaring import BitMap

from skipindex._types import Domain, normalise_floats, to_physical
from skipindex.indexes._roaring import bitmap_of

# Domains whose values sort and search as numpy arrays.
NUMERIC_DOMAINS = frozenset(
    {Domain.INT, Domain.DATE, Domain.TIMESTAMP, Domain.FLOAT, Domain.BOOLEAN}
)


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
    elif domain in NUMERIC_DOMAINS:
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
    order = stable_order(keys)
    ordered = keys[order]
    change = ordered[1:] != ordered[:-1]
    if ordered.dtype.kind == "f":  # NaN = NaN
        change &= ~(np.isnan(ordered[1:]) & np.isnan(ordered[:-1]))
    inner = np.flatnonzero(change) + 1
    starts = np.concatenate(([0], inner, [len(order)]) if len(order) else ([0],))
    starts = starts.astype(np.int64)
    return Ranked(col.valid.take(pa.array(order[starts[:-1]])), order, starts)


def stable_order(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")``, faster for integer keys of a narrow
    span: NumPy radix-sorts 16-bit keys, so keys spanning fewer than 65,536
    values (dates, quantities, ranks of a dictionary) sort five times faster,
    and keys spanning fewer than 2**32 (keys of a file: 60k random l_partkey
    values) in two stable passes, low half then high half, 2.6 times faster."""
    if keys.dtype.kind not in "iu" or not len(keys):
        return np.argsort(keys, kind="stable")
    low = keys.min()
    span = int(keys.max()) - int(low)
    if span >= 1 << 32:
        return np.argsort(keys, kind="stable")
    wide = keys.astype(np.int64, copy=False) if keys.dtype.kind == "i" else keys
    offsets = (wide - low).astype(np.uint32)  # widened: int8 [-98, 30] spans 128
    if span < 1 << 16:
        return np.argsort(offsets.astype(np.uint16), kind="stable")
    order = np.argsort(offsets.astype(np.uint16), kind="stable")  # low 16 bits
    high = (offsets >> np.uint32(16)).astype(np.uint16)[order]
    return order[np.argsort(high, kind="stable")]


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


def bucketize(col: Encoded, ranked: Ranked, max_buckets: int) -> Buckets:
    """One bucket per distinct value when there are at most ``max_buckets``,
    else equi-depth buckets (see :func:`group_distinct`); ``ranked`` is
    ``rank_values(col)``."""
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
