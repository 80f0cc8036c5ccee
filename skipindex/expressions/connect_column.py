"""The client-side tree of a Spark Connect ``Column`` (``column._expr``).

Connect keeps the whole expression in Python objects from
``pyspark.sql.connect.expressions``; literals are already in the form the
server receives: DATE as days, TIMESTAMP as UTC microseconds (a naive
``datetime`` was converted by the client, exactly as the server will use it),
TIMESTAMP_NTZ as wall-clock microseconds. Nothing here imports pyspark.
"""

from __future__ import annotations

from typing import Any, ClassVar

from skipindex.column_paths import split_name
from skipindex.errors import InvalidPredicateError
from skipindex.expressions.column_walk import NodeKind, python_literal
from skipindex.expressions.nodes import ColumnName, Literal, LiteralKind

__all__ = ["ConnectTree"]

_TEMPORAL = {
    "DateType": LiteralKind.DATE,
    "TimestampType": LiteralKind.TIMESTAMP,
    "TimestampNTZType": LiteralKind.TIMESTAMP_NTZ,
}


class ConnectTree:
    """:class:`~skipindex.expressions.column_walk.ExpressionTree` over Connect expressions."""

    _KINDS: ClassVar[dict[str, NodeKind]] = {
        "UnresolvedFunction": NodeKind.FUNCTION,
        "ColumnReference": NodeKind.ATTRIBUTE,
        "LiteralExpression": NodeKind.LITERAL,
        "CastExpression": NodeKind.CAST,
        "SQLExpression": NodeKind.SQL,
    }

    @staticmethod
    def root(column: Any) -> Any:
        expression = getattr(column, "_expr", None)
        if expression is None:
            raise InvalidPredicateError(f"cannot read the Spark Connect Column {column!r}")
        return expression

    def kind(self, node: Any) -> NodeKind:
        return self._KINDS.get(type(node).__name__, NodeKind.OTHER)

    def function(self, node: Any) -> str:
        if type(node).__name__ != "UnresolvedFunction":
            return ""
        return str(node._name).lower()

    def arguments(self, node: Any) -> list[Any]:
        return list(node._args)

    def unalias(self, node: Any) -> Any:
        while type(node).__name__ == "ColumnAlias":
            node = node._child
        return node

    def attribute(self, node: Any) -> ColumnName:
        parts = split_name(str(node._unparsed_identifier))
        return parts[0] if len(parts) == 1 else parts

    def sql_text(self, node: Any) -> str:
        return str(node._expr)

    def literal(self, node: Any) -> Literal | None:
        value, type_name = node._value, type(node._dataType).__name__
        if value is not None and type_name in _TEMPORAL:
            return Literal(_TEMPORAL[type_name], int(value))
        return python_literal(value)  # None for a value it does not know: "might match"

    def cast(self, node: Any) -> tuple[Any, str, bool]:
        target = node._data_type
        type_sql = target if isinstance(target, str) else str(target.simpleString())
        return node._expr, type_sql, node._eval_mode == "try"

    def shown(self, node: Any) -> str:
        return str(node)
