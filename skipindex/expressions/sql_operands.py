"""Operands of a SQL predicate: a column (or a struct field's path), a literal,
an expression of columns (a :class:`~skipindex.expressions.nodes.Call`), or
None for anything else."""

from __future__ import annotations

from contextvars import ContextVar

from sqlglot import exp

from skipindex.expressions.calls import call_of
from skipindex.expressions.leaves import Operand
from skipindex.expressions.nodes import ColumnName
from skipindex.expressions.sql_literals import reject_parameters, sql_literal, unparen

__all__ = ["QUALIFIED", "column_name", "dotted_name", "operand"]

# Whether a two-part name is table.column (si.sql's derived conditions), not a
# struct's field: set by sql.from_tree for one parse.
QUALIFIED: ContextVar[bool] = ContextVar("_QUALIFIED", default=False)


def operand(node: exp.Expression) -> Operand:
    """A column name, a literal, an expression of columns (a Call), or None for
    anything else."""
    node = unparen(node)
    if isinstance(node, exp.Column):
        return column_name(node)
    if isinstance(node, exp.Dot):
        return dotted_name(node)
    reject_parameters(node)
    found = sql_literal(node)
    if found is not None:
        return found
    return call_of(node, operand)


def column_name(node: exp.Column) -> ColumnName | None:
    """The column a name denotes: ``a`` or the path ``("s", "f")`` for ``s.f``.

    Spark reads ``a.b`` as field ``b`` of struct ``a`` (there are no table
    aliases in a pruning predicate); binding decides what the path resolves to.
    """
    if not isinstance(node.this, exp.Identifier):
        return None  # `*` or `t.*`
    parts = [str(p.this) for p in node.parts if isinstance(p, exp.Identifier)]
    if len(parts) != len(node.parts):
        return None
    if QUALIFIED.get() and len(parts) == 2:
        return parts[1]
    return parts[0] if len(parts) == 1 else tuple(parts)


def dotted_name(node: exp.Dot) -> ColumnName | None:
    """``a.b.c.d``: sqlglot nests names past catalog.db.table.column in Dot nodes."""
    tail: list[str] = []
    current: exp.Expression = node
    while isinstance(current, exp.Dot):
        if not isinstance(current.expression, exp.Identifier):
            return None
        tail.append(str(current.expression.this))
        current = current.this
    if not isinstance(current, exp.Column):
        return None
    head = column_name(current)
    if head is None:
        return None
    return (*((head,) if isinstance(head, str) else head), *reversed(tail))
