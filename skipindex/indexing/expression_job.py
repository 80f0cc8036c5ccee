"""Spark computes the values of expression indexes: the driver side.

Types: ``selectExpr`` over an empty frame of the table's data columns (no file
is read), each result converted with pyspark's ``to_arrow_type``. Zone
dependence, conservatively: an expression depends on the session time zone
unless no column it reads and not its result is a timestamp, and its analyzed
plan names no zone, timestamp or UTC (Spark prints every time-zone-aware
function with its zone, ``hour(ts#1, Some(UTC))``, and casts to timestamps as
``cast(s#3 as timestamp)``).

Values: one job reads the files with the table's data schema
(``spark.read.schema(...).parquet(files)``, no basePath: partition columns are
never indexed in expressions), selects ``_metadata.file_path``,
``_metadata.row_index`` and each expression, repartitions by file, sorts by
file and row, and hands each partition to
:func:`~skipindex.indexing.expression_task.index_rows` through ``mapInArrow``. The
session's time zone is the definitions' for the job, and corrupt or vanished
files are skipped (their row counts then differ from their footers': no
payload). A failed job is run again on halves of its files, down to the files
Spark fails on, which get no payload; at most ``MAX_JOBS`` jobs.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa

from skipindex.errors import InvalidSpecError, WorkerEnvironmentError
from skipindex.expressions.nodes import Call
from skipindex.expressions.sql import expression_operand
from skipindex.indexing.expression_task import (
    ExpressionJob,
    ExpressionRun,
    ExpressionType,
    index_rows,
    value_column,
)
from skipindex.indexing.indexer import SegmentWritten
from skipindex.spark.session import job_description, read_parquet_paths, worker_errors
from skipindex.store.listing import DataFile

__all__ = ["MAX_JOBS", "expression_types", "run_expressions", "session_settings"]

MAX_JOBS = 48  # jobs one evaluation may take to find the files Spark fails on
_RESULT = "written string"
_ZONE_MARKERS = ("some(", "timestamp", "timezone", "utc")


def _base_frame(spark: Any, read_schema: str | None, table: pa.Schema) -> Any:
    from pyspark.sql.types import StructType

    if read_schema is not None:
        schema = StructType.fromJson(json.loads(read_schema))
    else:
        from pyspark.sql.pandas.types import from_arrow_schema

        schema = from_arrow_schema(table)
    return spark.createDataFrame([], schema)


@contextlib.contextmanager
def session_settings(spark: Any, settings: Mapping[str, str]) -> Iterator[None]:
    """``settings`` in force in the session for the block, restored after."""
    previous: dict[str, str | None] = {}
    for key in settings:
        try:
            previous[key] = spark.conf.get(key)
        except Exception:  # no such setting (and no default) in this session
            previous[key] = None
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, before in previous.items():
            if before is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, before)


def expression_types(
    spark: Any, read_schema: str | None, table: pa.Schema, texts: Sequence[str], zone: str
) -> list[ExpressionType]:
    """Spark's type of each expression over the table, and its zone dependence."""
    from pyspark.sql.pandas.types import to_arrow_type

    out = []
    with session_settings(spark, {"spark.sql.session.timeZone": zone}):
        base = _base_frame(spark, read_schema, table)
        for text in texts:
            try:
                frame = base.selectExpr(f"({text}) AS v")
                result = frame.schema.fields[0].dataType
            except Exception as exc:  # AnalysisException, classic or Connect
                raise InvalidSpecError(
                    f"Spark cannot compute expr={text!r} over this table: {_first_line(exc)}"
                ) from None
            try:
                arrow_type = to_arrow_type(result)
            except Exception:
                arrow_type = pa.null()  # a type no index takes: the kind says so
            out.append(ExpressionType(arrow_type, _zone_dependent(base, frame, text, result)))
    return out


def _zone_dependent(base: Any, frame: Any, text: str, result: Any) -> bool:
    if "timestamp" in result.simpleString():
        return True
    operand = expression_operand(text)
    names = operand.columns() if isinstance(operand, Call) else []
    for name in names:
        path = (name,) if isinstance(name, str) else name
        quoted = ".".join("`" + p.replace("`", "``") + "`" for p in path)
        try:
            column = base.selectExpr(quoted).schema.fields[0].dataType
        except Exception:
            return True
        if "timestamp" in column.simpleString():
            return True
    plan = _analyzed(frame).lower()
    return not plan or any(marker in plan for marker in _ZONE_MARKERS)


def _analyzed(frame: Any) -> str:
    """The analyzed plan's expressions ("" where Spark does not say)."""
    shown = io.StringIO()
    try:
        with contextlib.redirect_stdout(shown):
            frame.explain(mode="extended")
    except Exception:
        return ""
    text = shown.getvalue()
    start = text.find("== Analyzed Logical Plan ==")
    if start < 0:
        return ""
    section = text[start:].split("\n== ", 1)[0].splitlines()[2:]  # title, output types
    return "\n".join(line for line in section if "Relation" not in line)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:400] if text else type(exc).__name__


def run_expressions(
    spark: Any, job: ExpressionJob, files: list[DataFile], parallelism: int
) -> ExpressionRun:
    """The values of ``job``'s expressions over ``files``, indexed into segments."""
    if job.read_schema and any(
        f["name"].lower() == "_metadata" for f in json.loads(job.read_schema)["fields"]
    ):
        raise InvalidSpecError(
            f"cannot build expression indexes on {job.user_root}: it has a column named "
            "_metadata, which hides the file metadata Spark reports the rows' files by"
        )
    settings = {
        "spark.sql.session.timeZone": job.time_zone,
        "spark.sql.files.ignoreCorruptFiles": "true",
        "spark.sql.files.ignoreMissingFiles": "true",
    }
    written: list[SegmentWritten] = []
    failed: dict[str, str] = {}
    pending = [files]
    jobs = 0
    description = f"skipindex: expression indexes of {len(files)} files of {job.user_root}"
    with session_settings(spark, settings), job_description(spark, description):
        while pending:
            group = pending.pop()
            jobs += 1
            try:
                written += _run_once(spark, job, group, parallelism)
            except WorkerEnvironmentError:
                raise
            except _spark_errors() as exc:  # Spark's, not a bug of ours: narrow it down
                if len(group) == 1 or jobs >= MAX_JOBS:
                    failed.update((f.path, _first_line(exc)) for f in group)
                    continue
                half = len(group) // 2
                pending += [group[half:], group[:half]]
    return ExpressionRun(written, failed)


def _spark_errors() -> tuple[type[BaseException], ...]:
    """What Spark raises for a job that fails (classic and Connect)."""
    from pyspark.errors import PySparkException

    found: list[type[BaseException]] = [PySparkException]
    with contextlib.suppress(ImportError):
        from py4j.protocol import Py4JError  # type: ignore[import-untyped]

        found.append(Py4JError)
    return tuple(found)


def _run_once(
    spark: Any, job: ExpressionJob, files: list[DataFile], parallelism: int
) -> list[SegmentWritten]:
    from dataclasses import replace

    task_job = replace(job, files=tuple(files))
    reader = spark.read
    if job.read_schema is not None:
        from pyspark.sql.types import StructType

        reader = reader.schema(StructType.fromJson(json.loads(job.read_schema)))
    root = job.user_root.rstrip("/")
    frame = read_parquet_paths(spark, reader, [f"{root}/{f.path}" for f in files])
    # SQL text, not Columns: the same on a classic session and on Spark Connect.
    values = [f"({text}) AS {value_column(i)}" for i, text in enumerate(job.texts)]
    frame = frame.selectExpr("_metadata.file_path AS _file", "_metadata.row_index AS _row", *values)
    frame = frame.repartition(max(1, min(parallelism, len(files))), "_file")
    frame = frame.sortWithinPartitions("_file", "_row")

    def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        found = index_rows(task_job, batches)
        if found is not None:
            yield pa.RecordBatch.from_pylist(
                [{"written": found.to_json()}], pa.schema([("written", pa.string())])
            )

    with worker_errors(spark):
        rows = frame.mapInArrow(task, _RESULT).collect()
    return [SegmentWritten.from_json(row.written) for row in rows]
