"""Row sets of many files as one 2-D array of bits, for the row-level pass.

Row ``r`` of file ``i`` is bit ``r % 64`` of word ``[i, r // 64]``; every file
has the words of the batch's largest file, padding bits stay zero. AND, OR and
"any row left?" then cost one numpy operation for all files instead of a
pyroaring call per file: at 1,000 files of 60k rows that Python loop, not the
bitmap arithmetic, was most of a warm prune.

Stored Roaring bitmaps are decoded straight into words from their portable
serialization (bitset containers are the words themselves), once per batch and
only while the cache's byte budget allows; beyond it prune keeps using the
per-file Roaring path (:mod:`skipindex.pruning.evaluate`), which needs no such arrays.
"""

from __future__ import annotations

import copy
import itertools
import threading
from collections.abc import Callable

import numpy as np
from pyroaring import AbstractBitMap

from skipindex._distinct import distinct
from skipindex.indexes._dense_decode import decode_many, groups, places
from skipindex.indexes._roaring import bitmap_of

__all__ = [
    "ALL_SET",
    "DenseColumns",
    "full_words",
    "shared_full_words",
    "to_bitmaps",
    "words_for",
]

ALL_SET = np.uint64(0xFFFF_FFFF_FFFF_FFFF)
# At most this many words in one array of the walk (128 MB): larger batches keep
# the per-file path rather than risk the memory.
MAX_WORDS = 16 << 20


def words_for(num_rows: int) -> int:
    return max(-(-int(num_rows) // 64), 1)


def full_words(num_rows: np.ndarray, width: int) -> np.ndarray:
    """Per file, the bits of rows ``0..num_rows-1`` set: shape (files, width)."""
    left = np.clip(num_rows.astype(np.int64)[:, None] - 64 * np.arange(width)[None, :], 0, 64)
    partial = (np.uint64(1) << np.minimum(left, 63).astype(np.uint64)) - np.uint64(1)
    return np.where(left >= 64, ALL_SET, partial)


def to_bitmaps(words: np.ndarray) -> list[AbstractBitMap]:
    """One Roaring bitmap per row of ``words`` (the set bits' positions), with
    only the non-zero words unpacked, a bounded number at a time."""
    out: list[AbstractBitMap] = []
    step = max(1, (1 << 16) // max(words.shape[1], 1))
    for first in range(0, len(words), step):
        part = words[first : first + step]
        found = np.flatnonzero(part.ravel() != 0)  # a bool pass: 5x np.nonzero's speed
        file_at, word_at = np.divmod(found, part.shape[1])
        bits = np.unpackbits(
            part.ravel()[found].astype("<u8").view(np.uint8).reshape(-1, 8),
            axis=1,
            bitorder="little",
        )
        hit, bit = np.nonzero(bits)
        rows = word_at[hit] * 64 + bit
        bounds = np.searchsorted(file_at[hit], np.arange(len(part) + 1))
        out.extend(bitmap_of(rows[a:b]) for a, b in itertools.pairwise(bounds.tolist()))
    return out


def shared_full_words(num_rows: np.ndarray, width: int) -> np.ndarray:
    """:func:`full_words`, read-only, made once per distinct row count: files of
    one size share a single row (a broadcast view, no copy)."""
    counts, which = np.unique(num_rows, return_inverse=True)
    distinct = full_words(counts, width)
    if len(counts) == 1:
        return np.broadcast_to(distinct[0], (len(num_rows), width))
    out = distinct[which.reshape(-1)]
    out.flags.writeable = False
    return out


class DenseColumns:
    """A batch's stored bitmaps as words, decoded on first use and kept while
    ``reserve(bytes)`` (the cache's budget) allows: a list<binary> field's items
    in item order or slice-major, each file's rows and its non-null rows.

    :meth:`sampled` gives the same arrays at a subset of word columns (views, no
    copy): the row-level pass on a sample of every file's rows, which finds
    cheaply the files that certainly hold a match (see :mod:`skipindex.pruning.evaluate`).
    Every operation on words is word by word, so an answer computed on sampled
    words is exactly the full answer at those words."""

    def __init__(
        self,
        num_rows: np.ndarray,
        reserve: Callable[[int], bool],
        items: Callable[[str], tuple[np.ndarray, memoryview]],
        nulls: Callable[[], tuple[np.ndarray, memoryview, np.ndarray] | None],
    ) -> None:
        self.all_words = words_for(int(num_rows.max(initial=0)))  # per file, as decoded
        self.width = self.all_words  # per file, as answered (fewer where sampled)
        self.num_rows = num_rows
        self._reserve = reserve
        self._items = items
        self._nulls = nulls
        self._kept: dict[str, np.ndarray | None] = {}
        # list<binary> fields decoded item by item as asked: (words, which are decoded)
        self._decoded: dict[str, tuple[np.ndarray | None, np.ndarray]] = {}
        self._lock = threading.RLock()  # nonnull() makes full() under it
        self._sample: slice | None = None  # the word columns answers keep (None: all)

    def sampled(self, words: slice) -> DenseColumns:
        """These columns at the word columns ``words`` only: the decoded arrays
        and the budget are shared, answers are views of ``words``."""
        view = copy.copy(self)
        view._sample = words
        view.width = len(range(self.all_words)[words])
        return view

    @property
    def fits(self) -> bool:
        """Whether one row of words per file stays within the walk's bound."""
        return len(self.num_rows) * self.all_words <= MAX_WORDS

    def full(self) -> np.ndarray | None:
        """Per file, every row set."""
        return self._at_sample(self._full())

    def _full(self) -> np.ndarray | None:
        def make() -> np.ndarray | None:
            return self._made(full_words(self.num_rows, self.all_words))

        return self._once("\0full", make)

    def nonnull(self) -> np.ndarray | None:
        """Per file, its non-null rows."""
        return self._at_sample(self._nonnull())

    def _nonnull(self) -> np.ndarray | None:
        def make() -> np.ndarray | None:
            full = self._full()
            stored = self._nulls()
            if full is None or stored is None:
                return full
            offsets, data, valid = stored
            nulls = self._empty(len(valid))
            if nulls is not None:
                at = np.flatnonzero(valid)
                decode_many(offsets, data, at, at, nulls)
                np.bitwise_and(full, ~nulls, out=nulls)
            return nulls

        return self._once("\0nonnull", make)

    def items(self, name: str, wanted: np.ndarray) -> np.ndarray | None:
        """The items of a list<binary> field in order, shape (items, width), with
        at least those at ``wanted`` decoded: a predicate on one value of a
        million files decodes its bitmaps, not every value's."""
        with self._lock:
            if name not in self._decoded:
                offsets, _ = self._items(name)
                words = self._empty(len(offsets) - 1)
                self._decoded[name] = (words, np.zeros(len(offsets) - 1, dtype=bool))
            words, decoded = self._decoded[name]
            if words is None:
                return None
            missing = distinct(wanted[~decoded[wanted]])
            if len(missing):
                offsets, data = self._items(name)
                decode_many(offsets, data, missing, missing, words)
                decoded[missing] = True
            shared = words.view()  # decoded rows never change; others stay unread
            shared.flags.writeable = False
            return self._at_sample(shared)

    def slices(self, name: str, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray | None:
        """A list<binary> field slice-major: ``[j, f]`` is file f's item j (file f's
        list starts at item ``starts[f]`` and has ``lengths[f]`` items), all set
        where the file has fewer. Item j of every file is one contiguous array."""

        def make() -> np.ndarray | None:
            files, depth = len(lengths), int(lengths.max(initial=0))
            if depth == 0:  # every file single-valued or all null: no slices at all
                return np.zeros((0, files, self.all_words), dtype=np.uint64)
            out = self._empty(depth * files)
            if out is None:
                return None
            out[:] = ALL_SET
            offsets, data = self._items(name)
            owner = groups(lengths)
            items = places(starts, lengths, 1)
            j = items - starts[owner]
            out[j * files + owner] = 0
            decode_many(offsets, data, items, j * files + owner, out)
            return out.reshape(depth, files, -1)

        return self._at_sample(self._once(f"\0slices:{name}", make))

    def _at_sample(self, words: np.ndarray | None) -> np.ndarray | None:
        """``words`` (files or items by words, or slices by files by words) at
        the sampled word columns."""
        if words is None or self._sample is None:
            return words
        return words[..., self._sample]

    def _once(self, key: str, make: Callable[[], np.ndarray | None]) -> np.ndarray | None:
        with self._lock:
            if key not in self._kept:
                made = make()
                if made is not None:  # shared by every prune: nobody may change it
                    made.flags.writeable = False
                self._kept[key] = made
            return self._kept[key]

    def _made(self, array: np.ndarray) -> np.ndarray | None:
        return array if self._reserve(array.nbytes) else None

    def _empty(self, rows: int) -> np.ndarray | None:
        if not self._reserve(rows * self.all_words * 8):
            return None
        return np.zeros((rows, self.all_words), dtype=np.uint64)
