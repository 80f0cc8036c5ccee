"""Space-filling curves over per-column ranks, vectorised over rows.

Every function takes one ``uint32`` rank array per column and a number of
bits per column. It returns one ``uint64`` key per row, with at most 63 bits
in use, so the key is also a non-negative Spark ``LONG``. Python loops run
over bits and columns only, never over rows.

* ``linear``: the first column's rank in the high bits, then the next column's:
  the order of a multi-column sort.
* ``zorder``: the bits interleaved, most significant first.
* ``hilbert``: Skilling's transpose algorithm ("Programming the Hilbert curve",
  AIP Conf. Proc. 707, 2004) in n dimensions. Unlike Z-order it has no long
  jumps: cells next to each other on the curve are next to each other in space,
  so a file (a stretch of the curve) stays compact in every column.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["CURVES", "MAX_KEY_BITS", "bits_per_column", "hilbert", "linear", "zorder"]

MAX_KEY_BITS = 63
Ranks = Sequence[np.ndarray[Any, Any]]


def bits_per_column(columns: int, largest_rank: int) -> int:
    """Bits that hold ``largest_rank``, capped so that ``columns`` of them fit 63 bits."""
    if not 1 <= columns <= 8:
        raise ValueError(f"curves take 1 to 8 columns, not {columns}")
    needed = max(1, int(largest_rank).bit_length())
    return min(needed, MAX_KEY_BITS // columns)


def _checked(ranks: Ranks, bits: int) -> list[np.ndarray[Any, Any]]:
    if len(ranks) * bits > MAX_KEY_BITS:
        raise ValueError(f"{len(ranks)} columns of {bits} bits do not fit {MAX_KEY_BITS} bits")
    limit = np.uint64(1) << np.uint64(bits)
    out = [np.asarray(r, dtype=np.uint64) for r in ranks]
    if any(len(r) and int(r.max()) >= int(limit) for r in out):
        raise ValueError(f"a rank does not fit {bits} bits")
    return out


def linear(ranks: Ranks, bits: int) -> np.ndarray[Any, Any]:
    key = np.zeros(len(ranks[0]) if ranks else 0, dtype=np.uint64)
    for column in _checked(ranks, bits):
        key = (key << np.uint64(bits)) | column
    return key


def _interleave(columns: list[np.ndarray[Any, Any]], bits: int) -> np.ndarray[Any, Any]:
    key = np.zeros(len(columns[0]) if columns else 0, dtype=np.uint64)
    one = np.uint64(1)
    for bit in range(bits - 1, -1, -1):
        shift = np.uint64(bit)
        for column in columns:
            key = (key << one) | ((column >> shift) & one)
    return key


def zorder(ranks: Ranks, bits: int) -> np.ndarray[Any, Any]:
    return _interleave(_checked(ranks, bits), bits)


def hilbert(ranks: Ranks, bits: int) -> np.ndarray[Any, Any]:
    x = _checked(ranks, bits)
    n = len(x)
    if n == 1:
        return x[0].copy()
    # Inverse undo: walk the bits from the top, reflecting and exchanging axes.
    q = 1 << (bits - 1)
    while q > 1:
        p = np.uint64(q - 1)
        mask = np.uint64(q)
        for i in range(n):
            hit = (x[i] & mask) != 0
            swap = (x[0] ^ x[i]) & p
            if i == 0:
                x[0] = np.where(hit, x[0] ^ p, x[0])
                continue
            x[0], x[i] = np.where(hit, x[0] ^ p, x[0] ^ swap), np.where(hit, x[i], x[i] ^ swap)
        q >>= 1
    # Gray encode.
    for i in range(1, n):
        x[i] = x[i] ^ x[i - 1]
    t = np.zeros_like(x[0])
    q = 1 << (bits - 1)
    while q > 1:
        t = np.where((x[n - 1] & np.uint64(q)) != 0, t ^ np.uint64(q - 1), t)
        q >>= 1
    return _interleave([column ^ t for column in x], bits)


CURVES: dict[str, Callable[[Ranks, int], np.ndarray[Any, Any]]] = {
    "linear": linear,
    "zorder": zorder,
    "hilbert": hilbert,
}
