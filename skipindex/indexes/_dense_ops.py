"""Bitmap arithmetic on words (see :mod:`._dense`) for many files at once: the
bit-sliced RangeEval-Opt with a different code per file, and unions of stored
bitmaps over per-file ranges. Each returns one row of words per file."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from skipindex.indexes._dense import ALL_SET, MAX_WORDS
from skipindex.indexes._dense_decode import ranks

__all__ = ["SlicedFiles", "union_of_items"]


class SlicedFiles:
    """Bit-sliced files: ``slices[i, f]`` is file f's slice i, all set where the
    file has fewer than i + 1 slices (its codes have a 0 bit there, and ``&``
    with all-set changes nothing). ``m[f]`` is file f's slice count."""

    def __init__(
        self, slices: np.ndarray, positions: np.ndarray, m: np.ndarray, nonnull: np.ndarray
    ) -> None:
        self._slices = slices
        # Every file of the batch: slice i is a view, else a gather per slice.
        self._every = len(positions) == slices.shape[1] and bool(
            np.all(positions == np.arange(len(positions)))
        )
        self._positions = positions
        self.m = m
        self.nonnull = nonnull

    def _slice(self, i: int) -> np.ndarray:
        found: np.ndarray = self._slices[i]
        return found if self._every else found[self._positions]

    def at_most(self, code: np.ndarray) -> np.ndarray:
        """Per file, its non-null rows with code <= code[f] (RangeEval-Opt)."""
        result = np.full(self.nonnull.shape, ALL_SET)  # only 1 bits so far: every row
        for i in range(int(self.m.max(initial=0))):
            bit_slice = self._slice(i)
            one = ((code >> i) & 1).astype(bool)
            if one.all():
                result |= bit_slice
            elif not one.any():
                result &= bit_slice
            else:
                result = np.where(one[:, None], result | bit_slice, result & bit_slice)
        result &= self.nonnull
        result[code < 0] = 0
        top = code >= (np.int64(1) << self.m) - 1
        result[top] = self.nonnull[top]
        return result

    def equal(self, code: np.ndarray) -> np.ndarray:
        """Per file, its non-null rows with code == code[f]: in every slice where
        the code's bit is 0, in none where it is 1."""
        result = self.nonnull.copy()
        ones: np.ndarray | None = None  # the union of the slices it must be in none of
        for i in range(int(self.m.max(initial=0))):
            bit_slice = self._slice(i)
            one = ((code >> i) & 1).astype(bool)
            if not one.any():
                result &= bit_slice
            elif one.all():
                ones = (
                    bit_slice.copy() if ones is None else np.bitwise_or(ones, bit_slice, out=ones)
                )
            else:
                result &= bit_slice ^ np.where(one, ALL_SET, np.uint64(0))[:, None]
        if ones is not None:
            result &= np.invert(ones, out=ones)
        result[(code < 0) | (code >= np.int64(1) << self.m)] = 0
        return result

    def between(self, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """Per file, rows with a code in any ``[starts[r], ends[r])``."""
        out: np.ndarray | None = None
        for a, b in zip(starts, ends, strict=True):
            live = b > a
            if not live.any():
                continue
            if np.all(b[live] - a[live] == 1):
                part = self.equal(a)
            else:
                part = self.at_most(b - 1)
                if np.any(a > 0):
                    part &= ~self.at_most(a - 1)
            part[~live] = 0
            out = part if out is None else np.bitwise_or(out, part, out=out)
        return np.zeros_like(self.nonnull) if out is None else out


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
    rows = np.repeat(begins.ravel(), flat) + ranks(flat)
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
