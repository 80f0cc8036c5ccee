"""Min-max over blocks of files: a summary above the file level.

A prune over a million files asks min-max about every one of them, though a
selective condition leaves a few thousand. So the
files are taken in order of their mins, ``BLOCK_FILES`` at a time: where files
hold narrow ranges (a clustered or sorted table), the min-max of a block (the
least of their mins, the greatest of their maxes, their null and NaN counts
summed) stays narrow, rules out most blocks at once for a selective condition,
and only the files of the blocks left are asked one by one.

A block's summary is the min-max payload of one file holding every row of its
files, so whatever the summary rules out, each of its files' payloads rules out
too: the files kept are exactly those the files' own payloads keep. A block with
a file the index does not know, or whose bound is open (an untruncatable string
max), has no summary and is always asked file by file.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skipindex.indexes.base import FileBatch

__all__ = ["ASK_BLOCKS_UP_TO", "BLOCK_FILES", "ZONED_FROM", "block_files", "zones_of"]

# Files per block: at a million files, 977 block summaries to ask first.
BLOCK_FILES = 1024
# Below this many files one pass over the files costs less than two passes.
ZONED_FROM = 8 * BLOCK_FILES
# The share of blocks left up to which asking their files alone pays (taking
# their payloads costs about what asking them does).
ASK_BLOCKS_UP_TO = 0.25
_MEMO = "minmax-zones"
_ORDER = "files-in-order"  # zones.memo: file positions, block after block


def zones_of(files: FileBatch) -> FileBatch:
    """One min-max payload per block of ``BLOCK_FILES`` consecutive files,
    worked out once per batch (prune keeps batches between calls)."""
    found = files.memo.get(_MEMO)
    if isinstance(found, FileBatch):
        return found
    zones = _summarise(files)
    files.memo[_MEMO] = zones
    return zones


def block_files(zones: FileBatch, blocks: np.ndarray) -> np.ndarray:
    """The positions of the files in the blocks of ``zones`` marked in ``blocks``."""
    order = zones.memo[_ORDER]
    chosen = np.flatnonzero(blocks)
    starts = chosen * BLOCK_FILES
    lengths = np.minimum(starts + BLOCK_FILES, len(order)) - starts
    offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
    return np.asarray(order[np.arange(int(lengths.sum()), dtype=np.int64) + offsets])


def _summarise(files: FileBatch) -> FileBatch:
    payloads = files.payloads
    nulls = _counts(payloads.field("null_count"))
    nans = _counts(payloads.field("nan_count"))
    regular = files.num_rows.astype(np.int64) - nulls - nans
    low, high = payloads.field("min"), payloads.field("max")
    open_bound = (regular > 0) & (_missing(low) | _missing(high))
    unsure = ~files.known() | open_bound
    # Blocks of files in order of their mins, the files the index cannot summarise
    # last: files of neighbouring values share a block whatever order they were
    # listed in, so a block's max stays near its min where the files' ranges do.
    by = pa.table({"unsure": unsure, "min": low})
    order = np.asarray(
        pc.sort_indices(by, sort_keys=[("unsure", "ascending"), ("min", "ascending", "at_end")])
    )
    count = len(order)
    block = np.arange(count, dtype=np.int64) // BLOCK_FILES
    take = pa.array(order)
    table = pa.table(
        {
            "block": block,
            "min": low.take(take),
            "max": high.take(take),
            "nulls": nulls[order],
            "nans": nans[order],
        }
    )
    grouped = table.group_by("block", use_threads=False).aggregate(
        [("min", "min"), ("max", "max"), ("nulls", "sum"), ("nans", "sum")]
    )
    at = pa.array(np.argsort(grouped.column("block").to_numpy()))
    starts = np.arange(0, count, BLOCK_FILES)
    rows = np.add.reduceat(files.num_rows.astype(np.int64)[order], starts) if count else starts
    unsure_blocks = np.add.reduceat(unsure[order], starts) > 0 if count else unsure
    summary = pa.StructArray.from_arrays(
        [
            grouped.column("min_min").combine_chunks().take(at).cast(low.type),
            grouped.column("max_max").combine_chunks().take(at).cast(high.type),
            grouped.column("nulls_sum").combine_chunks().take(at).cast(pa.int64()),
            grouped.column("nans_sum").combine_chunks().take(at).cast(pa.int64()),
        ],
        fields=list(payloads.type),
        mask=pa.array(unsure_blocks),
    )
    zones = FileBatch(rows, summary)
    zones.memo[_ORDER] = order
    return zones


def _counts(array: pa.Array) -> np.ndarray:
    return np.asarray(pc.fill_null(array, 0).to_numpy(zero_copy_only=False), dtype=np.int64)


def _missing(array: pa.Array) -> np.ndarray:
    return np.asarray(array.is_null().to_numpy(zero_copy_only=False), dtype=bool)
