"""A table's partition columns over a listing, from wherever the truth is.

A Delta table states each file's partition values in its log (typed by its
schema), and those are the values, whatever its folders are called. A plain
Parquet folder has only its folder names, typed as Spark infers them
(:mod:`skipindex.spark.partitions`). An Iceberg table has its own planning
(:mod:`skipindex.pruning.iceberg`) and none here.
"""

from __future__ import annotations

import weakref
from datetime import tzinfo

import pyarrow as pa

from skipindex._types import domain_of, spark_type_name
from skipindex.spark.partitions import PartitionColumn, partition_columns
from skipindex.store.listing import Listing

__all__ = ["logged_partitions", "table_partitions"]

# Listing -> (zone, typed?) -> its partition columns, while the listing lives.
_inferred: weakref.WeakKeyDictionary[Listing, dict[tuple[str, bool], list[PartitionColumn]]] = (
    weakref.WeakKeyDictionary()
)


def table_partitions(
    listing: Listing, *, time_zone: tzinfo, infer_types: bool = True
) -> list[PartitionColumn]:
    """The partition columns of the files in ``listing``, a value per file (worked
    out once per listing, zone and typing: a held listing is pruned many times)."""
    if listing.partition_values is not None:
        return logged_partitions(listing)
    answers = _inferred.setdefault(listing, {})
    key = (str(time_zone), infer_types)
    if key not in answers:
        answers[key] = partition_columns(
            listing.paths, time_zone=time_zone, infer_types=infer_types
        )
    return answers[key]


def logged_partitions(listing: Listing) -> list[PartitionColumn]:
    """The partition columns the table's own metadata states for the files in
    ``listing`` (none for a folder: only Spark's inference types those)."""
    logged = listing.partition_values
    if logged is None:
        return []
    columns = []
    for name, chunked in zip(logged.column_names, logged.columns, strict=True):
        values = chunked.combine_chunks()
        if domain_of(values.type) is None:
            why = f"its type {spark_type_name(values.type)} is not one an index compares"
            columns.append(PartitionColumn(name, None, values.cast("string"), why))
        else:
            columns.append(PartitionColumn(name, values.type, values))
    return columns


def folders_misread(listing: Listing, *, time_zone: tzinfo, infer_types: bool = True) -> str | None:
    """Where a table's logged partition values are not what Spark infers from its
    folder names (a Delta STRING ``month`` in ``month=12`` folders reads as INT
    12), the first such column, said in words; None where they agree (integers
    of either width count as agreeing) or nothing is logged."""
    logged = logged_partitions(listing)
    if not logged:
        return None
    inferred = {
        p.name.lower(): p
        for p in partition_columns(listing.paths, time_zone=time_zone, infer_types=infer_types)
    }
    for column in logged:
        found = inferred.get(column.name.lower())
        shown = f"partition column {column.name} ({_type_name(column.type)} in the table's log)"
        if found is None or found.type is None:
            why = "is not in every folder name" if found is None else found.why
            return f"{shown}: Spark cannot read it from the folder names ({why})"
        if not _same_values(found.values, column.values):
            return (
                f"{shown}: Spark reads the folder names as {_type_name(found.type)} values "
                f"{found.values.unique().to_pylist()[:3]}, the log holds "
                f"{column.values.unique().to_pylist()[:3]}"
            )
    return None


def _same_values(inferred: pa.Array, logged: pa.Array) -> bool:
    if domain_of(inferred.type) is not domain_of(logged.type):
        return False
    try:
        return bool(inferred.cast(logged.type).equals(logged))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return False


def _type_name(arrow_type: pa.DataType | None) -> str:
    return spark_type_name(arrow_type) if arrow_type is not None else "untyped"
