"""The only module that knows how to start Spark. Imported lazily by build/read/cluster."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from typing import Any

from skipindex.errors import WorkerEnvironmentError


def local_session(cores: int | str = "*", app_name: str = "skipindex") -> Any:
    """A local SparkSession set up the way skipindex expects: UTC, no UI, same Python."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(f"local[{cores}]")
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "4g")
        .config("spark.sql.shuffle.partitions", str(max(4, _cores(cores) * 2)))
        .config("spark.sql.sources.parallelPartitionDiscovery.threshold", "100000")
        .config("spark.python.worker.reuse", "true")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")  # Spark's INFO/WARN chatter is not ours to show
    return spark


def session_for(
    master: str, conf: Mapping[str, str] | None = None, app_name: str = "skipindex"
) -> Any:
    """A SparkSession on ``master`` (``local[N]``, or a cluster's URL such as
    ``spark://host:7077``) set up as :func:`local_session`'s, plus ``conf``.
    Executors run ``PYSPARK_PYTHON`` (default: this interpreter), which must have
    skipindex installed where they run."""
    if master.startswith("local") and not conf:
        inside = master[master.find("[") + 1 : master.find("]")] if "[" in master else "*"
        return local_session(inside or "*", app_name)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.sources.parallelPartitionDiscovery.threshold", "100000")
        .config("spark.python.worker.reuse", "true")
    )
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def active_or_local_session() -> Any:
    """The active SparkSession if there is one, else a new local[*] one."""
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession() or local_session()


def _cores(cores: int | str) -> int:
    return (os.cpu_count() or 2) if cores == "*" else int(cores)


def session_cores(spark: Any) -> int:
    """Cores the session's tasks run on: the SparkContext's default parallelism on a
    classic session; on Spark Connect (no SparkContext) what the master says."""
    with suppress(Exception):  # Connect: no SparkContext on the client
        return int(spark.sparkContext.defaultParallelism)
    master = str(session_conf(spark, "spark.master", "local[*]"))
    inside = master[master.find("[") + 1 : master.find("]")] if "[" in master else ""
    if inside.isdigit():
        return int(inside)
    return os.cpu_count() or 2


@contextmanager
def job_description(spark: Any, text: str) -> Iterator[None]:
    """Name the Spark jobs run in the block (Spark UI, event logs): table and step."""
    try:
        context = spark.sparkContext
    except Exception:  # Connect: tag the operations instead
        context = None
    if context is None:
        tag = "skipindex"
        with suppress(Exception):
            spark.addTag(tag)
        try:
            yield
        finally:
            with suppress(Exception):
                spark.removeTag(tag)
        return
    previous = context.getLocalProperty("spark.job.description")
    context.setJobDescription(text)
    try:
        yield
    finally:
        context.setJobDescription(previous)


@contextmanager
def worker_errors(spark: Any) -> Iterator[None]:
    """A worker Python that cannot import skipindex fails with what to set, not
    with a worker traceback."""
    try:
        yield
    except Exception as exc:
        text = str(exc)
        missing = _MISSING_MODULE.search(text)
        if missing is None:
            raise
        worker = session_conf(spark, "spark.pyspark.python", "") or os.environ.get(
            "PYSPARK_PYTHON", "python3 (Spark's default)"
        )
        raise WorkerEnvironmentError(
            f"Spark's Python workers ({worker}) cannot import {missing.group(1)!r}: they do "
            f"not run the Python that has skipindex installed ({sys.executable}). Set "
            f"PYSPARK_PYTHON={sys.executable} (or spark.pyspark.python) before the "
            "SparkSession starts, or install skipindex where the workers run"
        ) from None


_MISSING_MODULE = re.compile(r"No module named '([^']+)'")


def session_conf(spark: Any, key: str, default: str) -> str:
    """A session setting; ``default`` where the session refuses the key (Connect)."""
    try:
        return str(spark.conf.get(key, default))
    except Exception:
        return default


_GLOB_CHARS = re.compile(r"([\\*?\[\]{}])")


_DISCOVERY_THRESHOLD = "spark.sql.sources.parallelPartitionDiscovery.threshold"


def is_connect(spark: Any) -> bool:
    """Whether ``spark`` is a Spark Connect session (its plans run on a server)."""
    return ".connect." in type(spark).__module__


def read_parquet_paths(spark: Any, reader: Any, paths: list[str]) -> Any:
    """``reader.parquet(*paths)`` with every path taken literally and no listing job
    (Spark lists more than ``threshold`` explicit paths with a job of its own)."""
    previous = spark.conf.get(_DISCOVERY_THRESHOLD, None)
    spark.conf.set(_DISCOVERY_THRESHOLD, str(max(len(paths) + 1, 32)))
    try:
        return reader.parquet(*(escape_glob(p) for p in paths))
    finally:
        if previous is None:
            spark.conf.unset(_DISCOVERY_THRESHOLD)
        else:
            spark.conf.set(_DISCOVERY_THRESHOLD, previous)


def empty_frame(spark: Any, schema: Any) -> Any:
    """No rows, typed by ``schema``, as a relation Spark knows is empty: a plain
    ``createDataFrame([], schema)`` is an RDD scan, whose size Spark cannot tell
    (joins with it are planned as joins with a huge table, sort-merge and all);
    ``LIMIT 0`` over it is replaced by an empty local relation, which Spark's
    optimizer propagates (a join with it is empty, its other side never read)."""
    return spark.createDataFrame([], schema).limit(0)


def escape_glob(path: str) -> str:
    """Spark globs the paths it is given; a file named ``a[1].parquet`` is literal."""
    return _GLOB_CHARS.sub(r"\\\1", path)
