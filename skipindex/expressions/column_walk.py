"""Walking a PySpark ``Column``'s expression tree into an unbound predicate.

The :class:`Walker` sees the tree through :class:`ExpressionTree`, implemented
for classic Columns (:mod:`.column`) and Spark Connect Columns
(:mod:`.connect_column`). Anything unexpected in a sub-tree becomes
:class:`Unsupported` ("might match") with that sub-tree's SQL, never an
exception. Nothing here imports pyspark.
"""

from __future__ import annotations

import enum
import re
from decimal import Decimal
from typing import Any, Protocol, cast

from skipindex.errors import InvalidPredicateError
from skipindex.expressions.casts import InvalidCastError, cast_value
from skipindex.expressions.leaves import (
    Operand,
    compare,
    connect,
    contains,
    ends_with,
    finds_regex,
    has_element,
    is_nan,
    is_term,
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
    Term,
    Unsupported,
)
from skipindex.expressions.sql import expression_operand, parse_sql
from skipindex.expressions.sql_literals import literal_from_sql, negate
from skipindex.expressions.visitors import Shape, boolean_tree

__all__ = ["ExpressionTree", "NodeKind", "Walker", "cast_literal", "python_literal"]

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
_INFIX = frozenset({"+", "-", "*", "/", "%"})
_NAME = re.compile(r"[a-z_][a-z0-9_]*")  # a plain function name, nothing to quote
_MAX_DEPTH = 16
_TRUE = Literal(LiteralKind.BOOLEAN, True)


class NodeKind(enum.Enum):
    FUNCTION = "function"  # a built-in function call: =, and, in, isnull...
    ATTRIBUTE = "attribute"  # a column reference
    LITERAL = "literal"
    CAST = "cast"
    SQL = "sql"  # an expr("...") string
    OTHER = "other"


class ExpressionTree(Protocol):
    """What the walker needs to know about a node of a Column's expression tree."""

    def kind(self, node: Any) -> NodeKind: ...

    def function(self, node: Any) -> str:
        """Lower-cased name of a built-in function node, else ''."""

    def arguments(self, node: Any) -> list[Any]: ...

    def unalias(self, node: Any) -> Any: ...

    def attribute(self, node: Any) -> ColumnName: ...

    def sql_text(self, node: Any) -> str:
        """The text of an ``expr("...")`` node."""

    def literal(self, node: Any) -> Literal | None: ...

    def cast(self, node: Any) -> tuple[Any, str, bool]:
        """(child, target type as SQL, whether it is a try_cast)."""

    def shown(self, node: Any) -> str:
        """The node as SQL-ish text, for explain()."""


class Walker:
    """Iterative post-order walk over a Column's expression tree."""

    def __init__(self, tree: ExpressionTree) -> None:
        self.tree = tree

    def convert(self, root: Any) -> Predicate:
        tree = self.tree

        def shape(node: Any) -> tuple[Shape, list[Any]]:
            node = tree.unalias(node)
            name = tree.function(node)
            if name in ("and", "or"):
                return (Shape.AND if name == "and" else Shape.OR), self._chain(node, name)
            if name in ("!", "not") and len(args := tree.arguments(node)) == 1:
                return Shape.NOT, args
            return Shape.LEAF, []

        return boolean_tree(
            root, shape, lambda node: self._guarded_leaf(tree.unalias(node)), connect
        )

    def _chain(self, node: Any, name: str) -> list[Any]:
        """Operands of nested and(...)/or(...) calls, left to right."""
        out: list[Any] = []
        stack = [node]
        while stack:
            current = self.tree.unalias(stack.pop())
            if self.tree.function(current) == name:
                stack.extend(reversed(self.tree.arguments(current)))
            else:
                out.append(current)
        return out

    def _guarded_leaf(self, node: Any) -> Predicate:
        try:
            return self._leaf(node)
        except InvalidPredicateError:
            raise
        except Exception as exc:  # a node this version of Spark shapes differently
            shown = self.tree.shown(node)
            return Unsupported(shown, f"cannot read this expression ({type(exc).__name__})")

    def _leaf(self, node: Any) -> Predicate:
        tree = self.tree
        kind = tree.kind(node)
        if kind is NodeKind.SQL:
            return parse_sql(tree.sql_text(node))
        if kind is NodeKind.ATTRIBUTE:
            return Comparison(tree.attribute(node), Op.EQ, _TRUE)  # a bare boolean column
        if kind is NodeKind.LITERAL:
            lit = tree.literal(node)
            if lit is not None and lit.kind in (LiteralKind.BOOLEAN, LiteralKind.NULL):
                return AlwaysTrue() if lit.value is True else AlwaysFalse()
            raise InvalidPredicateError(f"{tree.shown(node)} is not a boolean expression")
        name = tree.function(node)
        args = tree.arguments(node) if name else []

        def shown() -> str:
            return tree.shown(node)

        if name in _COMPARISONS and len(args) == 2:
            left, right = self._operand(args[0]), self._operand(args[1])
            return compare(_COMPARISONS[name], left, right, shown)
        if name == "<=>" and len(args) == 2:
            return null_safe_equal(self._operand(args[0]), self._operand(args[1]), shown)
        if name == "in" and args:
            return member(self._operand(args[0]), [self._operand(a) for a in args[1:]], shown)
        if name in ("isnull", "isnotnull", "isnan") and len(args) == 1:
            column = self._operand(args[0])
            if is_term(column):
                subject = cast(Term, column)
                return is_nan(subject) if name == "isnan" else IsNull(subject, name == "isnotnull")
            if column is None and name != "isnan":  # `(a > 0 & b > 1).isNull()`
                try:
                    condition = self.convert(args[0])
                except InvalidPredicateError:
                    return Unsupported(shown(), "isnull() of an expression that is not a condition")
                return truth_test(condition, None, name == "isnotnull", shown())
        if name in ("like", "ilike") and len(args) == 2:
            folded = name == "ilike"
            return like(self._operand(args[0]), self._operand(args[1]), shown, "\\", folded)
        if name in ("rlike", "regexp", "regexp_like") and len(args) == 2:
            return finds_regex(self._operand(args[0]), self._operand(args[1]), shown)
        if name == "startswith" and len(args) == 2:
            return starts_with(self._operand(args[0]), self._operand(args[1]), shown)
        if name == "array_contains" and len(args) == 2:
            return has_element(self._operand(args[0]), [self._operand(args[1])], shown)
        if name in ("contains", "endswith") and len(args) == 2:
            build = contains if name == "contains" else ends_with
            return build(self._operand(args[0]), self._operand(args[1]), shown)
        if name in _ARITHMETIC:
            raise InvalidPredicateError(f"{shown()} is not a boolean expression")
        what = f"function {name}()" if name else "this expression"
        return Unsupported(shown(), f"{what} is not something an index can answer")

    # ----------------------------------------------------------------------- operands

    def _operand(self, node: Any) -> Operand:
        tree = self.tree
        node = tree.unalias(node)
        kind = tree.kind(node)
        if kind is NodeKind.ATTRIBUTE:
            return tree.attribute(node)
        if kind is NodeKind.LITERAL:
            return tree.literal(node)
        if kind is NodeKind.CAST:
            child, type_sql, safe = tree.cast(node)
            inner = self._operand(child)
            if not isinstance(inner, Literal):
                return None
            return cast_literal(inner, type_sql, safe=safe, shown=tree.shown(node))
        if kind is NodeKind.SQL:
            return literal_from_sql(tree.sql_text(node))
        if tree.function(node) == "negative" and len(args := tree.arguments(node)) == 1:
            inner = self._operand(args[0])
            if isinstance(inner, Literal):
                return negate(inner)
        text = self._sql(node, _MAX_DEPTH)
        return expression_operand(text) if text is not None else None

    def _sql(self, node: Any, depth: int) -> str | None:
        """Spark SQL text of a function of columns and literals, built from the
        tree itself (``year(`d`)``, ``(`x` + 1)``), so that it means what the
        Column means: the function Spark resolves by the same name. None for
        anything else (a UDF, a lambda, a cast...)."""
        tree = self.tree
        node = tree.unalias(node)
        kind = tree.kind(node)
        if kind is NodeKind.ATTRIBUTE:
            name = tree.attribute(node)
            path = (name,) if isinstance(name, str) else name
            return ".".join("`" + part.replace("`", "``") + "`" for part in path)
        if kind is NodeKind.LITERAL:
            lit = tree.literal(node)
            return None if lit is None else str(lit)
        name = tree.function(node)
        if kind is not NodeKind.FUNCTION or depth <= 0:
            return None
        if not (name in _INFIX or _NAME.fullmatch(name)):
            return None
        args = [self._sql(arg, depth - 1) for arg in tree.arguments(node)]
        texts = [a for a in args if a is not None]
        if len(texts) != len(args):
            return None
        if name in _INFIX:
            return f"({texts[0]} {name} {texts[1]})" if len(texts) == 2 else None
        return f"{name}({', '.join(texts)})"


def python_literal(value: Any) -> Literal | None:
    """A literal from a plain Python value (None when it is not one)."""
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
    return None


def cast_literal(lit: Literal, type_sql: str, *, safe: bool, shown: str) -> Literal | None:
    try:
        return cast_value(lit, type_sql)
    except InvalidCastError as exc:
        if safe:
            return Literal(LiteralKind.NULL, None)
        raise InvalidPredicateError(f"invalid literal {shown}: {exc}") from None
