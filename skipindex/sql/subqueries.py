"""Conditions only Spark can evaluate, kept for a dimension's key query.

A WHERE conjunct on one source's columns that holds an uncorrelated subquery
(a week's dates: ``d_date IN (SELECT d_date FROM date_dim WHERE d_week_seq =
(SELECT d_week_seq FROM date_dim WHERE d_date = '2000-01-03'))``) cannot prune:
no index evaluates a subquery. But it filters the rows that source contributes
just as a derivable condition does, and the key query Spark runs for a join's
keys (``SELECT DISTINCT key FROM dim WHERE ...``) can hold it: the date
dimension then gives its seven dates' keys to the fact it joins.

It is kept only where every column inside the subquery names a source defined
inside it (no reference to the query around it, which the key query does not
have) and every source inside it is a table (not a CTE of the query, which the
key query cannot name). It is written with the outer source's columns bare
(the key query's own source), the subquery's qualified as the query resolved
them (innermost first, as Spark resolves them), and its tables as the query
names them.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, ScopeType

from skipindex.expressions.sql_literals import SparkSQL
from skipindex.sql.conjuncts import bare_column
from skipindex.sql.references import REF

__all__ = ["key_query_owner", "key_query_text"]


def key_query_owner(scope: Scope, node: exp.Expr, absorbs: set[str]) -> str | None:
    """The source of ``scope`` whose key query may hold WHERE conjunct ``node``
    (one that holds an uncorrelated subquery over tables), if any."""
    within = {id(n) for n in node.walk()}
    inner = [s for s in scope.subquery_scopes if id(s.expression) in within]
    if not inner:
        return None
    defined: set[str] = set()
    inside: set[int] = set()
    for subquery in inner:
        for nested in subquery.traverse():
            # the sources it reads: ``sources`` also holds every CTE defined before it
            # (a later CTE's subquery sees an earlier CTE), which it need not name
            for name, (_, source) in nested.selected_sources.items():
                if isinstance(source, Scope) and source.scope_type == ScopeType.CTE:
                    return None
                defined.add(name)
            for table in nested.tables:  # a SEMI or ANTI join's side is not "selected"
                found = nested.sources.get(table.alias_or_name)
                if isinstance(found, Scope) and found.scope_type == ScopeType.CTE:
                    return None
        inside.update(id(c) for c in subquery.expression.find_all(exp.Column))
    outer: set[str] = set()
    for column in node.find_all(exp.Column):
        if id(column) not in inside:
            outer.add(column.table)
        elif not column.table or column.table not in defined:
            return None  # correlated, or not resolved
    if len(outer) != 1:
        return None
    (alias,) = outer
    found = scope.sources.get(alias)
    if alias not in absorbs or not isinstance(found, exp.Table) or REF not in found.meta:
        return None
    return alias


def key_query_text(node: exp.Expr, session_db: str) -> str:
    """``node`` as Spark SQL over the key query's source: the columns outside
    its subqueries bare, those inside as qualified, the tables the query named
    in the session as it named them."""
    copy = node.copy()
    for column in list(copy.find_all(exp.Column)):
        if column.find_ancestor(exp.Query) is None:  # outside every subquery
            column.replace(bare_column(column))
    for table in copy.find_all(exp.Table):
        if table.args.get("db") is not None and table.db == session_db:
            table.set("db", None)
    return copy.sql(dialect=SparkSQL)
