"""read()'s whole-folder scan: ``spark.read.parquet(root)`` as plain Spark makes it,
without inferring the same schema again on every call.

Where prune keeps most files, read() hands Spark the table folder itself, as plain
Spark would read it, and the filter. Building that DataFrame, Spark lists the
folder and infers its schema from a footer with a Spark job of its own: about
50 ms in local mode (SF10 lineitem in 1,000 files, local[2]: 88 ms with
inference, 28-35 ms with the schema given), more than most warm prunes. The schema
Spark infers depends only on the files it lists and on the session's settings,
so read() keeps it per table and reuses it while both are the same:

* the files: every file prune listed is covered by the index version it read
  (same path, size and mtime as when indexed), and either the listing holds as
  many files as that version indexed (then it holds exactly those: the version
  names them) or every listed file is kept (then the kept paths name them: the
  key holds a digest of them);
* the settings: every SQL setting of the session (Spark's ``SQLConf``, as one
  string), so a changed ``mergeSchema``, ``binaryAsString``, time zone or
  partition type inference infers again. With ``respectSummaryFiles`` Spark may
  infer from a ``_common_metadata`` file, which the listing hides: never reused.

Only classic sessions: on Spark Connect the DataFrame is analysed on the server
when it runs, and asking for its schema first would infer it twice.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from skipindex.errors import SkipIndexError
from skipindex.pruning.result import PruneResult
from skipindex.reading.held import session_settings
from skipindex.store.cache import LIMIT, ColumnCache
from skipindex.store.location import TableLocation
from skipindex.store.manifest import load_version

__all__ = ["folder_frame", "schema_cache"]


@dataclass(frozen=True)
class _Inferred:
    schema: Any  # pyspark StructType

    @property
    def nbytes(self) -> int:
        return 4096  # a few fields' names and types; what matters is the entry count


# Spark's inferred schema per (table, index version, files, session settings).
schema_cache: ColumnCache[_Inferred] = ColumnCache(min(LIMIT, 256 * 4096))


def folder_frame(spark: Any, reader: Any, location: TableLocation, result: PruneResult) -> Any:
    """``reader.parquet(root)``, given the schema Spark inferred for these very
    files in this session's settings where read() has seen it before."""
    root = location.user_root
    key = _key(spark, location, result)
    cached = schema_cache.get(key) if key is not None else None
    if cached is not None:
        return reader.schema(cached.schema).parquet(root)
    frame = reader.parquet(root)
    if key is not None:
        schema_cache.put(key, _Inferred(frame.schema))
    return frame


def _key(spark: Any, location: TableLocation, result: PruneResult) -> tuple[str, ...] | None:
    """What Spark's inferred schema of the folder depends on, or None where read()
    cannot tell that Spark lists exactly files the index knows, unchanged."""
    files = _listed(location, result)
    if files is None:
        return None
    settings = session_settings(spark)
    if settings is None or f"{_SUMMARY_FILES} -> true" in settings.lower():
        return None
    return (location.uri, files, settings)


def _listed(location: TableLocation, result: PruneResult) -> str | None:
    """A name for exactly the files prune listed (each as indexed), or None."""
    if (
        result.version is None
        or result.covered != result.total
        or result.not_parquet
        or result.swapping
    ):
        return None
    try:
        indexed = sum(s.files for s in load_version(location, result.version).segments)
    except (SkipIndexError, OSError):
        indexed = -1  # replaced meanwhile: name the files by their paths, if all kept
    if indexed == result.total:
        return f"v{result.version}"
    if result.kept == result.total:
        paths = "\n".join(result.files).encode()
        return f"v{result.version}:{hashlib.blake2b(paths, digest_size=20).hexdigest()}"
    return None


_SUMMARY_FILES = "spark.sql.parquet.respectsummaryfiles"
