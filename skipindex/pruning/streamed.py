"""Evaluate a table's files a group at a time.

``prune`` never holds an index column over every file as one array: at a million
files one equality bitmap's payloads are 340 MB, and joining the segments' parts
into one array held them twice (1.3 GB of peak memory for one prune). The files
are evaluated a group at a time instead, in segment order, and each group's
answers land at its rows:

* payload columns that fit the batch cache's room (uncompressed, as the
  segments' footers state them) are read a unit (a run of segments,
  :mod:`skipindex.pruning.batches`) at a time and kept in the cache per unit, so
  the next prune reads nothing, and a refresh that adds segments reads only
  those; a group is a unit;
* where they do not, the files are evaluated a smaller group at a time: each
  group's payloads of those columns (``PruneOptions.working_bytes`` at most,
  default 64 MiB, or one row group of a segment) are read, evaluated and let go before
  the next group is read, so memory is bounded by the group, not the table.

Every file is evaluated on its own payloads either way, so the files kept are
the same as in one pass over all of them.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from skipindex.errors import IndexCorruptError
from skipindex.expressions.nodes import BoundPredicate
from skipindex.indexes.base import FileBatch, IndexKind
from skipindex.pruning.batches import Unit, settle, unit_batch
from skipindex.pruning.evaluate import Evaluation, IndexColumn, LeafReport, RowLevel, evaluate
from skipindex.pruning.options import PruneOptions
from skipindex.store.location import TableLocation
from skipindex.store.manifest import Manifest, SegmentRef

__all__ = ["Group", "Streaming", "evaluate_groups", "groups_of"]

# Segment files hold payloads compressed about this many times at most: below
# a limit / this in all, no footer needs reading to know they fit.
_COMPRESSION = 8

# (column, kind) of an index field, by field.
Kinds = Mapping[str, tuple[str, IndexKind]]


@dataclass(frozen=True)
class Group:
    """Files ``offset`` to ``offset + rows`` of ``unit``, which are rows ``start``
    on among the rows of every segment; ``parts``: the row groups they are in,
    per segment (None: the whole unit)."""

    unit: Unit
    start: int
    offset: int
    rows: int
    parts: tuple[tuple[SegmentRef, tuple[int, ...]], ...] | None = None


@dataclass(frozen=True)
class Streaming:
    """The fields read a group at a time (never kept), and the groups."""

    fields: tuple[str, ...]
    groups: tuple[Group, ...]


def groups_of(
    location: TableLocation,
    manifest: Manifest,
    units: Sequence[Unit],
    fields: Sequence[str],
    limit: int,
    budget: int,
) -> Streaming:
    """Which of ``fields`` to read a group at a time, and the groups: those
    fields whose payloads do not fit beside the others in ``limit`` bytes (the
    first fields are read whole while they fit), in groups of at most ``budget``
    bytes of them (or one row group). Where all of them fit, a group is a unit."""
    whole = tuple(Group(unit, unit.start, 0, unit.files) for unit in units)
    if not fields or sum(ref.bytes for ref in manifest.segments) * _COMPRESSION <= limit:
        return Streaming((), whole)
    footers = {ref.path: _open(location, ref).metadata for ref in manifest.segments}
    sizes = {f: {p: _row_group_bytes(footer, f) for p, footer in footers.items()} for f in fields}
    room, streamed = limit, []
    for field in fields:
        total = sum(sum(b for _, b in found) for found in sizes[field].values())
        if total <= room:
            room -= total
        else:
            streamed.append(field)
    if not streamed:
        return Streaming((), whole)

    def row_groups(ref: SegmentRef) -> list[tuple[int, int]]:
        found = sizes[streamed[0]][ref.path]
        return [
            (rows, sum(sizes[f][ref.path][n][1] for f in streamed))
            for n, (rows, _) in enumerate(found)
        ]

    groups = [g for unit in units for g in _pack(unit, row_groups, budget)]
    return Streaming(tuple(streamed), tuple(groups))


def _pack(
    unit: Unit, row_groups: Callable[[SegmentRef], list[tuple[int, int]]], budget: int
) -> list[Group]:
    """Consecutive row groups of a unit's segments, ``budget`` bytes at a time."""
    out: list[Group] = []
    parts: list[tuple[SegmentRef, list[int]]] = []
    offset = held = rows = 0
    for ref in unit.refs:
        for number, (group_rows, size) in enumerate(row_groups(ref)):
            if parts and held + size > budget:
                out.append(_group(unit, offset, rows, parts))
                offset, parts, held, rows = offset + rows, [], 0, 0
            if not parts or parts[-1][0] is not ref:
                parts.append((ref, []))
            parts[-1][1].append(number)
            held, rows = held + size, rows + group_rows
    if parts:
        out.append(_group(unit, offset, rows, parts))
    return out


def _group(unit: Unit, offset: int, rows: int, parts: list[tuple[SegmentRef, list[int]]]) -> Group:
    found = tuple((ref, tuple(numbers)) for ref, numbers in parts)
    return Group(unit, unit.start + offset, offset, rows, found)


def evaluate_groups(
    location: TableLocation,
    groups: Sequence[Group],
    kept: Kinds,
    streamed: Kinds,
    extra: Mapping[str, Sequence[IndexColumn]],
    predicate: BoundPredicate,
    num_rows: np.ndarray,
    row_level: RowLevel,
    in_use: Collection[tuple[str, ...]],
    options: PruneOptions,
) -> Evaluation:
    """:func:`evaluate` over every file, a group at a time. ``kept``: field ->
    (column, kind) of the payloads read a unit at a time and kept in the
    cache (its entries in ``in_use`` are never evicted for one another);
    ``streamed``: those read a group at a time and let go; ``extra``: indexes
    over every file already (partitions, deleted rows), taken a group at a time
    too; ``options.working_bytes``: the bytes of decoded bitmaps a group may
    hold while it is evaluated (what a unit's batches decoded is counted in the cache after its
    evaluation, and let go where it does not fit)."""
    kinds = {**kept, **streamed}
    if not groups:  # no segment: no file to evaluate, but the conditions are reported
        empty = {
            f: FileBatch(num_rows, pa.array([], k.payload_type())) for f, (_, k) in kinds.items()
        }
        indexes = _indexes(kinds, empty, extra, slice(0, 0))
        return evaluate(predicate, num_rows, indexes, row_level)

    budget = options.working_bytes

    def one(group: Group) -> Evaluation:
        at = slice(group.start, group.start + group.rows)
        batches = {
            field: _kept_part(location, group, field, num_rows, in_use, len(kept), budget)
            for field in kept
        }
        if streamed:
            table = _read_group(location, group, list(streamed))
            for field in streamed:
                payloads = table.column(field).combine_chunks()
                batches[field] = FileBatch(num_rows[at], payloads, decode_budget=budget)
        indexes = _indexes(kinds, batches, extra, at)
        found = evaluate(predicate, num_rows[at], indexes, row_level)
        if group.parts is None:  # the unit's batches: count what they decoded now
            settle(location, [group.unit], kept, in_use)
        return found

    might_match = np.zeros(len(num_rows), dtype=bool)
    reports: dict[str, LeafReport] = {}
    total = Evaluation(might_match, [])
    for group, part in zip(groups, _each(one, groups, len(num_rows), options), strict=True):
        might_match[group.start : group.start + group.rows] = part.might_match
        _merge(total, part, group.start, reports)
    total.leaves = list(reports.values())
    return total


def _each(
    one: Callable[[Group], Evaluation], groups: Sequence[Group], files: int, options: PruneOptions
) -> Iterator[Evaluation]:
    """``one`` of each group, in order: on ``options.threads`` threads where the
    table has ``options.threaded_files`` files or more (numpy and Arrow let go of the GIL
    while they decode and combine a group's bitmaps), else in turn, where a
    thread's start would cost more than the work it shares. One group per
    thread is in flight, so memory stays bounded by that many groups."""
    threads = options.threads
    if threads < 2 or len(groups) < 2 or files < options.threaded_files:
        yield from map(one, groups)
        return
    with ThreadPoolExecutor(max_workers=threads) as pool:
        pending: deque[Future[Evaluation]] = deque()
        for group in groups:
            if len(pending) >= threads:
                yield pending.popleft().result()
            pending.append(pool.submit(one, group))
        while pending:
            yield pending.popleft().result()


def _indexes(
    kinds: Kinds,
    batches: Mapping[str, FileBatch],
    extra: Mapping[str, Sequence[IndexColumn]],
    at: slice,
) -> dict[str, list[IndexColumn]]:
    """The indexes of one group by column: the payloads' kinds in ``kinds``'
    order, then ``extra``'s taken at the group's rows."""
    indexes: dict[str, list[IndexColumn]] = defaultdict(list)
    for field, (column, kind) in kinds.items():
        indexes[column].append(IndexColumn(kind, batches[field]))
    positions = np.arange(at.start, at.stop)
    for column, found in extra.items():
        indexes[column].extend(replace(i, files=i.files.take(positions)) for i in found)
    return indexes


def _kept_part(
    location: TableLocation,
    group: Group,
    field: str,
    num_rows: np.ndarray,
    in_use: Collection[tuple[str, ...]],
    fields: int,
    working: int,
) -> FileBatch:
    """The group's files of a field kept per unit: the unit's batch, or the
    group's slice of it (what was decoded from the whole is not carried). Of
    the cache, the batch may fill its unit's share of its field's share (one
    of ``fields``) with what it decodes."""
    unit = group.unit
    rows = num_rows[unit.start : unit.start + unit.files]
    share = unit.files / len(num_rows) / fields
    batch = unit_batch(location, unit, field, rows, in_use, share, working)
    if group.parts is None:
        return batch
    return FileBatch(
        batch.num_rows[group.offset : group.offset + group.rows],
        batch.payloads.slice(group.offset, group.rows),
        decode_budget=batch.decode_budget,
    )


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
    for ref, numbers in group.parts or ():
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
