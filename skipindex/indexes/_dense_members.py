"""Rows whose value is one of a long list, on bit-sliced files, as words (see
:mod:`._dense`).

RangeEval answers an IN list one code at a time: a pass over every slice of
every file per key, so 1,000 keys cost 1,000 passes (:mod:`._dense_sliced`).
Here each candidate row's code is read instead: one gather per slice at the
candidate rows only (the rows the conditions before it in an AND left, see
``within`` in :meth:`~skipindex.indexes.base.RowLevelKind.dense_rows`), the
code mapped to its value (``min + code`` or the file's ranked values), and the
value looked up in the sorted keys. The cost follows the candidate rows times
the slices, not the keys: SSB's ``lo_custkey IN`` (1,209 customers) after the
month's rows is a few hundred rows a file.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from skipindex.expressions.nodes import BoundValue
from skipindex.indexes._bitmap_query import floor_ceil
from skipindex.indexes._payloads import PayloadColumns

__all__ = ["CANDIDATE_ROWS", "FileValues", "file_values", "integer_keys", "member_rows"]

# Candidate rows decoded at a time (a few arrays of 8 bytes each per row).
CANDIDATE_ROWS = 1 << 22


@dataclass(frozen=True)
class FileValues:
    """How a batch's codes map to values: per file either ``minimums[f] + code``
    (``offset[f]``) or ``ranked[starts[f] + code]``."""

    offset: np.ndarray  # bool per file
    minimums: np.ndarray  # int64 per file (0 where ranked)
    ranked: np.ndarray  # int64, every ranked file's sorted values
    starts: np.ndarray  # int64 per file, into ``ranked``


def file_values(columns: PayloadColumns, minimums: list[int]) -> FileValues | None:
    """The value of each code of a bit-sliced batch (``minimums``: each file's
    unscaled ``min``), or None where a value is not a 64-bit integer (ranked
    decimals, or values beyond int64)."""
    ranked = columns.lists("values")
    offset = np.asarray(columns.field("min").is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    offset &= ~ranked.valid
    flat = np.asarray(ranked.flat.to_numpy(zero_copy_only=False)) if ranked.valid.any() else None
    if flat is not None and (flat.dtype.kind != "i"):
        return None
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
    wanted = []
    for value in values:
        low, high = floor_ceil(value, scale)
        if low != high or not isinstance(low, int):
            continue  # 2.5 or NaN: no integer equals it
        if not -(2**63) <= low < 2**63:
            return None
        wanted.append(low)
    return np.unique(np.array(wanted, dtype=np.int64))


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
    as_bytes = words.astype("<u8").view(np.uint8).reshape(-1, 8)
    bits = np.unpackbits(as_bytes, axis=1, bitorder="little")
    word, bit = np.nonzero(bits)
    local_file, word_in_file = np.divmod(at[word], width)
    file = positions[local_file]
    # Index of each candidate row's word in one slice (files by words, contiguous).
    in_slice = file * slices.shape[2] + word_in_file
    shift = bit.astype(np.uint64)
    code = np.zeros(len(word), dtype=np.int64)
    for i in range(slices.shape[0]):
        stored = (slices[i].ravel()[in_slice] >> shift) & np.uint64(1)
        # A row is in slice i when its code's bit i is 0.
        code |= (1 - stored.astype(np.int64)) << i
    value = np.where(
        values.offset[file],
        values.minimums[file] + code,
        values.ranked[np.minimum(values.starts[file] + code, max(len(values.ranked) - 1, 0))]
        if len(values.ranked)
        else 0,
    )
    found = np.searchsorted(keys, value)
    hit = keys[np.minimum(found, len(keys) - 1)] == value
    bits[:] = 0
    bits[word[hit], bit[hit]] = 1
    return np.packbits(bits, axis=1, bitorder="little").view("<u8").ravel().astype(np.uint64)
