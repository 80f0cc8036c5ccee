"""Rows whose value is one of a long list, on bit-sliced files, as words (see
:mod:`._dense`).

RangeEval answers an IN list one code at a time: a pass over every slice of
every file per key, so 1,000 keys cost 1,000 passes (:mod:`._dense_sliced`).
Here each candidate row's code is read instead: one gather per slice at the
candidate rows only (the rows the conditions before it in an AND left, see
``within`` in :meth:`~skipindex.indexes.base.RowLevelKind.dense_rows`), the
code mapped to its value (``min + code`` or the file's ranked values), and the
value looked up in the keys (a table of their span, else a binary search).
The cost follows the candidate rows times the slices, not the keys: SSB's
``lo_custkey IN`` (1,209 customers) after the month's rows is a few hundred
rows a file. Where most rows of a word are candidates (no earlier condition),
each slice's words are unpacked whole instead of a gather per row: 100 keys
over SF1 lineorder's 6M rows take 0.2 s, where RangeEval per key took 1.3 s.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from skipindex._distinct import distinct
from skipindex.expressions.nodes import BoundValue
from skipindex.indexes._bitmap_query import floor_ceil
from skipindex.indexes._payloads import PayloadColumns

__all__ = ["CANDIDATE_ROWS", "FileValues", "file_values", "integer_keys", "member_rows"]

# Candidate rows decoded at a time (a few arrays of 8 bytes each per row).
CANDIDATE_ROWS = 1 << 21
# Decode whole words once at least 1 / DENSE_SHARE of their rows are candidates:
# per row, a gather per slice costs about as much as DENSE_SHARE rows unpacked.
DENSE_SHARE = 8
# Keys spanning at most this many values are looked up in a table of that span.
LOOKUP_SPAN = 1 << 22


@dataclass(frozen=True)
class FileValues:
    """How a batch's codes map to values: per file either ``minimums[f] + code``
    (``offset[f]``) or ``ranked[starts[f] + code]``."""

    offset: np.ndarray  # bool per file
    minimums: np.ndarray  # int64 per file (0 where ranked)
    ranked: np.ndarray  # int64, every ranked file's sorted values
    starts: np.ndarray  # int64 per file, into ``ranked``


def file_values(columns: PayloadColumns, minimums: np.ndarray | list[int]) -> FileValues | None:
    """The value of each code of a bit-sliced batch (``minimums``: each file's
    unscaled ``min``), or None where a value is not a 64-bit integer (ranked
    decimals, or values beyond int64)."""
    ranked = columns.lists("values")
    offset = np.asarray(columns.field("min").is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    offset &= ~ranked.valid
    flat = np.asarray(ranked.flat.to_numpy(zero_copy_only=False)) if ranked.valid.any() else None
    if flat is not None and (flat.dtype.kind != "i"):
        return None
    if isinstance(minimums, np.ndarray) and minimums.dtype == np.int64:
        lows = np.where(offset, minimums, 0)  # no Python int per file
    else:
        try:
            lows = np.array([m if o else 0 for m, o in zip(minimums, offset.tolist(), strict=True)])
            lows = lows.astype(np.int64, casting="safe") if lows.size else np.zeros(0, np.int64)
        except (OverflowError, TypeError):
            return None
    return FileValues(
        offset,
        lows,
        np.zeros(0, np.int64) if flat is None else flat.astype(np.int64),
        ranked.starts.astype(np.int64),
    )


def integer_keys(values: Iterable[BoundValue], scale: int) -> np.ndarray | None:
    """The integral ``values`` (times ``10**scale``) as sorted distinct int64;
    the others can equal no row of an integral column. None: one is beyond int64."""
    given = list(values)
    ints = [v for v in given if type(v) is int]
    if scale == 0 and len(ints) == len(given):  # the common case, at once
        if ints and not -(2**63) <= min(ints) <= max(ints) < 2**63:
            return None
        return distinct(np.array(ints, dtype=np.int64))
    wanted = []
    for value in given:
        low, high = floor_ceil(value, scale)
        if low != high or not isinstance(low, int):
            continue  # 2.5 or NaN: no integer equals it
        if not -(2**63) <= low < 2**63:
            return None
        wanted.append(low)
    return distinct(np.array(wanted, dtype=np.int64))


def member_rows(
    slices: np.ndarray,
    rows: np.ndarray,
    positions: np.ndarray,
    values: FileValues,
    keys: np.ndarray,
) -> np.ndarray:
    """Of ``rows`` (words, one row per file at ``positions``: the candidate
    non-null rows), those whose value is in ``keys`` (sorted int64).
    ``slices[i, f]``: file f's non-null rows whose code has a 0 at bit i."""
    out = np.zeros_like(rows)
    if len(keys) == 0 or rows.size == 0:
        return out
    width = rows.shape[1]
    flat = rows.ravel()
    candidate_words = np.flatnonzero(flat)
    if len(candidate_words) == 0:
        return out
    # Bounded blocks of candidate words (64 rows each at most).
    step = max(1, CANDIDATE_ROWS // 64)
    out_flat = out.ravel()
    for first in range(0, len(candidate_words), step):
        at = candidate_words[first : first + step]
        out_flat[at] = _block(slices, flat[at], at, width, positions, values, keys)
    return out


def _block(
    slices: np.ndarray,
    words: np.ndarray,
    at: np.ndarray,
    width: int,
    positions: np.ndarray,
    values: FileValues,
    keys: np.ndarray,
) -> np.ndarray:
    """The member rows of candidate ``words`` (at flat indices ``at`` of the
    files-by-words array), as words."""
    bits = _unpack(words)
    local_file, word_in_file = np.divmod(at, width)
    word_file = positions[local_file]
    # Index of each candidate word in one slice (files by words, contiguous).
    in_slice = word_file * slices.shape[2] + word_in_file
    candidates = int(np.bitwise_count(words).sum())
    if candidates * DENSE_SHARE >= bits.size:  # most rows of the words: decode whole words
        code = _word_codes(slices, in_slice)
        return _pack(_is_key(keys, _values_of(values, word_file[:, None], code)) & bits.view(bool))
    word, bit = np.nonzero(bits)
    code = _row_codes(slices, in_slice[word], bit)
    hit = _is_key(keys, _values_of(values, word_file[word], code))
    bits[:] = 0
    bits[word[hit], bit[hit]] = 1
    return _pack(bits)


def _values_of(values: FileValues, file: np.ndarray, code: np.ndarray) -> np.ndarray:
    """The values of codes ``code`` of files ``file`` (broadcast together)."""
    offset = values.offset[file]
    if offset.all():
        return np.asarray(values.minimums[file] + code)
    last = max(len(values.ranked) - 1, 0)
    ranked = values.ranked[np.minimum(values.starts[file] + code, last)] if last else 0
    return np.asarray(np.where(offset, values.minimums[file] + code, ranked))


def _is_key(keys: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Per value, whether it is one of ``keys`` (sorted, distinct, not empty):
    a table of the keys' span where it is small (a lookup in cache), else a
    binary search."""
    low, span = int(keys[0]), int(keys[-1]) - int(keys[0]) + 1
    if span <= LOOKUP_SPAN:
        table = np.zeros(span + 1, dtype=bool)  # the last entry: values outside
        table[keys - low] = True
        at = value - low
        return np.asarray(table[np.where((at >= 0) & (at < span), at, span)])
    found = np.searchsorted(keys, value)
    return np.asarray(keys[np.minimum(found, len(keys) - 1)] == value)


def _unpack(words: np.ndarray) -> np.ndarray:
    """Words (..., n) as their bits (..., n, 64), bit r of a word at [..., r]."""
    as_bytes = words.astype("<u8").view(np.uint8).reshape(*words.shape, 8)
    return np.unpackbits(as_bytes, axis=-1, bitorder="little")


def _pack(bits: np.ndarray) -> np.ndarray:
    """Bits (n, 64) as their n words: :func:`_unpack` undone."""
    return np.packbits(bits, axis=1, bitorder="little").view("<u8").ravel().astype(np.uint64)


def _row_codes(slices: np.ndarray, in_slice: np.ndarray, bit: np.ndarray) -> np.ndarray:
    """The code of each row (bit ``bit`` of word ``in_slice``): one gather per slice."""
    shift = bit.astype(np.uint64)
    code = np.zeros(len(in_slice), dtype=np.int64)
    for i in range(slices.shape[0]):
        stored = (slices[i].ravel()[in_slice] >> shift) & np.uint64(1)
        # A row is in slice i when its code's bit i is 0.
        code |= (1 - stored.astype(np.int64)) << i
    return code


def _word_codes(slices: np.ndarray, in_slice: np.ndarray) -> np.ndarray:
    """The codes of all 64 rows of each word ``in_slice`` (words by rows): per
    slice, its words gathered and unpacked into one bit a row (2M rows of 17
    slices: 39 ms, where a gather per row and slice took 150 ms)."""
    depth = slices.shape[0]
    kind = np.uint32 if depth <= 32 else np.uint64
    code = np.zeros((len(in_slice), 64), dtype=kind)
    shifted = np.empty_like(code)
    for i in range(depth):
        stored = _unpack(slices[i].ravel()[in_slice])
        # In slice i means bit i of the code is 0.
        np.left_shift(stored ^ np.uint8(1), kind(i), out=shifted, dtype=kind)
        np.bitwise_or(code, shifted, out=code)
    return code.astype(np.int64)
