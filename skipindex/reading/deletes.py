"""Rows a table format deleted without rewriting their file, left out in Spark.

Delta deletion vectors and Iceberg position deletes name a deleted row by its
file and its position in it (0-based, in row-group order). Spark's file scan
gives every row both (``_metadata.file_path``, ``_metadata.row_index``), so
the deleted ones go in one broadcast anti-join; files without deletions are
read as they are, and a scan without any needs no join at all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa

__all__ = ["without_deleted"]


_PATH, _ROW = "__skipindex_file", "__skipindex_row"
_SCHEME = r"^[A-Za-z][A-Za-z0-9+.-]*:(//)?"


def _plain(path: str) -> str:
    """A user path without its scheme, as the deleted rows are matched."""
    return re.sub(_SCHEME, "", path)


def without_deleted(
    spark: Any, scan: Any, files: list[str], deleted: Mapping[str, np.ndarray]
) -> Any:
    """``scan`` (a Parquet scan of ``files``) less each file's ``deleted`` rows: its
    rows carry their file and position (``_metadata``), and a broadcast anti-join
    on both leaves the deleted ones out."""
    from pyspark.sql import functions as F  # noqa: N812

    mine = [(path, deleted[path]) for path in files if path in deleted and len(deleted[path])]
    if not mine:
        return scan
    gone = pa.table(
        {
            _PATH: pa.array(
                np.repeat([_plain(p) for p, _ in mine], [len(r) for _, r in mine]), pa.string()
            ),
            _ROW: pa.array(np.concatenate([r for _, r in mine]).astype(np.int64)),
        }
    )
    # Spark names a file by its URI (file:/a%20b/x%25.parquet): decoded, without the
    # scheme, as the paths above are ('+' kept: url_decode would make it a space).
    # metadataColumn, not col("_metadata"): a data column of that name (lineage kept
    # from another table) would take the name, and its values would pick the rows.
    metadata = scan.metadataColumn("_metadata")
    spelled = F.regexp_replace(metadata.getField("file_path"), _SCHEME, "")
    path = F.url_decode(F.regexp_replace(spelled, r"\+", "%2B"))
    marked = scan.select("*", path.alias(_PATH), metadata.getField("row_index").alias(_ROW))
    live = marked.join(F.broadcast(spark.createDataFrame(gone)), [_PATH, _ROW], "left_anti")
    return live.drop(_PATH, _ROW)
