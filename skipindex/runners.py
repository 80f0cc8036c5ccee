"""How index tasks run: one Spark task per bin of files, or all in this process.

Files are packed into size-balanced bins (a few per core, never one task per
file: each Python task costs about 30 ms in ``local[2]``); every bin becomes one
task running :func:`skipindex.indexer.index_bins`, which writes one segment and
returns a :class:`~skipindex.indexer.SegmentWritten`.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any, Protocol

from skipindex.indexer import IndexJob, SegmentWritten, index_bins
from skipindex.spark_view import SparkView
from skipindex.store.location import DataFile, TableLocation

__all__ = ["InProcessRunner", "Runner", "SparkRunner", "pack_bins"]


class Runner(Protocol):
    """How index tasks run: as a Spark job, or in this process (tests)."""

    parallelism: int

    def run(self, job: IndexJob, bins: list[list[DataFile]]) -> list[SegmentWritten]: ...

    def spark_schema(self, location: TableLocation) -> str | None: ...

    def view(self) -> SparkView: ...


class SparkRunner:
    """One Spark task per bin (mapPartitions over a parallelized bin list)."""

    def __init__(self, spark: Any, bins_per_core: int = 3) -> None:
        self.spark = spark
        self.parallelism = max(1, spark.sparkContext.defaultParallelism * bins_per_core)

    def run(self, job: IndexJob, bins: list[list[DataFile]]) -> list[SegmentWritten]:
        context = self.spark.sparkContext
        files = sum(len(b) for b in bins)
        context.setJobDescription(f"skipindex: index {files} files of {job.user_root}")
        return list(
            context.parallelize(list(enumerate(bins)), len(bins))
            .mapPartitions(lambda part: index_bins(job, part))
            .collect()
        )

    def view(self) -> SparkView:
        return SparkView.of_session(self.spark)

    def spark_schema(self, location: TableLocation) -> str | None:
        """Spark's view of the table (with partition columns), for read()."""
        try:
            reader = self.spark.read.option("basePath", location.user_root)
            return str(reader.parquet(location.user_root).schema.json())
        except Exception:
            return None


class InProcessRunner:
    """The same task code, run here: for tests and tools that must not start a JVM."""

    parallelism = 4

    def __init__(self, view: SparkView | None = None) -> None:
        self._view = view or SparkView()

    def run(self, job: IndexJob, bins: list[list[DataFile]]) -> list[SegmentWritten]:
        return list(index_bins(job, iter(enumerate(bins))))

    def view(self) -> SparkView:
        return self._view

    def spark_schema(self, location: TableLocation) -> str | None:
        return None


def pack_bins(files: Sequence[DataFile], max_bins: int) -> list[list[DataFile]]:
    """Size-balanced bins: largest file first into the lightest bin (LPT)."""
    count = min(len(files), max_bins)
    heap = [(0, i) for i in range(count)]
    bins: list[list[DataFile]] = [[] for _ in range(count)]
    for data_file in sorted(files, key=lambda f: f.size, reverse=True):
        load, i = heapq.heappop(heap)
        bins[i].append(data_file)
        heapq.heappush(heap, (load + max(data_file.size, 1), i))
    return [sorted(b, key=lambda f: f.path) for b in bins if b]
