"""Reading an Iceberg table's kept files with Spark, its columns by field id.

There is no Iceberg runtime for Spark here: the kept Parquet files are read
directly, with the snapshot's schema carrying each field's Iceberg field id
(``parquet.field.id``) and ``spark.sql.parquet.fieldId.read.enabled``, so a
column renamed since a file was written is found by its id, one added since
reads as NULL there, and a promoted type (``int`` to ``long``) is widened by
Spark's reader. Iceberg partition values live in the data files, so no column
comes from folder names. Position deletes are applied by each row's file and
position (:mod:`skipindex.reading.deletes`); equality deletes cannot be, and a
snapshot with any is refused rather than read with its deleted rows.
"""

from __future__ import annotations

from typing import Any

from skipindex.errors import UnsupportedTableError
from skipindex.pruning.result import PruneResult
from skipindex.reading.deletes import without_deleted
from skipindex.spark.session import empty_frame, read_parquet_paths
from skipindex.store.iceberg import FIELD_ID, IcebergSource, iceberg_arrow_schema, iceberg_files

__all__ = ["FIELD_ID_READ", "iceberg_rows", "iceberg_spark_schema"]

FIELD_ID_READ = "spark.sql.parquet.fieldId.read.enabled"


def iceberg_rows(spark: Any, result: PruneResult, source: IcebergSource, root: str) -> Any:
    """The rows of the files ``result`` kept (of the table at ``root``), typed as
    the snapshot's schema."""
    equality = iceberg_files(source, root).equality_deletes
    if equality:
        raise UnsupportedTableError(
            f"Iceberg table {source.name} (snapshot {source.snapshot_id}) has {equality} "
            "equality delete file(s): read() reads the Parquet files with Spark, without an "
            "Iceberg runtime, and applies position deletes but not equality deletes (nor can "
            "pyiceberg). Compact the table (rewrite its data files) or read it through "
            "Iceberg; prune() still answers for it"
        )
    schema = iceberg_spark_schema(source)
    if not result.files:
        return empty_frame(spark, schema)
    spark.conf.set(FIELD_ID_READ, "true")  # read when the plan runs: it stays set
    scan = read_parquet_paths(spark, spark.read.schema(schema), result.files)
    return without_deleted(spark, scan, result.files, result.deleted)


def iceberg_spark_schema(source: IcebergSource) -> Any:
    """The snapshot's schema for Spark, each field carrying its Iceberg field id."""
    from pyspark.sql.pandas.types import from_arrow_type
    from pyspark.sql.types import StructField, StructType

    fields = []
    for field in iceberg_arrow_schema(source):
        field_id = int(field.metadata[FIELD_ID]) if field.metadata else None
        metadata = {"parquet.field.id": field_id} if field_id is not None else {}
        fields.append(StructField(field.name, from_arrow_type(field.type), True, metadata))
    return StructType(fields)
