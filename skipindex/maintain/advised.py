"""``indexes = "advise"``: the service keeps the indexes the workload asks for.

At each refresh of such a table, the predicates the query log holds for it
(``[service] query_log``) are handed to :func:`skipindex.advise.advise.advise`
(indexes only: a layout changes through ``cluster_by``), and what it chooses
is built next to what the table has (nothing is dropped). A workload seen
before is not advised again within :data:`READVISE_S`: the advice is recorded
in the refresh's outcome (``advice``: the workload's signature, the time, the
indexes) and reused. Until the log holds :data:`MIN_QUERIES` prunes of the
table, indexes are suggested from the schema as for ``indexes = "suggest"``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from skipindex.advise.advise import advise
from skipindex.indexes import KINDS
from skipindex.indexes.base import IndexSpec
from skipindex.maintain.policy import ServicePolicy, TablePolicy
from skipindex.store import query_log
from skipindex.store.location import locate

__all__ = ["MIN_QUERIES", "READVISE_S", "advised_specs"]

MIN_QUERIES = 5
READVISE_S = 3600


def advised_specs(
    table: TablePolicy, service: ServicePolicy, last: dict[str, Any] | None, now_ms: int
) -> tuple[list[IndexSpec] | None, dict[str, Any]]:
    """The indexes the logged workload asks for (None: too few queries yet, or
    none chosen) and the advice to record in the job's outcome."""
    if service.query_log is None:
        return None, {"advice": "no [service] query_log to advise from: indexes suggested"}
    root = locate(table.path, catalog=table.catalog).user_root
    records = query_log.queries(service.query_log, root, limit=10_000)
    if len(records) < MIN_QUERIES:
        return None, {"advice": f"{len(records)} logged queries (advised from {MIN_QUERIES})"}
    workload = sorted({(r.predicate, r.time_zone) for r in records})
    signature = hashlib.blake2b(json.dumps(workload).encode(), digest_size=8).hexdigest()
    if (
        isinstance(last, dict)
        and last.get("signature") == signature
        and now_ms - int(last.get("at_ms", 0)) < READVISE_S * 1000
    ):
        return _specs(last["indexes"]), {"advice": last}
    advice = advise(table.path, log=service.query_log, layouts_too=False)
    chosen = [{"kind": c.kind, "column": c.column} for c in advice.indexes]
    record = {
        "signature": signature,
        "at_ms": now_ms,
        "queries": len(workload),
        "indexes": chosen,
        "files_read": advice.totals(),
    }
    return _specs(chosen), {"advice": record}


def _specs(indexes: list[dict[str, str]]) -> list[IndexSpec] | None:
    return [KINDS[i["kind"]].spec(i["column"]) for i in indexes] or None
