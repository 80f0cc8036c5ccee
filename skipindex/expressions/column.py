"""PySpark ``Column`` -> unbound predicate.

A Column's string form loses literal types (``>=(d, 2020-01-01)`` could be a
date or a string), so this walks the JVM-side tree instead:
``column._jc.node()`` is an ``org.apache.spark.sql.internal.ColumnNode``
(``UnresolvedFunction`` named ``=``, ``and``, ``!``, ``in``...,
``UnresolvedAttribute``, ``Literal``, ``Cast``, ``Alias``, ``SqlExpression``).
Literal values that py4j cannot convert (dates, timestamps) are converted by
Spark's own ``DateTimeUtils``, so the instant is exactly the one Spark will use.

Nothing here imports pyspark at module level: :func:`prune` never starts Spark.
Anything unexpected in a sub-tree becomes :class:`Unsupported` ("might match")
with that sub-tree's SQL, never an exception.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from skipindex.errors import InvalidPredicateError
from skipindex.expressions.casts import InvalidCastError, cast_value
from skipindex.expressions.leaves import (
    Operand,
    compare,
    connect,
    is_nan,
    like,
    member,
    null_safe_equal,
    starts_with,
    truth_test,
)
from skipindex.expressions.nodes import (
    AlwaysFalse,
    AlwaysTrue,
    ColumnName,
    Comparison,
    IsNull,
    Literal,
    LiteralKind,
    Op,
    Predicate,
    Unsupported,
)
from skipindex.expressions.sql import parse_sql
from skipindex.expressions.sql_literals import literal_from_sql, negate
from skipindex.expressions.visitors import Shape, boolean_tree

__all__ = ["parse_column"]

_COMPARISONS = {
    "=": Op.EQ,
    "==": Op.EQ,
    "equalto": Op.EQ,
    "!=": Op.NE,
    "<>": Op.NE,
    "<": Op.LT,
    "<=": Op.LE,
    ">": Op.GT,
    ">=": Op.GE,
}
_ARITHMETIC = frozenset({"+", "-", "*", "/", "%", "div", "negative", "positive"})
_TRUE = Literal(LiteralKind.BOOLEAN, True)


def parse_column(column: Any) -> Predicate:
    """The predicate a classic PySpark ``Column`` expresses.

    Spark Connect Columns keep their tree on the client in a form this does not
    read: pass the predicate as a SQL string instead.
    """
    jc = getattr(column, "_jc", None)
    if jc is None:
        if ".connect." in type(column).__module__:
            raise InvalidPredicateError(
                "Spark Connect Columns cannot be inspected by skipindex; pass the predicate "
                "as a SQL string instead (e.g. \"l_shipdate >= DATE '1995-01-01'\")"
            )
        raise InvalidPredicateError(
            f"expected a SQL string or a PySpark Column, got {type(column).__name__}"
        )
    try:
        root = jc.node()
    except Exception as exc:  # py4j errors carry the Java stack: keep the first line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InvalidPredicateError(f"cannot read the Column's expression: {first}") from None
    return _Walker().convert(root)


class _Walker:
    """Iterative post-order walk over the JVM tree (every step is a py4j call)."""

    def __init__(self) -> None:
        self._jvm: Any = None

    def convert(self, root: Any) -> Predicate:
        def shape(node: Any) -> tuple[Shape, list[Any]]:
            node = _unalias(node)
            name = _function(node)
            if name in ("and", "or"):
                return (Shape.AND if name == "and" else Shape.OR), _chain(node, name)
            if name in ("!", "not") and len(args := _arguments(node)) == 1:
                return Shape.NOT, args
            return Shape.LEAF, []

        return boolean_tree(root, shape, lambda node: self._guarded_leaf(_unalias(node)), connect)

    def _guarded_leaf(self, node: Any) -> Predicate:
        try:
            return self._leaf(node)
        except InvalidPredicateError:
            raise
        except Exception as exc:  # a node this version of Spark shapes differently
            return Unsupported(_sql(node), f"cannot read this expression ({type(exc).__name__})")

    def _leaf(self, node: Any) -> Predicate:
        kind = _kind(node)
        if kind == "SqlExpression":
            return parse_sql(str(node.expression()))
        if kind == "UnresolvedAttribute":
            return Comparison(_attribute(node), Op.EQ, _TRUE)  # a bare boolean column
        if kind == "Literal":
            lit = self._literal(node)
            if lit is not None and lit.kind in (LiteralKind.BOOLEAN, LiteralKind.NULL):
                return AlwaysTrue() if lit.value is True else AlwaysFalse()
            raise InvalidPredicateError(f"{_sql(node)} is not a boolean expression")
        name = _function(node)
        args = _arguments(node) if name else []

        def shown() -> str:
            return _sql(node)

        if name in _COMPARISONS and len(args) == 2:
            left, right = self._operand(args[0]), self._operand(args[1])
            return compare(_COMPARISONS[name], left, right, shown)
        if name == "<=>" and len(args) == 2:
            return null_safe_equal(self._operand(args[0]), self._operand(args[1]), shown)
        if name == "in" and args:
            return member(self._operand(args[0]), [self._operand(a) for a in args[1:]], shown)
        if name in ("isnull", "isnotnull", "isnan") and len(args) == 1:
            column = self._operand(args[0])
            if isinstance(column, str | tuple):
                return is_nan(column) if name == "isnan" else IsNull(column, name == "isnotnull")
            if column is None and name != "isnan":  # `(a > 0 & b > 1).isNull()`
                try:
                    condition = self.convert(args[0])
                except InvalidPredicateError:
                    return Unsupported(shown(), "isnull() of an expression that is not a condition")
                return truth_test(condition, None, name == "isnotnull", shown())
        if name == "like" and len(args) == 2:
            return like(self._operand(args[0]), self._operand(args[1]), shown)
        if name == "startswith" and len(args) == 2:
            return starts_with(self._operand(args[0]), self._operand(args[1]), shown)
        if name in _ARITHMETIC:
            raise InvalidPredicateError(f"{_sql(node)} is not a boolean expression")
        what = f"function {name}()" if name else kind
        return Unsupported(_sql(node), f"{what} is not something an index can answer")

    # ----------------------------------------------------------------------- operands

    def _operand(self, node: Any) -> Operand:
        node = _unalias(node)
        kind = _kind(node)
        if kind == "UnresolvedAttribute":
            return _attribute(node)
        if kind == "Literal":
            return self._literal(node)
        if kind == "Cast":
            inner = self._operand(node.child())
            if not isinstance(inner, Literal):
                return None
            safe = "try" in str(node.evalMode()).lower()
            return _cast(inner, str(node.dataType().sql()), safe=safe, shown=_sql(node))
        if kind == "SqlExpression":
            return literal_from_sql(str(node.expression()))
        if _function(node) == "negative" and len(args := _arguments(node)) == 1:
            inner = self._operand(args[0])
            return negate(inner) if isinstance(inner, Literal) else None
        return None

    def _literal(self, node: Any) -> Literal | None:
        value = node.value()
        lit = self._python_literal(value)
        data_type = node.dataType()  # Option[DataType]: set by typedLit-style literals
        if lit is not None and data_type.isDefined():
            return _cast(lit, str(data_type.get().sql()), safe=False, shown=_sql(node))
        return lit

    def _python_literal(self, value: Any) -> Literal | None:
        if value is None:
            return Literal(LiteralKind.NULL, None)
        if isinstance(value, bool):
            return Literal(LiteralKind.BOOLEAN, value)
        if isinstance(value, int):
            if -(2**63) <= value < 2**63:
                return Literal(LiteralKind.INT, value)
            return Literal(LiteralKind.DECIMAL, Decimal(value))
        if isinstance(value, float):
            return Literal(LiteralKind.FLOAT, value)
        if isinstance(value, str):
            return Literal(LiteralKind.STRING, value)
        if isinstance(value, (bytes, bytearray)):
            return Literal(LiteralKind.BINARY, bytes(value))
        if isinstance(value, Decimal):
            return Literal(LiteralKind.DECIMAL, value)
        return self._java_literal(value)

    def _java_literal(self, value: Any) -> Literal | None:
        """java.sql.Date/Timestamp and java.time values, through Spark's own converters
        (they apply the Julian-calendar rebase Spark uses for old dates)."""
        name = str(value.getClass().getName())
        utils = self._datetime_utils()
        try:
            if name == "java.sql.Date":
                days = int(utils.fromJavaDate(value))
            elif name == "java.time.LocalDate":
                days = int(utils.localDateToDays(value))
            elif name == "java.sql.Timestamp":
                micros = int(utils.fromJavaTimestamp(value))
            elif name == "java.time.Instant":
                micros = int(utils.instantToMicros(value))
            elif name == "java.time.LocalDateTime":  # TIMESTAMP_NTZ: wall-clock micros
                micros = int(utils.localDateTimeToMicros(value))
            else:
                return None
            if name.endswith("Date"):
                return Literal(LiteralKind.DATE, days)
            if name == "java.time.LocalDateTime":
                return Literal(LiteralKind.TIMESTAMP_NTZ, micros)
            return Literal(LiteralKind.TIMESTAMP, micros)
        except OverflowError:  # beyond what Spark's own converters take
            return None

    def _datetime_utils(self) -> Any:
        if self._jvm is None:
            from pyspark import SparkContext

            self._jvm = SparkContext._jvm
            if self._jvm is None:
                raise InvalidPredicateError("the Column's SparkContext has stopped")
        return self._jvm.org.apache.spark.sql.catalyst.util.DateTimeUtils


# --------------------------------------------------------------------------- JVM nodes


def _kind(node: Any) -> str:
    return str(node.getClass().getSimpleName())


def _function(node: Any) -> str:
    """The lower-cased name of a built-in function node, else ''."""
    if _kind(node) != "UnresolvedFunction" or node.isUserDefinedFunction():
        return ""
    return str(node.functionName()).lower()


def _arguments(node: Any) -> list[Any]:
    args = node.arguments()  # a Scala Seq
    return [args.apply(i) for i in range(args.size())]


def _chain(node: Any, name: str) -> list[Any]:
    """Operands of nested and(...)/or(...) calls, left to right."""
    out: list[Any] = []
    stack = [node]
    while stack:
        current = _unalias(stack.pop())
        if _function(current) == name:
            stack.extend(reversed(_arguments(current)))
        else:
            out.append(current)
    return out


def _unalias(node: Any) -> Any:
    while _kind(node) == "Alias":
        node = node.child()
    return node


def _attribute(node: Any) -> ColumnName:
    """``col("a")`` -> "a"; ``col("s.f")`` -> ("s", "f"), a struct field's path."""
    parts = node.nameParts()
    names = tuple(str(parts.apply(i)) for i in range(parts.size()))
    return names[0] if len(names) == 1 else names


def _cast(lit: Literal, type_sql: str, *, safe: bool, shown: str) -> Literal | None:
    try:
        return cast_value(lit, type_sql)
    except InvalidCastError as exc:
        if safe:
            return Literal(LiteralKind.NULL, None)
        raise InvalidPredicateError(f"invalid literal {shown}: {exc}") from None


def _sql(node: Any) -> str:
    try:
        return str(node.sql())
    except Exception:  # keep going: this text is only for explain()
        return str(node)
