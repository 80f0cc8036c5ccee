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

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import pyarrow as pa
import pyarrow.compute as pc

from skipindex.indexing.merging import ExpressionPayloads, attach
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
    listing: list[DataFile],
    definitions: list[IndexDef],
    *,
    full: bool = False,
    recheck_noted: bool = False,
) -> Plan:
    """``full``: index every file again (the recorded type of an indexed column
    changed); ``recheck_noted``: index files with a note in their row again."""
    if current is None:
        return Plan(listing, 0, 0, 0, [], {})
    base = ("path", "size", "mtime_ms") + (("error",) if recheck_noted else ())
    indexed = read_segments(location, current, base=base)
    before = [d.field for d in current.indexes]
    added = definitions[len(before) :]
    if full or [d.field for d in definitions[: len(before)]] != before:
        # Changed or dropped definitions: every file needs every payload again.
        listed = {f.path for f in listing}
        was = set(indexed.column("path").to_pylist())
        return Plan(listing, 0, len(was - listed), len(was & listed), [], {})
    keys = list(
        zip(
            indexed.column("path").to_pylist(),
            indexed.column("size").to_pylist(),
            indexed.column("mtime_ms").to_pylist(),
            strict=True,
        )
    )
    live = {(f.path, f.size, f.mtime_ms) for f in listing}
    noted: set[tuple[str, int, int]] = set()
    if recheck_noted:
        notes = indexed.column("error").is_valid().to_pylist()
        noted = {key for key, note in zip(keys, notes, strict=True) if note}
    indexed_keys = set(keys) - noted
    to_index: list[DataFile] = []
    unchanged: list[DataFile] = []
    for f in listing:
        (unchanged if (f.path, f.size, f.mtime_ms) in indexed_keys else to_index).append(f)
    dead = (set(keys) - live) | noted
    live_paths: dict[str, set[str]] = {}  # segment path -> its rows' files still live
    keep: list[SegmentRef] = []
    touched: list[SegmentRef] = []
    offset = 0
    for ref in current.segments:
        rows = keys[offset : offset + ref.files]
        offset += ref.files
        live_paths[ref.path] = {r[0] for r in rows if r not in dead}
        (keep if dead.isdisjoint(rows) else touched).append(ref)
    replaced = len({p for p, _, _ in dead} & {f.path for f in to_index})
    removed = len(dead) - replaced
    if not added:
        rewrite = {r.path: live_paths[r.path] for r in touched}
        return Plan(to_index, len(unchanged), removed, replaced, keep, rewrite)
    # Added definitions: unchanged files are read for the new columns only, and
    # every segment is rewritten with the new payloads next to the old ones.
    return Plan(to_index, 0, removed, replaced, [], live_paths, list(added), unchanged)


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
