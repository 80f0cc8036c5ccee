"""Spark SQL literals, as sqlglot parses them: typed, signed, with casts folded.

Literals keep the SQL type they were written with (``2.50`` is an exact
DECIMAL, ``1e-1`` an approximate FLOAT, ``DATE '...'`` a date); casts of
literals (``CAST('NaN' AS DOUBLE)``, ``1.5F``, ``10L``, ``-128Y``) are folded
with Spark's rules (:mod:`skipindex.expressions.casts`). Shared by the SQL and
the PySpark Column parsers.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from decimal import Decimal
from typing import Any, cast

import sqlglot
from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ParseError, TokenError

from skipindex.errors import InvalidPredicateError
from skipindex.expressions.casts import InvalidCastError, cast_value
from skipindex.expressions.nodes import Literal, LiteralKind

__all__ = [
    "SparkSQL",
    "function_name",
    "literal_from_sql",
    "negate",
    "node_sql",
    "sql_literal",
    "unparen",
]

_MAX_DECIMAL_DIGITS = 38  # Spark rejects wider numeric literals
_INT64 = (-(2**63), 2**63 - 1)


class SparkSQL(Spark):
    """Spark's dialect, plus ``''`` as an escaped quote inside a string.

    Spark reads ``'it''s'`` as ``it's``; stock sqlglot reads it as two adjacent
    literals (``its``). Adjacent literals ``'a' 'b'`` are still concatenated.
    """

    class Tokenizer(Spark.Tokenizer):
        STRING_ESCAPES = ["\\", "'", '"']  # noqa: RUF012 -- sqlglot's convention


def literal_from_sql(text: str) -> Literal | None:
    """The literal a short SQL text denotes (``DATE '2020-01-01'``), or None."""
    try:
        node = sqlglot.parse_one(text, read=SparkSQL)
    except (ParseError, TokenError):
        return None
    return sql_literal(cast(exp.Expression, node))


def sql_literal(node: exp.Expression) -> Literal | None:
    """The typed literal ``node`` denotes (folding casts and signs), or None."""
    node = unparen(node)
    negations = 0
    while isinstance(node, exp.Neg):  # iterative: `- - - 5` never recurses
        negations += 1
        node = unparen(node.this)
    if negations % 2 and isinstance(node, (exp.Cast, exp.TryCast)):
        # `-128Y` is one TINYINT literal in Spark; sqlglot reads it as -(CAST(128 AS
        # TINYINT)): negate the number first, or -128 would overflow as +128.
        inner = sql_literal(node.this)
        if inner is not None and inner.kind in (LiteralKind.INT, LiteralKind.DECIMAL):
            negated = negate(inner)
            if negated is not None:
                return _fold_cast(negated, node.to, safe=False, shown="-" + node_sql(node))
    lit = _plain_literal(node)
    return lit if lit is None or negations % 2 == 0 else negate(lit)


def plain_integer(node: exp.Expression) -> Literal | None:
    """``node`` where it is an unsigned integer below 10**18, the INT literal
    :func:`sql_literal` makes of it, without its detour through Decimal (a join's
    key list holds thousands); else None."""
    if type(node) is exp.Literal and not node.is_string:
        text = str(node.this)
        if text.isascii() and text.isdigit() and len(text) < 19:
            return Literal(LiteralKind.INT, int(text))
    return None


# Where si.sql's key lists (sql/dynamic.in_node) carry their keys in an exp.In's meta:
# the integers its items are, one each, in order.
INTEGER_KEYS = "skipindex_integer_keys"


def key_literals(node: exp.In) -> list[Literal] | None:
    """The INT literals of an IN list built from 64-bit integer keys, which reading
    its items gives (:func:`plain_integer`, :func:`negate`), read from the keys
    the list carries (:data:`INTEGER_KEYS`) instead of its thousands of nodes; None
    where it carries none."""
    keys = node.meta.get(INTEGER_KEYS)
    if keys is None or len(keys) != len(node.expressions):
        return None
    return [Literal(LiteralKind.INT, key) for key in keys]


def reject_parameters(node: exp.Expression) -> None:
    """A placeholder (``?``, ``:name``) where a literal belongs is an error, not a value."""
    if isinstance(node, (exp.Placeholder, exp.Parameter)):
        raise InvalidPredicateError(
            f"the predicate holds an unbound parameter {node_sql(node)}: substitute its value first"
        )


def negate(lit: Literal) -> Literal | None:
    """``-lit`` for a numeric literal (exactly: never rounded by a Decimal context)."""
    value = lit.value
    if isinstance(value, Decimal) and value.as_tuple().exponent == 0:
        return _number(-int(value))  # -9223372036854775808 is a BIGINT again
    if isinstance(value, Decimal):
        return Literal(lit.kind, value.copy_negate())
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _number(-value) if lit.kind is LiteralKind.INT else Literal(lit.kind, -value)
    return None


def _plain_literal(node: exp.Expression) -> Literal | None:
    if isinstance(node, exp.Null):
        return Literal(LiteralKind.NULL, None)
    if isinstance(node, exp.Boolean):
        return Literal(LiteralKind.BOOLEAN, bool(node.this))
    if isinstance(node, exp.Literal):
        if node.is_string:
            return Literal(LiteralKind.STRING, str(node.this))
        return _numeric_text(str(node.this))
    if isinstance(node, exp.HexString):
        digits = str(node.this)
        padded = digits.zfill(len(digits) + len(digits) % 2)  # X'123' is 0x01 0x23
        return Literal(LiteralKind.BINARY, bytes.fromhex(padded))
    if isinstance(node, exp.Concat):  # 'a' 'b': Spark concatenates adjacent literals
        parts = [_plain_literal(unparen(p)) for p in node.expressions]
        if all(p is not None and p.kind is LiteralKind.STRING for p in parts):
            return Literal(LiteralKind.STRING, "".join(str(p.value) for p in parts if p))
        return None
    if isinstance(node, (exp.Cast, exp.TryCast)):
        inner = sql_literal(node.this)
        if inner is None:
            return None
        safe = isinstance(node, exp.TryCast) and bool(node.args.get("safe"))
        return _fold_cast(inner, node.to, safe=safe, shown=node_sql(node))
    if isinstance(node, (exp.Add, exp.Sub, exp.Mul)):
        return _arithmetic(node)
    name = function_name(node)
    if name in ("decimal", "binary") and len(node.expressions) == 1:
        inner = sql_literal(node.expressions[0])
        if inner is None:
            return None
        target = exp.DataType.build("DECIMAL(10, 0)" if name == "decimal" else "BINARY")
        return _fold_cast(inner, target, safe=False, shown=node_sql(node))
    return None


_INT32 = (-(2**31), 2**31 - 1)
_OPERATIONS: dict[type[exp.Expression], Callable[[Any, Any], Any]] = {
    exp.Add: operator.add,
    exp.Sub: operator.sub,
    exp.Mul: operator.mul,
}


def _arithmetic(node: exp.Add | exp.Sub | exp.Mul) -> Literal | None:
    """``1999 + 2`` (as benchmark SQL often writes years) folded as Spark computes it:
    integers in INT where both fit one (BIGINT else), with ANSI's overflow an error
    Spark raises, so not folded; exact decimals where the result has at most 38
    digits (Spark's result type holds it exactly then); doubles as IEEE doubles."""
    left, right = sql_literal(node.this), sql_literal(node.expression)
    if left is None or right is None:
        return None
    operate = _OPERATIONS[type(node)]
    kinds = {left.kind, right.kind}
    if kinds == {LiteralKind.INT}:
        a, b = int(cast(int, left.value)), int(cast(int, right.value))
        value = operate(a, b)
        small = _INT32[0] <= a <= _INT32[1] and _INT32[0] <= b <= _INT32[1]
        low, high = _INT32 if small else _INT64
        return Literal(LiteralKind.INT, value) if low <= value <= high else None
    if kinds <= {LiteralKind.INT, LiteralKind.DECIMAL}:
        exact = operate(Decimal(cast(int, left.value)), Decimal(cast(int, right.value)))
        if len(exact.as_tuple().digits) > _MAX_DECIMAL_DIGITS:
            return None
        return Literal(LiteralKind.DECIMAL, exact)
    if kinds <= {LiteralKind.INT, LiteralKind.DECIMAL, LiteralKind.FLOAT}:
        number = operate(float(cast(float, left.value)), float(cast(float, right.value)))
        return Literal(LiteralKind.FLOAT, number)
    return None


def _numeric_text(text: str) -> Literal:
    """Spark's typing of an unsuffixed number: int, bigint, decimal(p,s) or double."""
    if "e" in text.lower():
        value = float(text)
        if value in (float("inf"), float("-inf")):
            raise InvalidPredicateError(f"numeric literal {text} does not fit in a DOUBLE")
        return Literal(LiteralKind.FLOAT, value)
    number = Decimal(text)
    if len(number.as_tuple().digits) > _MAX_DECIMAL_DIGITS:
        raise InvalidPredicateError(
            f"numeric literal {text} has more than {_MAX_DECIMAL_DIGITS} digits"
        )
    if "." in text:
        return Literal(LiteralKind.DECIMAL, number)
    return _number(int(number))


def _number(value: int | Decimal | float) -> Literal:
    if isinstance(value, int) and _INT64[0] <= value <= _INT64[1]:
        return Literal(LiteralKind.INT, value)
    return Literal(LiteralKind.DECIMAL, Decimal(value))


def _fold_cast(inner: Literal, to: exp.DataType, *, safe: bool, shown: str) -> Literal | None:
    try:
        return cast_value(inner, to.sql(dialect="spark"))
    except InvalidCastError as exc:
        if safe:  # try_cast: a failed cast is NULL
            return Literal(LiteralKind.NULL, None)
        raise InvalidPredicateError(f"invalid literal {shown}: {exc}") from None


def unparen(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def function_name(node: exp.Expression) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.this).lower()
    return ""


def node_sql(node: exp.Expression) -> str:
    return str(node.sql(dialect="spark"))
