"""Roaring bitmaps on disk: the portable serialization (cookie 12346/12347, readable
from Java, Go and C), built from sorted ``uint32`` row positions; never pickled."""

from __future__ import annotations

import array
from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np
from pyroaring import AbstractBitMap, BitMap

from skipindex.errors import IndexCorruptError

assert array.array("I").itemsize == 4  # row positions are uint32

B = TypeVar("B", bound=AbstractBitMap)


def bitmap_of(positions: np.ndarray) -> BitMap:
    """A bitmap from sorted row positions (the fastest pyroaring constructor)."""
    if len(positions) == 0:
        return BitMap()
    return BitMap(array.array("I", np.ascontiguousarray(positions, dtype=np.uint32).tobytes()))


def to_bytes(bitmap: BitMap) -> bytes:
    """Roaring portable serialization, run containers where they are smaller."""
    bitmap.run_optimize()
    return bitmap.serialize()


def from_bytes(data: Any, cls: type[B] = BitMap) -> B:  # type: ignore[assignment]
    """A stored bitmap (bytes or a memoryview of them; None: empty) as ``cls``;
    IndexCorruptError when the bytes are not a Roaring bitmap."""
    if data is None:
        return cls()
    try:
        return cls.deserialize(data)
    except (ValueError, IndexError, OverflowError) as exc:
        raise IndexCorruptError(f"a stored Roaring bitmap does not decode: {exc}") from exc


def union(bitmaps: Sequence[AbstractBitMap]) -> AbstractBitMap:
    """A new bitmap (never one of the inputs) holding the union."""
    return BitMap.union(*bitmaps) if bitmaps else BitMap()  # one input: a copy


CHUNK = 1 << 16  # rows per Roaring container
ARRAY_MAX = 4096  # a container of at most this many rows is an array container
NO_RUNS_COOKIE = 12346
RUNS_COOKIE = 12347  # low half of the cookie when some container holds runs
NO_OFFSET_THRESHOLD = 4  # with runs, fewer containers than this: no offset header


def mask_bytes(mask: np.ndarray) -> bytes:
    """The portable serialization of the rows where ``mask`` is True, written
    straight from numpy: the same bytes ``to_bytes`` makes (run containers where
    pyroaring's ``run_optimize`` picks them), without building a pyroaring
    bitmap (that took a quarter of a bitmap build, and four times as long as
    this for the run containers of a sorted column).

    Works on the packed words: a container's cardinality and its number of runs
    (rows set whose previous row is not) are popcounts of 1,024 words, a fifth
    of the cost of comparing 65,536 booleans."""
    n = len(mask)
    chunks = max(-(-n // CHUNK), 1)
    words = np.zeros(chunks * (CHUNK // 64), dtype="<u8")
    packed = np.packbits(mask, bitorder="little")
    words.view(np.uint8)[: len(packed)] = packed
    blocks = words.reshape(chunks, CHUNK // 64)
    cards = np.bitwise_count(blocks).sum(axis=1, dtype=np.int64)
    carry = np.zeros_like(words)  # each word's previous row: the top bit of the word before
    carry[1:] = words[:-1] >> np.uint64(63)
    carry.reshape(chunks, -1)[:, 0] = 0  # a container's first row starts a run if set
    starts = words & ~((words << np.uint64(1)) | carry)
    runs = np.bitwise_count(starts.reshape(chunks, -1)).sum(axis=1, dtype=np.int64)
    run_bytes = 2 + 4 * runs  # a run container: a count, then (start, length) pairs
    plain = np.where(cards <= ARRAY_MAX, 2 * cards, CHUNK // 8)
    used = np.flatnonzero(cards)
    is_run = run_bytes[used] < plain[used]
    sizes = np.where(is_run, run_bytes[used], plain[used])
    header = np.empty((len(used), 2), dtype="<u2")
    header[:, 0] = used
    header[:, 1] = cards[used] - 1
    if is_run.any():
        flags = np.packbits(is_run, bitorder="little").tobytes()
        cookie = RUNS_COOKIE | (len(used) - 1) << 16
        parts = [np.array([cookie], dtype="<u4").tobytes(), flags, header.tobytes()]
        with_offsets = len(used) >= NO_OFFSET_THRESHOLD
        start = 4 + len(flags) + 4 * len(used) * (2 if with_offsets else 1)
    else:
        parts = [np.array([NO_RUNS_COOKIE, len(used)], dtype="<u4").tobytes(), header.tobytes()]
        with_offsets = True
        start = 8 + 8 * len(used)
    if with_offsets:
        parts.append((start + np.cumsum(sizes) - sizes).astype("<u4").tobytes())
    for key, run in zip(used.tolist(), is_run.tolist(), strict=True):
        rows = mask[key * CHUNK : (key + 1) * CHUNK]
        if run:
            parts.append(_run_container(rows))
        elif cards[key] <= ARRAY_MAX:
            parts.append(np.flatnonzero(rows).astype("<u2").tobytes())
        else:
            parts.append(blocks[key].tobytes())
    return b"".join(parts)


def _run_container(rows: np.ndarray) -> bytes:
    """A run container's bytes: the number of runs, then (start, length - 1) pairs."""
    change = np.empty(len(rows) + 1, dtype=bool)  # row i differs from row i - 1
    change[0], change[-1] = rows[0], rows[-1]
    np.not_equal(rows[1:], rows[:-1], out=change[1:-1])  # np.diff: 40 times slower
    pairs = np.flatnonzero(change).reshape(-1, 2)  # [start, end) of each run
    pairs[:, 1] -= pairs[:, 0] + 1
    return np.array([len(pairs)], dtype="<u2").tobytes() + pairs.astype("<u2").tobytes()
