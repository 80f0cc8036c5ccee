"""Partition columns as an index: a min-max payload per file with min = max =
its partition value (typed as Spark types it: :mod:`skipindex.spark.partitions`)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from skipindex.column_paths import column_key
from skipindex.indexes.base import FileBatch
from skipindex.indexes.minmax import MinMaxKind
from skipindex.pruning.evaluate import IndexColumn
from skipindex.spark.partitions import PartitionColumn

__all__ = ["partition_index"]


def partition_index(
    column: PartitionColumn, positions: np.ndarray, num_rows: np.ndarray
) -> IndexColumn:
    """A min-max view of one typed partition column over the files at ``positions``
    of the listing (-1: not listed), whose segment rows hold ``num_rows``."""
    assert column.type is not None
    kind = MinMaxKind(column_key((column.name,)), column.type, {})
    typed = column.values.take(pa.array(positions, pa.int64(), mask=positions < 0))
    payloads = kind.constant_payloads(typed, num_rows)
    return IndexColumn(kind, FileBatch(num_rows, payloads), label="partition pruning")
