"""How many bytes a reference reads: whether one side's join keys are cheap
enough to compute for pruning the other.

Computing the keys scans the filtered side; it pays only where that side is
much smaller than the side it prunes (a dimension against a fact table), so
:mod:`.query` asks for keys only from a side at most ``1 / KEY_SIDE_SHARE`` of
the other's bytes, and a Spark job for them only where the other side reads at
least ``KEY_QUERY_BYTES``. An indexed table's bytes are its files' (the kept files
where the reference is read from them); any other table's are Spark's own
estimate (classic sessions; unknown elsewhere, and then allowed).
"""

from __future__ import annotations

from typing import Any

from skipindex.errors import SkipIndexError
from skipindex.sql.catalog import Source
from skipindex.sql.frames import Pruned
from skipindex.sql.references import Reference

__all__ = [
    "KEY_QUERY_BYTES",
    "KEY_SIDE_SHARE",
    "LOCAL_KEY_SIDE_BYTES",
    "fits",
    "reference_bytes",
]

KEY_SIDE_SHARE = 2
# A Spark key query costs 0.15-0.3 s (analysis, a job, the keys back): about what
# Spark takes to read this many bytes of Parquet for a query that reads a few of
# their columns (TPC-DS SF1: key queries on web_sales' 51 MB and catalog_returns'
# 13 MB cost their queries more than the files they skipped saved). A side that
# reads fewer is pruned only by keys read without Spark (from bitmaps' rows).
KEY_QUERY_BYTES = 64 * 2**20
# A side not much smaller than the one it prunes gives keys read from its kept rows
# only where it reads fewer bytes than this: beyond, the keys are many and reading
# them (a row-by-row prune again, then the column) costs what it could save (TPC-DS
# SF10 q75: 0.8 s over two years of catalog_sales, for more keys than the bound).
LOCAL_KEY_SIDE_BYTES = 64 * 2**20


def fits(dim_bytes: int | None, fact_bytes: int | None, share: int) -> bool:
    """Whether a side reading ``dim_bytes`` reads at most 1 / ``share`` of
    ``fact_bytes``, the bytes of the side it would prune (unknown either side: allowed)."""
    if dim_bytes is None or fact_bytes is None:
        return True
    return dim_bytes * share <= fact_bytes


def reference_bytes(
    spark: Any, reference: Reference, source: Source | None, pruned: Pruned | None
) -> int | None:
    """Bytes ``reference`` reads (None: not known)."""
    if source is None:
        return _spark_estimate(spark, reference.written)
    location = source.location
    try:
        listing = location.list_table()
    except (SkipIndexError, OSError):
        return None
    sizes = dict(zip(listing.paths.to_pylist(), listing.sizes.tolist(), strict=True))
    if pruned is None or pruned.frame is None or pruned.result is None:
        return int(sum(sizes.values()))
    return int(sum(sizes.get(location.relative(path), 0) for path in pruned.result.files))


def _spark_estimate(spark: Any, written: str) -> int | None:
    try:
        frame = spark.sql(f"SELECT * FROM {written}")  # noqa: S608 -- the query's own name
        stats = frame._jdf.queryExecution().optimizedPlan().stats()
        return int(str(stats.sizeInBytes().toString()))
    except Exception:
        return None
