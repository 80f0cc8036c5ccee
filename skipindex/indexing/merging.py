"""Expression indexes in a build: Spark computes their values in a stage of its
own (:mod:`skipindex.indexing.expression_task`), and their payload columns are
merged into the column segments by path, so that the rest of the build
(incremental builds, added definitions, widening, removed files, the commit)
sees one segment per bin as always.

A file gets no payload ("might match") where Spark read no rows of it, read a
number of rows other than its footer's, or failed on it; the file's note
(``error``) then says why, except for files with no rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import pyarrow as pa
import pyarrow.compute as pc

from skipindex.indexing.expression_task import ExpressionJob, ExpressionRun
from skipindex.store.listing import DataFile
from skipindex.store.location import TableLocation
from skipindex.store.manifest import IndexDef, Manifest, SegmentRef
from skipindex.store.segments import copy_segments, read_segments

__all__ = [
    "Evaluator",
    "ExpressionPayloads",
    "ExpressionStage",
    "attach",
    "compute",
    "footer_rows",
    "merge_into",
    "scratch",
]


class Evaluator(Protocol):
    """How a runner has Spark compute expression values (see runners.py)."""

    def evaluate(self, job: ExpressionJob, files: list[DataFile]) -> ExpressionRun: ...


@dataclass
class ExpressionPayloads:
    """The expression segments one build stage wrote, read back by path."""

    tables: list[tuple[pa.Table, list[str]]] = field(default_factory=list)  # rows, fields
    failed: dict[str, str] = field(default_factory=dict)  # file -> why Spark failed on it
    refs: list[SegmentRef] = field(default_factory=list)  # to delete once merged
    bytes_read: int = 0
    texts: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.texts)


def scratch(
    schema: pa.Schema, definitions: Sequence[IndexDef], refs: Sequence[SegmentRef]
) -> Manifest:
    """A manifest naming segments a build wrote but has not committed, to read them."""
    return Manifest(0, schema, tuple(definitions), tuple(refs), 0)


def compute(
    runner: Evaluator,
    location: TableLocation,
    schema: pa.Schema,
    definitions: Sequence[IndexDef],
    files: Sequence[DataFile],
    rows: Mapping[str, int],
    *,
    build_id: str,
    read_schema: str | None = None,
) -> ExpressionPayloads:
    """Have Spark compute the expressions of ``definitions`` over the ``files``
    that have rows (``rows``: path -> rows in its footer), one job per time zone."""
    out = ExpressionPayloads()
    readable = [f for f in files if rows.get(f.path, 0) > 0]
    by_zone: dict[str, list[IndexDef]] = {}
    for d in definitions:
        by_zone.setdefault(d.time_zone or "UTC", []).append(d)
    for zone, group in by_zone.items():
        texts = {d.column: d.expression or "" for d in group}  # one text per key
        out.texts.extend(texts.values())
        job = ExpressionJob(
            uri=location.uri,
            user_root=location.user_root,
            schema=schema,
            definitions=tuple(group),
            keys=tuple(texts),
            files=tuple(readable),
            build_id=build_id,
            storage_options=location.options,
            texts=tuple(texts.values()),
            time_zone=zone,
            read_schema=read_schema,
        )
        run = runner.evaluate(job, readable) if readable else ExpressionRun([])
        refs = [w.segment for w in run.written]
        out.refs.extend(refs)
        out.failed.update(run.failed)
        out.bytes_read += sum(w.bytes_read for w in run.written)
        fields = [d.field for d in group]
        table = read_segments(
            location, scratch(schema, group, refs), fields, base=("path", "num_rows", "error")
        )
        out.tables.append((table, fields))
    return out


def attach(table: pa.Table, payloads: ExpressionPayloads, fields: Sequence[str] = ()) -> pa.Table:
    """``table`` (a segment's rows) with the expression payload columns appended
    (only ``fields`` where given), null where Spark's rows of a file are not its rows."""
    paths = table.column("path")
    footer_rows = table.column("num_rows")
    notes: list[list[str]] = [[] for _ in range(len(table))]
    for extra, names in payloads.tables:
        wanted = [n for n in names if not fields or n in fields]
        if not wanted:
            continue
        at = pc.index_in(paths, extra.column("path"))
        seen = extra.column("num_rows").take(at)
        same = pc.fill_null(pc.equal(seen, footer_rows), False)
        kept = pc.if_else(same, at, pa.scalar(None, at.type))
        for name in wanted:
            table = table.append_column(name, extra.column(name).take(kept))
        errors = extra.column("error").take(at).to_pylist()
        for i, (ok, n, s, e) in enumerate(
            zip(same.to_pylist(), footer_rows.to_pylist(), seen.to_pylist(), errors, strict=True)
        ):
            if e:
                notes[i].append(e)
            elif not ok and n:
                notes[i].append(_why(paths[i].as_py(), n, s, payloads.failed))
    if any(notes):
        before = table.column("error").to_pylist()
        merged = [
            "; ".join(dict.fromkeys(([b] if b else []) + n)) or None
            for b, n in zip(before, notes, strict=True)
        ]
        at_error = table.schema.get_field_index("error")
        table = table.set_column(at_error, "error", pa.array(merged, pa.string()))
    return table


def _why(path: str, footer: int, seen: int | None, failed: Mapping[str, str]) -> str:
    what = "expression indexes not built"
    if path in failed:
        return f"{what}: Spark failed on it: {failed[path]}"
    if seen is None:
        return f"{what}: Spark read no rows of it"
    return f"{what}: Spark read {seen} rows of it, its footer says {footer}"


def merge_into(
    location: TableLocation,
    schema: pa.Schema,
    definitions: Sequence[IndexDef],
    refs: Sequence[SegmentRef],
    payloads: ExpressionPayloads,
    prefix: str,
) -> list[SegmentRef]:
    """New segments: ``refs`` (written for ``definitions``) with the expression
    payload columns appended."""
    return copy_segments(
        location,
        scratch(schema, definitions, refs),
        refs,
        [d.field for d in definitions],
        prefix,
        transform=lambda ref, table: attach(table, payloads),
    )


def footer_rows(location: TableLocation, manifest: Manifest) -> dict[str, int]:
    """Rows per indexed file, from the segments of ``manifest``."""
    table = read_segments(location, manifest, base=("path", "num_rows"))
    return dict(
        zip(table.column("path").to_pylist(), table.column("num_rows").to_pylist(), strict=True)
    )


@dataclass(frozen=True)
class ExpressionStage:
    """One build attempt's expression stage (see :mod:`skipindex.indexing.merging`)."""

    runner: Evaluator
    location: TableLocation
    schema: pa.Schema
    read_schema: str | None
    attempt_id: str

    def compute(
        self, definitions: list[IndexDef], files: list[DataFile], rows: dict[str, int]
    ) -> ExpressionPayloads:
        return compute(
            self.runner,
            self.location,
            self.schema,
            definitions,
            files,
            rows,
            build_id=f"{self.attempt_id}-e",
            read_schema=self.read_schema,
        )
