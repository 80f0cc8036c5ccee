"""Inside the kept files: read only the row groups, and rows, that can match.

Exact bitmaps often know that a kept file's matches sit in a few of its row
groups, and which rows those are (:attr:`PruneResult.rows`). For such files
:func:`skipindex.read` hands Spark a Python data source (``_row_group_source``)
that opens only those row groups with pyarrow and passes on only those rows,
decoding of each column only the pages that hold them where that pays
(:mod:`skipindex.reading.pages`). Spark still applies ``where`` to every row it gets,
so this can only read less.

A file is read this way only where pyarrow provably reads what Spark's Parquet
reader would (:func:`~skipindex.spark.view.spark_columns`: flat columns of the
table's type, matched as Spark matches names, no LEGACY calendar rebasing), on a
local disk, with partition columns only where their type is modelled (their
values, typed as prune types them for Spark, are passed on as constants); every
other kept file is read by Spark as a whole. This module imports no Spark: the
data source is a thin shell around :func:`~skipindex.reading.split.read_split`.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs

from skipindex.pruning.result import PruneResult
from skipindex.reading.costs import Costs, costs, where_bytes
from skipindex.reading.footers import FooterLayout, footer_layout, stamp
from skipindex.reading.policy import active
from skipindex.spark.settings import SparkView
from skipindex.spark.view import is_flat, open_file, spark_columns
from skipindex.store.location import TableLocation

__all__ = [
    "Split",
    "plan_read",
    "plan_splits",
    "in_files_of",
    "worth_it",
]

# What makes reading by row groups pay (the share of a file read, the bytes a file
# and the files together save) is the planning policy's: group_share,
# where_bytes_factor, min_bytes_saved (skipindex.reading.policy). Measured: a point
# condition at 6M rows read by whole row groups took 1.69 s at a share of 0.5,
# 1.39 s at 0.75, against 1.33 s for plain Spark; over shuffled rows pyarrow passing
# on only the candidate rows took 0.82 s where Spark on the floor's files took
# 2.88 s; a range and an equality over 14 kept files, 530 ms by row groups
# against 327 ms whole. All such files or none: splitting them between the
# source and a Spark scan costs a second scan (3.39 s against 2.97 s).


@dataclass(frozen=True)
class Split:
    """One file's part of the read: its row groups and the rows in them to pass on."""

    path: str  # a local path pyarrow opens
    size: int  # bytes and mtime (ms) as indexed: a file changed since is refused,
    mtime_ms: int  # not misread
    num_rows: int
    groups: tuple[int, ...]
    rows: bytes  # file row numbers that can match, a Roaring portable bitmap
    # The file's partition values as Spark types them: one row, an Arrow IPC stream.
    constants: bytes = b""
    group_rows: int = 0  # rows in ``groups``
    group_bytes: int = 0  # about the compressed bytes read of ``groups`` (pages or chunks)
    where_bytes: int = 0  # compressed bytes of the predicate's columns, whole file

    @property
    def bytes_saved(self) -> float:
        """About how many bytes of pyarrow's work this split saves (see the
        policy's ``where_bytes_factor``); negative where Spark would read it faster."""
        return active().where_bytes_factor * self.where_bytes - self.group_bytes

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "size": self.size,
            "mtime_ms": self.mtime_ms,
            "num_rows": self.num_rows,
            "groups": list(self.groups),
            "rows": base64.b64encode(self.rows).decode("ascii"),
            "constants": base64.b64encode(self.constants).decode("ascii"),
            "group_rows": self.group_rows,
            "group_bytes": self.group_bytes,
            "where_bytes": self.where_bytes,
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Split:
        return cls(
            path=str(doc["path"]),
            size=int(doc["size"]),
            mtime_ms=int(doc["mtime_ms"]),
            num_rows=int(doc["num_rows"]),
            groups=tuple(int(g) for g in doc["groups"]),
            rows=base64.b64decode(doc["rows"]),
            constants=base64.b64decode(doc["constants"]),
            group_rows=int(doc["group_rows"]),
            group_bytes=int(doc["group_bytes"]),
            where_bytes=int(doc["where_bytes"]),
        )


def plan_splits(
    result: PruneResult, location: TableLocation, view: SparkView, target: pa.Schema
) -> tuple[list[Split], list[str]]:
    """The kept files worth reading by row groups (and readable so), and the
    files Spark reads whole. ``target``: the table's columns as Spark hands them
    to a Python data source (Arrow types, timestamps in UTC)."""
    priced = _Priced.of(result, location, target)
    if priced is None:
        return [], list(result.files)
    return priced.splits(result, view, target)


def plan_read(
    result: PruneResult, location: TableLocation, view: SparkView, target: pa.Schema
) -> tuple[list[Split], list[str]] | None:
    """:func:`plan_splits` where reading by row groups is :func:`worth_it`, else
    None; decided, where it can be, before any file is checked or opened: when
    even every candidate file together could not save enough."""
    least = active().min_bytes_saved
    priced = _Priced.of(result, location, target, at_least=least)
    if priced is None or priced.best_case() < least:
        return None
    splits, whole = priced.splits(result, view, target)
    return (splits, whole) if worth_it(splits) else None


def worth_it(splits: Sequence[Split]) -> bool:
    """Whether reading ``splits`` by row groups saves enough to pay for it."""
    return bool(splits) and sum(s.bytes_saved for s in splits) >= active().min_bytes_saved


@dataclass(frozen=True)
class _Priced:
    """The kept files that may be read by row groups, priced from their footers."""

    at: list[int]  # index in the result's files
    paths: list[str]  # local paths pyarrow opens
    layouts: list[FooterLayout]
    costs: Costs
    candidate: np.ndarray  # per file priced: its row groups cost little enough

    @classmethod
    def of(
        cls,
        result: PruneResult,
        location: TableLocation,
        target: pa.Schema,
        at_least: float = 0.0,
    ) -> _Priced | None:
        """None where no kept file can be read by row groups: no row answers,
        a partition column of a type not modelled, not a local disk, a nested
        column in the table (``target``); or where the files could not save
        ``at_least`` bytes even were no row group read (their predicate columns
        too small: pricing the candidate rows, millions of them, costs 10 ms)."""
        eligible = (
            result.rows
            and all(p.type is not None and is_flat(p.type) for p in result.partitions)
            and isinstance(location.fs, pafs.LocalFileSystem)
            and all(is_flat(f.type) for f in target)
        )
        if not eligible:
            return None
        at, paths, layouts, found_rows = [], [], [], []
        prefix = location.user_root + "/"
        for i, file in enumerate(result.files):
            found, listed = result.rows.get(file), result.listed.get(file)
            if found is None or listed is None or not file.startswith(prefix):
                continue
            path = location.fs_path(file[len(prefix) :])
            layout = footer_layout(path, *listed)
            if layout is not None:
                at.append(i)
                paths.append(path)
                layouts.append(layout)
                found_rows.append(found)
        where = {name.lower() for name in result.columns}
        policy = active()
        if policy.where_bytes_factor * where_bytes(layouts, where) < at_least:
            return None
        rows = [np.asarray(found.to_array(), dtype=np.int64) for found in found_rows]
        priced = costs(layouts, rows, where)
        candidate = priced.read_bytes <= policy.group_share * priced.file_bytes
        return cls(at, paths, layouts, priced, candidate)

    def best_case(self) -> float:
        """The bytes saved if every candidate file that saves any is read so."""
        saved = active().where_bytes_factor * self.costs.where_bytes - self.costs.read_bytes
        return float(np.sum(np.maximum(saved, 0.0), where=self.candidate))

    def splits(
        self, result: PruneResult, view: SparkView, target: pa.Schema
    ) -> tuple[list[Split], list[str]]:
        in_files = in_files_of(target, {p.name for p in result.partitions})
        made: dict[int, Split] = {}
        for k in np.flatnonzero(self.candidate).tolist():
            split = self._split(k, result, view, in_files)
            if split is not None:
                made[self.at[k]] = split
        whole = [file for i, file in enumerate(result.files) if i not in made]
        return list(made.values()), whole

    def _split(
        self, k: int, result: PruneResult, view: SparkView, in_files: pa.Schema
    ) -> Split | None:
        """The ``k``-th priced file's split, or None when Spark should read it whole."""
        at, path, costs = self.at[k], self.paths[k], self.costs
        file = result.files[at]
        size, mtime_ms = result.listed[file]
        try:
            if stamp(path) != (size, mtime_ms):
                return None  # changed since the prune: Spark reads what is there now
            if isinstance(_spark_picks(self.layouts[k], path, in_files, view), str):
                return None
        except (OSError, pa.ArrowException):
            return None  # Spark reports what is wrong with it
        split = Split(
            path,
            size,
            mtime_ms,
            self.layouts[k].num_rows,
            costs.groups[k],
            result.rows[file].serialize(),
            group_rows=int(costs.group_rows[k]),
            group_bytes=round(float(costs.read_bytes[k])),
            where_bytes=round(float(costs.where_bytes[k])),
        )
        return replace(split, constants=_constants(result, at))


def _spark_picks(
    layout: FooterLayout, path: str, in_files: pa.Schema, view: SparkView
) -> list[str | None] | str:
    """:func:`~skipindex.spark.view.spark_columns` of the file, worked out once
    per file version, table schema and session settings."""
    key = ("spark_columns", in_files, view)
    if key not in layout.memo:
        layout.memo[key] = spark_columns(open_file(path), in_files, view)
    picks: list[str | None] | str = layout.memo[key]
    return picks


def in_files_of(target: pa.Schema, partitions: Iterable[str]) -> pa.Schema:
    """The target's columns read from the files: a partition column hides a data
    column of its name (as in Spark)."""
    hidden = {name.lower() for name in partitions}
    return pa.schema([f for f in target if f.name.lower() not in hidden])


def _constants(result: PruneResult, at: int) -> bytes:
    """The partition values of the ``at``-th kept file, as one-row Arrow IPC."""
    if not result.partitions:
        return b""
    values = [p.values.slice(at, 1) for p in result.partitions]
    batch = pa.record_batch(values, names=[p.name for p in result.partitions])
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return bytes(sink.getvalue().to_pybytes())


def bins(splits: Sequence[Split], count: int) -> list[list[Split]]:
    """At most ``count`` tasks, balanced by the number of row groups they read."""
    if not splits:
        return []
    loads = [0] * max(1, min(count, len(splits)))
    out: list[list[Split]] = [[] for _ in loads]
    for split in sorted(splits, key=lambda s: -len(s.groups)):
        at = loads.index(min(loads))
        out[at].append(split)
        loads[at] += len(split.groups)
    return out
