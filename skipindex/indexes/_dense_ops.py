"""Unions of stored bitmaps over per-file ranges, as words (see :mod:`._dense`)
for many files at once: one row of words per file. (Bit slices have their own
module, :mod:`._dense_sliced`.)"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from skipindex.indexes._dense import MAX_WORDS
from skipindex.indexes._dense_decode import places

__all__ = ["union_of_items"]


def union_of_items(
    items: Callable[[np.ndarray], np.ndarray | None],
    width: int,
    first: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
) -> np.ndarray | None:
    """Per file f, the union of rows ``first[f] + j`` of the items ``items(at)``
    gives for j in each ``[starts[r, f], ends[r, f])`` (rows of ``width`` words);
    None when the rows to gather are too many or cannot be decoded."""
    counts = np.maximum(ends - starts, 0).T  # (files, ranges): a file's items adjacent
    begins = (first[None, :] + starts).T
    flat = counts.ravel()
    total = int(flat.sum())
    if total * width > MAX_WORDS:
        return None
    rows = places(begins.ravel(), flat, 1)
    decoded = items(rows)
    if decoded is None:
        return None
    out = np.zeros((counts.shape[0], width), dtype=np.uint64)
    per_file = counts.sum(axis=1)
    some = per_file > 0
    if total == int(np.count_nonzero(some)):  # one item per file: a gather
        out[some] = decoded[rows]
    elif total:
        group_starts = (np.cumsum(per_file) - per_file)[some]
        out[some] = np.bitwise_or.reduceat(decoded[rows], group_starts, axis=0)
    return out
