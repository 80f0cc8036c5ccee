"""``read(spark, path, where)``: prune, then let Spark read only the kept files."""

from __future__ import annotations

import json
import re
from typing import Any

from skipindex.prune import prune
from skipindex.store.location import locate

__all__ = ["read"]

_DISCOVERY_THRESHOLD = "spark.sql.sources.parallelPartitionDiscovery.threshold"
_GLOB_CHARS = re.compile(r"([\\*?\[\]{}])")


def read(spark: Any, path: str, where: Any, *, on_damaged: str = "raise") -> Any:
    """A DataFrame of the rows of ``path`` for which ``where`` is TRUE.

    Only the files :func:`~skipindex.prune` keeps are opened. Partitioned tables
    keep their partition columns (``basePath``), an empty result has the table's
    schema, and listing many paths runs no Spark job.
    """
    from pyspark.sql import Column
    from pyspark.sql import functions as F  # noqa: N812
    from pyspark.sql.types import StructType

    result = prune(path, where, on_damaged=on_damaged)
    root = locate(path).user_root
    schema = StructType.fromJson(json.loads(result.spark_schema)) if result.spark_schema else None
    condition = where if isinstance(where, Column) else F.expr(where)
    if not result.files:
        if schema is None:
            schema = spark.read.option("basePath", root).parquet(root).schema
        return spark.createDataFrame([], schema).filter(condition)
    reader = spark.read.option("basePath", root)
    if schema is not None:
        reader = reader.schema(schema)
    if result.kept == result.total:
        # Nothing to skip: read the folder the way plain Spark does, instead of
        # handing it every path (which costs more to plan and list).
        return reader.parquet(root).filter(condition)
    previous = spark.conf.get(_DISCOVERY_THRESHOLD, None)
    # Listing more than `threshold` explicit paths would start a Spark job.
    spark.conf.set(_DISCOVERY_THRESHOLD, str(max(len(result.files) + 1, 32)))
    try:
        frame = reader.parquet(*(_escape_glob(f) for f in result.files))
    finally:
        if previous is None:
            spark.conf.unset(_DISCOVERY_THRESHOLD)
        else:
            spark.conf.set(_DISCOVERY_THRESHOLD, previous)
    return frame.filter(condition)


def _escape_glob(path: str) -> str:
    """Spark globs the paths it is given; a file named ``a[1].parquet`` is literal."""
    return _GLOB_CHARS.sub(r"\\\1", path)
