"""Parquet's split-block Bloom filter (SBBF), built and probed with numpy.

The layout is parquet-format's BloomFilter.md bit for bit, so a filter built
here is byte-identical to the one parquet-cpp (Arrow) writes for the same set
of hashes and size: ``z`` blocks of 256 bits, each eight little-endian uint32
words. A 64-bit hash picks block ``((hash >> 32) * z) >> 32`` and, with its
low 32 bits as ``key``, sets bit ``(key * SALT[i]) >> 27`` of word ``i``.

Because every word-mask has exactly one bit, "insert" is a scatter of global
bit positions into a flat bit array and "check" gathers, per (filter, hash)
pair, the byte holding each of the 8 bits; neither loops over hashes or
filters in Python.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.types as pat

from skipindex._distinct import distinct

__all__ = [
    "MAX_BYTES",
    "MIN_BYTES",
    "Filters",
    "build",
    "contains",
    "might_contain",
    "might_contain_all",
    "num_bytes",
    "tight_bytes",
]

SALT = np.array(
    [
        0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D,
        0x705495C7, 0x2DF1424B, 0x9EFC4947, 0x5C6BFB31,
    ],
    dtype=np.uint32,
)  # fmt: skip
MIN_BYTES = 32  # one block
MAX_BYTES = 128 * 1024 * 1024  # parquet-cpp's kMaximumBloomFilterBytes
_BLOCK_BYTES = 32
_WORDS = np.arange(8, dtype=np.int64)
_WORD_BITS = np.arange(0, 256, 32, dtype=np.uint32)  # first bit of each word in a block
# At most this many (filter, hash) pairs per step of a multi-hash check.
_PAIR_BUDGET = 1 << 20


def _floor_pow2(n: int) -> int:
    return 1 << (n.bit_length() - 1)


def tight_bytes(ndv: int, fpp: float, max_bytes: int = MAX_BYTES) -> int:
    """:func:`num_bytes` in whole blocks, not rounded up to a power of two: the
    probe picks a block by ``(hash >> 32) * blocks >> 32`` for any count of
    blocks, and a filter that is not parquet-cpp's own can be up to half smaller."""
    if not 0.0 < fpp < 1.0:
        raise ValueError(f"fpp must be in (0, 1), got {fpp}")
    bits = -8.0 * max(ndv, 0) / math.log(1.0 - fpp ** (1.0 / 8.0))
    blocks = max(1, math.ceil(bits / (8 * _BLOCK_BYTES)))
    cap = max(min(max_bytes, MAX_BYTES), MIN_BYTES) // _BLOCK_BYTES
    return min(blocks, cap) * _BLOCK_BYTES


def num_bytes(ndv: int, fpp: float, max_bytes: int = MAX_BYTES) -> int:
    """Filter size for ``ndv`` distinct values at false-positive rate ``fpp``.

    Same as parquet-cpp's ``OptimalNumOfBytes``: ``-8 * ndv / ln(1 - fpp**(1/8))``
    bits, truncated, raised to at least one block and to a power of two, then
    capped by ``max_bytes`` (itself rounded down to a power of two).
    """
    if not 0.0 < fpp < 1.0:
        raise ValueError(f"fpp must be in (0, 1), got {fpp}")
    cap_bits = 8 * _floor_pow2(min(max(max_bytes, MIN_BYTES), MAX_BYTES))
    bits = -8.0 * max(ndv, 0) / math.log(1.0 - fpp ** (1.0 / 8.0))
    nbits = cap_bits if not bits < cap_bits else max(int(bits), 8 * MIN_BYTES)
    nbits = 1 << (nbits - 1).bit_length()  # next power of two
    return min(nbits, cap_bits) // 8


def _split(hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per hash: the block selector (high 32 bits) and its 8 bit indices (0..31, uint32)."""
    hashes = np.asarray(hashes, dtype=np.uint64)
    high = hashes >> np.uint64(32)
    key = hashes.astype(np.uint32)  # low 32 bits
    return high, (key[:, None] * SALT[None, :]) >> np.uint32(27)  # uint32 wrap-around


def _block_index(high: np.ndarray, num_blocks: np.ndarray | int) -> np.ndarray:
    # high < 2**32 and num_blocks <= 2**22: the product never overflows uint64.
    return ((high * np.asarray(num_blocks, dtype=np.uint64)) >> np.uint64(32)).astype(np.int64)


def build(hashes: np.ndarray, size: int) -> bytes:
    """The SBBF bitset of ``size`` bytes (a multiple of 32) holding ``hashes``."""
    if not MIN_BYTES <= size <= MAX_BYTES or size % _BLOCK_BYTES:
        raise ValueError(f"filter size must be a multiple of 32 bytes up to 128 MiB, got {size}")
    hashes = np.asarray(hashes, dtype=np.uint64)
    block = _block_index(hashes >> np.uint64(32), size // _BLOCK_BYTES).astype(np.uint32)
    # Global bit of word i of a block: bits are numbered little-endian within
    # each uint32 word, which is what packbits(bitorder="little") produces.
    # At most 2**30 bits (MAX_BYTES), so uint32 positions suffice and halve the
    # memory traffic of int64 ones. Laid out (word, hash), not (hash, word):
    # numpy's inner loops then run over the hashes, three times faster than
    # over 8 words at a time.
    positions = (SALT[:, None] * hashes.astype(np.uint32)[None, :]) >> np.uint32(27)
    positions += block[None, :] * np.uint32(256)
    positions += _WORD_BITS[:, None]
    flags = np.zeros(size * 8, dtype=bool)
    flags[positions.ravel()] = True
    return np.packbits(flags, bitorder="little").tobytes()


@dataclass(frozen=True)
class Filters:
    """Many filters side by side: filter i is ``data[starts[i]:starts[i] + 32 * num_blocks[i]]``.

    ``lengths`` keeps each entry's raw byte length so that callers can reject
    entries that are not a whole number of blocks.
    """

    data: np.ndarray  # uint8
    starts: np.ndarray  # int64
    num_blocks: np.ndarray  # int64
    lengths: np.ndarray  # int64

    def __len__(self) -> int:
        return len(self.starts)

    @classmethod
    def from_arrow(cls, array: pa.Array) -> Filters:
        """Zero-copy view of a binary Arrow array of filters (null entries: 0 blocks)."""
        if not (pat.is_binary(array.type) or pat.is_large_binary(array.type)):
            array = array.cast(pa.large_binary())
        _, offsets_buf, data_buf = array.buffers()
        offset_type = np.int64 if pat.is_large_binary(array.type) else np.int32
        offsets = np.frombuffer(offsets_buf, dtype=offset_type)[
            array.offset : array.offset + len(array) + 1
        ].astype(np.int64)
        lengths = np.diff(offsets)
        if array.null_count:
            valid = np.asarray(array.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
            lengths = np.where(valid, lengths, 0)
        data = (
            np.frombuffer(data_buf, dtype=np.uint8)
            if data_buf is not None
            else np.zeros(0, np.uint8)
        )
        return cls(data, offsets[:-1], lengths // _BLOCK_BYTES, lengths)


class _Probe:
    """Where each hash's 8 bits sit inside a block, computed once per probe."""

    def __init__(self, hashes: np.ndarray) -> None:
        self.high, split = _split(hashes)
        bits = split.astype(np.int64)
        # Bit b of word i lives in byte 4*i + b//8 of its block, at bit b%8.
        # Stored word-major so that each word's row is contiguous.
        self.byte_in_block = np.ascontiguousarray((_WORDS[None, :] * 4 + (bits >> 3)).T)
        self.bit_mask = np.ascontiguousarray((np.uint8(1) << (bits & 7).astype(np.uint8)).T)

    def survivors(
        self, data: np.ndarray, starts: np.ndarray, num_blocks: np.ndarray, part: slice
    ) -> tuple[np.ndarray, np.ndarray]:
        """The (filter, hash-in-``part``) pairs whose 8 bits are all set.

        Word by word, keeping only the pairs still alive: about half of them
        fail each word in a well-sized filter, so this gathers ~2 bytes per
        pair instead of 8.
        """
        block = _block_index(self.high[part][None, :], num_blocks[:, None])
        base = starts[:, None] + block * _BLOCK_BYTES  # (filters, hashes)
        offsets, masks = self.byte_in_block[:, part], self.bit_mask[:, part]
        alive = (data[base + offsets[0][None, :]] & masks[0][None, :]) != 0
        filt, hsh = np.nonzero(alive)
        base = base[filt, hsh]
        for word in range(1, 8):
            keep = (data[base + offsets[word][hsh]] & masks[word][hsh]) != 0
            base, filt, hsh = base[keep], filt[keep], hsh[keep]
        return filt, hsh


def contains(bitset: bytes, hashes: np.ndarray) -> np.ndarray:
    """Per hash, whether it may be in the one filter ``bitset``."""
    if len(bitset) < MIN_BYTES or len(bitset) % _BLOCK_BYTES:
        raise ValueError(f"a filter is a positive multiple of 32 bytes, got {len(bitset)}")
    hashes = np.asarray(hashes, dtype=np.uint64).ravel()
    data = np.frombuffer(bitset, dtype=np.uint8)
    one = np.array([len(bitset) // _BLOCK_BYTES], dtype=np.int64)
    _, hits = _Probe(hashes).survivors(data, np.zeros(1, np.int64), one, slice(None))
    result = np.zeros(hashes.size, dtype=bool)
    result[hits] = True
    return result


def might_contain(filters: Filters, hashes: np.ndarray) -> np.ndarray:
    """Per filter, whether any of ``hashes`` may be in it (no false negatives).

    Filters with no blocks contain nothing. Work is vectorised over filters;
    long hash lists go in chunks, and a filter leaves the work set as soon as
    one hash hits, so an IN list costs little more than its first hits.
    """
    result = np.zeros(len(filters), dtype=bool)
    pending = np.flatnonzero(filters.num_blocks > 0)
    hashes = np.asarray(hashes, dtype=np.uint64).ravel()
    if pending.size == 0 or hashes.size == 0:
        return result
    probe = _Probe(hashes)
    done = 0
    while done < hashes.size and pending.size:
        step = max(1, _PAIR_BUDGET // pending.size)
        part = slice(done, done + step)
        filt, _ = probe.survivors(
            filters.data, filters.starts[pending], filters.num_blocks[pending], part
        )
        hit = np.zeros(pending.size, dtype=bool)
        hit[filt] = True
        result[pending[hit]] = True
        pending = pending[~hit]
        done += step
    return result


def might_contain_all(filters: Filters, hashes: np.ndarray) -> np.ndarray:
    """Per filter, whether every one of ``hashes`` may be in it (no false
    negatives): what a substring needs of its n-grams. Filters with no blocks hold
    nothing; a filter leaves the work set at the first chunk of hashes it lacks one
    of, so a needle costs little more than its first missing gram."""
    hashes = distinct(np.asarray(hashes, dtype=np.uint64).ravel())
    result = np.asarray(filters.num_blocks > 0, dtype=bool)
    pending = np.flatnonzero(result)
    probe = _Probe(hashes)
    done = 0
    while done < hashes.size and pending.size:
        step = max(1, _PAIR_BUDGET // pending.size)
        part = slice(done, min(done + step, hashes.size))
        filt, _ = probe.survivors(
            filters.data, filters.starts[pending], filters.num_blocks[pending], part
        )
        lacking = np.bincount(filt, minlength=pending.size) < part.stop - part.start
        result[pending[lacking]] = False
        pending = pending[~lacking]
        done = part.stop
    return result
