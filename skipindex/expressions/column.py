"""PySpark ``Column`` -> unbound predicate, for classic and Spark Connect Columns.

A Column's string form loses literal types (``>=(d, 2020-01-01)`` could be a
date or a string), so this walks the expression tree instead, through a small
:class:`~skipindex.expressions.column_walk.ExpressionTree` interface, walked by
:mod:`skipindex.expressions.column_walk`, with two implementations: the JVM-side
tree of a classic Column (here), and the client-side tree of a Spark Connect
Column (:mod:`skipindex.expressions.connect_column`). On the JVM side,
``column._jc.node()`` is an ``org.apache.spark.sql.internal.ColumnNode``
(``UnresolvedFunction`` named ``=``, ``and``, ``!``, ``in``...,
``UnresolvedAttribute``, ``Literal``, ``Cast``, ``Alias``, ``SqlExpression``).
Literal values that py4j cannot convert (dates, timestamps) are converted by
Spark's own ``DateTimeUtils``, so the instant is exactly the one Spark will use.

Nothing here imports pyspark at module level: :func:`prune` never starts Spark.
"""

from __future__ import annotations

from typing import Any, ClassVar

from skipindex.errors import InvalidPredicateError
from skipindex.expressions.column_walk import (
    NodeKind,
    Walker,
    cast_literal,
    python_literal,
)
from skipindex.expressions.nodes import ColumnName, Literal, LiteralKind, Predicate

__all__ = ["JvmTree", "parse_column"]


def parse_column(column: Any) -> Predicate:
    """The predicate a PySpark ``Column`` (classic or Spark Connect), or a Spark
    Connect ``Expression`` message as a client sent it, expresses."""
    from skipindex.expressions.proto_column import ProtoTree, is_expression_message

    if is_expression_message(column):
        return Walker(ProtoTree()).convert(column)
    if ".connect." in type(column).__module__:
        from skipindex.expressions.connect_column import ConnectTree

        return Walker(ConnectTree()).convert(ConnectTree.root(column))
    jc = getattr(column, "_jc", None)
    if jc is None:
        raise InvalidPredicateError(
            f"expected a SQL string or a PySpark Column, got {type(column).__name__}"
        )
    try:
        root = jc.node()
    except Exception as exc:  # py4j errors carry the Java stack: keep the first line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InvalidPredicateError(f"cannot read the Column's expression: {first}") from None
    return Walker(JvmTree()).convert(root)


class JvmTree:
    """A classic Column's tree: ``org.apache.spark.sql.internal.ColumnNode`` via py4j
    (every step is a py4j call)."""

    _KINDS: ClassVar[dict[str, NodeKind]] = {
        "UnresolvedFunction": NodeKind.FUNCTION,
        "UnresolvedAttribute": NodeKind.ATTRIBUTE,
        "Literal": NodeKind.LITERAL,
        "Cast": NodeKind.CAST,
        "SqlExpression": NodeKind.SQL,
    }

    def __init__(self) -> None:
        self._jvm: Any = None

    def kind(self, node: Any) -> NodeKind:
        return self._KINDS.get(_class_name(node), NodeKind.OTHER)

    def function(self, node: Any) -> str:
        if _class_name(node) != "UnresolvedFunction" or node.isUserDefinedFunction():
            return ""
        return str(node.functionName()).lower()

    def arguments(self, node: Any) -> list[Any]:
        args = node.arguments()  # a Scala Seq
        return [args.apply(i) for i in range(args.size())]

    def unalias(self, node: Any) -> Any:
        while _class_name(node) == "Alias":
            node = node.child()
        return node

    def attribute(self, node: Any) -> ColumnName:
        """``col("a")`` -> "a"; ``col("s.f")`` -> ("s", "f"), a struct field's path."""
        parts = node.nameParts()
        names = tuple(str(parts.apply(i)) for i in range(parts.size()))
        return names[0] if len(names) == 1 else names

    def sql_text(self, node: Any) -> str:
        return str(node.expression())

    def cast(self, node: Any) -> tuple[Any, str, bool]:
        return node.child(), str(node.dataType().sql()), "try" in str(node.evalMode()).lower()

    def shown(self, node: Any) -> str:
        try:
            return str(node.sql())
        except Exception:  # keep going: this text is only for explain()
            return str(node)

    def literal(self, node: Any) -> Literal | None:
        value = node.value()
        lit = python_literal(value)
        if lit is None:
            lit = self._java_literal(value)
        data_type = node.dataType()  # Option[DataType]: set by typedLit-style literals
        if lit is not None and data_type.isDefined():
            return cast_literal(lit, str(data_type.get().sql()), safe=False, shown=self.shown(node))
        return lit

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


def _class_name(node: Any) -> str:
    return str(node.getClass().getSimpleName())
