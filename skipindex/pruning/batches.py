"""Index payloads per run of segments, decoded once per process.

Segment files are written once under a unique name and never change, so neither
do the payloads in them nor the bitmaps prune decodes from those. Prune keeps
them in the batch cache between prunes, within its byte budget, per *unit*:
consecutive segments of a manifest, up to ``PruneOptions.unit_bytes`` of segment files. Not
one entry per manifest: joining every segment's payloads into one array held
them twice while it was built (1.3 GB of peak memory for one prune at a million
files), and a refresh that adds segments would have read them all again. Not
one per segment either: a build writes a few small segments per core, and each
unit is evaluated on its own (a few hundred microseconds each, however small).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from skipindex.indexes.base import FileBatch
from skipindex.store.cache import batch_cache
from skipindex.store.location import TableLocation
from skipindex.store.manifest import Manifest, SegmentRef
from skipindex.store.segments import read_segment_column

__all__ = [
    "Unit",
    "all_cached",
    "batch_key",
    "settle",
    "unit_batch",
    "unit_keys",
    "units_of",
]


@dataclass(frozen=True)
class Unit:
    """Consecutive segments, whose files are rows ``start`` on among the rows
    of every segment of the manifest."""

    refs: tuple[SegmentRef, ...]
    start: int

    @property
    def files(self) -> int:
        return sum(ref.files for ref in self.refs)


def units_of(manifest: Manifest, limit: int) -> tuple[Unit, ...]:
    """The manifest's segments in order, packed into units of at most ``limit``
    bytes of segment files (compressed; one segment may be larger): the same
    units for as long as the manifest names the same segments."""
    out: list[Unit] = []
    refs: list[SegmentRef] = []
    start = held = 0
    for ref in manifest.segments:
        if refs and held + ref.bytes > limit:
            out.append(Unit(tuple(refs), start))
            start, refs, held = start + out[-1].files, [], 0
        refs.append(ref)
        held += ref.bytes
    if refs:
        out.append(Unit(tuple(refs), start))
    return tuple(out)


def batch_key(location: TableLocation, manifest: Manifest, field: str) -> tuple[str, ...]:
    """The key of what is worked out once per set of segments (the listing's
    join with them, the files' bounds)."""
    return (location.uri, *(ref.path for ref in manifest.segments), field)


def _unit_key(location: TableLocation, unit: Unit, field: str) -> tuple[str, ...]:
    return (location.uri, *(ref.path for ref in unit.refs), field, "payloads")


def unit_keys(
    location: TableLocation, units: Iterable[Unit], fields: Iterable[str]
) -> list[tuple[str, ...]]:
    """The cache keys of ``fields``' payloads in ``units``, unit by unit."""
    fields = list(fields)
    return [_unit_key(location, unit, f) for unit in units for f in fields]


def all_cached(location: TableLocation, units: Iterable[Unit], field: str) -> bool:
    """Whether an earlier prune left ``field``'s payloads of every unit cached."""
    return all(batch_cache.get(key) is not None for key in unit_keys(location, units, [field]))


def unit_batch(
    location: TableLocation,
    unit: Unit,
    field: str,
    num_rows: np.ndarray,
    in_use: Collection[tuple[str, ...]],
    share: float = 1.0,
    working: int = 0,
) -> FileBatch:
    """One index column over a unit's files (whose row counts are ``num_rows``),
    as an earlier prune decoded it, or read now and kept where the cache has
    room beside the entries ``in_use``. ``share``: the unit's part of the
    table's files, and so of the cache it may fill with what it decodes;
    ``working``: what it may decode while it is evaluated in any case (what
    does not fit the cache is let go after, see :func:`settle`)."""
    key = _unit_key(location, unit, field)
    batch = batch_cache.get(key)
    if isinstance(batch, FileBatch):
        return batch
    parts = [read_segment_column(location, ref, field) for ref in unit.refs]
    payloads = parts[0] if len(parts) == 1 else pa.concat_arrays(parts)
    del parts  # a unit is held twice only while it is joined
    # What the unit's share of the cache has room for beyond its payloads may be
    # kept decoded (every unit decoding up to the whole cache would hold many times
    # it at once), and at least the working bytes: without words to decode into,
    # the row-level pass goes file by file through pyroaring, minutes at a million
    # files. settle() drops after the unit's evaluation what the cache cannot keep.
    budget = max(int(batch_cache.max_bytes * share) - int(payloads.nbytes), working, 0)
    batch = FileBatch(num_rows, payloads, decode_budget=budget)
    batch_cache.put(key, batch, protect=in_use)
    return batch


def settle(
    location: TableLocation,
    units: Iterable[Unit],
    fields: Iterable[str],
    in_use: Collection[tuple[str, ...]],
) -> None:
    """Count what a prune decoded into the cached batches of ``fields``: every
    batch's payloads are kept, and what was decoded from them while it fits
    beside those (the first units' first); the rest is dropped."""
    keys = unit_keys(location, units, fields)
    found = [(key, batch) for key in keys if (batch := batch_cache.get(key)) is not None]
    for key, _ in found:  # counted again below, at their sizes now
        batch_cache.discard(key)
    room = batch_cache.max_bytes - batch_cache.nbytes
    room -= sum(batch.nbytes - batch.decoded_nbytes for _, batch in found)
    for key, batch in found:
        if batch.decoded_nbytes <= room:
            room -= batch.decoded_nbytes
        else:
            batch.memo.clear()
        batch_cache.put(key, batch, in_use)
