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


def mask_bytes(mask: np.ndarray) -> bytes:
    """The portable serialization of the rows where ``mask`` is True, written
    straight from numpy: the same bytes ``to_bytes`` makes, without building a
    pyroaring bitmap (that took a quarter of a bitmap build). Where a run
    container would be smaller (sorted data), pyroaring writes it instead."""
    n = len(mask)
    chunks = max(-(-n // CHUNK), 1)
    if n == chunks * CHUNK:
        blocks = mask.reshape(chunks, CHUNK)
    else:
        padded = np.zeros(chunks * CHUNK, dtype=bool)
        padded[:n] = mask
        blocks = padded.reshape(chunks, CHUNK)
    cards = np.count_nonzero(blocks, axis=1)
    changes = np.count_nonzero(blocks[:, 1:] ^ blocks[:, :-1], axis=1)
    edges = changes + blocks[:, 0] + blocks[:, -1]  # twice the number of runs
    run_bytes = 2 + 2 * edges  # a run container: a count, then (start, length) pairs
    plain = np.where(cards <= ARRAY_MAX, 2 * cards, CHUNK // 8)
    used = np.flatnonzero(cards)
    if np.any(run_bytes[used] < plain[used]):
        return to_bytes(bitmap_of(np.flatnonzero(mask)))
    header = np.empty((len(used), 2), dtype="<u2")
    header[:, 0] = used
    header[:, 1] = cards[used] - 1
    start = 8 + 8 * len(used)
    sizes = plain[used]
    offsets = start + np.cumsum(sizes) - sizes
    parts = [np.array([NO_RUNS_COOKIE, len(used)], dtype="<u4").tobytes()]
    parts += [header.tobytes(), offsets.astype("<u4").tobytes()]
    for key in used.tolist():
        block = blocks[key]
        if cards[key] <= ARRAY_MAX:
            parts.append(np.flatnonzero(block).astype("<u2").tobytes())
        else:
            parts.append(np.packbits(block, bitorder="little").tobytes())
    return b"".join(parts)
