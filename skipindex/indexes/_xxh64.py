"""XXH64 (seed 0) of many values at once, as Parquet's Bloom filters hash them.

Fixed-width inputs (4-byte and 8-byte values, and byte strings of one width)
are hashed with numpy uint64 arithmetic over the whole array: numpy wraps
uint64 products and sums modulo 2**64, which is exactly XXH64's arithmetic, so
no per-value Python work is needed. Variable-length byte strings go through the
``xxhash`` C library, once per value: callers pass distinct values only.

Reference: https://github.com/Cyan4973/xxHash/blob/dev/doc/xxhash_spec.md
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.types as pat
import xxhash

__all__ = ["hash_binary", "hash_fixed", "hash_u32", "hash_u64"]

_P1 = np.uint64(0x9E3779B185EBCA87)
_P2 = np.uint64(0xC2B2AE3D27D4EB4F)
_P3 = np.uint64(0x165667B19E3779F9)
_P4 = np.uint64(0x85EBCA77C2B2AE63)
_P5 = np.uint64(0x27D4EB2F165667C5)
_U64 = np.dtype(np.uint64)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def _round(acc: np.ndarray, lane: np.ndarray) -> np.ndarray:
    acc = acc + lane * _P2
    return _rotl(acc, 31) * _P1


def _avalanche(h: np.ndarray) -> np.ndarray:
    h = h ^ (h >> np.uint64(33))
    h *= _P2
    h ^= h >> np.uint64(29)
    h *= _P3
    h ^= h >> np.uint64(32)
    return h


def _mix8(h: np.ndarray, lane: np.ndarray) -> np.ndarray:
    """Consume one trailing 8-byte lane (``lane`` as uint64)."""
    h = h ^ _round(np.zeros_like(lane), lane)
    return _rotl(h, 27) * _P1 + _P4


def _mix4(h: np.ndarray, lane: np.ndarray) -> np.ndarray:
    """Consume one trailing 4-byte lane (``lane`` as uint64 holding a uint32)."""
    h = h ^ (lane * _P1)
    return _rotl(h, 23) * _P2 + _P3


def _mix1(h: np.ndarray, byte: np.ndarray) -> np.ndarray:
    h = h ^ (byte * _P5)
    return _rotl(h, 11) * _P1


def hash_u32(values: np.ndarray) -> np.ndarray:
    """XXH64 of each value's 4 little-endian bytes (any 4-byte dtype)."""
    values = np.ascontiguousarray(values)
    if values.dtype.itemsize != 4:
        raise TypeError(f"hash_u32 takes 4-byte values, not {values.dtype}")
    lane = values.view("<u4").astype(_U64)
    h = np.full(lane.shape, _P5 + np.uint64(4), dtype=_U64)
    return _avalanche(_mix4(h, lane))


def hash_u64(values: np.ndarray) -> np.ndarray:
    """XXH64 of each value's 8 little-endian bytes (any 8-byte dtype)."""
    values = np.ascontiguousarray(values)
    if values.dtype.itemsize != 8:
        raise TypeError(f"hash_u64 takes 8-byte values, not {values.dtype}")
    lane = values.view("<u8").astype(_U64, copy=False)
    h = np.full(lane.shape, _P5 + np.uint64(8), dtype=_U64)
    return _avalanche(_mix8(h, lane))


def _lane(rows: np.ndarray, start: int, width: int) -> np.ndarray:
    """Little-endian lane of ``width`` bytes at column ``start`` of every row."""
    chunk = np.ascontiguousarray(rows[:, start : start + width])
    return chunk.view("<u8" if width == 8 else "<u4").ravel().astype(_U64)


def hash_fixed(rows: np.ndarray) -> np.ndarray:
    """XXH64 of each row of an (n, w) uint8 matrix: n byte strings of width w."""
    if rows.ndim != 2 or rows.dtype != np.uint8:
        raise TypeError("hash_fixed takes an (n, w) uint8 matrix")
    n, width = rows.shape
    pos = 0
    if width >= 32:
        # Four accumulators over 32-byte stripes; only long keys get here.
        zero = np.zeros(n, dtype=_U64)
        acc = [zero + _P1 + _P2, zero + _P2, zero.copy(), zero - _P1]
        while pos + 32 <= width:
            for i in range(4):
                acc[i] = _round(acc[i], _lane(rows, pos + 8 * i, 8))
            pos += 32
        h = _rotl(acc[0], 1) + _rotl(acc[1], 7) + _rotl(acc[2], 12) + _rotl(acc[3], 18)
        for a in acc:
            h = (h ^ _round(np.zeros_like(a), a)) * _P1 + _P4
        h += np.uint64(width)
    else:
        h = np.full(n, _P5 + np.uint64(width), dtype=_U64)
    while pos + 8 <= width:
        h = _mix8(h, _lane(rows, pos, 8))
        pos += 8
    if pos + 4 <= width:
        h = _mix4(h, _lane(rows, pos, 4))
        pos += 4
    while pos < width:
        h = _mix1(h, rows[:, pos].astype(_U64))
        pos += 1
    return _avalanche(h)


def hash_binary(values: pa.Array) -> np.ndarray:
    """XXH64 of each non-null string/binary value's raw bytes (no length prefix).

    One ``xxhash`` call per value: pass distinct values. Null entries hash as
    the empty string; drop them first if that matters.
    """
    if not (pat.is_binary(values.type) or pat.is_large_binary(values.type)):
        values = values.cast(pa.large_binary())
    _, offsets_buf, data_buf = values.buffers()
    offset_type = np.int64 if pat.is_large_binary(values.type) else np.int32
    offsets = np.frombuffer(offsets_buf, dtype=offset_type)[
        values.offset : values.offset + len(values) + 1
    ].tolist()
    data = memoryview(data_buf if data_buf is not None else b"")
    digest = xxhash.xxh64_intdigest
    out = [digest(data[offsets[i] : offsets[i + 1]]) for i in range(len(values))]
    return np.array(out, dtype=_U64)
