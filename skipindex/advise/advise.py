"""``si.advise(path, queries=...)``: index kinds per column and a layout, chosen by simulation.

1. The workload: SQL queries or predicates given, else the query log's.
2. Indexes for the table as it is laid out: every candidate built on a sample
   of its own files, chosen greedily (:mod:`.choose`) on the files each query
   keeps there; these estimates are what the table would keep.
3. Layouts (unless ``layouts_too=False``): the workload's most filtered
   columns, sorted or on a Hilbert curve, each simulated on some of the files
   ``cluster`` would write, whole (:func:`.sample.laid_out`), with its own
   index choice. A layout is advised only if it reads at least
   ``MIN_LAYOUT_GAIN`` fewer files than the table as it lies: rewriting the
   table is not free.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from skipindex.advise.candidates import (
    LayoutOption,
    columns_of,
    index_specs,
    layouts,
    searched_columns,
)
from skipindex.advise.choose import Choice, choose
from skipindex.advise.plan import Advice, Estimate, IndexChoice
from skipindex.advise.sample import distinct_share, file_sample, laid_out, row_sample
from skipindex.advise.simulate import Simulation
from skipindex.advise.workload import Query, from_log, from_texts, table_schema
from skipindex.errors import InvalidSpecError, UnsupportedTableError
from skipindex.indexes.base import IndexSpec
from skipindex.pruning.prune import prune
from skipindex.store import query_log
from skipindex.store.cluster_plan import cluster_groups
from skipindex.store.location import DataFile, TableLocation, TablePath, locate

__all__ = ["MIN_LAYOUT_GAIN", "advise"]

MIN_LAYOUT_GAIN = 0.2  # a layout must cut the files read by a fifth to be worth a rewrite


def advise(
    path: TablePath,
    queries: Sequence[str] | Mapping[str, str] | None = None,
    *,
    log: str | None = None,
    names: Sequence[str] = (),
    time_zone: str = "UTC",
    budget_bytes: float | None = None,
    budget_seconds: float | None = None,
    layouts_too: bool = True,
    target_file_bytes: int | None = None,
    sample_files: int = 32,
    sample_rows: int = 200_000,
    seed: int = 0,
) -> Advice:
    """Which indexes to build on ``path`` (and how to lay it out) for a workload.

    ``queries``: SQL queries (the table named by one of ``names``, default its
    folder's name, or as ``parquet.`path```) or predicates, as a list or by
    name (``{"Q1.1": "SELECT ..."}``); default: the query
    log at ``log`` (default ``$SKIPINDEX_QUERY_LOG``). ``budget_bytes`` and
    ``budget_seconds`` bound the chosen indexes' size and build time (one core).
    Clustered files are ``target_file_bytes`` (default: today's mean size).
    Indexes are simulated on ``sample_files`` files (of the table, or of a
    simulated layout, whose boundaries come from ``sample_rows`` rows).
    Nothing is written to the table: :func:`skipindex.advise.apply.apply` does that.
    """
    started = time.perf_counter()
    location = locate(path)
    if location.is_delta and location.list_table().id_schema is not None:
        raise UnsupportedTableError(
            f"{location.user_root} is a Delta table with column mapping: the advisor reads "
            "and simulates samples by column name, which its files do not use; choose "
            "indexes by hand (suggest_indexes) or from `skipindex build` without --index"
        )
    schema = table_schema(location)
    workload = _workload(queries, log, location, names, time_zone)
    used = {q.label: columns_of(q, schema) for q in workload}
    columns = sorted({c for names_ in used.values() for c in names_})
    weights = [q.weight for q in workload]
    today = _today(location.user_root, workload)
    files = location.list_data_files()
    with tempfile.TemporaryDirectory(prefix="skipindex-advise-") as scratch:
        real = [f.name for f in schema if f.name.lower() in columns]
        rows = row_sample(location, files, real, sample_rows, 64, seed)
        shares = {c: distinct_share(rows, c) for c in real}
        searched = frozenset().union(*(searched_columns(q, schema) for q in workload))
        specs = index_specs(real, schema, shares, searched)
        sample = file_sample(location, files, os.path.join(scratch, "files"), sample_files, seed)
        budgets: dict[str, Any] = {"budget_bytes": budget_bytes, "budget_seconds": budget_seconds}
        as_is = choose(Simulation(sample, workload, specs, used), weights, **budgets)
        plan, layout, reason = as_is, None, "no layout simulated"
        tried: list[str] = []
        partitioned = bool(location.partition_names(files))
        if partitioned and layouts_too:
            reason = "a partitioned table: layouts are not simulated yet (indexes only)"
        elif layouts_too and columns:
            target = target_file_bytes or _mean_size(files)
            inputs = _Layouts(
                location,
                files,
                scratch,
                rows,
                workload,
                used,
                specs,
                weights,
                target,
                sample_files,
                seed,
            )
            plan, layout, reason, tried = _layouts(inputs, as_is, budgets)
    indexes = _explained(plan, workload, used)
    estimates = tuple(
        Estimate(q.label, q.where, q.weight, t, float(n), float(p))
        for q, t, n, p in zip(workload, today, plan.none, plan.kept, strict=True)
    )
    return Advice(
        location.user_root,
        len(files),
        len(workload),
        layout,
        reason,
        target_file_bytes or _mean_size(files),
        indexes,
        estimates,
        plan.left_out,
        tuple(tried),
        time.perf_counter() - started,
    )


def _workload(
    texts: Sequence[str] | Mapping[str, str] | None,
    log: str | None,
    location: TableLocation,
    names: Sequence[str],
    zone: str,
) -> list[Query]:
    if texts is not None:
        found = from_texts(texts, location, table_schema(location), names, zone)
    else:
        log = log or os.environ.get(query_log.ENV)
        if not log:
            raise InvalidSpecError(
                "give the workload: queries=[...] (SQL or predicates), or a query log "
                f"(log=... or {query_log.ENV})"
            )
        found = from_log(log, location)
    if not found:
        raise InvalidSpecError(f"{location.user_root}: no query of the workload reads this table")
    return found


def _today(root: str, workload: Sequence[Query]) -> list[int]:
    with query_log.paused():
        return [prune(root, q.where or "TRUE", time_zone=q.time_zone).kept for q in workload]


def _mean_size(files: Sequence[DataFile]) -> int:
    return max(1, sum(f.size for f in files) // max(1, len(files)))


@dataclass(frozen=True)
class _Layouts:
    """What simulating layouts needs: the table, its row sample, the workload."""

    location: TableLocation
    files: Sequence[DataFile]  # the table's, listed once
    scratch: str
    rows: pa.Table
    workload: Sequence[Query]
    used: dict[str, frozenset[str]]
    specs: dict[str, list[IndexSpec]]
    weights: Sequence[float]
    target: int  # bytes per file the cluster writes
    sample_files: int
    seed: int

    def simulate(self, number: int, option: LayoutOption, budgets: dict[str, Any]) -> _Tried:
        curve, by = option
        real_by = [n for c in by for n in self.rows.column_names if n.lower() == c]
        folder = os.path.join(self.scratch, f"layout-{number}")
        # As many files as cluster would write (a power of two on a curve: its grid halves).
        groups = cluster_groups(self.files, self.target, power_of_two=curve != "linear")
        outputs = sum(g.outputs for g in groups)
        sample = laid_out(
            self.location,
            self.files,
            self.rows,
            folder,
            self.rows.column_names,
            real_by,
            curve,
            outputs,
            self.sample_files,
            self.seed,
        )
        choice = choose(
            Simulation(sample, self.workload, self.specs, self.used), self.weights, **budgets
        )
        total = float(np.asarray(self.weights) @ choice.kept)
        return _Tried(total, (curve, tuple(real_by)), choice, sample.layout)


@dataclass(frozen=True)
class _Tried:
    total: float
    option: LayoutOption
    choice: Choice
    name: str


def _layouts(
    inputs: _Layouts, as_is: Choice, budgets: dict[str, Any]
) -> tuple[Choice, LayoutOption | None, str, list[str]]:
    """The best simulated layout against the table's as it lies."""
    base = float(np.asarray(inputs.weights) @ as_is.kept)
    options = layouts(inputs.workload, inputs.used)[1:]
    tried = [inputs.simulate(n, option, budgets) for n, option in enumerate(options)]
    said = [
        f"as is: {base:.0f} files read",
        *(f"{t.name}: {t.total:.0f} files read" for t in tried),
    ]
    best = min(tried, key=lambda t: t.total, default=None)
    if best is None or best.total > (1 - MIN_LAYOUT_GAIN) * base:
        return as_is, None, "no simulated layout reads a fifth fewer files than today's", said
    why = f"{best.total:.0f} files read against {base:.0f} as the table lies"
    return best.choice, best.option, why, said


def _explained(
    plan: Choice, workload: Sequence[Query], used: dict[str, frozenset[str]]
) -> tuple[IndexChoice, ...]:
    steps = {s.candidate.key: s for s in plan.steps}
    return tuple(
        IndexChoice.of(
            c,
            steps[c.key].before - steps[c.key].after,
            steps[c.key].before,
            sum(1 for q in workload if c.column.lower() in used.get(q.label, frozenset())),
        )
        for c in plan.chosen
    )
