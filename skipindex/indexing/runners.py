"""How index tasks run: one Spark task per bin of files, or all in this process.

Files are packed into size-balanced bins (a few per core, never one task per
file: each Python task costs about 30 ms in ``local[2]``); every bin becomes one
task running :func:`skipindex.indexing.indexer.index_bins`, which writes one segment (a few
files per row group, so a task never holds a whole bin's payloads) and
returns a :class:`~skipindex.indexing.indexer.SegmentWritten`.

Expression indexes need Spark's SQL engine: a runner types expressions and has
Spark compute their values (:mod:`skipindex.indexing.expression_job`); the
in-process runner cannot, and says so.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence
from contextlib import nullcontext
from typing import Any, Protocol

import pyarrow as pa

from skipindex.errors import InvalidSpecError
from skipindex.indexing.expression_task import (
    ExpressionJob,
    ExpressionRun,
    ExpressionType,
    index_rows,
)
from skipindex.indexing.indexer import IndexJob, SegmentWritten, index_bins
from skipindex.spark.progress import spark_progress
from skipindex.spark.session import escape_glob, job_description, session_cores, worker_errors
from skipindex.spark.settings import SparkView
from skipindex.store.location import DataFile, TableLocation

__all__ = ["InProcessRunner", "LocalExpressions", "Runner", "SparkRunner", "pack_bins"]

_RESULT = pa.schema([("written", pa.string())])


class Runner(Protocol):
    """How index tasks run: as a Spark job, or in this process (tests)."""

    parallelism: int

    def run(self, job: IndexJob, bins: list[list[DataFile]]) -> list[SegmentWritten]: ...

    def spark_schema(self, location: TableLocation, sample: DataFile) -> str | None: ...

    def view(self) -> SparkView: ...

    def expression_types(
        self, read_schema: str | None, table: pa.Schema, texts: Sequence[str], zone: str
    ) -> list[ExpressionType] | None:
        """Spark's types of expressions over the table (None: cannot ask Spark)."""
        ...

    def evaluate(self, job: ExpressionJob, files: list[DataFile]) -> ExpressionRun:
        """Spark computes the expressions of ``job`` over ``files`` into segments."""
        ...


class SparkRunner:
    """One Spark task per bin: ``spark.range(n, numPartitions=n).mapInArrow``, so the
    same job runs on a classic session and on Spark Connect (no SparkContext)."""

    def __init__(self, spark: Any, bins_per_core: int = 3, *, progress: bool = False) -> None:
        self.spark = spark
        self.parallelism = max(1, session_cores(spark) * bins_per_core)
        self.progress = progress

    def run(self, job: IndexJob, bins: list[list[DataFile]]) -> list[SegmentWritten]:
        files = sum(len(b) for b in bins)

        def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            ids = [i for batch in batches for i in batch.column(0).to_pylist()]
            for written in index_bins(job, ((i, bins[i]) for i in ids)):
                yield pa.RecordBatch.from_pylist([{"written": written.to_json()}], _RESULT)

        frame = self.spark.range(0, len(bins), 1, numPartitions=len(bins))
        description = f"skipindex: index {files} files of {job.user_root}"
        size = sum(f.size for b in bins for f in b)
        reporting = (
            spark_progress(self.spark, f"indexing {files} files", size)
            if self.progress
            else nullcontext()
        )
        with job_description(self.spark, description), worker_errors(self.spark), reporting:
            rows = frame.mapInArrow(task, "written string").collect()
        return [SegmentWritten.from_json(row.written) for row in rows]

    def view(self) -> SparkView:
        return SparkView.of_session(self.spark)

    def expression_types(
        self, read_schema: str | None, table: pa.Schema, texts: Sequence[str], zone: str
    ) -> list[ExpressionType] | None:
        from skipindex.indexing.expression_job import expression_types

        return expression_types(self.spark, read_schema, table, texts, zone)

    def evaluate(self, job: ExpressionJob, files: list[DataFile]) -> ExpressionRun:
        from skipindex.indexing.expression_job import run_expressions

        return run_expressions(self.spark, job, files, self.parallelism)

    def spark_schema(self, location: TableLocation, sample: DataFile) -> str | None:
        """Spark's view of the table's columns (with partition columns), for read().
        One data file: Spark takes data columns from one footer anyway, and reading
        the folder would trip over files that are not data (``x.csv``)."""
        try:
            reader = self.spark.read.option("basePath", location.user_root)
            return str(reader.parquet(escape_glob(location.user_path(sample.path))).schema.json())
        except Exception:
            return None


class LocalExpressions(Protocol):
    """Stands in for Spark's SQL engine in an in-process build (tests): the types
    of expressions, and their values as the rows an expression task takes."""

    def types(self, texts: Sequence[str], zone: str) -> list[ExpressionType]: ...

    def rows(self, job: ExpressionJob, files: list[DataFile]) -> Iterator[pa.RecordBatch]: ...


class InProcessRunner:
    """The same task code, run here: for tests and tools that must not start a JVM.
    Expression indexes need Spark's SQL engine: without ``expressions`` (a
    stand-in, for tests) a build that must compute one raises, saying so."""

    parallelism = 4

    def __init__(
        self, view: SparkView | None = None, expressions: LocalExpressions | None = None
    ) -> None:
        self._view = view or SparkView()
        self._expressions = expressions

    def run(self, job: IndexJob, bins: list[list[DataFile]]) -> list[SegmentWritten]:
        return list(index_bins(job, iter(enumerate(bins))))

    def view(self) -> SparkView:
        return self._view

    def expression_types(
        self, read_schema: str | None, table: pa.Schema, texts: Sequence[str], zone: str
    ) -> list[ExpressionType] | None:
        return None if self._expressions is None else self._expressions.types(texts, zone)

    def evaluate(self, job: ExpressionJob, files: list[DataFile]) -> ExpressionRun:
        if self._expressions is None:
            named = ", ".join(repr(t) for t in job.texts)
            raise InvalidSpecError(
                f"the index on expr={named} needs Spark to compute its values for "
                f"{len(files)} new or changed files: build with Spark "
                "(build_index(path, spark=spark) or `skipindex build`), not in-process"
            )
        written = index_rows(job, self._expressions.rows(job, files))
        return ExpressionRun([written] if written is not None else [])

    def spark_schema(self, location: TableLocation, sample: DataFile) -> str | None:
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
