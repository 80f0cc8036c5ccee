"""``build_index``: the Spark job that (re)indexes new and changed files.

The driver lists the table, diffs it against the current manifest, packs the
files to index into size-balanced bins (a few per core), runs one task per bin
(:func:`skipindex.indexing.indexer.index_bins`), rewrites the old segments that still
name removed or changed files, and commits the next manifest version. Losing a
commit race means re-planning against the winner; nothing already committed is
ever modified. Expression indexes take a second Spark stage over the same files
(:mod:`skipindex.indexing.merging`), merged into the segments by path before the
commit.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import pyarrow as pa

from skipindex.column_paths import field_at
from skipindex.errors import ConflictError, InvalidSpecError
from skipindex.indexes.base import IndexSpec
from skipindex.indexing.definitions import define_table, typed
from skipindex.indexing.indexer import IndexJob
from skipindex.indexing.merging import ExpressionStage, footer_rows, merge_into, scratch
from skipindex.indexing.planning import make_plan, rewrite, widen
from skipindex.indexing.runners import InProcessRunner, Runner, SparkRunner, pack_bins
from skipindex.indexing.suggest import Suggestion, suggest_for
from skipindex.spark.settings import SparkView
from skipindex.spark.widening import join_types, types_from_text, with_type_at
from skipindex.store import vacuum
from skipindex.store.damage import repairable
from skipindex.store.location import (
    CatalogSpec,
    DataFile,
    StorageOptions,
    TableLocation,
    TablePath,
    locate,
)
from skipindex.store.manifest import IndexDef, Manifest, SegmentRef, commit, load_latest
from skipindex.store.schema import field_id_schema, holds_every_value

__all__ = [
    "BuildReport",
    "InProcessRunner",
    "Runner",
    "SparkRunner",
    "build_index",
    "build_with",
    "check_specs",
]

MAX_COMMIT_ATTEMPTS = 5
MAX_WIDENINGS = 4  # rounds of "index again in a wider type" one build may take


@dataclass(frozen=True)
class BuildReport:
    """What a build did. ``files_indexed`` is the number of data files it read."""

    version: int
    files_indexed: int
    files_unchanged: int
    files_removed: int
    files_replaced: int
    bytes_read: int
    index_bytes: int
    segments_written: int
    seconds: float
    attempts: int = 1
    chosen: list[str] = field(default_factory=list)  # indexes chosen for a first build, and why

    def __str__(self) -> str:
        replaced = f" ({self.files_replaced} re-indexed, replacing their entries)"
        gone = f", {self.files_removed} gone from the table" if self.files_removed else ""
        return "".join(f"chose {c}\n" for c in self.chosen) + (
            f"index version {self.version}: indexed {self.files_indexed} files"
            f"{replaced if self.files_replaced else ''}, {self.files_unchanged} unchanged{gone}; "
            f"read {self.bytes_read / 1e6:.1f} MB of columns, "
            f"index is {self.index_bytes / 1e6:.2f} MB; {self.seconds:.1f} s"
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def build_index(
    path: TablePath,
    specs: Sequence[IndexSpec] | None = None,
    *,
    spark: Any = None,
    bins_per_core: int = 3,
    storage_options: StorageOptions | None = None,
    progress: bool = False,
    catalog: CatalogSpec | None = None,
) -> BuildReport:
    """Index the table at ``path`` with ``specs`` (added to those already defined).

    With ``specs=None`` the existing definitions are refreshed: only new and
    changed files are read (on a table with no index yet, indexes are chosen:
    see :func:`~skipindex.indexing.suggest.suggest_indexes`). ``spark`` defaults to the
    active session, else a local one. ``progress`` reports tasks, bytes and rate
    on stderr while the job runs. An Iceberg table is named by ``catalog`` and
    its identifier, or by its ``metadata.json`` (see :func:`skipindex.prune`).
    """
    # seconds, not the minute a Spark start costs, to say "no"
    check_specs(path, specs, storage_options=storage_options, catalog=catalog)
    if spark is None:
        from skipindex.spark.session import active_or_local_session

        spark = active_or_local_session()
    runner = SparkRunner(spark, bins_per_core, progress=progress)
    return build_with(path, specs, runner, storage_options=storage_options, catalog=catalog)


def check_specs(
    path: TablePath,
    specs: Sequence[IndexSpec] | None,
    *,
    storage_options: StorageOptions | None = None,
    catalog: CatalogSpec | None = None,
) -> None:
    """Raise what a build would raise for ``specs`` (unknown column, a type the
    kind cannot take, a partition column) from footers alone, without Spark."""
    location = locate(path, storage_options, catalog=catalog)
    with repairable(location.user_root):
        define_table(location, specs, SparkView())


def build_with(
    path: TablePath,
    specs: Sequence[IndexSpec] | None,
    runner: Runner,
    *,
    storage_options: StorageOptions | None = None,
    catalog: CatalogSpec | None = None,
) -> BuildReport:
    """:func:`build_index` with an explicit way of running the index tasks."""
    started = time.perf_counter()
    location = locate(path, storage_options, catalog=catalog)
    location.require_folder()  # a missing path fails before anything is written
    build_id = vacuum.new_build_id()
    with repairable(location.user_root):
        chosen = _choose(location, specs)
        if chosen:
            specs = [c.spec for c in chosen]
        with vacuum.in_flight(location, build_id):
            for attempt in range(1, MAX_COMMIT_ATTEMPTS + 1):
                try:
                    report = _attempt(location, specs, runner, build_id, attempt)
                except ConflictError:
                    if attempt == MAX_COMMIT_ATTEMPTS:
                        raise
                    # Writers that collided must not collide again in lockstep.
                    time.sleep(random.uniform(0, 0.1 * attempt))
                    continue
                vacuum.collect(location)
                seconds = time.perf_counter() - started
                return replace(report, seconds=seconds, chosen=[str(c) for c in chosen])
    raise AssertionError("unreachable")


def _choose(location: TableLocation, specs: Sequence[IndexSpec] | None) -> list[Suggestion]:
    """A first build without definitions indexes what :mod:`skipindex.indexing.suggest` picks."""
    if specs is not None or load_latest(location) is not None:
        return []
    chosen = suggest_for(location, location.list_data_files())
    if not chosen:
        raise InvalidSpecError(
            f"{location.user_root} has no index yet and no column skipindex can index was "
            "found; name the indexes to build (e.g. --index minmax:COLUMN)"
        )
    return chosen


def _attempt(
    location: TableLocation,
    specs: Sequence[IndexSpec] | None,
    runner: Runner,
    build_id: str,
    attempt: int,
) -> BuildReport:
    view = runner.view()
    table = define_table(location, specs, view, runner)
    current, listing, schema, definitions = (
        table.current,
        table.listing,
        table.schema,
        table.definitions,
    )
    attempt_id = f"{build_id}-{attempt}"
    # An indexed column whose recorded type is not Spark's (a millisecond
    # timestamp recorded by an older skipindex) is indexed again throughout;
    # files an older skipindex left unindexed are read again once.
    full = current is not None and _retyped(current.arrow_schema, schema, definitions)
    recheck = current is not None and not holds_every_value(current.arrow_schema)
    bytes_read = 0
    for round_ in range(MAX_WIDENINGS + 1):
        plan = make_plan(location, current, listing, definitions, full=full, recheck_noted=recheck)
        run_id = attempt_id if round_ == 0 else f"{attempt_id}-w{round_}"
        job = _Job(runner, location, schema, table.first, view)
        new_segments, read, wider = job.run(_columns(definitions), plan.to_index, run_id)
        widened = _widened(schema, wider)
        extension: list[SegmentRef] = []
        if current and _columns(plan.added):  # (added definitions imply a current index)
            extension, extra, more = job.run(_columns(plan.added), plan.extend, f"{run_id}-x")
            read, widened = read + extra, _widened(widened, more)
        bytes_read += read
        if widened == schema or round_ == MAX_WIDENINGS:
            break
        # Some files' values need a wider type: record it and index everything
        # in it, or prune would rule out literals only those files hold.
        vacuum.delete_segments(location, [s.path for s in new_segments + extension])
        schema, full = widened, True
        definitions = typed(definitions, schema)
    # Expression indexes: Spark computes their values, merged in by path.
    expressions = ExpressionStage(runner, location, schema, table.read_schema, attempt_id)
    computed = [d for d in definitions if d.expression is not None]
    if computed and plan.to_index:
        built = scratch(schema, _columns(definitions), new_segments)
        payloads = expressions.compute(computed, plan.to_index, footer_rows(location, built))
        merged = merge_into(
            location, schema, _columns(definitions), new_segments, payloads, f"{attempt_id}-m"
        )
        vacuum.delete_segments(location, [s.path for s in new_segments + payloads.refs])
        new_segments, bytes_read = merged, bytes_read + payloads.bytes_read
    if current and plan.added:
        added = [d for d in plan.added if d.expression is not None]
        computed_for = footer_rows(location, current) if added else {}
        payloads = expressions.compute(added, plan.extend, computed_for)
        rewritten = widen(location, current, plan, extension, attempt_id, payloads)
        # merged, not needed
        vacuum.delete_segments(location, [s.path for s in extension + payloads.refs])
        bytes_read += payloads.bytes_read
    else:
        rewritten = rewrite(location, current, plan.rewrite, attempt_id) if current else []
    manifest = Manifest(
        version=(current.version + 1) if current else 1,
        arrow_schema=schema,
        indexes=tuple(definitions),
        segments=tuple(plan.keep_segments + rewritten + new_segments),
        next_index_id=table.next_id,
        spark_schema=table.spark_schema,
        spark_view=view,
        partition_columns=tuple(table.partitions),
        build={
            "build_id": build_id,
            "files_indexed": len(plan.to_index) + len(plan.extend),
            "files_unchanged": plan.unchanged,
            "files_removed": plan.removed,
            "files_replaced": plan.replaced,
            "bytes_read": bytes_read,
        },
    )
    try:
        committed = commit(location, manifest, build_id)
    except ConflictError:
        vacuum.delete_segments(location, [s.path for s in rewritten + new_segments])
        raise
    return BuildReport(
        version=committed.version,
        files_indexed=len(plan.to_index) + len(plan.extend),
        files_unchanged=plan.unchanged,
        files_removed=plan.removed,
        files_replaced=plan.replaced,
        bytes_read=bytes_read,
        index_bytes=sum(s.bytes for s in committed.segments),
        segments_written=len(rewritten) + len(new_segments),
        seconds=0.0,
        attempts=attempt,
    )


def _columns(definitions: Sequence[IndexDef]) -> list[IndexDef]:
    """The definitions the column indexer builds (expressions are Spark's)."""
    return [d for d in definitions if d.expression is None]


def _retyped(before: pa.Schema, after: pa.Schema, definitions: list[IndexDef]) -> bool:
    """Whether an indexed column's recorded type differs between the schemas."""
    for d in definitions:
        try:
            if field_at(before, d.column).type != field_at(after, d.column).type:
                return True
        except KeyError:
            continue  # a column the old schema lacks: only new definitions name it
    return False


def _widened(schema: pa.Schema, wider: dict[str, pa.DataType]) -> pa.Schema:
    """``schema`` with each column of ``wider`` joined with the type reported."""
    for key, needed in wider.items():
        joined = join_types(field_at(schema, key).type, needed)
        if joined is not None:
            schema = with_type_at(schema, key, joined)
    return schema


@dataclass(frozen=True)
class _Job:
    """One build's index tasks: the table as they read it."""

    runner: Runner
    location: TableLocation
    schema: pa.Schema
    first: pa.Schema
    view: SparkView

    def run(
        self, definitions: list[IndexDef], files: list[DataFile], attempt_id: str
    ) -> tuple[list[SegmentRef], int, dict[str, pa.DataType]]:
        """The segments written, the bytes read, and the wider types files need."""
        if not files:
            return [], 0, {}
        location = self.location
        job = IndexJob(
            uri=location.uri,
            user_root=location.user_root,
            storage_options=location.options,
            schema=self.schema,
            definitions=tuple(definitions),
            build_id=attempt_id,
            view=self.view,
            first=self.first,
            by_field_id=field_id_schema(location) is not None,
        )
        written = self.runner.run(job, pack_bins(files, self.runner.parallelism))
        wider: dict[str, pa.DataType] = {}
        for w in written:
            for key, needed in types_from_text(w.widened).items():
                joined = join_types(wider[key], needed) if key in wider else needed
                wider[key] = needed if joined is None else joined
        return [w.segment for w in written], sum(w.bytes_read for w in written), wider
