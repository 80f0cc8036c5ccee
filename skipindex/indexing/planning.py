"""Planning a build against the current index: what to read, what to keep, what to rewrite.

An incremental build reads only new and changed files; segments naming removed
or changed files are copied without those rows. Added definitions read the
unchanged files for the new columns only, and every segment is rewritten with
the new payloads next to the old ones (:func:`widen`). Changed or dropped
definitions, and a recorded type widened under an indexed column, re-index
everything. Files an index of an older skipindex could not index (a note in
their row) are indexed again once: their values may need a wider type.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skipindex.indexing.merging import ExpressionPayloads, attach
from skipindex.store.listing import SortedFiles
from skipindex.store.location import DataFile, TableLocation
from skipindex.store.manifest import IndexDef, Manifest, SegmentRef
from skipindex.store.segments import copy_segments, read_segments

__all__ = ["Plan", "make_plan", "rewrite", "widen"]


@dataclass(frozen=True)
class Plan:
    """What one build attempt reads, keeps and rewrites."""

    to_index: list[DataFile]
    unchanged: int
    removed: int  # indexed files no longer listed
    replaced: int  # indexed files indexed again (changed, or new definitions)
    keep_segments: list[SegmentRef]
    rewrite: dict[str, set[str]]  # segment path -> relative paths still live in it
    added: list[IndexDef] = field(default_factory=list)  # new definitions only...
    extend: list[DataFile] = field(default_factory=list)  # ...for these unchanged files


def make_plan(
    location: TableLocation,
    current: Manifest | None,
    listing: Sequence[DataFile],
    definitions: list[IndexDef],
    *,
    full: bool = False,
    recheck_noted: bool = False,
) -> Plan:
    """``full``: index every file again (the recorded type of an indexed column
    changed); ``recheck_noted``: index files with a note in their row again."""
    if current is None:
        return Plan(list(listing), 0, 0, 0, [], {})
    base = ("path", "size", "mtime_ms") + (("error",) if recheck_noted else ())
    indexed = read_segments(location, current, base=base)
    before = [d.field for d in current.indexes]
    added = definitions[len(before) :]
    if full or [d.field for d in definitions[: len(before)]] != before:
        # Changed or dropped definitions: every file needs every payload again.
        listed = {f.path for f in listing}
        was = set(indexed.column("path").to_pylist())
        return Plan(list(listing), 0, len(was - listed), len(was & listed), [], {})
    live, unchanged = _matched(indexed, listing, recheck_noted)
    to_index = [listing[i] for i in np.flatnonzero(~unchanged).tolist()]
    dead = ~live
    seg_paths = indexed.column("path")
    # A changed file's old row is replaced by its new one; the others are removed.
    to_index_paths = {f.path for f in to_index}
    dead_paths = set(seg_paths.filter(pa.array(dead)).to_pylist()) if dead.any() else set()
    replaced = len(dead_paths & to_index_paths)
    removed = int(dead.sum()) - replaced
    keep: list[SegmentRef] = []
    touched: list[tuple[SegmentRef, int]] = []  # and where its rows start
    start = 0
    for ref in current.segments:
        if dead[start : start + ref.files].any():
            touched.append((ref, start))
        else:
            keep.append(ref)
        start += ref.files

    def live_paths(ref: SegmentRef, start: int) -> set[str]:
        rows = seg_paths.slice(start, ref.files).filter(pa.array(live[start : start + ref.files]))
        return set(rows.to_pylist())

    if not added:
        rewrite = {ref.path: live_paths(ref, at) for ref, at in touched}
        return Plan(to_index, int(unchanged.sum()), removed, replaced, keep, rewrite)
    # Added definitions: unchanged files are read for the new columns only, and
    # every segment is rewritten with the new payloads next to the old ones.
    starts = np.cumsum([0] + [ref.files for ref in current.segments])[:-1].tolist()
    segments = zip(current.segments, starts, strict=True)
    every = {ref.path: live_paths(ref, at) for ref, at in segments}
    extend = [listing[i] for i in np.flatnonzero(unchanged).tolist()]
    return Plan(to_index, 0, removed, replaced, [], every, list(added), extend)


def _matched(
    indexed: pa.Table, listing: Sequence[DataFile], recheck_noted: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Per segment row: is its file listed as indexed (same path, size and mtime,
    and no note to index it again)? Per listed file: does such a row cover it?
    One hash join of the paths, not a Python set of a million keys."""
    if isinstance(listing, SortedFiles):  # arrays already: no object per file
        paths, sizes, mtimes = listing.paths, listing.sizes, listing.mtimes_ms
    else:
        paths = pa.array([f.path for f in listing], pa.string())
        sizes = np.fromiter((f.size for f in listing), dtype=np.int64, count=len(listing))
        mtimes = np.fromiter((f.mtime_ms for f in listing), dtype=np.int64, count=len(listing))
    at = pc.index_in(indexed.column("path"), value_set=paths)
    listed = np.asarray(pc.fill_null(at, -1).to_numpy(zero_copy_only=False), dtype=np.int64)
    found = listed >= 0
    where = np.where(found, listed, 0)
    live = (
        found
        & (indexed.column("size").to_numpy() == sizes[where])
        & (indexed.column("mtime_ms").to_numpy() == mtimes[where])
    )
    if recheck_noted:
        noted = indexed.column("error").is_valid().to_numpy(zero_copy_only=False)
        live &= ~np.asarray(noted, dtype=bool)
    unchanged = np.zeros(len(listing), dtype=bool)
    unchanged[listed[live]] = True
    return live, unchanged


def _live_rows(live_paths: dict[str, set[str]]) -> Callable[[SegmentRef, pa.Table], pa.Array]:
    """copy_segments' ``keep``: the rows of files still live in each segment."""
    return lambda ref, table: pc.is_in(
        table.column("path"), pa.array(sorted(live_paths[ref.path]), pa.string())
    )


def rewrite(
    location: TableLocation, current: Manifest, rewrite: dict[str, set[str]], attempt_id: str
) -> list[SegmentRef]:
    """Copy segments that name removed/changed files, without those rows."""
    return copy_segments(
        location,
        current,
        [r for r in current.segments if r.path in rewrite],
        [d.field for d in current.indexes],
        f"{attempt_id}-r",
        keep=_live_rows(rewrite),
    )


def widen(
    location: TableLocation,
    current: Manifest,
    plan: Plan,
    extension: list[SegmentRef],
    attempt_id: str,
    expressions: ExpressionPayloads | None = None,
) -> list[SegmentRef]:
    """The current segments without removed/changed files' rows, with the added
    definitions' payloads as new columns: columns' indexed into ``extension``,
    expressions' computed by Spark (``expressions``)."""
    columns = [d for d in plan.added if d.expression is None]
    added = [d.field for d in columns]
    extra = read_segments(
        location,
        replace(current, segments=tuple(extension), indexes=tuple(columns)),
        added,
        base=("path",),
    )

    def extend(ref: SegmentRef, table: pa.Table) -> pa.Table:
        at = pc.index_in(table.column("path"), extra.column("path"))
        for name in added:
            table = table.append_column(name, extra.column(name).take(at))
        return attach(table, expressions) if expressions else table

    return copy_segments(
        location,
        current,
        current.segments,
        [d.field for d in current.indexes],
        f"{attempt_id}-w",
        keep=_live_rows(plan.rewrite),
        transform=extend,
    )
