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
  (same path, size and mtime as when indexed) and kept, so the kept paths name
  exactly the files Spark lists, unchanged; the key holds a digest of them;
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

from skipindex.result import PruneResult
from skipindex.store.cache import _LIMIT, ColumnCache

__all__ = ["folder_frame", "schema_cache"]


@dataclass(frozen=True)
class _Inferred:
    schema: Any  # pyspark StructType

    @property
    def nbytes(self) -> int:
        return 4096  # a few fields' names and types; what matters is the entry count


# Spark's inferred schema per (table, index version, kept files, session settings).
schema_cache: ColumnCache[_Inferred] = ColumnCache(min(_LIMIT, 256 * 4096))


def folder_frame(spark: Any, reader: Any, root: str, result: PruneResult) -> Any:
    """``reader.parquet(root)``, given the schema Spark inferred for these very
    files in this session's settings where read() has seen it before."""
    key = _key(spark, root, result)
    cached = schema_cache.get(key) if key is not None else None
    if cached is not None:
        return reader.schema(cached.schema).parquet(root)
    frame = reader.parquet(root)
    if key is not None:
        schema_cache.put(key, _Inferred(frame.schema))
    return frame


def _key(spark: Any, root: str, result: PruneResult) -> tuple[str, ...] | None:
    """What Spark's inferred schema of ``root`` depends on, or None where read()
    cannot tell that it lists exactly the files the index knows, unchanged."""
    every_file_known = (
        result.version is not None
        and result.covered == result.total == result.kept
        and not result.not_parquet
        and not result.swapping
    )
    if not every_file_known:
        return None
    settings = _settings(spark)
    if settings is None or f"{_SUMMARY_FILES} -> true" in settings.lower():
        return None
    files = hashlib.blake2b("\n".join(result.files).encode(), digest_size=20).hexdigest()
    return (root, str(result.version), str(result.total), files, settings)


_SUMMARY_FILES = "spark.sql.parquet.respectsummaryfiles"


def _settings(spark: Any) -> str | None:
    """Every SQL setting of a classic session as one string; None on Spark Connect
    (or wherever the JVM session is out of reach)."""
    try:
        return str(spark._jsparkSession.sessionState().conf().getAllConfs().toString())
    except Exception:
        return None
