"""Which listed files the index covers, and at which segment row.

A listed file is covered when a segment row has its path, size and mtime. The
path join is a hash join of two arrays of up to a million strings (0.4 s at 1M
files), so its answer is kept per (segments, listed paths): an unchanged table
lists the same paths in the same order, and comparing two path arrays costs a
few milliseconds. Sizes and mtimes are compared on every prune of a new
listing; a listing held between prunes (:class:`skipindex.Table`) is the same
object each time, and its whole answer is kept with the join.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skipindex.store.cache import batch_cache
from skipindex.store.listing import Listing

__all__ = ["covered_files", "listing_positions"]


@dataclass(frozen=True, eq=False)
class _PathJoin:
    """Where each of ``paths`` is among the segment rows (-1: nowhere)."""

    paths: pa.StringArray
    rows: np.ndarray
    # The last listing joined and its answer (covered, segment rows), kept while
    # the same listing object comes back.
    answered: tuple[Listing, np.ndarray, np.ndarray] | None = None

    @property
    def nbytes(self) -> int:
        return int(self.paths.nbytes) + int(self.rows.nbytes) * 3


def covered_files(
    segments: pa.Table,
    listing: Listing,
    key: tuple[str, ...],
    protect: Collection[tuple[str, ...]] = (),
) -> tuple[np.ndarray, np.ndarray]:
    """For each listed file: is it covered, and at which segment row (0 if not).
    ``key`` names ``segments`` for as long as they do not change; caching the
    join under it evicts no entry in ``protect``."""
    if len(segments) == 0:  # an index of no files covers none
        return np.zeros(len(listing), dtype=bool), np.zeros(len(listing), dtype=np.int64)
    join = _path_join(segments, listing, key, protect)
    if join.answered is not None and join.answered[0] is listing:
        return join.answered[1], join.answered[2]
    found = join.rows >= 0
    rows = np.where(found, join.rows, 0)
    same = (
        found
        & (segments.column("size").to_numpy()[rows] == listing.sizes)
        & (segments.column("mtime_ms").to_numpy()[rows] == listing.mtimes_ms)
    )
    for shared in (same, rows):
        shared.flags.writeable = False  # shared by later prunes of this listing
    batch_cache.put(key, replace(join, answered=(listing, same, rows)), protect=protect)
    return same, rows


def _path_join(
    segments: pa.Table,
    listing: Listing,
    key: tuple[str, ...],
    protect: Collection[tuple[str, ...]],
) -> _PathJoin:
    cached = batch_cache.get(key)
    if isinstance(cached, _PathJoin) and (
        (cached.answered is not None and cached.answered[0] is listing)
        or cached.paths.equals(listing.paths)
    ):
        return cached
    at = pc.index_in(listing.paths, value_set=segments.column("path").combine_chunks())
    rows = np.asarray(pc.fill_null(at, -1).to_numpy(zero_copy_only=False), dtype=np.int64)
    rows.flags.writeable = False  # shared by later prunes
    join = _PathJoin(listing.paths, rows)
    batch_cache.put(key, join, protect=protect)
    return join


def listing_positions(rows: int, covered: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """For each segment row, the position of its file in the listing (-1: not listed)."""
    at = np.full(rows, -1, dtype=np.int64)
    at[positions[covered]] = np.flatnonzero(covered)
    return at
