"""SQL text (Spark dialect, parsed with sqlglot) -> unbound predicate tree.

Only column-versus-literal conditions (and wildcard-free ``LIKE`` prefixes,
and ``IS NULL`` over conditions) become leaves an index can answer. Any other
valid boolean expression (functions on columns, other patterns, arithmetic,
column-versus-column, subqueries...) becomes :class:`Unsupported` -- "might
match" -- on its own, so its AND/OR siblings still prune. Columns are names or
struct paths (``s.f``); literals are typed and folded by
:mod:`skipindex.expressions.sql_literals`, and binding casts them to each
column's type the way Spark does.

Every walk over a tree is iterative. sqlglot's own parser recurses, so a
predicate nested thousands of levels deep is re-parsed on a helper thread with
a large stack (see :func:`~skipindex.expressions._deep_stack.on_deep_stack`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from skipindex.errors import InvalidPredicateError
from skipindex.expressions._deep_stack import on_deep_stack, shorten
from skipindex.expressions.leaves import (
    Operand,
    compare,
    connect,
    is_nan,
    is_term,
    member,
    null_safe_equal,
    truth_test,
)
from skipindex.expressions.nodes import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    Comparison,
    In,
    IsNull,
    Literal,
    LiteralKind,
    Not,
    Op,
    Or,
    Predicate,
    Term,
    Unsupported,
)
from skipindex.expressions.sql_errors import plain, readable
from skipindex.expressions.sql_literals import (
    SparkSQL,
    function_name,
    key_literals,
    node_sql,
    plain_integer,
    reject_parameters,
    sql_literal,
    unparen,
)
from skipindex.expressions.sql_operands import QUALIFIED, column_name, dotted_name, operand
from skipindex.expressions.sql_searches import search_leaf
from skipindex.expressions.visitors import Shape, boolean_tree

__all__ = ["expression_operand", "from_tree", "parse_sql"]


_COMPARISONS: dict[type[exp.Expression], Op] = {
    exp.EQ: Op.EQ,
    exp.NEQ: Op.NE,
    exp.LT: Op.LT,
    exp.LTE: Op.LE,
    exp.GT: Op.GT,
    exp.GTE: Op.GE,
}
# Expressions that can never be a boolean condition: a WHERE made of one is an error.
# fmt: off
_NOT_BOOLEAN = (
    exp.Add, exp.Sub, exp.Mul, exp.Div, exp.IntDiv, exp.Mod, exp.Neg, exp.DPipe,
    exp.BitwiseAnd, exp.BitwiseOr, exp.BitwiseXor, exp.BitwiseNot, exp.BitwiseLeftShift,
    exp.BitwiseRightShift, exp.Concat, exp.Interval, exp.Star, exp.HexString, exp.Literal,
    exp.Query, exp.Subquery,
)
# fmt: on
_TRUE = Literal(LiteralKind.BOOLEAN, True)
_MAX_DECIMAL_DIGITS = 38  # Spark rejects wider numeric literals
_INT64 = (-(2**63), 2**63 - 1)

# --------------------------------------------------------------------------- entry point


def parse_sql(text: str) -> Predicate:
    """Parse a Spark SQL boolean expression into an unbound predicate.

    Raises :class:`InvalidPredicateError` for malformed SQL, for anything but a
    single boolean expression (several statements, a query, ``5``, ``a + 1``)
    and for literals Spark itself would reject (``DATE 'x'``, ``1e400``).
    """
    if not isinstance(text, str):
        raise InvalidPredicateError(
            f"a predicate must be a SQL string or a PySpark Column, got {type(text).__name__}"
        )
    if not text.strip():
        raise InvalidPredicateError(
            'empty predicate: expected a SQL boolean expression such as "a > 5"'
        )
    return on_deep_stack(_parse, text)


def from_tree(root: exp.Expression, qualified: bool = False) -> Predicate:
    """The predicate :func:`parse_sql` makes of ``root``'s text, made from the
    tree itself (si.sql's join key lists: thousands of literals cost 100 ms and
    more to write out and parse back). With ``qualified``, ``a.b`` is column b
    of the table aliased a, not a struct field (a copy without the aliases would
    cost as much as the rest)."""
    token = QUALIFIED.set(qualified)
    try:
        return _convert(root, "")
    finally:
        QUALIFIED.reset(token)


def _parse(text: str) -> Predicate:
    try:
        statements = [s for s in sqlglot.parse(text, read=SparkSQL) if s is not None]
    except ParseError as exc:
        first = exc.errors[0] if exc.errors else {}
        where = f" (line {first.get('line')}, column {first.get('col')})" if first else ""
        detail = readable(first.get("description") or plain(str(exc)))
        raise InvalidPredicateError(
            f"cannot parse predicate {shorten(text)}: {detail}{where}"
        ) from None
    except TokenError as exc:
        raise InvalidPredicateError(
            f"cannot parse predicate {shorten(text)}: {plain(str(exc))}"
        ) from None
    if len(statements) != 1:
        raise InvalidPredicateError(
            f"expected one boolean expression, found {len(statements) or 'no'} statements "
            f"in {shorten(text)}"
        )
    root = statements[0]
    if not isinstance(root, exp.Condition) or isinstance(root, (exp.Query, exp.Subquery)):
        raise InvalidPredicateError(
            f"{shorten(text)} is not a boolean expression (it parses as "
            f"{type(root).__name__.upper()})"
        )
    return _convert(cast(exp.Expression, root), text)


def expression_operand(text: str) -> Operand:
    """One Spark SQL expression as an operand: a column, a literal, a Call, or
    None (for the Column parser, which builds such text from a Column's tree)."""
    try:
        node = sqlglot.parse_one(text, read=SparkSQL)
    except (ParseError, TokenError):
        return None
    return operand(cast(exp.Expression, node))


# --------------------------------------------------------------------------- tree walk


def _convert(root: exp.Expression, text: str) -> Predicate:
    """sqlglot's tree as a predicate; AND/OR chains become one n-ary node."""

    def shape(node: exp.Expression) -> tuple[Shape, list[exp.Expression]]:
        node = unparen(node)
        if isinstance(node, exp.And | exp.Or):
            return (Shape.AND if isinstance(node, exp.And) else Shape.OR), _chain(node)
        if isinstance(node, exp.Not):
            return Shape.NOT, [node.this]
        return Shape.LEAF, []

    def combine(kind: Shape, parts: list[Predicate]) -> Predicate:
        return _syntactic_not(parts[0]) if kind is Shape.NOT else connect(kind, parts)

    return boolean_tree(root, shape, lambda node: _leaf(unparen(node), text), combine)


def _chain(node: exp.Expression) -> list[exp.Expression]:
    """Operands of a left-deep AND (or OR) chain, left to right, through parentheses."""
    cls = type(node)
    out: list[exp.Expression] = []
    stack = [node]
    while stack:
        current = unparen(stack.pop())
        if type(current) is cls:
            stack.append(current.expression)
            stack.append(current.this)
        else:
            out.append(current)
    return out


def _syntactic_not(child: Predicate) -> Predicate:
    """``NOT x IN (...)`` and ``NOT x IS NULL`` fold into the leaf; anything else keeps NOT
    for :func:`~skipindex.expressions.rewrite.rewrite_not`."""
    if isinstance(child, In):
        return In(child.column, child.literals, not child.negated)
    if isinstance(child, IsNull):
        return IsNull(child.column, not child.negated)
    return Not(child)


# --------------------------------------------------------------------------- leaves


def _leaf(node: exp.Expression, text: str) -> Predicate:
    if node.args.get("negate"):  # sqlglot folds `x NOT LIKE p` into Like(negate=True)
        plain = node.copy()
        plain.set("negate", None)
        return _syntactic_not(_leaf(plain, text))
    if isinstance(node, exp.Boolean):
        return AlwaysTrue() if node.this else AlwaysFalse()
    if isinstance(node, exp.Null):
        return AlwaysFalse()  # NULL is never TRUE (nor is NOT NULL: see rewrite_not)
    if isinstance(node, (exp.Column, exp.Dot)):
        name = column_name(node) if isinstance(node, exp.Column) else dotted_name(node)
        if name is not None:  # a bare boolean column: `WHERE flag`
            return Comparison(name, Op.EQ, _TRUE)
    searched = search_leaf(node)  # text (LIKE with wildcards, contains...) and arrays
    if searched is not None:
        return searched
    op = _COMPARISONS.get(type(node))
    if op is not None:
        return _comparison(node, op)
    if isinstance(node, (exp.NullSafeEQ, exp.NullSafeNEQ)):
        return _null_safe(node)
    if isinstance(node, exp.In):
        return _in(node)
    if isinstance(node, exp.Between):
        return _between(node)
    if isinstance(node, exp.Is):
        return _is(node, text)
    if isinstance(node, exp.IsNan) or function_name(node) in ("isnull", "isnotnull"):
        return _null_or_nan_function(node)
    lit = sql_literal(node)
    if lit is not None:
        if lit.kind is LiteralKind.BOOLEAN:
            return AlwaysTrue() if lit.value else AlwaysFalse()
        if lit.kind is LiteralKind.NULL:
            return AlwaysFalse()
    if lit is not None or isinstance(node, _NOT_BOOLEAN):
        raise InvalidPredicateError(
            f"{node_sql(node)} in {shorten(text)} is not a boolean expression"
        )
    reject_parameters(node)
    return _unsupported(node, f"{_describe(node)} is not something an index can answer")


def _comparison(node: exp.Expression, op: Op) -> Predicate:
    return compare(op, operand(node.this), operand(node.expression), lambda: node_sql(node))


def _null_safe(node: exp.Expression) -> Predicate:
    left, right = operand(node.this), operand(node.expression)
    negated = isinstance(node, exp.NullSafeNEQ)
    return null_safe_equal(left, right, lambda: node_sql(node), negated=negated)


def _in(node: exp.In) -> Predicate:
    if any(node.args.get(k) for k in ("query", "unnest", "field")):
        return _unsupported(node, "IN over a subquery is not something an index can answer")
    if not node.expressions:
        raise InvalidPredicateError(f"{node_sql(node)}: an IN list needs at least one value")
    items: Sequence[Operand] | None = key_literals(node)
    items = items or [plain_integer(i) or operand(i) for i in node.expressions]
    return member(operand(node.this), items, lambda: node_sql(node))


def _between(node: exp.Between) -> Predicate:
    column, low, high = operand(node.this), operand(node.args["low"]), operand(node.args["high"])
    if not is_term(column):
        return _unsupported(node, "BETWEEN needs a column and two literals")
    if not (isinstance(low, Literal) and isinstance(high, Literal)):
        return _unsupported(node, "BETWEEN needs a column and two literals")
    subject = cast(Term, column)
    forward = And((Comparison(subject, Op.GE, low), Comparison(subject, Op.LE, high)))
    if not node.args.get("symmetric"):
        return forward
    backward = And((Comparison(subject, Op.GE, high), Comparison(subject, Op.LE, low)))
    return Or((forward, backward))


def _is(node: exp.Is, text: str) -> Predicate:
    """``x IS NULL``; ``x IS TRUE`` / ``IS FALSE`` are never NULL, so (as for ``<=>``) they
    carry ``x IS NOT NULL`` to make ``IS NOT TRUE`` keep the NULL rows after NOT.
    Over a boolean expression, three-valued logic decides (:func:`truth_test`)."""
    column, target = operand(node.this), node.expression
    if is_term(column) and isinstance(target, exp.Null):
        return IsNull(cast(Term, column))
    if is_term(column) and isinstance(target, exp.Boolean):
        subject = cast(Term, column)
        lit = Literal(LiteralKind.BOOLEAN, bool(target.this))
        return And((Comparison(subject, Op.EQ, lit), IsNull(subject, negated=True)))
    if isinstance(target, exp.Null | exp.Boolean) and column is None:
        value = None if isinstance(target, exp.Null) else bool(target.this)
        return _truth_of(node.this, value, False, node, text)
    return _unsupported(node, "IS needs a column or a condition, and NULL, TRUE or FALSE")


def _truth_of(
    operand: exp.Expression, value: bool | None, negated: bool, node: exp.Expression, text: str
) -> Predicate:
    """``operand IS [NOT] value`` for a boolean ``operand`` (else might match)."""
    try:
        condition = _convert(unparen(operand), text)
    except InvalidPredicateError:  # `(a + 1) IS NULL`: not a condition, nothing to decide
        return _unsupported(node, "IS over an expression that is not a condition")
    return truth_test(condition, value, negated, node_sql(node))


def _null_or_nan_function(node: exp.Expression) -> Predicate:
    """``isnull(x)``, ``isnotnull(x)``, ``isnan(x)``."""
    args = [node.this] if isinstance(node, exp.IsNan) else list(node.expressions)
    column = operand(args[0]) if len(args) == 1 else None
    name = "isnan" if isinstance(node, exp.IsNan) else function_name(node)
    if column is None and len(args) == 1 and name != "isnan":
        return _truth_of(args[0], None, name == "isnotnull", node, node_sql(node))
    if not is_term(column):
        return _unsupported(node, "the function's argument is not a column")
    subject = cast(Term, column)
    return is_nan(subject) if name == "isnan" else IsNull(subject, negated=name == "isnotnull")


# --------------------------------------------------------------------------- helpers


def _describe(node: exp.Expression) -> str:
    if isinstance(node, exp.Func) and not isinstance(node, (exp.Case, exp.Exists)):
        return f"function {node.sql_name() if not isinstance(node, exp.Anonymous) else node.this}()"
    return type(node).__name__.upper()


def _unsupported(node: exp.Expression, reason: str) -> Unsupported:
    return Unsupported(sql=node_sql(node), reason=reason)
