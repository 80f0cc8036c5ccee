"""Ranges of codes on bit-sliced files, many files at once, as rows of words
(see :mod:`._dense`): each file its own range of codes.

A file's rows with a code in ``[lo, hi]`` share with ``lo`` and ``hi`` every bit
above the highest bit where those two differ, and order decides only on the
bits below. So the high slices are ANDed in from the top (an equality), which
leaves few rows for a narrow range, and once few words are left the rest of
the work gathers only those; the low bits then compare both ends in one
bottom-up pass (RangeEval-Opt, O'Neil & Quass). At 1,000 files of 60k rows,
``l_partkey BETWEEN 1000 AND 1020`` on 21 slices took three whole-batch
RangeEval passes of 17 ms each before, as two one-sided ranges.
"""

from __future__ import annotations

import numpy as np

from skipindex.indexes._dense import ALL_SET

__all__ = ["BLOCK_WORDS", "SlicedFiles"]

# Words per work array (8 MB): files beyond go a block at a time, which bounds
# the temporaries. Blocks small enough for the CPU's cache (256 KB) cost more in
# numpy calls than they saved: that range took 26 ms, against 14 ms at 8 MB.
BLOCK_WORDS = 1 << 20
# Gather only the non-zero words once at most this share of them is left, and
# at least this many slices are still to read: finding those words and putting
# them back at the end costs about three passes, and a gathered word about four
# streamed ones, so at 1/8 of the words a slice costs half.
_SPARSE = 0.125
_MIN_SLICES_LEFT = 6
_SAMPLE_STEP = 64
_NONE = np.uint64(0)


class SlicedFiles:
    """Bit-sliced files of a batch: ``slices[i, f]`` holds file f's non-null rows
    whose code has a 0 at bit i, all set where the file has fewer than i + 1
    slices (its codes have a 0 bit there); ``m[f]``: file f's slice count. Ranges
    are asked of the files at ``positions`` (default: all)."""

    def __init__(
        self,
        slices: np.ndarray,
        m: np.ndarray,
        nonnull: np.ndarray,
        positions: np.ndarray | None = None,
        block_words: int = BLOCK_WORDS,
    ) -> None:
        self._slices = slices
        self._m = m
        self._nonnull = nonnull
        everything = np.arange(len(nonnull))
        self._positions = everything if positions is None else positions
        self._block_files = max(1, block_words // max(nonnull.shape[1], 1))

    def between(
        self, starts: np.ndarray, ends: np.ndarray, within: np.ndarray | None = None
    ) -> np.ndarray:
        """Per file at ``positions``, its non-null rows with a code in any
        ``[starts[r], ends[r])``; only those in ``within`` (rows of words, one per
        file at ``positions``), if given."""
        at = self._positions
        run = len(at) > 0 and bool(np.all(np.diff(at) == 1))
        if run:  # every slice read as a view
            files = slice(int(at[0]), int(at[-1]) + 1)
            return self._files(at, self._m[files], self._nonnull[files]).between(
                starts, ends, within
            )
        if 2 * len(at) < len(self._nonnull):  # a few files: gathered per slice
            return self._files(at, self._m[at], self._nonnull[at]).between(starts, ends, within)
        # Most files of the batch: the whole batch (as views) costs less than a
        # gather per slice; the others get empty ranges.
        batch = len(self._nonnull)
        wide_starts = np.ones((len(starts), batch), dtype=np.int64)
        wide_ends = np.zeros((len(starts), batch), dtype=np.int64)
        wide_starts[:, at], wide_ends[:, at] = starts, ends
        wide_within = None
        if within is not None:
            wide_within = np.zeros_like(self._nonnull)
            wide_within[at] = within
        everything = np.arange(batch)
        found = self._files(everything, self._m, self._nonnull)
        return found.between(wide_starts, wide_ends, wide_within)[at]

    def _files(self, at: np.ndarray, m: np.ndarray, nonnull: np.ndarray) -> _Files:
        return _Files(self._slices, at, m, nonnull, self._block_files)


class _Files:
    """Files of a batch (``positions``, with their ``m`` and ``nonnull``), a
    block of them at a time."""

    def __init__(
        self,
        slices: np.ndarray,
        positions: np.ndarray,
        m: np.ndarray,
        nonnull: np.ndarray,
        block_files: int,
    ) -> None:
        self._slices = slices
        self._positions = positions
        self.m = m
        self.nonnull = nonnull
        self._block_files = block_files

    def between(
        self, starts: np.ndarray, ends: np.ndarray, within: np.ndarray | None = None
    ) -> np.ndarray:
        """Per file, its non-null rows with a code in any ``[starts[r], ends[r])``;
        only those in ``within`` (rows of words, one per file), if given."""
        rows = self.nonnull if within is None else self.nonnull & within
        files = len(self.nonnull)
        if self._block_files >= files:  # ``rows`` made here is the one range's to narrow
            spare = within is not None and len(starts) == 1
            return self._block_rows(slice(0, files), starts, ends, rows, spare)
        out = np.empty_like(self.nonnull)
        for first in range(0, files, self._block_files):
            block = slice(first, first + self._block_files)
            out[block] = self._block_rows(block, starts[:, block], ends[:, block], rows[block])
        return out

    def _block_rows(
        self,
        block: slice,
        starts: np.ndarray,
        ends: np.ndarray,
        rows: np.ndarray,
        spare: bool = False,
    ) -> np.ndarray:
        top = (np.int64(1) << self.m[block]) - 1
        found: np.ndarray | None = None
        for a, b in zip(starts, ends, strict=True):
            lo, hi = np.maximum(a, 0), np.minimum(b - 1, top)
            if np.any(lo <= hi):
                part = _Block(self, block, lo, hi, rows if spare else rows.copy()).rows()
                found = part if found is None else np.bitwise_or(found, part, out=found)
        return np.zeros_like(rows) if found is None else found


class _Block:
    """One block of files and one range per file, narrowed word by word."""

    def __init__(
        self, files: _Files, block: slice, lo: np.ndarray, hi: np.ndarray, rows: np.ndarray
    ) -> None:
        self._files = files
        self._block = block
        self._rows = files._positions[block]
        # Consecutive files (the usual case) are read as a view, not gathered.
        run = len(self._rows) > 0 and bool(np.all(np.diff(self._rows) == 1))
        self._run = slice(int(self._rows[0]), int(self._rows[-1]) + 1) if run else None
        self._width = files.nonnull.shape[1]
        self._live = lo <= hi
        self._lo, self._hi = lo, hi
        # Bits at or above ``low_bits`` are equal in lo and hi: equality decides there.
        self._low_bits = np.where(self._live, _bit_length(lo ^ hi), 0)
        self._at: np.ndarray | None = None  # flat word positions kept, None: all
        self._file_of: np.ndarray | None = None  # the block file of each kept word
        self._gather: np.ndarray | None = None  # where those words are in a slice
        self._spare: np.ndarray | None = None
        self._state = rows  # the block's own: narrowed in place
        if not self._live.all():
            self._state[~self._live] = 0
        self._compact(int(files.m[block].max(initial=0)) + int(self._low_bits.max(initial=0)))

    def rows(self) -> np.ndarray:
        """The block's rows in range, as its rows of words."""
        self._equal_high_bits()
        if self._low_bits.any() and self._state.any():  # not an equality everywhere
            self._order_low_bits()
        if self._at is None:
            return self._state
        out = np.zeros((len(self._rows), self._width), dtype=np.uint64)
        out.reshape(-1)[self._at] = self._state
        return out

    def _equal_high_bits(self) -> None:
        depth = int(self._files.m[self._block].max(initial=0))
        for i in reversed(range(depth)):
            deciding = self._live & (i >= self._low_bits)
            if not deciding.any():
                continue
            one = ((self._lo >> i) & 1).astype(bool)
            bit_slice = self._slice(i)
            # Files out of range have no rows left: any step suits them.
            uniform = bool(np.all(deciding | ~self._live))
            if uniform and not (one & self._live).any():  # the usual case for the top bits
                self._state &= bit_slice
            elif uniform and (one | ~self._live).all():
                self._state &= np.invert(bit_slice, out=self._scratch())
            else:
                term = np.bitwise_xor(bit_slice, self._words(one), out=self._scratch())
                self._state &= np.bitwise_or(term, self._words(~deciding), out=term)
            self._compact(i + int(self._low_bits.max(initial=0)))

    def _order_low_bits(self) -> None:
        """Keep the rows whose low bits lie between lo's and hi's: at most hi's
        and not at most one below lo's, both in one pass."""
        mask = (np.int64(1) << self._low_bits) - 1
        upper = self._hi & mask
        lower = (self._lo & mask) - 1  # -1: no row lies below lo's low bits
        at_most_upper = np.full(self._state.shape, ALL_SET)
        at_most_lower = np.full(self._state.shape, ALL_SET)
        scratch = self._scratch()
        for i in range(int(self._low_bits.max(initial=0))):
            ordering = self._live & (i < self._low_bits)
            # A file whose bits are all decided reads an all-set slice with a 0 bit.
            bit_slice = self._slice(i) | self._words(~ordering)
            for result, code in ((at_most_upper, upper), (at_most_lower, lower)):
                _step(result, bit_slice, ordering & ((code >> i) & 1).astype(bool), self, scratch)
        at_most_lower &= self._words(lower >= 0)
        self._state &= at_most_upper
        self._state &= np.invert(at_most_lower, out=at_most_lower)

    def _words(self, per_file: np.ndarray) -> np.ndarray:
        """Per-file flags as words (all set / zero), shaped to ``_state``."""
        words = np.where(per_file, ALL_SET, _NONE)
        return words[:, None] if self._file_of is None else words[self._file_of]

    def _slice(self, i: int) -> np.ndarray:
        """Slice i at the words still kept."""
        slices = self._files._slices[i]
        found: np.ndarray
        if self._at is None:
            found = slices[self._run if self._run is not None else self._rows]
        else:
            found = slices.reshape(-1)[self._gather]
        return found

    def _scratch(self) -> np.ndarray:
        """A work array shaped like the state (made once per shape: a fresh
        7.5 MB array costs its page faults, about a bitwise pass)."""
        if self._spare is None or self._spare.shape != self._state.shape:
            self._spare = np.empty_like(self._state)
        return self._spare

    def _compact(self, slices_left: int) -> None:
        """Keep only the non-zero words once few are left and enough slices are
        still to read (judged from a sample of one word in 64: counting them
        all cost as much as a step)."""
        if slices_left < _MIN_SLICES_LEFT or (self._at is not None and len(self._state) < 4096):
            return
        flat = self._state.reshape(-1)
        sample = flat[::_SAMPLE_STEP] if len(flat) >= 64 * _SAMPLE_STEP else flat
        if np.count_nonzero(sample) > _SPARSE * len(sample):
            return
        kept = np.flatnonzero(flat)
        self._state = flat[kept]
        if self._at is None:
            self._at = kept
        else:
            self._at = self._at[kept]
        self._file_of = self._at // self._width
        self._gather = self._rows[self._file_of] * self._width + self._at % self._width


def _step(
    result: np.ndarray, bit_slice: np.ndarray, one: np.ndarray, block: _Block, scratch: np.ndarray
) -> None:
    """One RangeEval-Opt step, in place: ``result | slice`` for the files whose
    code has a 1 here, ``result & slice`` for the others."""
    if one.all():
        result |= bit_slice
    elif not one.any():
        result &= bit_slice
    else:  # (result & (slice | M)) | (slice & M), M all set where the bit is 1
        mask = block._words(one)
        result &= np.bitwise_or(bit_slice, mask, out=scratch)
        result |= np.bitwise_and(bit_slice, mask, out=scratch)


def _bit_length(values: np.ndarray) -> np.ndarray:
    """``int.bit_length`` of each non-negative int64."""
    length = np.zeros(values.shape, dtype=np.int64)
    rest = values.copy()
    for shift in (32, 16, 8, 4, 2, 1):
        big = rest >= (np.int64(1) << shift)
        length += shift * big
        rest = np.where(big, rest >> shift, rest)
    return length + (rest > 0)
