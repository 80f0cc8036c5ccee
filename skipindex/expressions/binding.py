"""Bind a predicate to a table schema: resolve columns, cast literals the way Spark does.

The output only ever over-approximates Spark's answer. Each leaf ends up as one of:

* an exact bound leaf, its value in the column's domain (``BoundValue`` in
  :mod:`skipindex.expressions.nodes`): ints, date days, timestamp ticks of the
  column's unit, Decimals at the column's scale, doubles, str, bytes, bool;
* AlwaysFalse / ``IS NOT NULL`` when the literal lies outside what the column
  can hold (``int8_col > 1000``, ``int_col = 2.5``);
* :class:`Unsupported` ("might match") where Spark applies a cast that is not
  replicated exactly (a double against a 64-bit integer, a number against a
  string column...);
* :class:`UnsupportedTypeError` where Spark itself rejects the comparison
  (``int_col = DATE '2020-01-01'``, ``int_col = 'abc'`` under ANSI).

Exact literals against integer-like domains (ints, decimals, dates, timestamps)
use rational arithmetic on the column's scaled integers: ``x > 2.5`` becomes
``x >= 3``, ``ts_seconds < TIMESTAMP '... 00:00:00.5'`` becomes ``ts <= ...``.
"""

from __future__ import annotations

import difflib
from dataclasses import replace
from datetime import tzinfo
from typing import Any, cast

import pyarrow as pa
from sqlglot import exp

from skipindex._types import Domain, domain_of, spark_type_name
from skipindex.column_paths import column_key, join_path, resolve_path, split_name
from skipindex.errors import InvalidPredicateError, UnknownColumnError
from skipindex.expressions.bound_elements import element_leaf
from skipindex.expressions.bound_leaves import compare_value, integer_members, member_values
from skipindex.expressions.calendar_merge import merge_calendar
from skipindex.expressions.calls import expression_key, is_expression_field
from skipindex.expressions.coercion import CastFailsError, MightMatchError, coerce
from skipindex.expressions.functions import rewrite
from skipindex.expressions.indexed import expression_text, unusable_because
from skipindex.expressions.nodes import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    AnyPredicate,
    BoundColumn,
    BoundComparison,
    BoundHasElement,
    BoundIn,
    BoundIsNull,
    BoundMatch,
    BoundPredicate,
    Call,
    ColumnName,
    Comparison,
    HasElement,
    In,
    IsNull,
    Like,
    LiteralKind,
    Match,
    Not,
    Op,
    Or,
    Predicate,
    Unsupported,
    children_of,
)
from skipindex.expressions.rewrite import join, rewrite_not, simplify
from skipindex.expressions.timezones import (
    current_zone,
    session_zone,
    zone_named,
)
from skipindex.expressions.visitors import fold

__all__ = ["bind", "prepare"]

_K = LiteralKind
_ORDERED = (Domain.INT, Domain.DECIMAL, Domain.DATE, Domain.TIMESTAMP, Domain.BOOLEAN)
_NODES = (
    AlwaysTrue,
    AlwaysFalse,
    Unsupported,
    Comparison,
    In,
    IsNull,
    Like,
    Match,
    HasElement,
    Not,
    And,
    Or,
    BoundComparison,
    BoundHasElement,
    BoundIn,
    BoundIsNull,
    BoundMatch,
)


def prepare(
    where: Any,
    schema: pa.Schema,
    *,
    case_sensitive: bool = False,
    time_zone: str | tzinfo | None = None,
) -> BoundPredicate:
    """Parse (SQL string or PySpark Column), normalise NOT, bind and simplify ``where``.

    Literals mean what they mean in a Spark session whose time zone is
    ``time_zone`` (default: the zone already in force, UTC unless set).
    """
    zone = zone_named(time_zone) if isinstance(time_zone, str) else time_zone
    with session_zone(zone or current_zone()):
        return bind(_parse(where), schema, case_sensitive=case_sensitive)


def _parse(where: Any) -> Predicate:
    if isinstance(where, str):
        from skipindex.expressions.sql import parse_sql

        return parse_sql(where)
    if isinstance(where, _NODES):
        return cast(Predicate, where)  # bound leaves pass through bind unchanged
    if hasattr(where, "_jc") or type(where).__module__.startswith("pyspark"):
        from skipindex.expressions.column import parse_column

        return parse_column(where)
    raise InvalidPredicateError(
        f"a predicate must be a SQL string or a PySpark Column, got {type(where).__name__}"
    )


def bind(pred: Predicate, schema: pa.Schema, *, case_sensitive: bool = False) -> BoundPredicate:
    """Resolve every column of ``pred`` in ``schema`` and cast its literals.

    ``pred`` should be in negation normal form (any NOT left is pushed down
    first). Columns match exactly, else by a unique case-insensitive match
    unless ``case_sensitive``. The result is simplified and holds no Not.
    """
    resolver = _Resolver(schema, case_sensitive)

    def visit(node: AnyPredicate, parts: list[AnyPredicate]) -> AnyPredicate:
        if isinstance(node, And | Or):
            return join(type(node), parts)
        try:
            return _bind_leaf(node, resolver)
        except CastFailsError as failing:
            if node is normal and isinstance(node, Comparison):
                raise  # the whole predicate: Spark raises on any row it reads
            # Spark may never evaluate the cast: `s = '' AND p = 'x'` stops at a FALSE
            # left side, `x IN (1, 'x')` may at an equal first item. Rows match: might match.
            return Unsupported(str(node), str(failing))

    normal: AnyPredicate = merge_calendar(rewrite_not(pred))
    return cast(BoundPredicate, simplify(fold(normal, children_of, visit)))


# --------------------------------------------------------------------------- columns


class _Resolver:
    def __init__(self, schema: pa.Schema, case_sensitive: bool) -> None:
        # Columns resolve among the table's columns; fields that hold an
        # expression's values (expression indexes) only by their exact key, and
        # only where this session's zone gives the values they hold.
        self.schema = pa.schema([f for f in schema if not is_expression_field(f)])
        self.case_sensitive = case_sensitive
        zone = current_zone()
        self.expressions: dict[str, BoundColumn] = {}
        self.unusable: dict[str, str] = {}
        for f in schema:
            if not is_expression_field(f):
                continue
            why = unusable_because(f, zone)
            if why is None:
                self.expressions[f.name] = BoundColumn(f.name, f.type, expression_text(f))
            else:
                self.unusable[f.name] = why

    def resolve(self, name: ColumnName) -> BoundColumn | None:
        """The column ``name`` denotes; None for a struct path that is not in the
        table (Spark's hidden ``_metadata`` fields, say): it might match."""
        path = (name,) if isinstance(name, str) else name
        try:
            found = resolve_path(self.schema, path, case_sensitive=self.case_sensitive)
        except LookupError as exc:
            raise InvalidPredicateError(f"column {exc}") from None
        if found is not None:
            spelled, field = found
            return BoundColumn(column_key(spelled), field.type)
        if isinstance(name, tuple) and len(name) > 1:
            return None
        raise UnknownColumnError(self._unknown(path[0]))

    def _unknown(self, name: str) -> str:
        names = self.schema.names
        by_lower = {n.lower(): n for n in names}
        close = difflib.get_close_matches(name.lower(), list(by_lower), n=3, cutoff=0.6)
        hint = ""
        if close:
            hint = " Did you mean " + " or ".join(f"'{by_lower[c]}'" for c in close) + "?"
            if self.case_sensitive and name.lower() in by_lower:
                hint += " (column names are case-sensitive here)"
        shown = ", ".join(names[:50]) + (f", ... ({len(names)} columns)" if len(names) > 50 else "")
        return f"unknown column '{name}' in the predicate.{hint} The table's columns are: {shown}"


# --------------------------------------------------------------------------- leaves


def _bind_leaf(
    leaf: AnyPredicate, resolver: _Resolver, resolved: BoundColumn | None = None
) -> AnyPredicate:
    """Bind one leaf; ``resolved``: the column it is on, already resolved (an
    expression index's field)."""
    subject = getattr(leaf, "column", None) if resolved is None else None
    if isinstance(leaf, Comparison | In | IsNull | Like | Match) and isinstance(subject, Call):
        return _bind_call(leaf, resolver)
    if isinstance(leaf, Like):
        return _like(leaf, resolver, resolved)
    if isinstance(leaf, Match):
        return _match(leaf, resolver, resolved)
    if isinstance(leaf, HasElement) and not isinstance(leaf.column, Call):
        column = resolved or resolver.resolve(leaf.column)
        if column is None:
            return Unsupported(str(leaf), f"{join_path(leaf.column)} is not a column of the table")
        return element_leaf(leaf, column)
    if not isinstance(leaf, (Comparison, In, IsNull)):
        return leaf  # constants, Unsupported, and leaves that are bound already
    assert not isinstance(leaf.column, Call)
    column = resolved or resolver.resolve(leaf.column)
    if column is None:
        return Unsupported(str(leaf), f"{join_path(leaf.column)} is not a column of the table")
    domain = domain_of(column.type)
    nulls = [lit.kind is _K.NULL for lit in (leaf.literals if isinstance(leaf, In) else ())]
    if isinstance(leaf, Comparison) and leaf.literal.kind is _K.NULL:
        return AlwaysFalse()  # `x op NULL` is NULL for every row
    if isinstance(leaf, In) and leaf.negated and any(nulls):
        return AlwaysFalse()  # `x NOT IN (.., NULL)` is never TRUE
    if isinstance(leaf, In) and not leaf.literals:  # Column.isin([]): FALSE even for NULL x
        return AlwaysTrue() if leaf.negated else AlwaysFalse()
    if domain is None:
        reason = f"column '{column.name}' of type {spark_type_name(column.type)} is not indexable"
        return Unsupported(str(leaf), reason)
    try:
        if isinstance(leaf, IsNull):
            return BoundIsNull(column, leaf.negated)
        if isinstance(leaf, Comparison):
            return compare_value(column, domain, leaf.op, coerce(column, domain, leaf.literal))
        listed = [lit for lit in leaf.literals if lit.kind is not _K.NULL]
        if domain is Domain.INT and all(lit.kind is _K.INT for lit in listed):
            ints = [cast(int, lit.value) for lit in listed]
            if (members := integer_members(column, ints, leaf.negated)) is not None:
                return members
        targets = [coerce(column, domain, lit) for lit in listed]
        return member_values(column, domain, targets, leaf.negated)
    except MightMatchError as reason:
        return Unsupported(str(leaf), str(reason))


def _bind_call(leaf: Comparison | In | IsNull | Like | Match, resolver: _Resolver) -> AnyPredicate:
    """A leaf on an expression of columns: answered by an expression index on
    the same expression (the schema holds it as a field named by its canonical
    text), else rewritten into a condition on its column where a rule of
    :mod:`skipindex.expressions.functions` applies, else might match."""
    call = leaf.column
    assert isinstance(call, Call)
    if isinstance(leaf, Comparison) and leaf.literal.kind is _K.NULL:
        return AlwaysFalse()
    if isinstance(leaf, In):
        if leaf.negated and any(lit.kind is _K.NULL for lit in leaf.literals):
            return AlwaysFalse()
        kept = tuple(lit for lit in leaf.literals if lit.kind is not _K.NULL)
        leaf = In(call, kept, leaf.negated)
        if not leaf.literals:
            return AlwaysFalse()
    spelled: dict[ColumnName, tuple[str, ...]] = {}
    for name in call.columns():
        try:
            column = resolver.resolve(name)
        except UnknownColumnError as exc:  # as before functions were read: Spark will say
            return Unsupported(str(leaf), str(exc))
        if column is None:
            return Unsupported(str(leaf), f"{join_path(name)} is not a column of the table")
        spelled[name] = split_name(column.name)
    key = expression_key(call.tree, spelled) if isinstance(call.tree, exp.Expression) else None
    if key is not None and key in resolver.expressions:
        # Under its exact key (not column_key(), which would quote it), shown as written.
        return _bind_leaf(replace(leaf, column=key), resolver, resolver.expressions[key])
    read = call.columns()
    if isinstance(leaf, Comparison | In) and call.name and len(set(read)) == 1:
        column = resolver.resolve(read[0])
        found = rewrite(leaf, column.type, current_zone()) if column is not None else None
        if found is not None:

            def visit(node: AnyPredicate, parts: list[AnyPredicate]) -> AnyPredicate:
                if isinstance(node, And | Or):
                    return join(type(node), parts)
                return _bind_leaf(node, resolver)

            return fold(cast(AnyPredicate, found), children_of, visit)
    if key is not None and key in resolver.unusable:
        return Unsupported(str(leaf), resolver.unusable[key])
    named = f" (an index on expr={call.sql!r} would answer it)" if key else ""
    return Unsupported(str(leaf), f"no index answers the expression {call.sql}{named}")


def _like(leaf: Like, resolver: _Resolver, resolved: BoundColumn | None = None) -> AnyPredicate:
    """On a string column, ``LIKE 'abc%'`` is ``'abc' <= x < 'abd'`` in code-point
    (UTF-8 byte) order, and ``LIKE 'abc'`` is ``x = 'abc'``. Spark casts any other
    column to a string first: might match."""
    assert not isinstance(leaf.column, Call)
    column = resolved or resolver.resolve(leaf.column)
    if column is None or domain_of(column.type) is not Domain.STRING:
        return Unsupported(str(leaf), "LIKE is answered on string columns only")
    op_low, op_high = (Op.LT, Op.GE) if leaf.negated else (Op.GE, Op.LT)
    if not leaf.prefix:
        return compare_value(column, Domain.STRING, Op.NE if leaf.negated else Op.EQ, leaf.text)
    low = compare_value(column, Domain.STRING, op_low, leaf.text)
    after = _successor(leaf.text)
    if after is None:  # nothing sorts after every string with this prefix
        return low
    high = compare_value(column, Domain.STRING, op_high, after)
    return join(Or if leaf.negated else And, [low, high])


def _match(leaf: Match, resolver: _Resolver, resolved: BoundColumn | None = None) -> AnyPredicate:
    """A pattern with wildcards inside, on a string column: a :class:`BoundMatch`
    (substring and equality bitmap indexes answer it) and, where it holds, the
    range of its prefix (which min-max answers). Only ``%``: every non-NULL value."""
    assert not isinstance(leaf.column, Call)
    column = resolved or resolver.resolve(leaf.column)
    if column is None or domain_of(column.type) is not Domain.STRING:
        return Unsupported(str(leaf), "LIKE is answered on string columns only")
    pattern = leaf.pattern
    if pattern.any_value:
        return AlwaysFalse() if leaf.negated else BoundIsNull(column, negated=True)
    bound = BoundMatch(column, pattern, leaf.negated, leaf.case_insensitive)
    if leaf.negated or not pattern.prefix or leaf.case_insensitive:
        # NULL never matches: min-max counts them (a folded prefix is no range)
        return join(And, [BoundIsNull(column, negated=True), bound])
    prefix = _like(Like(leaf.column, pattern.prefix, prefix=True), resolver, column)
    return join(And, [prefix, bound])


def _successor(text: str) -> str | None:
    """The least string above every string that starts with ``text`` (None: none)."""
    chars = list(text)
    while chars:
        code = ord(chars[-1]) + 1
        if code <= 0x10FFFF:
            chars[-1] = chr(0xE000 if 0xD800 <= code <= 0xDFFF else code)  # skip surrogates
            return "".join(chars)
        chars.pop()
    return None
