"""Row sets of many files as one 2-D array of bits, for the row-level pass.

Row ``r`` of file ``i`` is bit ``r % 64`` of word ``[i, r // 64]``; every file
has the words of the batch's largest file, padding bits stay zero. AND, OR and
"any row left?" then cost one numpy operation for all files instead of a
pyroaring call per file: at 1,000 files of 60k rows that Python loop, not the
bitmap arithmetic, was most of a warm prune.

Stored Roaring bitmaps are decoded straight into words from their portable
serialization (bitset containers are the words themselves), once per batch and
only while the cache's byte budget allows; beyond it prune keeps using the
per-file Roaring path (:mod:`skipindex.evaluate`), which needs no such arrays.
"""

from __future__ import annotations

import functools
import itertools
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from pyroaring import AbstractBitMap

from skipindex.errors import IndexCorruptError
from skipindex.indexes._roaring import bitmap_of

__all__ = [
    "ALL_SET",
    "DenseColumns",
    "cached_full_words",
    "decode_words",
    "full_words",
    "to_bitmaps",
    "words_for",
]

ALL_SET = np.uint64(0xFFFF_FFFF_FFFF_FFFF)
CHUNK_WORDS = 1024  # a Roaring container spans 65,536 rows
ARRAY_MAX = 4096
RUNS_COOKIE, NO_RUNS_COOKIE = 12347, 12346
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


def decode_words(data: Any, out: np.ndarray) -> None:
    """OR the rows of one portably serialized Roaring bitmap into ``out`` (uint64
    words). IndexCorruptError if the bytes are not one, or hold rows past ``out``."""
    try:
        _decode(memoryview(data).cast("B"), out)
    except (ValueError, IndexError, TypeError) as exc:
        raise IndexCorruptError(f"a stored Roaring bitmap does not decode: {exc}") from exc


def _decode(data: memoryview, out: np.ndarray) -> None:
    def u16(count: int, at: int) -> np.ndarray:
        if at + 2 * count > len(data):
            raise ValueError("truncated")
        return np.frombuffer(data, dtype="<u2", count=count, offset=at)

    if len(data) < 8:
        raise ValueError("shorter than a header")
    cookie = int.from_bytes(data[0:4], "little")
    if cookie & 0xFFFF == RUNS_COOKIE:
        size = (cookie >> 16) + 1
        at = 4 + (size + 7) // 8
        run_flags = np.frombuffer(data, dtype=np.uint8, count=(size + 7) // 8, offset=4)
        is_run = np.unpackbits(run_flags, bitorder="little")[:size].astype(bool)
        has_offsets = size >= 4
    elif cookie == NO_RUNS_COOKIE:
        size = int.from_bytes(data[4:8], "little")
        at, is_run, has_offsets = 8, np.zeros(size, dtype=bool), True
    else:
        raise ValueError(f"unknown cookie {cookie}")
    header = u16(2 * size, at).reshape(size, 2).astype(np.int64)
    at += 4 * size + (4 * size if has_offsets else 0)
    containers = zip(header[:, 0].tolist(), header[:, 1].tolist(), is_run.tolist(), strict=True)
    for key, card, run in containers:
        base = key * CHUNK_WORDS
        span = min(CHUNK_WORDS, len(out) - base)
        if span <= 0:
            raise ValueError(f"rows from {key << 16} exceed the file's {len(out) * 64} rows")
        if run:
            count = int(u16(1, at)[0])
            pairs = u16(2 * count, at + 2).reshape(count, 2).astype(np.int64)
            at += 2 + 4 * count
            bits = np.zeros(CHUNK_WORDS * 64 + 1, dtype=np.int8)
            np.add.at(bits, pairs[:, 0], 1)
            np.add.at(bits, np.minimum(pairs[:, 0] + pairs[:, 1] + 1, len(bits) - 1), -1)
            words = _pack(np.cumsum(bits[:-1]) > 0)
        elif card + 1 > ARRAY_MAX:
            if at + 8 * CHUNK_WORDS > len(data):
                raise ValueError("truncated")
            words = np.frombuffer(data, dtype="<u8", count=CHUNK_WORDS, offset=at)
            at += 8 * CHUNK_WORDS
        else:
            rows = u16(card + 1, at)
            at += 2 * (card + 1)
            bits_ = np.zeros(64 * max(span, (int(rows.max()) >> 6) + 1), dtype=bool)
            bits_[rows] = True
            words = _pack(bits_)
        if words[span:].any():
            raise ValueError(f"rows past the file's {len(out) * 64} rows")
        out[base : base + span] |= words[:span]


def _pack(bits: np.ndarray) -> np.ndarray:
    return np.packbits(bits, bitorder="little").view("<u8")


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


@functools.lru_cache(maxsize=4)
def _full_of(num_rows: bytes, width: int) -> np.ndarray:
    out = full_words(np.frombuffer(num_rows, dtype=np.int64), width)
    out.flags.writeable = False
    return out


def cached_full_words(num_rows: np.ndarray, width: int) -> np.ndarray:
    """:func:`full_words`, read-only and kept for the last few file sets."""
    return _full_of(np.ascontiguousarray(num_rows, dtype=np.int64).tobytes(), width)


class DenseColumns:
    """A batch's stored bitmaps as words, decoded on first use and kept while
    ``reserve(bytes)`` (the cache's budget) allows: a list<binary> field's items
    in item order or slice-major, each file's rows and its non-null rows."""

    def __init__(
        self,
        num_rows: np.ndarray,
        reserve: Callable[[int], bool],
        items: Callable[[str], tuple[np.ndarray, memoryview]],
        nulls: Callable[[], tuple[np.ndarray, memoryview, np.ndarray] | None],
    ) -> None:
        self.width = words_for(int(num_rows.max(initial=0)))
        self.num_rows = num_rows
        self._reserve = reserve
        self._items = items
        self._nulls = nulls
        self._kept: dict[str, np.ndarray | None] = {}
        self._lock = threading.RLock()  # nonnull() makes full() under it

    @property
    def fits(self) -> bool:
        """Whether one row of words per file stays within the walk's bound."""
        return len(self.num_rows) * self.width <= MAX_WORDS

    def full(self) -> np.ndarray | None:
        """Per file, every row set."""
        return self._once("\0full", lambda: self._made(full_words(self.num_rows, self.width)))

    def nonnull(self) -> np.ndarray | None:
        """Per file, its non-null rows."""

        def make() -> np.ndarray | None:
            full = self.full()
            stored = self._nulls()
            if full is None or stored is None:
                return full
            offsets, data, valid = stored
            nulls = self._empty(len(valid))
            if nulls is not None:
                self._decode(offsets, data, np.flatnonzero(valid), nulls)
                np.bitwise_and(full, ~nulls, out=nulls)
            return nulls

        return self._once("\0nonnull", make)

    def items(self, name: str) -> np.ndarray | None:
        """Every item of a list<binary> field, in order: shape (items, width)."""

        def make() -> np.ndarray | None:
            offsets, data = self._items(name)
            out = self._empty(len(offsets) - 1)
            if out is not None:
                self._decode(offsets, data, np.arange(len(offsets) - 1), out)
            return out

        return self._once(name, make)

    def slices(self, name: str, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray | None:
        """A list<binary> field slice-major: ``[j, f]`` is file f's item j (file f's
        list starts at item ``starts[f]`` and has ``lengths[f]`` items), all set
        where the file has fewer. Item j of every file is one contiguous array."""

        def make() -> np.ndarray | None:
            files, depth = len(lengths), int(lengths.max(initial=0))
            out = self._empty(depth * files)
            if out is None:
                return None
            out[:] = ALL_SET
            offsets, data = self._items(name)
            owner = np.repeat(np.arange(files), lengths)
            j = np.arange(len(owner)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
            items = np.repeat(starts, lengths) + j
            out[j * files + owner] = 0
            self._decode(offsets, data, items, out, j * files + owner)
            return out.reshape(depth, files, self.width)

        return self._once(f"\0slices:{name}", make)

    def _once(self, key: str, make: Callable[[], np.ndarray | None]) -> np.ndarray | None:
        with self._lock:
            if key not in self._kept:
                self._kept[key] = make()
            return self._kept[key]

    def _made(self, array: np.ndarray) -> np.ndarray | None:
        return array if self._reserve(array.nbytes) else None

    def _empty(self, rows: int) -> np.ndarray | None:
        if not self._reserve(rows * self.width * 8):
            return None
        return np.zeros((rows, self.width), dtype=np.uint64)

    @staticmethod
    def _decode(
        offsets: np.ndarray,
        data: memoryview,
        items: np.ndarray,
        out: np.ndarray,
        rows: np.ndarray | None = None,
    ) -> None:
        """Decode ``items`` (indices into ``offsets``) into ``out[rows]`` (or ``out[items]``)."""
        targets = (items if rows is None else rows).tolist()
        for item, target in zip(items.tolist(), targets, strict=True):
            a, b = int(offsets[item]), int(offsets[item + 1])
            if b > a:
                decode_words(data[a:b], out[target])
