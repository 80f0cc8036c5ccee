"""``sql(spark, query)``: Spark SQL over indexed tables, each reference pruned.

1. Parse the query and find its table references (:mod:`.references`); ask
   Spark for the schema of each table they name (:mod:`.catalog`).
2. Derive, per reference, what holds on every row it contributes
   (:mod:`.derive`), and prune each indexed reference with it
   (:mod:`.run`, :mod:`.frames`).
3. Dynamic pruning: for each equi-join whose other side has conditions of its
   own and few keys, add ``key IN (keys)`` and prune again (:mod:`.key_rounds`).
4. Run the user's own text with each pruned reference's name replaced by a
   view of its kept files (:mod:`.text`).

Whatever is not understood is read as written: a query sqlglot cannot parse,
a table it cannot resolve, a condition it cannot move, a join it does not
model. The rows are always the rows ``spark.sql(query)`` returns.
"""

from __future__ import annotations

import time
from typing import Any

from skipindex.reading.policy import PlanningPolicy, using
from skipindex.spark.settings import SparkView
from skipindex.sql import remembered
from skipindex.sql.catalog import resolve
from skipindex.sql.key_rounds import KeyRounds
from skipindex.sql.plan import SqlPlan, made_under
from skipindex.sql.run import QueryRun

__all__ = ["sql", "sql_plan"]


def sql(
    spark: Any,
    query: str,
    *,
    dynamic_keys: int | None = None,
    row_groups: bool = True,
    policy: PlanningPolicy | None = None,
) -> Any:
    """The rows ``spark.sql(query)`` returns, reading only the files of indexed
    tables that can hold rows the query uses.

    Tables are views :func:`~skipindex.register` made, or ``parquet.`/path```
    and ``delta.`/path``` in the query. Each reference to one is pruned with
    the conditions every row it contributes must meet: the query's own, those
    of the query around a derived table, CTE or set operation, those carried
    across inner equi-joins and, unless ``dynamic_keys`` is 0, the keys of the
    other side of an equi-join where that side is filtered and has at most
    ``dynamic_keys`` distinct keys (default 4,096, or 16,384 where the column
    has bit-sliced bitmaps). ``policy`` sets the knobs planning weighs its
    choices by (:class:`~skipindex.PlanningPolicy`; its defaults where None).
    :func:`~skipindex.sql_plan` says what was done, per reference.
    """
    plan = sql_plan(spark, query, dynamic_keys=dynamic_keys, row_groups=row_groups, policy=policy)
    return plan.frame


def sql_plan(
    spark: Any,
    query: str,
    *,
    dynamic_keys: int | None = None,
    row_groups: bool = True,
    policy: PlanningPolicy | None = None,
) -> SqlPlan:
    """:func:`sql`, with the plan: per reference, the predicate it was pruned
    with, where each condition came from, and the files kept
    (``plan.frame`` is the DataFrame, ``plan.explain()`` the account)."""
    with using(policy):
        return _planned(spark, query, dynamic_keys, row_groups)


def _planned(spark: Any, query: str, dynamic_keys: int | None, row_groups: bool) -> SqlPlan:
    started = time.perf_counter()
    view = SparkView.of_session(spark)
    parsed = remembered.parsed(query, view.case_sensitive)
    if parsed is None:
        note = "not one query sqlglot can parse: Spark runs it as written"
        return SqlPlan(query, lambda: spark.sql(query), note=note, seconds=_since(started))
    catalog, sources = resolve(spark, parsed)
    derivation = remembered.derived(parsed, catalog)
    run = QueryRun(spark, parsed, derivation, sources, view, row_groups)
    run.prune_static()
    rounds = KeyRounds(run)
    if dynamic_keys != 0 and derivation.why_whole is None:
        rounds.prune_dynamic(dynamic_keys)
    return SqlPlan(
        query,
        made_under(spark, view, run.frame),
        run.plans(),
        rounds.join_keys,
        derivation.why_whole or "",
        seconds=_since(started),
    )


def _since(started: float) -> float:
    return time.perf_counter() - started
