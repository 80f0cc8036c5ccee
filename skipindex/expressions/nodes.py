"""Immutable predicate trees.

Two layers, as in pyiceberg:

* *Unbound* nodes name columns by string and carry typed SQL literals
  (:class:`Literal`). Parsers (SQL text, PySpark ``Column``) produce them.
* *Bound* nodes (``Bound*``) point at a :class:`BoundColumn` with the column's
  Arrow type, and carry literal values already cast to that column's domain
  (see :mod:`skipindex.expressions.binding`). Index kinds only ever see bound
  leaves, in negation normal form: no :class:`Not` survives
  :func:`~skipindex.expressions.rewrite.rewrite_not`.

``And``/``Or`` are n-ary so that a chain of 10,000 conditions is one flat node
instead of a 10,000-deep tree.

:class:`AlwaysFalse` means "no row can make this TRUE" and :class:`AlwaysTrue`
means "any row might make this TRUE". Neither is ever negated: negation is pushed
into the leaves before binding, so three-valued logic never has to be undone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import pyarrow as pa

from skipindex._types import BoundValue
from skipindex.column_paths import split_name
from skipindex.expressions.formatting import format_value
from skipindex.expressions.literals import Literal, LiteralKind
from skipindex.expressions.operators import Op
from skipindex.expressions.patterns import LikePattern
from skipindex.expressions.visitors import fold

__all__ = [
    "AlwaysFalse",
    "AlwaysTrue",
    "And",
    "AnyPredicate",
    "BoundColumn",
    "BoundComparison",
    "BoundHasElement",
    "BoundIn",
    "BoundIsNull",
    "BoundLeaf",
    "BoundMatch",
    "BoundPredicate",
    "BoundValue",
    "Call",
    "ColumnName",
    "Comparison",
    "HasElement",
    "In",
    "IsNull",
    "Literal",
    "Like",
    "LiteralKind",
    "Match",
    "Not",
    "Op",
    "Or",
    "Predicate",
    "Term",
    "Unsupported",
    "children_of",
    "render",
]


# A column as a predicate names it: a top-level name, or the path of a struct field.
ColumnName = str | tuple[str, ...]


@dataclass(frozen=True)
class Call:
    """An expression of columns as a predicate writes it (``year(d)``,
    ``left(s, 3)``, ``x + 1``, ``CAST(i AS BIGINT)``), in place of a column.

    ``name`` says which rewrite rule may turn a comparison of it into a range on
    its column (:mod:`skipindex.expressions.functions`): a calendar field
    (``year``...), ``to_date``, ``cast``, ``date_trunc``, ``trunc``, ``substring``,
    ``+``, ``-``, ``*``; ``""`` for any other. ``args`` are its operands
    (columns, literals, calls; a cast's target type and a truncation's unit as
    string literals). ``sql`` is its text, for explain(); ``tree`` its parsed
    form (a sqlglot expression), from which binding derives the canonical text
    an expression index on it is named by (:mod:`skipindex.expressions.calls`).
    """

    name: str
    args: tuple[Term | Literal, ...]
    sql: str
    tree: object = field(default=None, compare=False, hash=False, repr=False)

    def __str__(self) -> str:
        return self.sql

    def columns(self) -> list[ColumnName]:
        """The columns it reads, outermost first."""
        out: list[ColumnName] = []
        stack: list[object] = [self]
        while stack:
            current = stack.pop()
            if isinstance(current, Call):
                stack.extend(reversed(current.args))
            elif isinstance(current, str | tuple):
                out.append(current)
        return out


# A leaf's subject: a column, or an expression of columns.
Term = ColumnName | Call


# --------------------------------------------------------------------------- shared


@dataclass(frozen=True)
class AlwaysTrue:
    """Any row might satisfy the predicate: nothing can be skipped."""

    def __str__(self) -> str:
        return "TRUE"


@dataclass(frozen=True)
class AlwaysFalse:
    """No row can satisfy the predicate (it is FALSE or NULL for every row)."""

    def __str__(self) -> str:
        return "FALSE"


@dataclass(frozen=True)
class Unsupported:
    """A condition no index can decide (a function, LIKE, arithmetic...).

    It always *might match*. ``sql`` is kept for ``explain()``; ``negated``
    records that a NOT was pushed into it, so ``explain()`` stays truthful.
    """

    sql: str
    reason: str
    negated: bool = False

    def __str__(self) -> str:
        return f"NOT ({self.sql})" if self.negated else self.sql


# --------------------------------------------------------------------------- unbound


@dataclass(frozen=True)
class Comparison:
    column: Term
    op: Op
    literal: Literal

    def __str__(self) -> str:
        return f"{_quote(self.column)} {self.op.value} {self.literal}"


@dataclass(frozen=True)
class In:
    column: Term
    literals: tuple[Literal, ...]
    negated: bool = False

    def __str__(self) -> str:
        return self._text

    @cached_property
    def _text(self) -> str:  # once: prune and si.sql both show a join's list of thousands
        values = ", ".join(str(v) for v in self.literals)
        return f"{_quote(self.column)} {'NOT IN' if self.negated else 'IN'} ({values})"


@dataclass(frozen=True)
class IsNull:
    column: Term
    negated: bool = False

    def __str__(self) -> str:
        return f"{_quote(self.column)} IS {'NOT NULL' if self.negated else 'NULL'}"


@dataclass(frozen=True)
class Like:
    """``column LIKE 'text%'`` (``prefix``) or ``column LIKE 'text'``, wildcard-free
    text: on a string column, a range (or an equality) any index can answer."""

    column: Term
    text: str
    prefix: bool = True
    negated: bool = False

    def __str__(self) -> str:
        pattern = self.text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        pattern = pattern.replace("'", "''") + ("%" if self.prefix else "")
        return f"{_quote(self.column)} {'NOT LIKE' if self.negated else 'LIKE'} '{pattern}'"


@dataclass(frozen=True)
class Match:
    """``column [NOT] LIKE pattern`` with wildcards inside (``'%timeout%'``,
    ``'a_c%'``), ``contains`` and ``endswith``: answered by a substring index
    (its literal runs) and exactly by an equality bitmap's values.
    ``case_insensitive``: ``column ILIKE pattern`` (``lower(column) LIKE``), the
    pattern's ASCII letters already lowered."""

    column: Term
    pattern: LikePattern
    negated: bool = False
    case_insensitive: bool = False

    def __str__(self) -> str:
        return _match_text(_quote(self.column), self.pattern, self.negated, self.case_insensitive)


def _match_text(column: str, pattern: LikePattern, negated: bool, folded: bool) -> str:
    text = str(pattern).replace("'", "''")
    operator = "ILIKE" if folded else "LIKE"
    return f"{column} {'NOT ' if negated else ''}{operator} '{text}'"


@dataclass(frozen=True)
class HasElement:
    """An element of array ``column`` equals one of ``literals``: ``array_contains``,
    ``arrays_overlap`` with a literal array, ``exists(a, x -> x = lit)``."""

    column: Term
    literals: tuple[Literal, ...]
    negated: bool = False

    def __str__(self) -> str:
        listed = ", ".join(map(str, self.literals))
        negation = "NOT " if self.negated else ""
        return f"{negation}arrays_overlap({_quote(self.column)}, array({listed}))"


@dataclass(frozen=True)
class Not:
    child: Predicate

    def __str__(self) -> str:
        return render(self)


@dataclass(frozen=True)
class And:
    children: tuple[Predicate, ...]

    def __str__(self) -> str:
        return render(self)


@dataclass(frozen=True)
class Or:
    children: tuple[Predicate, ...]

    def __str__(self) -> str:
        return render(self)


_UnboundLeaf = Comparison | In | IsNull | Like | Match | HasElement
Predicate = AlwaysTrue | AlwaysFalse | Unsupported | _UnboundLeaf | Not | And | Or


# --------------------------------------------------------------------------- bound


@dataclass(frozen=True)
class BoundColumn:
    """A column resolved against the table schema (name as the table spells it)."""

    name: str  # the column's key (skipindex.column_paths.column_key): `s.f` for a field
    type: pa.DataType
    # An expression index's field: the expression as its definition wrote it
    # (``name`` is then the expression's canonical key).
    expression: str = field(default="", compare=False)

    def __str__(self) -> str:
        return self.expression or _quote(split_name(self.name))


@dataclass(frozen=True)
class BoundComparison:
    column: BoundColumn
    op: Op
    value: BoundValue

    def __str__(self) -> str:
        return f"{self.column} {self.op.value} {format_value(self.value, self.column.type)}"


@dataclass(frozen=True)
class BoundIn:
    """``column [NOT] IN values``: values are distinct, non-NULL and sorted
    (NaN last, like Spark)."""

    column: BoundColumn
    values: tuple[BoundValue, ...]
    negated: bool = False

    def __str__(self) -> str:
        shown = ", ".join(format_value(v, self.column.type) for v in self.values[:8])
        if len(self.values) > 8:
            shown += f", ... ({len(self.values)} values)"
        return f"{self.column} {'NOT IN' if self.negated else 'IN'} ({shown})"


@dataclass(frozen=True)
class BoundIsNull:
    column: BoundColumn
    negated: bool = False

    def __str__(self) -> str:
        return f"{self.column} IS {'NOT NULL' if self.negated else 'NULL'}"


@dataclass(frozen=True)
class BoundMatch:
    """``column [NOT] [I]LIKE pattern`` on a string column (see :class:`Match`)."""

    column: BoundColumn
    pattern: LikePattern
    negated: bool = False
    case_insensitive: bool = False

    def __str__(self) -> str:
        return _match_text(str(self.column), self.pattern, self.negated, self.case_insensitive)


@dataclass(frozen=True)
class BoundHasElement:
    """An element of the array ``column`` equals one of ``values`` (cast to its
    element type, distinct, sorted)."""

    column: BoundColumn
    values: tuple[BoundValue, ...]
    negated: bool = False

    def __str__(self) -> str:
        element = self.column.type.value_type
        listed = ", ".join(format_value(v, element) for v in self.values[:8])
        more = f", ... ({len(self.values)} values)" if len(self.values) > 8 else ""
        return (
            f"{'NOT ' if self.negated else ''}arrays_overlap({self.column}, array({listed}{more}))"
        )


BoundLeaf = BoundComparison | BoundIn | BoundIsNull | BoundMatch | BoundHasElement
# Bound trees reuse And/Or (typed with unbound children) around bound leaves:
# walkers that serve both take either.
BoundPredicate = AlwaysTrue | AlwaysFalse | Unsupported | BoundLeaf | And | Or
AnyPredicate = Predicate | BoundPredicate


def render(node: AnyPredicate) -> str:
    """SQL-like text of a tree (iterative: trees may be thousands of levels deep)."""

    def visit(current: AnyPredicate, parts: list[str]) -> str:
        if isinstance(current, Not):
            return f"NOT ({parts[0]})"
        if isinstance(current, And | Or):
            joiner = " AND " if isinstance(current, And) else " OR "
            return joiner.join(f"({p})" for p in parts)
        return str(current)

    return fold(node, children_of, visit)


def children_of(node: AnyPredicate) -> tuple[AnyPredicate, ...]:
    """A predicate node's children, bound or unbound (the one place that knows)."""
    if isinstance(node, And | Or):
        return node.children
    if isinstance(node, Not):
        return (node.child,)
    return ()


def _quote(name: Term) -> str:
    if isinstance(name, Call):
        return name.sql
    if isinstance(name, tuple):
        return ".".join(_quote(part) for part in name)
    if name.replace("_", "a").isalnum() and not name[:1].isdigit():
        return name
    return "`" + name.replace("`", "``") + "`"
