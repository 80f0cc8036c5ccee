"""How many bytes a reference reads: whether one side's join keys are cheap
enough to compute for pruning the other.

Computing the keys scans the filtered side; it pays only where that side is
much smaller than the side it prunes (a dimension against a fact table), so
:mod:`.query` asks for keys only from a side at most ``1 / key_side_share`` of
the other's bytes, and a Spark job for them only where the other side reads at
least ``key_query_bytes`` (both knobs of :mod:`.policy`). An indexed table's
bytes are its files' (the kept files where the reference is read from them); any
other table's are Spark's own estimate (classic sessions; unknown elsewhere, and then allowed).
"""

from __future__ import annotations

from typing import Any

from skipindex.errors import SkipIndexError
from skipindex.sql.catalog import Source
from skipindex.sql.frames import Pruned

__all__ = ["fits", "kept_bytes", "listed_sizes", "spark_estimate"]


def fits(dim_bytes: int | None, fact_bytes: int | None, share: int) -> bool:
    """Whether a side reading ``dim_bytes`` reads at most 1 / ``share`` of
    ``fact_bytes``, the bytes of the side it would prune (unknown either side: allowed)."""
    if dim_bytes is None or fact_bytes is None:
        return True
    return dim_bytes * share <= fact_bytes


def listed_sizes(source: Source) -> dict[str, int] | None:
    """Each file of ``source``'s table (relative path) and its size, from the
    listing its view holds, else one listing (None: it cannot be listed)."""
    try:
        listing = source.location.list_table() if source.listed is None else source.listed.listing
    except (SkipIndexError, OSError):
        return None
    return dict(zip(listing.paths.to_pylist(), listing.sizes.tolist(), strict=True))


def kept_bytes(source: Source, pruned: Pruned | None, sizes: dict[str, int]) -> int:
    """Bytes a reference to ``source``'s table reads: its kept files where it is
    read from them, else every file (``sizes``: :func:`listed_sizes`)."""
    if pruned is None or pruned.frame is None or pruned.result is None:
        return int(sum(sizes.values()))
    location = source.location
    return int(sum(sizes.get(location.relative(path), 0) for path in pruned.result.files))


def spark_estimate(spark: Any, written: str) -> int | None:
    """Spark's own estimate of the bytes table ``written`` reads (None: not known)."""
    try:
        frame = spark.sql(f"SELECT * FROM {written}")  # noqa: S608 -- the query's own name
        stats = frame._jdf.queryExecution().optimizedPlan().stats()
        return int(str(stats.sizeInBytes().toString()))
    except Exception:
        return None
