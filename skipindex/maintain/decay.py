"""When a table's layout has stopped skipping: the re-clustering decision.

The measure is the share of files kept by the predicates of the query log
(:mod:`skipindex.store.query_log`), asked again with ``prune`` (no Spark, not
logged): right after a cluster, the service records each recent predicate's
share (the *baseline*); later it asks the same predicates again, and when they
now keep ``recluster_decay`` times the files they kept then, on average, the
table is re-clustered. Predicates first seen after the cluster take as their
baseline the share their first logged run kept.

Without a query log, ``recluster_unclustered_share`` re-clusters once files
outside the last layout by the policy's keys hold that share of the bytes.
A table never clustered by its keys is clustered once, to lay it out.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from skipindex.maintain.policy import TablePolicy
from skipindex.pruning.prune import prune
from skipindex.store import query_log
from skipindex.store.cluster_plan import ClusterPlan, load_plans
from skipindex.store.location import TableLocation
from skipindex.store.swaps import plan_of_file

__all__ = ["Decay", "baseline", "last_layout", "recluster_due"]

RECENT_PREDICATES = 20


@dataclass(frozen=True)
class Decay:
    due: bool
    reason: str
    baseline_share: float | None = None
    current_share: float | None = None
    predicates: int = 0


def last_layout(location: TableLocation, table: TablePolicy) -> ClusterPlan | None:
    """The newest completed cluster of the table by the policy's keys and curve."""
    keys = tuple(k.lower() for k in table.cluster_by)
    done = [
        p
        for p in load_plans(location)
        if p.state == "completed"
        and p.destination is None
        and tuple(k.lower() for k in p.by) == keys
        and p.curve == table.curve
    ]
    return done[-1] if done else None


def baseline(table: TablePolicy, location: TableLocation, log: str | None) -> dict[str, float]:
    """Each recent predicate's share of files kept, asked now (right after a cluster)."""
    if log is None:
        return {}
    return _replay(table, _recent(log, location))


def recluster_due(
    table: TablePolicy,
    location: TableLocation,
    log: str | None,
    clustered_ms: int | None,
    recorded: Mapping[str, float],
    now_ms: int | None = None,
) -> Decay:
    """Whether the table should be re-clustered now, and why."""
    if not table.cluster_by:
        return Decay(False, "no cluster_by in the policy")
    now_ms = now_ms if now_ms is not None else int(time.time() * 1000)
    layout = last_layout(location, table)
    keys = ", ".join(table.cluster_by)
    if layout is None and clustered_ms is None:  # (a Delta table's layout is Delta's OPTIMIZE)
        return Decay(True, f"no layout by ({keys}) yet")
    since = max(clustered_ms or 0, layout.created_ms if layout is not None else 0)
    waited = (now_ms - since) / 1000
    if waited < table.recluster_min_seconds:
        minimum = table.recluster_min_seconds
        return Decay(False, f"clustered {waited:.0f} s ago (minimum {minimum:.0f} s)")
    share = table.recluster_unclustered_share
    if share is not None and layout is not None:
        outside = _outside_share(location, layout.by)
        if outside >= share:
            return Decay(
                True,
                f"{outside:.0%} of the bytes are outside the layout by ({keys}) "
                f"(threshold {share:.0%})",
            )
    if log is None:
        return Decay(False, "no query log to measure decay with")
    return _decayed(table, location, log, since, recorded)


def _decayed(
    table: TablePolicy,
    location: TableLocation,
    log: str,
    since: int,
    recorded: Mapping[str, float],
) -> Decay:
    recent = _recent(log, location)
    first_after = {
        q.predicate: q.kept_share
        for q in query_log.queries(
            log, location.user_root, since_ms=since, limit=10_000, newest_first=False
        )[::-1]  # the earliest run after the cluster wins
    }
    base = {p: recorded.get(p, first_after.get(p)) for p in recent}
    known = [p for p in recent if base[p] is not None]
    if len(known) < table.recluster_min_queries:
        return Decay(
            False,
            f"{len(known)} logged predicates with a baseline (need {table.recluster_min_queries})",
            predicates=len(known),
        )
    now = _replay(table, {p: recent[p] for p in known})
    common = [p for p in known if p in now]
    if len(common) < table.recluster_min_queries:
        asked = len(common)
        return Decay(False, f"{asked} predicates could be asked again", predicates=asked)
    before = statistics.fmean(float(base[p] or 0.0) for p in common)
    after = statistics.fmean(now[p] for p in common)
    due = after >= table.recluster_decay * max(before, 1e-9) and after > before
    verb = "decayed" if due else "holds"
    return Decay(
        due,
        f"skipping {verb}: {len(common)} logged predicates keep {after:.1%} of files, "
        f"{before:.1%} after the last cluster (threshold x{table.recluster_decay:g})",
        before,
        after,
        len(common),
    )


def _recent(log: str, location: TableLocation) -> dict[str, str]:
    """The newest distinct predicates logged for the table, and their time zones."""
    seen: dict[str, str] = {}
    for q in query_log.queries(log, location.user_root, limit=2000):
        seen.setdefault(q.predicate, q.time_zone)
        if len(seen) == RECENT_PREDICATES:
            break
    return seen


def _replay(table: TablePolicy, predicates: Mapping[str, str]) -> dict[str, float]:
    """Each predicate's share of files kept now, read in the zone it was run in
    (unlogged; a predicate that no longer binds, say to a dropped column, is left out)."""
    shares: dict[str, float] = {}
    with query_log.paused():
        for predicate, zone in predicates.items():
            try:
                result = prune(table.path, predicate, catalog=table.catalog, time_zone=zone)
            except Exception:  # noqa: S112 - a stale predicate says nothing about decay
                continue
            shares[predicate] = result.kept / result.total if result.total else 1.0
    return shares


def _outside_share(location: TableLocation, keys: Sequence[str]) -> float:
    """The share of the table's bytes in files no cluster by ``keys`` wrote."""
    wanted = tuple(k.lower() for k in keys)
    by_plan = {p.plan_id: tuple(k.lower() for k in p.by) for p in load_plans(location)}
    files = location.list_data_files()
    total = sum(f.size for f in files) or 1
    outside = sum(f.size for f in files if by_plan.get(plan_of_file(f.path) or "") != wanted)
    return outside / total
