"""The table's Arrow schema, as the index sees it.

Spark reads one footer to infer a Parquet table's schema; so do we (typed as
Spark types it: INT96 as zoned microseconds, dictionaries as their values),
then keep the schema stable across builds (columns only get added), and look
further only for a requested column that the first file lacks.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from skipindex.column_paths import split_name
from skipindex.spark_view import file_schema, open_file
from skipindex.store.location import DataFile, TableLocation
from skipindex.store.manifest import Manifest

__all__ = ["table_schema"]

MAX_FOOTERS = 1000  # how far to look for a requested column before calling it unknown


def table_schema(
    location: TableLocation,
    listing: Sequence[DataFile],
    current: Manifest | None,
    wanted: Sequence[str],
) -> pa.Schema:
    fields: dict[str, pa.Field] = {}
    if current is not None:
        fields.update((f.name, f) for f in current.arrow_schema)
    lowered = {name.lower() for name in fields}
    missing = {split_name(w)[0] for w in wanted}
    missing = {w for w in missing if w not in fields and w.lower() not in lowered}
    read = 0
    for data_file in listing:
        if read >= MAX_FOOTERS or (read and not missing):
            break
        try:
            schema = file_schema(open_file(location.fs_path(data_file.path), location.fs))
        except (pa.ArrowException, OSError):
            continue  # not Parquet: the indexer records why
        read += 1
        for field in schema:
            # `x` in a later file is the `X` already known (Spark matches names
            # case-insensitively): never a second column.
            if field.name.lower() not in lowered:
                fields[field.name] = field.remove_metadata()
                lowered.add(field.name.lower())
        missing = {w for w in missing if w not in fields and w.lower() not in lowered}
    return pa.schema(list(fields.values()))
