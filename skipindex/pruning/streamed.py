"""Prune a table whose index payloads are too large to hold at once.

``prune`` reads the payload columns a predicate needs for every file and keeps
them (and what it decodes) in the batch cache, so that the next prune reads
nothing. At a million files three bitmap indexes hold gigabytes: more than the
cache may keep (``SKIPINDEX_CACHE_BYTES``), and more than a driver should hold.
The payload columns that fit the cache's room (uncompressed, as the segments'
footers state them) are read whole and kept, as ever; where the others do not,
the files are evaluated a group at a time: each group's payloads of those
columns (``SKIPINDEX_PRUNE_BYTES`` at most, default 64 MiB, or one row group of
a segment) are read, evaluated and let go before the next group is read, so
memory is bounded by the group, not the table. Every file is evaluated on its
own payloads either way, so the files kept are the same; only what was read a
group at a time is not kept for the next prune.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from skipindex.errors import IndexCorruptError
from skipindex.expressions.nodes import BoundPredicate
from skipindex.indexes.base import FileBatch, IndexKind
from skipindex.pruning.evaluate import Evaluation, IndexColumn, LeafReport, RowLevel, evaluate
from skipindex.store.location import TableLocation
from skipindex.store.manifest import Manifest, SegmentRef

__all__ = ["PRUNE_BYTES", "Group", "Streaming", "evaluate_groups", "groups_of"]

# Payload bytes a group of files holds, where a prune evaluates in groups.
PRUNE_BYTES = int(os.environ.get("SKIPINDEX_PRUNE_BYTES", str(64 * 1024 * 1024)))
# Segment files hold payloads compressed about this many times at most: below
# a limit / this in all, no footer needs reading to know they fit.
_COMPRESSION = 8


@dataclass(frozen=True)
class Group:
    """Consecutive segment rows from ``start``: row groups of some segments."""

    start: int
    parts: tuple[tuple[SegmentRef, tuple[int, ...]], ...]
    rows: int


@dataclass(frozen=True)
class Streaming:
    """The fields read a group at a time, and the groups."""

    fields: tuple[str, ...]
    groups: tuple[Group, ...]


def groups_of(
    location: TableLocation,
    manifest: Manifest,
    fields: Sequence[str],
    limit: int,
    budget: int = PRUNE_BYTES,
) -> Streaming | None:
    """Which of ``fields`` to read a group at a time: those whose payloads do
    not fit beside the others in ``limit`` bytes (the first fields are read
    whole while they fit), with groups of at most ``budget`` bytes of them (or
    one row group). None where all of them fit."""
    if not fields or sum(ref.bytes for ref in manifest.segments) * _COMPRESSION <= limit:
        return None
    footers = [_open(location, ref).metadata for ref in manifest.segments]
    sizes = {f: [_row_group_bytes(footer, f) for footer in footers] for f in fields}
    room, streamed = limit, []
    for field in fields:
        whole = sum(sum(b for _, b in found) for found in sizes[field])
        if whole <= room:
            room -= whole
        else:
            streamed.append(field)
    if not streamed:
        return None
    per_group = [
        [(rows, sum(sizes[f][s][n][1] for f in streamed)) for n, (rows, _) in enumerate(found)]
        for s, found in enumerate(sizes[streamed[0]])
    ]
    return Streaming(tuple(streamed), tuple(_pack(manifest, per_group, budget)))


def _pack(manifest: Manifest, per_group: list[list[tuple[int, int]]], budget: int) -> list[Group]:
    """Consecutive row groups, ``budget`` bytes at a time."""
    out: list[Group] = []
    parts: list[tuple[SegmentRef, list[int]]] = []
    start = held = rows = 0
    for ref, found in zip(manifest.segments, per_group, strict=True):
        for number, (group_rows, size) in enumerate(found):
            if parts and held + size > budget:
                out.append(_group(start, parts, rows))
                start, parts, held, rows = start + rows, [], 0, 0
            if not parts or parts[-1][0] is not ref:
                parts.append((ref, []))
            parts[-1][1].append(number)
            held, rows = held + size, rows + group_rows
    if parts:
        out.append(_group(start, parts, rows))
    return out


def evaluate_groups(
    location: TableLocation,
    groups: Sequence[Group],
    kinds: Mapping[str, tuple[str, IndexKind]],
    extra: Mapping[str, Sequence[IndexColumn]],
    predicate: BoundPredicate,
    num_rows: np.ndarray,
    row_level: RowLevel,
    budget: int = PRUNE_BYTES,
) -> Evaluation:
    """:func:`evaluate` over every file, a group at a time. ``kinds``: field ->
    (column, kind) of the payloads read group by group; ``extra``: indexes over
    every file already (read whole, partitions, deleted rows), taken a group at
    a time too; ``budget``: the bytes of decoded bitmaps a group may keep while
    it is evaluated."""
    might_match = np.zeros(len(num_rows), dtype=bool)
    reports: dict[str, LeafReport] = {}
    total = Evaluation(might_match, [])
    for group in groups:
        at = np.arange(group.start, group.start + group.rows)
        rows = num_rows[at]
        table = _read_group(location, group, list(kinds))
        indexes: dict[str, list[IndexColumn]] = defaultdict(list)
        for field, (column, kind) in kinds.items():
            payloads = table.column(field).combine_chunks()
            batch = FileBatch(rows, payloads, decode_budget=budget)
            indexes[column].append(IndexColumn(kind, batch))
        for column, found in extra.items():
            indexes[column].extend(replace(i, files=i.files.take(at)) for i in found)
        part = evaluate(predicate, rows, indexes, row_level)
        might_match[at] = part.might_match
        _merge(total, part, group.start, reports)
    total.leaves = list(reports.values())
    return total


def _merge(total: Evaluation, part: Evaluation, start: int, reports: dict[str, LeafReport]) -> None:
    total.row_level_files += part.row_level_files
    total.row_level_skipped += part.row_level_skipped
    total.row_level_sampled += part.row_level_sampled
    total.row_level_likely += part.row_level_likely
    total.row_sets.update({start + p: rows for p, rows in part.row_sets.items()})
    for leaf in part.leaves:
        fresh = LeafReport(leaf.condition, leaf.kinds, leaf.note)
        found = reports.setdefault(leaf.condition, fresh)
        found.ruled_out.update(leaf.ruled_out)


def _group(start: int, parts: list[tuple[SegmentRef, list[int]]], rows: int) -> Group:
    return Group(start, tuple((ref, tuple(numbers)) for ref, numbers in parts), rows)


def _row_group_bytes(metadata: pq.FileMetaData, field: str) -> list[tuple[int, int]]:
    """(rows, uncompressed bytes of ``field``) of each row group of a segment."""
    out = []
    for number in range(metadata.num_row_groups):
        group = metadata.row_group(number)
        size = sum(
            group.column(i).total_uncompressed_size
            for i in range(group.num_columns)
            if group.column(i).path_in_schema.split(".")[0] == field
        )
        out.append((group.num_rows, size))
    return out


def _read_group(location: TableLocation, group: Group, fields: list[str]) -> pa.Table:
    tables = []
    for ref, numbers in group.parts:
        try:
            tables.append(_open(location, ref).read_row_groups(list(numbers), columns=fields))
        except (pa.ArrowException, OSError, KeyError) as exc:
            raise IndexCorruptError(f"index segment {ref.path} is damaged: {exc}") from exc
    table = pa.concat_tables(tables)
    if len(table) != group.rows:
        raise IndexCorruptError(f"index segments of rows {group.start}+ do not match their footers")
    return table


def _open(location: TableLocation, ref: SegmentRef) -> pq.ParquetFile:
    path = f"{location.index_dir}/{ref.path}"
    try:
        return pq.ParquetFile(path, filesystem=location.fs, page_checksum_verification=True)
    except FileNotFoundError as exc:
        raise IndexCorruptError(f"index segment is missing: {path}") from exc
    except (pa.ArrowException, OSError) as exc:
        raise IndexCorruptError(f"index segment is damaged: {path}: {exc}") from exc
