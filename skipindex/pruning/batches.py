"""Index columns over every file, decoded once per process.

The segments a manifest names never change, so neither do the payloads in them
nor the bitmaps prune decodes from those: each (table, manifest's segments,
field) is kept in the batch cache between prunes, within its byte budget.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pyarrow as pa

from skipindex.indexes.base import FileBatch
from skipindex.store.cache import batch_cache
from skipindex.store.location import TableLocation
from skipindex.store.manifest import Manifest

__all__ = ["batch_key", "cached_batch", "new_batch", "settle"]


def batch_key(location: TableLocation, manifest: Manifest, field: str) -> tuple[str, ...]:
    return (location.uri, *(ref.path for ref in manifest.segments), field)


def cached_batch(location: TableLocation, manifest: Manifest, field: str) -> FileBatch | None:
    """One index column over every file, as an earlier prune decoded it."""
    batch = batch_cache.get(batch_key(location, manifest, field))
    return batch if isinstance(batch, FileBatch) else None


def new_batch(
    location: TableLocation,
    manifest: Manifest,
    field: str,
    segments: pa.Table,
    num_rows: np.ndarray,
    in_use: set[tuple[str, ...]],
) -> FileBatch:
    """One index column over every file, read from ``segments``; kept for later
    prunes where the cache has room beside the other entries in use."""
    payloads = segments.column(field).combine_chunks()
    # What the cache has room for beyond the payloads may be kept decoded; where
    # the batches of one prune decode more than that together, settle() drops what
    # was decoded from those that no longer fit.
    budget = max(batch_cache.max_bytes - int(payloads.nbytes), 0)
    batch = FileBatch(num_rows, payloads, decode_budget=budget)
    batch_cache.put(batch_key(location, manifest, field), batch, protect=in_use)
    return batch


def settle(
    location: TableLocation,
    manifest: Manifest,
    fields: Iterable[str],
    in_use: set[tuple[str, ...]],
) -> None:
    """Count what a prune decoded into the cached batches of ``fields``."""
    for field in fields:
        cached_at = batch_key(location, manifest, field)
        if (cached := batch_cache.get(cached_at)) is not None and not batch_cache.put(
            cached_at, cached, protect=in_use
        ):
            cached.memo.clear()  # no room for what was decoded: keep the payloads at least
            batch_cache.put(cached_at, cached, protect=in_use)
