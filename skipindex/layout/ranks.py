"""Per-column ranks from sampled range boundaries (the first step of every curve).

A curve is only as good as the numbers it interleaves. Raw bytes make a
poor curve input: a shared 20-character URL prefix leaves the first bytes
identical, and a column where 90 % of rows hold one value wastes the whole
range. So, as Hudi's sample-based Z-order and Delta's ``range_partition_id``
do, each column's values are first mapped to the index of the sampled
boundary interval they fall in. The ranks are dense and start at 1, whatever
the type, skew or prefix.

* Boundaries are the values at evenly spaced positions of the sorted sample,
  duplicates dropped. Spark's ``DataFrame.sample`` draws every row with the same
  probability, so every sampled row carries the same weight, and equal-count
  positions are the equal-weight cut points Hudi computes.
* Rank 0 is NULL. Spark sorts NULL first in ascending order.
* Ranks 1..k are the intervals ``(-inf, b1)``, ``[b1, b2)`` ... ``[b(k-1), +inf)``,
  with ``b0`` the sample's minimum.
* Rank k + 1 is NaN, which Spark sorts above every other value. -0.0 equals 0.0.
* Strings compare as UTF-8 bytes, as Spark's default collation does. Decimals,
  dates and timestamps compare as values.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skipindex._distinct import distinct

__all__ = ["NULL_RANK", "boundaries", "rank_count", "ranks"]

NULL_RANK = 0


def _comparable(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """One array whose order is Spark's order. Dictionaries become their values,
    and booleans become 0/1 (pyarrow sorts them, but numpy's searchsorted is
    faster on integers)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    if pa.types.is_boolean(values.type):
        values = values.cast(pa.int8())
    return values


def _is_nan(values: pa.Array) -> np.ndarray[Any, Any]:
    if pa.types.is_floating(values.type):
        return np.asarray(pc.fill_null(pc.is_nan(values), False), dtype=bool)
    return np.zeros(len(values), dtype=bool)


def boundaries(sample: pa.Array | pa.ChunkedArray, count: int) -> pa.Array:
    """At most ``count`` distinct boundaries, sorted, from ``sample``: the values at
    positions ``i * n / count`` of the sorted non-null, non-NaN sample."""
    if count < 1:
        raise ValueError(f"boundaries: count must be at least 1, not {count}")
    values = _comparable(sample)
    values = values.filter(pc.invert(pa.array(_is_nan(values))))
    values = values.drop_null()
    if len(values) == 0:
        return values
    if pa.types.is_floating(values.type):
        values = pc.add(values, pa.scalar(0.0, values.type))  # -0.0 + 0.0 is 0.0
    ordered = values.take(pc.sort_indices(values))
    picks = (np.arange(count, dtype=np.int64) * len(ordered)) // count
    chosen = ordered.take(pa.array(distinct(picks)))
    return pc.unique(chosen)  # sorted input, so the first of each run: still sorted


def rank_count(bounds: pa.Array) -> int:
    """How many ranks :func:`ranks` can return for these boundaries (NULL and NaN included)."""
    return len(bounds) + 2


def ranks(values: pa.Array | pa.ChunkedArray, bounds: pa.Array) -> np.ndarray[Any, Any]:
    """The rank (``uint32``) of every value: 0 for NULL, 1..k for the boundary
    intervals, k + 1 for NaN."""
    column = _comparable(values)
    nan = _is_nan(column)
    null = np.asarray(column.is_null(), dtype=bool)
    upper = len(bounds) + 1
    if len(bounds) <= 1:  # one interval (or an all-NULL/NaN sample): all in interval 1
        out = np.ones(len(column), dtype=np.uint32)
    elif _numpy_comparable(column.type):
        out = _ranks_numeric(column, bounds)
    else:
        out = _ranks_sorted(column, bounds)
    out[nan] = upper
    out[null] = NULL_RANK
    return out


def _numpy_comparable(arrow_type: pa.DataType) -> bool:
    return bool(
        pa.types.is_integer(arrow_type)
        or pa.types.is_floating(arrow_type)
        or pa.types.is_temporal(arrow_type)
    )


def _ranks_numeric(column: pa.Array, bounds: pa.Array) -> np.ndarray[Any, Any]:
    def plain(array: pa.Array) -> np.ndarray[Any, Any]:
        if pa.types.is_temporal(array.type):  # same width integers, same order
            array = array.view(pa.int32() if array.type.bit_width == 32 else pa.int64())
        return np.asarray(array.fill_null(0).to_numpy(zero_copy_only=False))

    data = plain(column)
    cuts = plain(bounds.cast(column.type))[1:]
    out: np.ndarray[Any, Any] = np.searchsorted(cuts, data, side="right") + 1
    return out.astype(np.uint32)


def _ranks_sorted(column: pa.Array, bounds: pa.Array) -> np.ndarray[Any, Any]:
    """Strings, binary and decimals: sort the cuts with the values (pyarrow's sort
    is stable and compares strings as bytes) and count the cuts at or before each
    value."""
    cuts = bounds.slice(1).cast(column.type)
    filled = column.fill_null(cuts[0]) if column.null_count else column
    combined = pa.concat_arrays([cuts, filled])
    order = np.asarray(pc.sort_indices(combined), dtype=np.int64)
    is_cut = order < len(cuts)
    cuts_so_far = np.cumsum(is_cut)
    positions = order[~is_cut] - len(cuts)
    out = np.empty(len(column), dtype=np.uint32)
    out[positions] = cuts_so_far[~is_cut] + 1
    return out
