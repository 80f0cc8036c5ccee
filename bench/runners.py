"""Building indexes for the benchmarks without Spark, and reusing them between runs.

``PoolRunner`` runs skipindex's own task code (``skipindex.indexing.indexer.index_bins``,
what each Spark task runs) in a pool of worker processes: the same segments as a
Spark build, without a JVM. ``ensure_index`` rebuilds only when the index on disk
does not hold exactly the wanted definitions over every file.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

import skipindex as si
from skipindex.indexing.build import InProcessRunner, build_with
from skipindex.indexing.indexer import IndexJob, SegmentWritten, index_bins
from skipindex.spark.settings import SparkView
from skipindex.store.location import DataFile, TableLocation, locate
from skipindex.store.manifest import load_latest
from skipindex.store.segments import BASE_FIELDS, read_segments, write_segment


def _one_bin(job: IndexJob, number: int, files: list[DataFile]) -> list[SegmentWritten]:
    return list(index_bins(job, iter([(number, files)])))


class PoolRunner:
    """Bins of files indexed by ``workers`` processes (a few bins per worker)."""

    def __init__(self, workers: int = 2, bins_per_worker: int = 3) -> None:
        self.workers = workers
        self.parallelism = workers * bins_per_worker

    def run(self, job: IndexJob, bins: list[list[DataFile]]) -> list[SegmentWritten]:
        if len(bins) == 1:
            return _one_bin(job, 0, bins[0])
        with ProcessPoolExecutor(self.workers) as pool:
            futures = [pool.submit(_one_bin, job, i, b) for i, b in enumerate(bins)]
            return [d for f in futures for d in f.result()]

    def spark_schema(self, location: TableLocation, sample: DataFile) -> str | None:
        return None

    def view(self) -> SparkView:
        return SparkView()  # Spark's defaults


class ReplicaRunner:
    """Indexes a table of hard links made by ``data.replicated`` by copying the
    index rows of the files they link to out of ``base``'s index (which must hold
    the same definitions): the segments a build would write, without reading a
    million files again. Sizes and mtimes come from the listing of the links."""

    def __init__(self, base: Path, parallelism: int = 16) -> None:
        self.base = base
        self.parallelism = parallelism

    def run(self, job: IndexJob, bins: list[list[DataFile]]) -> list[SegmentWritten]:
        base = locate(str(self.base))
        manifest = load_latest(base)
        if manifest is None:
            raise ValueError(f"{self.base} has no index to replicate")
        fields = {}  # the job's field -> the base index's field of the same definition
        for wanted in job.definitions:
            same = [d for d in manifest.indexes if d.same_definition(*_key(wanted))]
            if not same:
                raise ValueError(f"{self.base} has no {wanted.kind} index on {wanted.column}")
            fields[wanted.field] = same[0].field
        rows = read_segments(base, manifest, list(fields.values()), BASE_FIELDS)
        location = locate(job.uri)
        return [
            _replica_segment(location, job, number, files, rows, fields)
            for number, files in enumerate(bins)
        ]

    def spark_schema(self, location: TableLocation, sample: DataFile) -> str | None:
        return None

    def view(self) -> SparkView:
        return SparkView()


def _key(definition: Any) -> tuple[str, str, dict[str, Any]]:
    return definition.column, definition.kind, definition.params


def _replica_segment(
    location: TableLocation,
    job: IndexJob,
    number: int,
    files: list[DataFile],
    rows: pa.Table,
    fields: dict[str, str],
) -> SegmentWritten:
    """One segment: the base rows of the files ``files`` link to, renamed."""
    started = time.perf_counter()
    linked = pa.array([f.path.split("-", 1)[1] for f in files], pa.string())
    at = pc.index_in(linked, value_set=rows.column("path").combine_chunks())
    if at.null_count:
        raise ValueError(f"{location.user_root}: not every file links to one of {rows.num_rows}")
    table = rows.take(at).select([*BASE_FIELDS, *fields.values()])
    replaced = {
        "path": pa.array([f.path for f in files], pa.string()),
        "size": pa.array([f.size for f in files], pa.int64()),
        "mtime_ms": pa.array([f.mtime_ms for f in files], pa.int64()),
    }
    for name, column in replaced.items():
        table = table.set_column(table.schema.get_field_index(name), name, column)
    table = table.rename_columns([*BASE_FIELDS, *fields])
    ref = write_segment(location, f"{job.build_id}-{number:05d}", table)
    return SegmentWritten(ref, 0, time.perf_counter() - started)


def _wanted(specs: Sequence[Any]) -> set[tuple[str, str, str]]:
    return {(s.column, s.kind, repr(sorted(s.params().items()))) for s in specs}


def has_index(path: Path, specs: Sequence[Any]) -> bool:
    """True when ``path`` is indexed with exactly ``specs`` over all its files."""
    description = si.describe(str(path))
    if description.version is None:
        return False
    have = {
        (d["column"], d["kind"], repr(sorted(d["params"].items()))) for d in description.indexes
    }
    return have == _wanted(specs) and description.files_indexed == description.files_listed


def ensure_index(path: Path, specs: Sequence[Any], runner: Any = None) -> bool:
    """Build ``specs`` on ``path`` unless already there; True when it built."""
    if has_index(path, specs):
        return False
    si.drop_index(str(path), all=True)
    build_with(str(path), list(specs), runner or PoolRunner())
    return True


def rebuild(path: Path, specs: Sequence[Any], runner: Any = None) -> si.BuildReport:
    """Drop whatever index ``path`` has and build ``specs`` from scratch."""
    si.drop_index(str(path), all=True)
    return build_with(str(path), list(specs), runner or InProcessRunner())
