"""Roaring bitmaps on disk: the portable serialization (cookie 12346/12347, readable
from Java, Go and C), built from sorted ``uint32`` row positions; never pickled."""

from __future__ import annotations

import array
from collections.abc import Sequence

import numpy as np
from pyroaring import AbstractBitMap, BitMap

from skipindex.errors import IndexCorruptError

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


def union(bitmaps: Sequence[AbstractBitMap]) -> AbstractBitMap:
    """A new bitmap (never one of the inputs) holding the union."""
    return BitMap.union(*bitmaps) if bitmaps else BitMap()  # one input: a copy
