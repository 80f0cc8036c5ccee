"""Prune as if only some of a table's indexes existed: the advisor's what-if.

The advisor builds every candidate index once on a sample table, then asks,
for many subsets of them, how many files each query keeps. Each question is a
real prune (the same binding, evaluation and row-level pass as
:func:`~skipindex.prune`) over the latest manifest with the other definitions
left out, so the answer is what the table would give with just that subset;
the decoded index columns are cached across questions. Nothing is logged to
the query log, and nothing here writes.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import replace

from skipindex.errors import InvalidSpecError
from skipindex.expressions.timezones import zone_named
from skipindex.pruning.prune import _prune
from skipindex.pruning.result import PruneResult
from skipindex.pruning.session import Session
from skipindex.store.location import TablePath, locate
from skipindex.store.manifest import IndexDef, load_latest

__all__ = ["IndexKey", "defined", "kept_with"]

IndexKey = tuple[str, str]  # (column, kind), as the manifest records them


def defined(path: TablePath) -> list[IndexDef]:
    """The index definitions of the table's latest manifest."""
    manifest = load_latest(locate(path))
    return [] if manifest is None else list(manifest.indexes)


def kept_with(
    path: TablePath,
    where: str,
    indexes: Collection[IndexKey],
    *,
    time_zone: str = "UTC",
    case_sensitive: bool | None = None,
) -> PruneResult:
    """What ``prune(path, where)`` would keep if the table held only ``indexes``."""
    started = time.perf_counter()
    location = locate(path)
    manifest = load_latest(location)
    if manifest is None:
        raise InvalidSpecError(f"{location.user_root}: no index to simulate with")
    wanted = set(indexes)
    subset = tuple(d for d in manifest.indexes if (d.column, d.kind) in wanted)
    manifest = replace(manifest, indexes=subset)
    session = Session(zone_named(time_zone), time_zone, case_sensitive, "auto")
    return _prune(location, manifest, location.list_table(), where, session, started)
