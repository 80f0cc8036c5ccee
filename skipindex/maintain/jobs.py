"""The service's jobs, each safe to run again after a kill at any point.

* ``refresh``: :func:`~skipindex.build_index` (incremental), when the listing
  holds files the index does not cover. A killed build left the last version
  readable; the next one indexes what is still uncovered and cleans up.
* ``binpack``: :func:`~skipindex.cluster` in place without keys: small files
  per partition packed toward the target size (a Delta table: Delta's own
  OPTIMIZE compaction, a Delta commit).
* ``recluster``: :func:`~skipindex.cluster` in place by the policy's keys and
  curve (Delta: OPTIMIZE ZORDER BY).

A cluster job first settles what an interrupted run left (a plan still being
written is rolled back, one being moved into place is finished), then adopts a
plan this job already completed instead of clustering again: the table is laid
out once per job, however often the job is interrupted. After a refresh, the
job says what should follow (bin-packing past the small-file threshold,
re-clustering once skipping has decayed: :mod:`skipindex.maintain.decay`).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any, cast

from skipindex.indexes.base import IndexSpec
from skipindex.indexing.build import build_index
from skipindex.layout.cluster import cluster
from skipindex.layout.recover import recover
from skipindex.maintain import decay
from skipindex.maintain.advised import advised_specs
from skipindex.maintain.policy import ServicePolicy, TablePolicy
from skipindex.pruning.prune import prune
from skipindex.store import query_log
from skipindex.store.cluster_plan import SMALL_FILE_SHARE, ClusterPlan, load_plans
from skipindex.store.delta import delta_table
from skipindex.store.location import TableLocation, locate
from skipindex.store.manifest import load_latest
from skipindex.store.swaps import replaced_dir

__all__ = ["Context", "Coverage", "Outcome", "coverage", "run_job", "small_files"]

KEEP_REPLACED_S = 900  # old files moved aside by a cluster stay this long (readers mid-query)
DECAY_CHECK_S = 60  # at most one decay measurement per table per minute


@dataclass
class Context:
    """What a job needs: its table and service policies, Spark (started on first
    use), a way to say which phase it is in, and the table's recorded state."""

    table: TablePolicy
    service: ServicePolicy
    spark: Callable[[], Any]
    phase: Callable[[str], None] = lambda _: None
    first_started_ms: int = 0
    clustered_ms: int | None = None
    baseline: dict[str, float] = field(default_factory=dict)
    decay_checked_ms: int | None = None
    now: Callable[[], int] = lambda: int(time.time() * 1000)
    last_advice: dict[str, Any] | None = None  # an ``indexes = "advise"`` table's last advice


@dataclass(frozen=True)
class Outcome:
    summary: str
    details: dict[str, Any] = field(default_factory=dict)
    followups: tuple[tuple[str, str], ...] = ()
    table_updates: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Coverage:
    files: int
    covered: int
    version: int | None

    @property
    def uncovered(self) -> int:
        return self.files - self.covered

    def __str__(self) -> str:
        if self.version is None:
            return f"no index yet ({self.files} files)"
        return f"{self.covered} of {self.files} files covered (index version {self.version})"


def coverage(table: TablePolicy) -> Coverage:
    """How many listed files the index covers now (a prune of TRUE: no Spark)."""
    with query_log.paused():
        result = prune(table.path, "TRUE", catalog=table.catalog)
    return Coverage(result.total, result.covered, result.version)


def run_job(kind: str, ctx: Context) -> Outcome:
    runs = {"refresh": _refresh, "binpack": _binpack, "recluster": _recluster}
    return runs[kind](ctx)


def _refresh(ctx: Context) -> Outcome:
    table = ctx.table
    before = coverage(table)
    details: dict[str, Any] = {"files": before.files, "covered_before": before.covered}
    if before.files == 0:
        return Outcome("no data files yet", details)
    specs = list(table.indexes) if table.indexes is not None else None
    if table.advise:
        ctx.phase("advising indexes from the query log")
        specs, noted = advised_specs(table, ctx.service, ctx.last_advice, ctx.now())
        details |= noted
    if before.version is not None and before.uncovered == 0 and not _new_definitions(table, specs):
        summary = "nothing to index"
    else:
        ctx.phase(f"indexing {before.uncovered} files")
        report = build_index(table.path, specs, spark=ctx.spark(), catalog=table.catalog)
        details |= {"files_indexed": report.files_indexed, "version": report.version}
        if report.chosen:
            details["chosen"] = report.chosen
        summary = f"indexed {report.files_indexed} files in {report.seconds:.1f} s"
    after = coverage(table)
    details |= {"covered": after.covered, "files": after.files, "version": after.version}
    followups, updates = _followups(ctx)
    return Outcome(f"{summary}; {after}", details, followups, updates)


def _new_definitions(table: TablePolicy, specs: list[IndexSpec] | None) -> bool:
    """Whether the policy (or the advice) names an index the table does not have yet."""
    if specs is None:
        return False
    manifest = load_latest(locate(table.path, catalog=table.catalog))
    if manifest is None:
        return True
    have = {
        ((d.expression or d.column).lower(), d.kind, tuple(sorted(d.params.items())))
        for d in manifest.indexes
    }
    return any(
        ((s.expr or s.column).lower(), s.kind, tuple(sorted(s.params().items()))) not in have
        for s in specs
    )


def _followups(ctx: Context) -> tuple[tuple[tuple[str, str], ...], dict[str, Any]]:
    """What the table needs after a refresh: bin-packing, re-clustering."""
    table, found = ctx.table, []
    if table.binpack:
        reason = small_files(table)
        if reason:
            found.append(("binpack", reason))
    updates: dict[str, Any] = {}
    now = ctx.now()
    if table.cluster_by and (
        ctx.decay_checked_ms is None
        or now - ctx.decay_checked_ms >= min(DECAY_CHECK_S, table.recluster_min_seconds) * 1000
    ):
        location = locate(table.path)
        verdict = decay.recluster_due(
            table, location, ctx.service.query_log, ctx.clustered_ms, ctx.baseline, now
        )
        updates["decay_checked_ms"] = now
        updates["decay_note"] = verdict.reason
        if verdict.due:
            found.append(("recluster", verdict.reason))
    return tuple(found), updates


def small_files(table: TablePolicy) -> str | None:
    """Why the table should be bin-packed now, or None: a partition holding at
    least ``binpack_min_small_files`` files under 75 % of the target size."""
    limit = SMALL_FILE_SHARE * table.target_file_bytes
    files = locate(table.path).list_data_files()
    small = Counter(f.path.rpartition("/")[0] for f in files if f.size < limit)
    if not small:
        return None
    partition, count = small.most_common(1)[0]
    if count < table.binpack_min_small_files:
        return None
    where = f"partition {partition}" if partition else "the table root"
    return (
        f"{where} holds {count} files under {limit / 2**20:.3g} MiB "
        f"(threshold {table.binpack_min_small_files})"
    )


def _binpack(ctx: Context) -> Outcome:
    return _layout(ctx, ())


def _recluster(ctx: Context) -> Outcome:
    return _layout(ctx, ctx.table.cluster_by)


def _layout(ctx: Context, by: tuple[str, ...]) -> Outcome:
    table = ctx.table
    location = locate(table.path)
    what = f"clustering by {', '.join(by)} ({table.curve})" if by else "bin-packing"
    if location.is_delta:
        return _delta_optimize(ctx, location, by)
    ctx.phase("settling interrupted plans")
    settled = recover(location, lambda d: location if d is None else locate(d))
    plan = _adopted(ctx, location, by)
    if plan is not None:
        ctx.phase("indexing the adopted layout")
        if coverage(table).uncovered:
            build_index(table.path, spark=ctx.spark())
        summary = f"{what} had completed before an interruption (plan {plan.plan_id}); adopted"
    else:
        ctx.phase(what)
        report = cluster(
            table.path,
            by=list(by) or None,
            curve=cast(Any, table.curve),  # hilbert, zorder or linear: the schema says so
            target_file_bytes=table.target_file_bytes,
            spark=ctx.spark(),
        )
        plan = report.plan
        if not plan.groups:
            summary = f"{what}: nothing to rewrite"
        else:
            summary = (
                f"{what}: {len(plan.rewritten)} files became {report.files_written} "
                f"({report.rows:,} rows verified) in {report.seconds:.1f} s"
            )
    _forget_replaced(location, ctx.now())
    details = {"plan": plan.plan_id, "rewritten": len(plan.rewritten), "settled": settled}
    updates: dict[str, Any] = {}
    if by:
        updates = _laid_out(ctx, location, by)
    return Outcome(f"{summary}; {coverage(table)}", details, (), updates)


def _laid_out(ctx: Context, location: TableLocation, by: tuple[str, ...]) -> dict[str, Any]:
    """What a cluster by the policy's keys notes on its table: when, each logged
    predicate's share of files kept now (decay is measured from it), and so."""
    base = decay.baseline(ctx.table, location, ctx.service.query_log)
    note = f"laid out by ({', '.join(by)}) {ctx.table.curve}; " + (
        f"{len(base)} logged predicates keep {sum(base.values()) / len(base):.1%} of files"
        if base
        else "no logged predicates yet to measure decay with"
    )
    return {"clustered_ms": ctx.now(), "baseline": base, "decay_note": note}


def _adopted(ctx: Context, location: TableLocation, by: tuple[str, ...]) -> ClusterPlan | None:
    """A plan this job completed before it was interrupted (none on a first run)."""
    keys = tuple(k.lower() for k in by)
    mine = [
        p
        for p in load_plans(location)
        if p.state == "completed"
        and p.destination is None
        and p.created_ms >= ctx.first_started_ms
        and tuple(k.lower() for k in p.by) == keys
    ]
    return mine[-1] if mine else None


def _forget_replaced(location: TableLocation, now: int) -> None:
    """Delete the old files of in-place plans completed long enough ago that no
    reader that listed them before the swap can still be opening them."""
    for plan in load_plans(location):
        if plan.state != "completed" or now - plan.created_ms < KEEP_REPLACED_S * 1000:
            continue
        folder = replaced_dir(location, plan.plan_id)
        if location.exists(folder):
            with suppress(FileNotFoundError):
                location.fs.delete_dir(folder)


def _delta_optimize(ctx: Context, location: TableLocation, by: tuple[str, ...]) -> Outcome:
    """Delta tables change only through their log: Delta's own OPTIMIZE (delta-rs)."""
    table = ctx.table
    delta = delta_table(location.uri, location.user_root, dict(location.options))
    if by:
        ctx.phase(f"Delta OPTIMIZE ZORDER BY {', '.join(by)}")
        metrics = delta.optimize.z_order(list(by), target_size=table.target_file_bytes)
    else:
        ctx.phase("Delta OPTIMIZE (compaction)")
        metrics = delta.optimize.compact(target_size=table.target_file_bytes)
    removed, added = metrics.get("numFilesRemoved", 0), metrics.get("numFilesAdded", 0)
    if coverage(table).uncovered:
        ctx.phase("indexing the new files")
        build_index(table.path, spark=ctx.spark())
    updates = _laid_out(ctx, location, by) if by else {}
    verb = "z-ordered" if by else "compacted"
    summary = f"Delta OPTIMIZE {verb}: {removed} files became {added}; {coverage(table)}"
    return Outcome(summary, {"removed": removed, "added": added}, (), updates)
