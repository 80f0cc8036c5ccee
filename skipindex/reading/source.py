"""The Spark Python data source behind read()'s row-group path: a thin shell
that hands :func:`skipindex.reading.split.read_split` one task per bin."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from skipindex.reading.row_groups import Split, bins
from skipindex.reading.split import read_split
from skipindex.spark.session import session_cores
from skipindex.spark.settings import SparkView

__all__ = ["arrow_target", "load"]

NAME = "skipindex_row_groups"


def arrow_target(schema: StructType) -> pa.Schema:
    """The Arrow schema Spark expects a Python data source to yield for ``schema``."""
    return to_arrow_schema(schema, timezone="UTC")


def load(spark: Any, schema: StructType, splits: Sequence[Split], view: SparkView) -> Any:
    """A DataFrame of the splits' rows, typed as ``schema``."""
    spark.dataSource.register(RowGroupSource)
    plan = {
        "view": view.to_json(),
        "bins": [[s.to_json() for s in b] for b in bins(splits, 2 * session_cores(spark))],
    }
    return spark.read.format(NAME).schema(schema).option("plan", json.dumps(plan)).load()


class RowGroupSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return NAME

    def reader(self, schema: StructType) -> DataSourceReader:
        return _Reader(json.loads(self.options["plan"]), schema)


class _Reader(DataSourceReader):
    def __init__(self, plan: dict[str, Any], schema: StructType) -> None:
        self.view = SparkView.from_json(plan["view"])
        self.bins = plan["bins"]
        self.target = arrow_target(schema)

    def partitions(self) -> Sequence[InputPartition]:
        return [InputPartition(b) for b in self.bins]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        for doc in partition.value:
            yield from read_split(Split.from_json(doc), self.target, self.view)
