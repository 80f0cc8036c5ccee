"""Join keys across a subquery: IN and [NOT] EXISTS as semi- and anti-joins.

A WHERE conjunct of a SELECT that relates one of its sources, ``a``, to a table
``t`` inside a subquery lets one side's keys prune the other, as an equi-join
does (:class:`~skipindex.sql.derive.EquiJoin`):

* ``a.x IN (SELECT t.y FROM t ...)``: an ``a`` row survives only where its x is
  a y of ``t``: t's keys prune a (where the subquery reads ``t`` alone). And the
  other way: every value the subquery gives is the y of a ``t`` row (or NULL,
  which a WHERE conjunct's IN treats as no match), so a ``t`` row whose y is no
  x of a kept ``a`` row decides nothing, however the subquery joins ``t``: a's
  keys prune t (the orders shipped in a date range prune the orders two IN
  subqueries read). Both only where the subquery neither aggregates nor
  limits, and never for ``NOT IN``, where one NULL y makes every answer NULL.
* ``EXISTS (SELECT ... FROM t ... WHERE ... AND a.x = t.y ...)``: a ``t`` row
  whose y is no ``a`` row's x meets the correlated WHERE for no row of ``a``,
  however the subquery aggregates or limits what meets it (a's keys prune t);
  and where the subquery neither aggregates nor limits, so that it has a row
  exactly where some ``t`` row meets its WHERE, an ``a`` row whose x is no y of
  ``t`` finds none (t's keys prune a).
* ``NOT EXISTS (...)``: as EXISTS, a's keys prune t only (the rows of ``a`` it
  keeps are those that match nothing).

Keys of ``a`` are those of its rows that meet its own conditions, and only those
rows reach the conjunct (it is a WHERE conjunct where ``a`` is preserved), so
every ``t`` row a kept row can match holds one of them. In the subquery the
correlation must be a conjunct of its WHERE that absorbs for ``t``
(:mod:`.joins`): a row of ``t`` failing it then never shows there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from sqlglot import exp
from sqlglot.optimizer.scope import Scope

from skipindex.sql.conjuncts import plain_column, split_and
from skipindex.sql.joins import join_shape
from skipindex.sql.pushdown import pushable

__all__ = ["KeyPair", "subquery_joins"]


@dataclass(frozen=True)
class KeyPair:
    """``fact.fact_column`` (in ``fact_scope``) may be pruned by the keys of
    ``dim.dim_column`` (in ``dim_scope``)."""

    fact_scope: Scope
    fact: str
    fact_column: str
    dim_scope: Scope
    dim: str
    dim_column: str
    text: str
    follows: bool = False  # see EquiJoin.follows


def subquery_joins(scope: Scope, node: exp.Expr, preserved: set[str]) -> list[KeyPair]:
    """The key pairs WHERE conjunct ``node`` of ``scope`` makes, where its rows
    reach the conjunct for the sources in ``preserved``."""
    if isinstance(node, exp.In):
        return _in(scope, node, preserved)
    negated = isinstance(node, exp.Not)
    inner = node.this if negated else node
    while isinstance(inner, exp.Paren):
        inner = inner.this
    if isinstance(inner, exp.Exists):
        return _exists(scope, inner, preserved, negated)
    return []


def _in(scope: Scope, node: exp.In, preserved: set[str]) -> list[KeyPair]:
    query, column = node.args.get("query"), node.this
    if query is None or not isinstance(column, exp.Column) or column.table not in preserved:
        return []
    inner = _scope_of(scope, query.this)
    if inner is None:
        return []
    select = cast(exp.Select, inner.expression)
    if select.args.get("laterals") or not pushable(select) or len(select.expressions) != 1:
        return []
    if not join_shape(select).understood:
        return []
    projection = select.expressions[0]
    key = projection.this if isinstance(projection, exp.Alias) else projection
    if not isinstance(key, exp.Column) or key.table not in inner.sources:
        return []
    text = node.sql(dialect="spark")
    pairs = [KeyPair(inner, key.table, key.name, scope, column.table, column.name, text, True)]
    if not select.args.get("joins"):
        pairs.append(KeyPair(scope, column.table, column.name, inner, key.table, key.name, text))
    return pairs


def _exists(scope: Scope, node: exp.Exists, preserved: set[str], negated: bool) -> list[KeyPair]:
    inner = _scope_of(scope, node.this)
    if inner is None:
        return []
    select = cast(exp.Select, inner.expression)
    shape = join_shape(select)
    if not shape.understood:
        return []
    where = select.args.get("where")
    pairs = []
    for conjunct in split_and(where.this if where is not None else None):
        if not isinstance(conjunct, exp.EQ):
            continue
        left, right = plain_column(conjunct.this), plain_column(conjunct.expression)
        if left is None or right is None:
            continue
        for outer, local in ((left, right), (right, left)):
            if outer.table in inner.sources or outer.table not in preserved:
                continue
            if local.table not in shape.where or outer.table not in scope.sources:
                continue
            text = f"{'NOT ' if negated else ''}EXISTS (... {conjunct.sql(dialect='spark')} ...)"
            pairs.append(
                KeyPair(inner, local.table, local.name, scope, outer.table, outer.name, text)
            )
            if not negated and pushable(select) and not select.args.get("joins"):
                pairs.append(
                    KeyPair(scope, outer.table, outer.name, inner, local.table, local.name, text)
                )
    return pairs


def _scope_of(scope: Scope, query: exp.Expr) -> Scope | None:
    """The scope of subquery ``query`` of ``scope``, where it is one SELECT."""
    inner = next((s for s in scope.subquery_scopes if s.expression is query), None)
    if inner is None or not isinstance(inner.expression, exp.Select):
        return None
    return inner
