"""Row groups inside the kept files: which can hold a match, from the row sets
the bitmaps left and the row-group sizes each segment records per file."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
from pyroaring import AbstractBitMap

from skipindex.pruning.evaluate import Evaluation
from skipindex.store.location import Listing, TableLocation

__all__ = ["kept_rows", "matching_row_groups"]


def kept_rows(
    location: TableLocation,
    listing: Listing,
    kept: np.ndarray,
    positions: np.ndarray,
    segments: pa.Table,
    evaluation: Evaluation,
) -> tuple[dict[str, list[int]], dict[str, AbstractBitMap], dict[str, tuple[int, int]]]:
    """Per kept file whose matching rows bitmaps narrowed: the row groups holding
    any of them (where that rules some out), the rows themselves, and the file's
    (bytes, mtime in ms) as listed, which a reader by row numbers checks."""
    if not evaluation.row_sets:
        return {}, {}, {}
    # Each file's row-group sizes as numpy slices of one flat array, not a Python
    # list per file (at 1,000 kept files that was a fifth of a warm prune).
    lists = segments.column("row_group_rows").combine_chunks()
    offsets = lists.offsets.to_numpy()
    flat = lists.values.to_numpy(zero_copy_only=False)
    num_rows = segments.column("num_rows").to_numpy()
    groups_of: dict[str, list[int]] = {}
    rows_of: dict[str, AbstractBitMap] = {}
    listed: dict[str, tuple[int, int]] = {}
    for at in np.flatnonzero(kept).tolist():
        position = int(positions[at])
        rows = evaluation.row_sets.get(position)
        if rows is None:
            continue
        path = location.user_path(listing.paths[at].as_py())
        rows_of[path] = rows
        listed[path] = (int(listing.sizes[at]), int(listing.mtimes_ms[at]))
        group_rows = flat[offsets[position] : offsets[position + 1]]
        if len(group_rows) < 2 or group_rows.sum() != num_rows[position]:
            continue  # one row group, or no layout recorded: any group may match
        groups = matching_row_groups(rows, group_rows)
        if len(groups) < len(group_rows):
            groups_of[path] = groups
    return groups_of, rows_of, listed


def matching_row_groups(rows: AbstractBitMap, group_rows: Sequence[int] | np.ndarray) -> list[int]:
    """Indices of the row groups (``group_rows[g]`` rows each, in order) that hold
    at least one of ``rows``."""
    ends = np.cumsum(group_rows, dtype=np.int64)
    below_end = [rows.rank(int(e) - 1) if e > 0 else 0 for e in ends.tolist()]
    before = [0, *below_end[:-1]]
    return [g for g, (a, b) in enumerate(zip(before, below_end, strict=True)) if b > a]
