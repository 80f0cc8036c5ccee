"""Searches in SQL text: LIKE, text functions and array functions.

``x [NOT] [I]LIKE p [ESCAPE 'c']``, ``lower(x) LIKE p``, ``x [NOT] RLIKE r``
(``REGEXP``, ``regexp_like``, ``regexp``), ``startswith``,
``contains``, ``endswith``, ``instr(x, t) > 0`` / ``locate(t, x) >= 1``, and on
arrays ``array_contains``, ``arrays_overlap(a, array(...))`` and
``exists(a, x -> x = v)``, as leaves
(:mod:`skipindex.expressions.leaves`); None for any other node. ``NOT LIKE``
comes back as the positive leaf: the caller negates it.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from skipindex.expressions.leaves import (
    Operand,
    contains,
    ends_with,
    finds_regex,
    has_element,
    like,
    lowered_like,
    starts_with,
)
from skipindex.expressions.nodes import LiteralKind, Not, Predicate, Unsupported
from skipindex.expressions.sql_literals import function_name, node_sql, plain_integer, sql_literal
from skipindex.expressions.sql_operands import operand

__all__ = ["search_leaf"]

_TEXT: dict[type[exp.Expression], Callable[[Operand, Operand, Callable[[], str]], Predicate]] = {
    exp.StartsWith: starts_with,
    exp.Contains: contains,
    exp.EndsWith: ends_with,
}


def search_leaf(node: exp.Expression) -> Predicate | None:
    """The leaf ``node`` is, if it is one of the searches above."""

    def shown() -> str:
        return node_sql(node)

    if isinstance(node, exp.ILike):
        return like(operand(node.this), operand(node.expression), shown, case_insensitive=True)
    if isinstance(node, exp.Like) and isinstance(node.this, exp.Lower):
        return lowered_like(
            operand(node.this), operand(node.this.this), operand(node.expression), shown
        )
    if isinstance(node, exp.Like):
        return like(operand(node.this), operand(node.expression), shown)
    if isinstance(node, exp.Escape) and isinstance(node.this, exp.Like | exp.ILike):
        return _like_escape(node)
    if isinstance(node, exp.RegexpLike) and not node.args.get("flag"):
        return finds_regex(operand(node.this), operand(node.expression), shown)
    if function_name(node) == "regexp" and len(node.expressions) == 2:
        column, regex = node.expressions
        return finds_regex(operand(column), operand(regex), shown)
    text = _TEXT.get(type(node))
    if text is not None:
        return text(operand(node.this), operand(node.expression), shown)
    if _found_at_all(node):
        return contains(operand(node.this.this), operand(node.this.args["substr"]), shown)
    if isinstance(node, exp.ArrayContains):
        return has_element(operand(node.this), [operand(node.expression)], shown)
    if function_name(node) == "arrays_overlap" and len(node.expressions) == 2:
        column, listed = node.expressions
        if isinstance(listed, exp.Array):
            return has_element(operand(column), [operand(i) for i in listed.expressions], shown)
    if isinstance(node, exp.Exists) and isinstance(node.expression, exp.Lambda):
        return _exists_equal(node)
    return None


def _like_escape(node: exp.Escape) -> Predicate:
    """``x LIKE p ESCAPE 'c'`` (sqlglot keeps a NOT LIKE's negation on the Like)."""
    inner = node.this
    escape = sql_literal(node.expression)
    if escape is None or escape.kind is not LiteralKind.STRING:
        return Unsupported(node_sql(node), "LIKE's ESCAPE needs a string literal")
    found = like(
        operand(inner.this),
        operand(inner.expression),
        lambda: node_sql(node),
        str(escape.value),
        case_insensitive=isinstance(inner, exp.ILike),
    )
    return Not(found) if inner.args.get("negate") else found


def _exists_equal(node: exp.Exists) -> Predicate:
    """``exists(a, x -> x = v)`` (or ``v = x``): an element of ``a`` equals ``v``."""
    body, names = node.expression.this, node.expression.expressions
    variable = names[0].name if len(names) == 1 else None
    sides = [body.this, body.expression] if isinstance(body, exp.EQ) else []
    bound = [s for s in sides if isinstance(s, exp.Identifier | exp.Column) and s.name == variable]
    others = [s for s in sides if s not in bound]
    if variable is None or len(bound) != 1 or len(others) != 1:
        return Unsupported(node_sql(node), "only exists(a, x -> x = <literal>) is answered")
    return has_element(operand(node.this), [operand(others[0])], lambda: node_sql(node))


def _found_at_all(node: exp.Expression) -> bool:
    """``instr(x, 'abc') > 0`` or ``>= 1`` (``locate('abc', x)`` alike, without its
    start): whether ``x`` contains the text."""
    if not isinstance(node, exp.GT | exp.GTE) or not isinstance(node.this, exp.StrPosition):
        return False
    if node.this.args.get("position") or node.this.args.get("occurrence"):
        return False
    bound = plain_integer(node.expression)
    return bound is not None and bound.value == (0 if isinstance(node, exp.GT) else 1)
