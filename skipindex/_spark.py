"""The only module that knows how to start Spark. Imported lazily by build/read/cluster."""

from __future__ import annotations

import os
import sys
from typing import Any


def local_session(cores: int | str = "*", app_name: str = "skipindex") -> Any:
    """A local SparkSession set up the way skipindex expects: UTC, no UI, same Python."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    return (
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


def active_or_local_session() -> Any:
    """The active SparkSession if there is one, else a new local[*] one."""
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession() or local_session()


def _cores(cores: int | str) -> int:
    return (os.cpu_count() or 2) if cores == "*" else int(cores)
