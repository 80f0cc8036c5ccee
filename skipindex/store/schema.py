"""The table's Arrow schema, as the index sees it.

Spark reads one footer to infer a Parquet table's schema; so do we (typed as
Spark types it: INT96 as zoned microseconds, any timestamp as microseconds,
dictionaries as their values), then keep the schema across builds (columns get
added; a type is only widened, by the build, when a file's values need it: see
:mod:`skipindex.spark.widening`), and look further only for a requested column that
the first file lacks. The first file's own types are what Spark reads every
file in without ``mergeSchema``; the build checks integer columns against them.

A schema recorded this way is marked (:data:`SPARK_TYPES_KEY`): it holds every
indexed value. One recorded by an older skipindex may not (a file whose values
did not fit was left unindexed, and prune bound literals to the narrower type),
so the next build indexes such files again.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from skipindex.column_paths import split_name
from skipindex.expressions.calls import is_expression_field
from skipindex.spark.view import file_schema, open_file
from skipindex.spark.widening import spark_type
from skipindex.store.delta import delta_id_schema
from skipindex.store.iceberg import iceberg_arrow_schema
from skipindex.store.location import DataFile, TableLocation
from skipindex.store.manifest import Manifest

__all__ = [
    "SPARK_TYPES_KEY",
    "field_id_schema",
    "holds_every_value",
    "table_schema",
    "table_types",
]

MAX_FOOTERS = 1000  # how far to look for a requested column before calling it unknown
SPARK_TYPES_KEY = b"skipindex.types"
SPARK_TYPES = b"spark"


def table_schema(
    location: TableLocation,
    listing: Sequence[DataFile],
    current: Manifest | None,
    wanted: Sequence[str],
) -> pa.Schema:
    """The schema to record: the current one (typed as Spark reads), plus the
    columns of the first footers for columns it lacks."""
    return table_types(location, listing, current, wanted)[0]


def field_id_schema(location: TableLocation) -> pa.Schema | None:
    """The schema of a table whose files are read by field id, each field carrying
    its id: an Iceberg snapshot's, or a Delta table's with column mapping (a
    renamed column keeps its id); None for a table read by column names."""
    if location.iceberg is not None:
        return iceberg_arrow_schema(location.iceberg)
    if location.is_delta:
        return delta_id_schema(location.uri, location.user_root, dict(location.options))
    return None


def table_types(
    location: TableLocation,
    listing: Sequence[DataFile],
    current: Manifest | None,
    wanted: Sequence[str],
) -> tuple[pa.Schema, pa.Schema]:
    """:func:`table_schema`, and the types of the first readable file (Spark's
    schema without ``mergeSchema``). An Iceberg table's schema is its snapshot's,
    a column-mapped Delta table's its log's (each field with its field id), which
    every file is read in."""
    snapshot = field_id_schema(location)
    if snapshot is not None:
        kept = [f for f in (current.arrow_schema if current else []) if is_expression_field(f)]
        marked = pa.schema([*snapshot, *kept], metadata={SPARK_TYPES_KEY: SPARK_TYPES})
        return marked, snapshot
    fields: dict[str, pa.Field] = {}
    if current is not None:
        fields.update((f.name, f.with_type(spark_type(f.type))) for f in current.arrow_schema)
    lowered = {name.lower() for name in fields}
    missing = {split_name(w)[0] for w in wanted}
    missing = {w for w in missing if w not in fields and w.lower() not in lowered}
    first: pa.Schema | None = None
    read = 0
    for data_file in listing:
        if read >= MAX_FOOTERS or (read and not missing):
            break
        try:
            schema = file_schema(open_file(location.fs_path(data_file.path), location.fs))
        except (pa.ArrowException, OSError):
            continue  # not Parquet: the indexer records why
        read += 1
        typed = [f.with_type(spark_type(f.type)).remove_metadata() for f in schema]
        first = first or pa.schema(typed)
        for field in typed:
            # `x` in a later file is the `X` already known (Spark matches names
            # case-insensitively): never a second column.
            if field.name.lower() not in lowered:
                fields[field.name] = field
                lowered.add(field.name.lower())
        missing = {w for w in missing if w not in fields and w.lower() not in lowered}
    marked = pa.schema(list(fields.values()), metadata={SPARK_TYPES_KEY: SPARK_TYPES})
    return marked, first or pa.schema([])


def holds_every_value(schema: pa.Schema) -> bool:
    """Whether ``schema`` was recorded with types that hold every indexed value."""
    return (schema.metadata or {}).get(SPARK_TYPES_KEY) == SPARK_TYPES
