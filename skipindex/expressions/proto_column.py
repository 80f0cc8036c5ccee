"""A Spark Connect ``Expression`` message, as a client sent it over the wire.

What :mod:`.connect_column` reads from PySpark's client-side objects, read here
from the protobuf message itself (``spark.connect.Expression``): the form every
Connect client (Scala, Go, Rust, PySpark) sends, and the one the gateway sees.
Literals are already what the server will use: DATE as days, TIMESTAMP as UTC
microseconds, TIMESTAMP_NTZ as wall-clock microseconds, DECIMAL as its digits.
A node of any other shape is ``OTHER``: the walker keeps it as "might match".
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar

from skipindex.column_paths import split_name
from skipindex.expressions.column_walk import NodeKind, python_literal
from skipindex.expressions.nodes import ColumnName, Literal, LiteralKind

__all__ = ["ProtoTree", "is_expression_message"]

_EXPRESSION = "spark.connect.Expression"
_EVAL_MODE_TRY = 3  # spark.connect.Expression.Cast.EvalMode.EVAL_MODE_TRY

_TEMPORAL = {
    "date": LiteralKind.DATE,
    "timestamp": LiteralKind.TIMESTAMP,
    "timestamp_ntz": LiteralKind.TIMESTAMP_NTZ,
}
_PLAIN = frozenset({"boolean", "byte", "short", "integer", "long", "float", "double", "string"})


def is_expression_message(value: Any) -> bool:
    # On the class: a Connect Column answers any attribute with a column of that name.
    descriptor = getattr(type(value), "DESCRIPTOR", None)
    name = getattr(descriptor, "full_name", None)
    return isinstance(name, str) and name == _EXPRESSION


class ProtoTree:
    """:class:`~skipindex.expressions.column_walk.ExpressionTree` over
    ``spark.connect.Expression`` messages."""

    _KINDS: ClassVar[dict[str, NodeKind]] = {
        "unresolved_function": NodeKind.FUNCTION,
        "unresolved_attribute": NodeKind.ATTRIBUTE,
        "literal": NodeKind.LITERAL,
        "cast": NodeKind.CAST,
        "expression_string": NodeKind.SQL,
    }

    def kind(self, node: Any) -> NodeKind:
        return self._KINDS.get(node.WhichOneof("expr_type") or "", NodeKind.OTHER)

    def function(self, node: Any) -> str:
        if node.WhichOneof("expr_type") != "unresolved_function":
            return ""
        call = node.unresolved_function
        if call.is_user_defined_function or call.is_distinct:
            return ""
        return str(call.function_name).lower()

    def arguments(self, node: Any) -> list[Any]:
        return list(node.unresolved_function.arguments)

    def unalias(self, node: Any) -> Any:
        while node.WhichOneof("expr_type") == "alias":
            node = node.alias.expr
        return node

    def attribute(self, node: Any) -> ColumnName:
        parts = split_name(str(node.unresolved_attribute.unparsed_identifier))
        return parts[0] if len(parts) == 1 else parts

    def sql_text(self, node: Any) -> str:
        return str(node.expression_string.expression)

    def literal(self, node: Any) -> Literal | None:
        literal = node.literal
        which = literal.WhichOneof("literal_type")
        if which == "null":
            return Literal(LiteralKind.NULL, None)
        if which in _TEMPORAL:
            return Literal(_TEMPORAL[which], int(getattr(literal, which)))
        if which in _PLAIN:
            return python_literal(getattr(literal, which))
        if which == "decimal":
            try:
                return Literal(LiteralKind.DECIMAL, Decimal(literal.decimal.value))
            except InvalidOperation:
                return None
        return None  # binary, intervals, arrays, maps, structs: "might match"

    def cast(self, node: Any) -> tuple[Any, str, bool]:
        cast = node.cast
        if cast.WhichOneof("cast_to_type") == "type_str":
            type_sql = str(cast.type_str)
        else:
            from pyspark.sql.connect.types import proto_schema_to_pyspark_data_type

            type_sql = str(proto_schema_to_pyspark_data_type(cast.type).simpleString())
        return cast.expr, type_sql, cast.eval_mode == _EVAL_MODE_TRY

    def shown(self, node: Any) -> str:
        which = node.WhichOneof("expr_type") or "expression"
        if which == "unresolved_attribute":
            return str(node.unresolved_attribute.unparsed_identifier)
        if which == "expression_string":
            return str(node.expression_string.expression)
        if which == "unresolved_function":
            return f"{node.unresolved_function.function_name}(...)"
        return which
