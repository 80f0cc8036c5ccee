"""The columns a bound predicate reads: the index keys it names (what prune
loads), and the table's top-level columns behind them (what a reader of the
kept files must decode at least)."""

from __future__ import annotations

from typing import cast

from skipindex.column_paths import split_name
from skipindex.expressions.nodes import AnyPredicate, BoundPredicate, Call, children_of
from skipindex.expressions.sql import expression_operand
from skipindex.expressions.visitors import fold
from skipindex.store.manifest import Manifest

__all__ = ["predicate_columns", "top_level"]


def predicate_columns(predicate: BoundPredicate) -> set[str]:
    """The keys of the columns ``predicate`` names."""

    def visit(node: AnyPredicate, parts: list[set[str]]) -> set[str]:
        column = getattr(node, "column", None)
        return set().union(*parts) | ({column.name} if column is not None else set())

    return fold(cast(AnyPredicate, predicate), children_of, visit)


def top_level(columns: set[str], manifest: Manifest) -> tuple[str, ...]:
    """The top-level columns the bound predicate reads: an expression index's
    key reads the columns of its expression."""
    expressions = {d.column for d in manifest.indexes if d.expression is not None}
    names = set()
    for column in columns:
        if column not in expressions:
            names.add(split_name(column)[0])
            continue
        operand = expression_operand(column)
        for name in operand.columns() if isinstance(operand, Call) else ():
            names.add(name if isinstance(name, str) else name[0])
    return tuple(sorted(names))
