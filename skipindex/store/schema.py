"""The table's Arrow schema, as the index sees it.

Spark reads one footer to infer a Parquet table's schema; so do we, then keep
the schema stable across builds (columns only get added), and look further only
for a requested column that the first file lacks.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.parquet as pq

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
    missing = {w for w in wanted if w not in fields and w.lower() not in lowered}
    read = 0
    for data_file in listing:
        if read >= MAX_FOOTERS or (read and not missing):
            break
        try:
            schema = pq.read_schema(location.fs_path(data_file.path), filesystem=location.fs)
        except (pa.ArrowException, OSError):
            continue  # not Parquet: the indexer records why
        read += 1
        for field in schema:
            if field.name not in fields:
                fields[field.name] = field.remove_metadata()
        lowered = {name.lower() for name in fields}
        missing = {w for w in missing if w not in fields and w.lower() not in lowered}
    return pa.schema(list(fields.values()))
