"""Planning a build against the current index: what to read, what to keep, what to rewrite.

An incremental build reads only new and changed files; segments naming removed
or changed files are copied without those rows. Added definitions read the
unchanged files for the new columns only, and every segment is rewritten with
the new payloads next to the old ones (:func:`widen`). Changed or dropped
definitions re-index everything.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pyarrow as pa
import pyarrow.compute as pc

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
) -> Plan:
    if current is None:
        return Plan(listing, 0, 0, 0, [], {})
    indexed = read_segments(location, current, base=("path", "size", "mtime_ms"))
    before = [d.field for d in current.indexes]
    added = definitions[len(before) :]
    if [d.field for d in definitions[: len(before)]] != before:
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
    indexed_keys = set(keys)
    to_index = [f for f in listing if (f.path, f.size, f.mtime_ms) not in indexed_keys]
    dead = indexed_keys - live
    keep: list[SegmentRef] = []
    rewrite: dict[str, set[str]] = {}
    offset = 0
    for ref in current.segments:
        rows = keys[offset : offset + ref.files]
        offset += ref.files
        if dead.isdisjoint(rows):
            keep.append(ref)
        else:
            rewrite[ref.path] = {r[0] for r in rows if r not in dead}
    replaced = len({p for p, _, _ in dead} & {f.path for f in to_index})
    unchanged = len(listing) - len(to_index)
    if not added:
        return Plan(to_index, unchanged, len(dead) - replaced, replaced, keep, rewrite)
    # Added definitions: unchanged files are read for the new columns only, and
    # every segment is rewritten with the new payloads next to the old ones.
    live_paths: dict[str, set[str]] = {}
    offset = 0
    for ref in current.segments:
        rows = keys[offset : offset + ref.files]
        offset += ref.files
        live_paths[ref.path] = {r[0] for r in rows if r not in dead}
    extend = [f for f in listing if (f.path, f.size, f.mtime_ms) in indexed_keys]
    return Plan(to_index, 0, len(dead) - replaced, replaced, [], live_paths, list(added), extend)


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
        keep=lambda ref, table: pc.is_in(
            table.column("path"), pa.array(sorted(rewrite[ref.path]), pa.string())
        ),
    )


def widen(
    location: TableLocation,
    current: Manifest,
    plan: Plan,
    extension: list[SegmentRef],
    attempt_id: str,
) -> list[SegmentRef]:
    """The current segments without removed/changed files' rows, with the added
    definitions' payloads (indexed into ``extension``) as new columns."""
    added = [d.field for d in plan.added]
    extra = read_segments(
        location,
        replace(current, segments=tuple(extension), indexes=tuple(plan.added)),
        added,
        base=("path",),
    )

    def keep_and_extend(ref: SegmentRef, table: pa.Table) -> pa.Table:
        live = pa.array(sorted(plan.rewrite[ref.path]), pa.string())
        table = table.filter(pc.is_in(table.column("path"), live))
        at = pc.index_in(table.column("path"), extra.column("path"))
        for name in added:
            table = table.append_column(name, extra.column(name).take(at))
        return table

    return copy_segments(
        location,
        current,
        current.segments,
        [d.field for d in current.indexes],
        f"{attempt_id}-w",
        transform=keep_and_extend,
    )
