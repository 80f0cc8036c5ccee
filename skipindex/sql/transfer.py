"""Conditions carried across the equalities of an inner join.

Where every join of a SELECT is inner, every condition of its WHERE and ON
holds on each row its sources make together. So with ``a.x = b.y`` and
``b.y > 5`` both holding, ``a.x > 5`` holds too, provided equal values of the
two columns are indistinguishable to the condition: both columns of one type,
and a type whose equal values are identical (integers, decimals of one scale,
binary-collated strings, dates, timestamps, booleans; not floating point,
where ``-0.0 = 0.0``). Only one-column conditions move, and only between
columns of known type: a table's, or a derived table's carried unchanged from
tables' of one type. An outer or anti join carries conditions one way only:
from a preserved source into the null-supplying one, through its ON.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.optimizer.scope import Scope

from skipindex.sql.conjuncts import Condition, column_refs, plain_column, render, replace_columns
from skipindex.sql.pushdown import trace_column
from skipindex.sql.references import REF

__all__ = ["Equality", "Side", "equalities", "key_types_join", "transfer", "transfer_outer"]

_INTEGRAL = frozenset({"tinyint", "smallint", "int", "bigint"})
_EXACT = _INTEGRAL | {"string", "date", "timestamp", "timestamp_ntz", "boolean"}


def _exact(spark_type: str) -> bool:
    return spark_type in _EXACT or (
        spark_type.startswith("decimal(") and "collate" not in spark_type
    )


def key_types_join(fact_type: str, dim_type: str) -> bool:
    """Whether ``fact IN (dim's keys)`` holds on every fact row ``fact = dim``
    matches: integers of any width, else one exact type (strings, dates, decimals)."""
    if fact_type in _INTEGRAL and dim_type in _INTEGRAL:
        return True
    return (fact_type == dim_type and fact_type in ("string", "date")) or (
        fact_type == dim_type and fact_type.startswith("decimal(")
    )


@dataclass(frozen=True)
class Side:
    alias: str
    column: str
    type: str | None  # None: not a table's column, or a type not known


@dataclass(frozen=True)
class Equality:
    """``left = right`` between two sources' columns, where it absorbs."""

    left: Side
    right: Side
    absorbs: frozenset[str]
    text: str


def equalities(
    scope: Scope,
    placed: list[tuple[Condition, set[str]]],
    types: Mapping[int, Mapping[str, str]],
) -> list[Equality]:
    """The column-to-column equalities among the conditions of ``scope``."""
    found = []
    for condition, absorbs in placed:
        node = condition.node
        if not isinstance(node, exp.EQ):
            continue
        left, right = plain_column(node.this), plain_column(node.expression)
        if left is None or right is None or left.table == right.table:
            continue
        sides = [_side(scope, c, types) for c in (left, right)]
        if sides[0] is None or sides[1] is None:
            continue
        found.append(Equality(sides[0], sides[1], frozenset(absorbs), node.sql(dialect="spark")))
    return found


def _side(scope: Scope, column: exp.Column, types: Mapping[int, Mapping[str, str]]) -> Side | None:
    source = scope.sources.get(column.table)
    if source is None:
        return None
    if isinstance(source, Scope):  # a derived table's column carried unchanged from tables
        behind = trace_column(source, column.name, lambda _: True) or []
        found = {types.get(number, {}).get(name) for number, name in behind}
        return Side(column.table, column.name, found.pop() if len(found) == 1 else None)
    number = source.meta.get(REF)
    spark_type = types.get(number, {}).get(column.name) if number is not None else None
    return Side(column.table, column.name, spark_type)


def transfer(
    kept: Mapping[str, list[Condition]], found: list[Equality]
) -> dict[str, list[Condition]]:
    """One-column conditions of ``kept`` carried to the columns equal to theirs."""
    parent: dict[tuple[str, str], tuple[str, str]] = {}

    def root(node: tuple[str, str]) -> tuple[str, str]:
        while parent.get(node, node) != node:
            node = parent[node]
        return node

    typed: dict[tuple[str, str], str] = {}
    texts: dict[tuple[str, str], str] = {}
    for equality in found:
        a, b = equality.left, equality.right
        if a.type is None or a.type != b.type or not _exact(a.type):
            continue
        ka, kb = (a.alias, a.column), (b.alias, b.column)
        typed[ka], typed[kb] = a.type, b.type
        parent.setdefault(ka, ka)
        parent.setdefault(kb, kb)
        parent[root(ka)] = root(kb)
        texts[ka] = texts[kb] = equality.text
    extra: dict[str, list[Condition]] = {}
    for alias, conditions in kept.items():
        for condition in conditions:
            columns = {(c.table, c.name) for c in column_refs(condition.node)}
            if condition.origin not in ("written", "pushed") or len(columns) != 1:
                continue
            (origin,) = columns
            if origin not in typed:
                continue
            for member in typed:
                if member == origin or member[0] == alias or root(member) != root(origin):
                    continue
                node = replace_columns(condition.node, _to(member))
                assert node is not None
                note = f"{condition.node.sql(dialect='spark')} through {texts[origin]}"
                moved = condition.moved(node, "join", note)
                have = {
                    render(c.node) for c in [*kept.get(member[0], []), *extra.get(member[0], [])]
                }
                if render(node) not in have:
                    extra.setdefault(member[0], []).append(moved)
    return extra


def transfer_outer(
    kept: Mapping[str, list[Condition]], found: list[Equality], preserved: set[str]
) -> dict[str, list[Condition]]:
    """One-column conditions of ``preserved`` sources carried through the ON
    equalities of an outer (or anti) join into the source that ON absorbs for
    alone, the null-supplying one: its rows that fail them match no preserved
    row that counts, so they never show (one channel's ``sold_year = 2000`` into
    the years of the other channels LEFT JOINed on it)."""
    extra: dict[str, list[Condition]] = {}
    for equality in found:
        sides = {equality.left.alias, equality.right.alias}
        if len(equality.absorbs) != 1 or not equality.absorbs <= sides:
            continue
        (inner,) = equality.absorbs
        (outer,) = sides - {inner}
        if outer not in preserved:
            continue
        have = {render(c.node) for c in [*kept.get(inner, []), *extra.get(inner, [])]}
        for moved in transfer({outer: kept.get(outer, [])}, [equality]).get(inner, []):
            if render(moved.node) not in have:
                extra.setdefault(inner, []).append(moved)
    return extra


def _to(member: tuple[str, str]) -> Callable[[exp.Column], exp.Expr]:
    """A column swap: every column becomes ``member`` (alias, column)."""

    def swap(_: exp.Column) -> exp.Expr:
        return exp.column(exp.to_identifier(member[1]), table=member[0])

    return swap
