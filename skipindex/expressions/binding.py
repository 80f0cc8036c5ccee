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
import math
from datetime import tzinfo
from decimal import Decimal
from fractions import Fraction
from typing import Any, cast

import pyarrow as pa
import pyarrow.types as pat

from skipindex._types import Domain, domain_of, sort_values
from skipindex.column_paths import column_key, join_path, resolve_path
from skipindex.errors import InvalidPredicateError, UnknownColumnError, UnsupportedTypeError
from skipindex.expressions.casts import (
    UnrepresentableError,
    round_float32,
    str_to_bool,
    str_to_date,
    str_to_double,
    str_to_int,
    str_to_timestamp,
    zone_of,
)
from skipindex.expressions.nodes import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BoundColumn,
    BoundComparison,
    BoundIn,
    BoundIsNull,
    BoundPredicate,
    BoundValue,
    ColumnName,
    Comparison,
    In,
    IsNull,
    Like,
    Literal,
    LiteralKind,
    Not,
    Op,
    Or,
    Predicate,
    Unsupported,
)
from skipindex.expressions.rewrite import AnyPredicate, join, rewrite_not, simplify
from skipindex.expressions.timezones import (
    MICROS_PER_DAY,
    current_zone,
    first_at_least,
    fixed_offset_micros,
    session_zone,
    wall_to_instant,
    zone_named,
)

__all__ = ["bind", "prepare"]

_K = LiteralKind
_ORDERED = (Domain.INT, Domain.DECIMAL, Domain.DATE, Domain.TIMESTAMP, Domain.BOOLEAN)
_TICKS_PER_SECOND = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}
_Target = Fraction | float | str | bytes
_TEMPORAL = (_K.DATE, _K.TIMESTAMP, _K.TIMESTAMP_NTZ, _K.STRING)
_NODES = (
    AlwaysTrue,
    AlwaysFalse,
    Unsupported,
    Comparison,
    In,
    IsNull,
    Like,
    Not,
    And,
    Or,
    BoundComparison,
    BoundIn,
    BoundIsNull,
)


class _MightMatchError(Exception):
    """This leaf cannot be bound exactly: it becomes Unsupported with this reason."""


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
    values: list[AnyPredicate] = []
    work: list[tuple[AnyPredicate, bool]] = [(rewrite_not(pred), False)]
    while work:
        item, done = work.pop()
        if isinstance(item, (And, Or)):
            if done:
                start = len(values) - len(item.children)
                children = values[start:]
                del values[start:]
                values.append(join(type(item), children))
            else:
                work.append((item, True))
                work.extend((child, False) for child in reversed(item.children))
        else:
            values.append(_bind_leaf(item, resolver))
    return cast(BoundPredicate, simplify(values[0]))


# --------------------------------------------------------------------------- columns


class _Resolver:
    def __init__(self, schema: pa.Schema, case_sensitive: bool) -> None:
        self.schema = schema
        self.case_sensitive = case_sensitive

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


def _bind_leaf(leaf: AnyPredicate, resolver: _Resolver) -> AnyPredicate:
    if isinstance(leaf, Like):
        return _like(leaf, resolver)
    if not isinstance(leaf, (Comparison, In, IsNull)):
        return leaf  # constants, Unsupported, and leaves that are bound already
    column = resolver.resolve(leaf.column)
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
        reason = f"column '{column.name}' of type {column.type} is not indexable"
        return Unsupported(str(leaf), reason)
    try:
        if isinstance(leaf, IsNull):
            return BoundIsNull(column, leaf.negated)
        if isinstance(leaf, Comparison):
            return _compare(column, domain, leaf.op, _coerce(column, domain, leaf.literal))
        targets = [_coerce(column, domain, lit) for lit in leaf.literals if lit.kind is not _K.NULL]
        return _member(column, domain, targets, leaf.negated)
    except _MightMatchError as reason:
        return Unsupported(str(leaf), str(reason))


def _like(leaf: Like, resolver: _Resolver) -> AnyPredicate:
    """On a string column, ``LIKE 'abc%'`` is ``'abc' <= x < 'abd'`` in code-point
    (UTF-8 byte) order, and ``LIKE 'abc'`` is ``x = 'abc'``. Spark casts any other
    column to a string first: might match."""
    column = resolver.resolve(leaf.column)
    if column is None or domain_of(column.type) is not Domain.STRING:
        return Unsupported(str(leaf), "LIKE is answered on string columns only")
    op_low, op_high = (Op.LT, Op.GE) if leaf.negated else (Op.GE, Op.LT)
    if not leaf.prefix:
        return _compare(column, Domain.STRING, Op.NE if leaf.negated else Op.EQ, leaf.text)
    low = _compare(column, Domain.STRING, op_low, leaf.text)
    after = _successor(leaf.text)
    if after is None:  # nothing sorts after every string with this prefix
        return low
    high = _compare(column, Domain.STRING, op_high, after)
    return join(Or if leaf.negated else And, [low, high])


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


def _compare(column: BoundColumn, domain: Domain, op: Op, target: _Target) -> AnyPredicate:
    if isinstance(target, Fraction):
        return _ordered(column, domain, op, target)
    if isinstance(target, float):
        return _floating(column, op, target)
    if op is Op.LT and not target:  # nothing sorts below '' (or b'')
        return AlwaysFalse()
    if op is Op.GE and not target:
        return BoundIsNull(column, negated=True)
    return BoundComparison(column, op, target)


def _ordered(column: BoundColumn, domain: Domain, op: Op, ticks: Fraction) -> AnyPredicate:
    """``column op ticks`` over a column of integers in [lo, hi]: round, then clamp."""
    lo, hi = _bounds(column.type, domain)
    if domain is Domain.BOOLEAN:  # two values: say which one matches
        matching = [v for v in (0, 1) if _holds(Fraction(v), op, ticks)]
        if len(matching) != 1:
            return BoundIsNull(column, negated=True) if matching else AlwaysFalse()
        return BoundComparison(column, Op.EQ, bool(matching[0]))
    if ticks.denominator != 1:  # no column value equals it; ranges round inwards
        if op in (Op.EQ, Op.NE):
            return AlwaysFalse() if op is Op.EQ else BoundIsNull(column, negated=True)
        if op in (Op.GT, Op.GE):
            op, value = Op.GE, math.ceil(ticks)
        else:
            op, value = Op.LE, math.floor(ticks)
    else:
        value = int(ticks)
    everything = BoundIsNull(column, negated=True)
    if op in (Op.EQ, Op.NE) and not lo <= value <= hi:
        return AlwaysFalse() if op is Op.EQ else everything
    if op in (Op.GT, Op.GE):
        if value > hi or (op is Op.GT and value == hi):
            return AlwaysFalse()
        if value < lo or (op is Op.GE and value == lo):
            return everything
    if op in (Op.LT, Op.LE):
        if value < lo or (op is Op.LT and value == lo):
            return AlwaysFalse()
        if value > hi or (op is Op.LE and value == hi):
            return everything
    return BoundComparison(column, op, _value(column.type, domain, value))


def _normal_float(value: float) -> float:
    """-0.0 -> 0.0 and every NaN -> one NaN object (so that sets merge them)."""
    return math.nan if math.isnan(value) else 0.0 if value == 0 else value


def _floating(column: BoundColumn, op: Op, value: float) -> AnyPredicate:
    """Spark's float order: -inf < ... < +inf < NaN, and NaN = NaN."""
    value = _normal_float(value)
    if math.isnan(value):
        reduced: dict[Op, AnyPredicate] = {
            Op.GT: AlwaysFalse(),
            Op.LE: BoundIsNull(column, negated=True),
            Op.GE: BoundComparison(column, Op.EQ, math.nan),
            Op.LT: BoundComparison(column, Op.NE, math.nan),
        }
        return reduced.get(op, BoundComparison(column, op, math.nan))
    if value == -math.inf and op in (Op.LT, Op.GE):
        return AlwaysFalse() if op is Op.LT else BoundIsNull(column, negated=True)
    return BoundComparison(column, op, value)


def _member(
    column: BoundColumn, domain: Domain, targets: list[_Target], negated: bool
) -> AnyPredicate:
    """``column [NOT] IN targets``: values no row can hold are dropped, duplicates merged."""
    kept: list[_Target] = []  # in the same form as targets: ticks, doubles, str, bytes
    if domain in _ORDERED:
        lo, hi = _bounds(column.type, domain)
        ticks = {int(t) for t in targets if isinstance(t, Fraction) and t.denominator == 1}
        kept = [Fraction(t) for t in sorted(ticks) if lo <= t <= hi]
    else:
        nan_seen = any(isinstance(t, float) and math.isnan(t) for t in targets)
        distinct = {_normal_float(t) if isinstance(t, float) else t for t in targets}
        distinct = {t for t in distinct if not (isinstance(t, float) and math.isnan(t))}
        kept = sort_values(list(distinct)) + ([math.nan] if nan_seen else [])
    everything = BoundIsNull(column, negated=True)
    if not kept:
        return everything if negated else AlwaysFalse()
    if domain is Domain.BOOLEAN and len(kept) == 2:
        return AlwaysFalse() if negated else everything
    if len(kept) == 1:
        return _compare(column, domain, Op.NE if negated else Op.EQ, kept[0])
    values: tuple[BoundValue, ...] = tuple(
        _value(column.type, domain, int(t)) if isinstance(t, Fraction) else t for t in kept
    )
    return BoundIn(column, values, negated)


def _holds(left: Fraction, op: Op, right: Fraction) -> bool:
    return {
        Op.EQ: left == right,
        Op.NE: left != right,
        Op.LT: left < right,
        Op.LE: left <= right,
        Op.GT: left > right,
        Op.GE: left >= right,
    }[op]


def _bounds(arrow_type: pa.DataType, domain: Domain) -> tuple[int, int]:
    """The smallest and largest value the column can hold, in its integer ticks."""
    if domain is Domain.INT:
        bits = arrow_type.bit_width
        if pat.is_signed_integer(arrow_type):
            return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        return 0, 2**bits - 1
    if domain is Domain.DECIMAL:
        return -(10**arrow_type.precision - 1), 10**arrow_type.precision - 1
    if domain is Domain.DATE:
        return -(2**31), 2**31 - 1
    if domain is Domain.BOOLEAN:
        return 0, 1
    return -(2**63), 2**63 - 1


def _value(arrow_type: pa.DataType, domain: Domain, ticks: int) -> BoundValue:
    if domain is Domain.DECIMAL:
        return Decimal(f"{ticks}E{-arrow_type.scale}")  # exact: at the column's scale
    if domain is Domain.BOOLEAN:
        return bool(ticks)
    return ticks


# --------------------------------------------------------------------------- literals


def _coerce(column: BoundColumn, domain: Domain, lit: Literal) -> _Target:
    """``lit`` in the column's domain: exact ticks (Fraction) for integer-like domains."""
    kind, value, arrow_type = lit.kind, lit.value, column.type
    if domain is Domain.STRING:
        if kind is _K.STRING:
            return str(value)
        if kind is _K.BINARY:
            assert isinstance(value, bytes)
            return _decoded(value)
        raise _MightMatchError(f"Spark casts the string column to {kind.value.upper()} here")
    if domain is Domain.BINARY and kind in (_K.BINARY, _K.STRING):
        return value if isinstance(value, bytes) else _encoded(str(value))
    if domain is Domain.FLOAT:
        return _double(column, lit)
    if domain is Domain.BOOLEAN and kind in (_K.BOOLEAN, _K.STRING):
        flag = value if kind is _K.BOOLEAN else str_to_bool(str(value))
        return Fraction(int(_cast_ok(column, lit, flag)))
    if domain in (Domain.INT, Domain.DECIMAL):
        scale = int(arrow_type.scale) if domain is Domain.DECIMAL else 0
        if kind is _K.INT and scale >= 0:  # the common case, kept cheap for long IN lists
            assert isinstance(value, int)
            return Fraction(value * 10**scale)
        if kind in (_K.INT, _K.DECIMAL):
            assert isinstance(value, (int, Decimal))
            return Fraction(value) * Fraction(10) ** scale
        if domain is Domain.INT and kind is _K.STRING:  # Spark casts the string to BIGINT
            number = _cast_ok(column, lit, str_to_int(str(value)))
            return Fraction(_cast_ok(column, lit, number if -(2**63) <= number < 2**63 else None))
        if kind is _K.STRING:  # decimal vs string: Spark compares as DOUBLE
            return _approximate(column, domain, _cast_ok(column, lit, str_to_double(str(value))))
        if kind is _K.FLOAT:
            assert isinstance(value, float)
            return _approximate(column, domain, value)
    if domain in (Domain.DATE, Domain.TIMESTAMP) and kind in _TEMPORAL:
        return _temporal(column, domain, lit)
    raise UnsupportedTypeError(
        f"cannot compare column '{column.name}' of type {arrow_type} with the "
        f"{kind.value.upper()} literal {lit}: Spark SQL rejects this comparison; "
        f"write a literal of the column's type"
    )


def _double(column: BoundColumn, lit: Literal) -> float:
    """The double Spark compares a float column with (float32 columns widen to double)."""
    kind, value = lit.kind, lit.value
    narrow = not pat.is_float64(column.type)
    if kind is _K.FLOAT:
        assert isinstance(value, float)
        return value
    if kind is _K.DECIMAL:
        return float(cast(Decimal, value))  # correctly rounded, as Spark's Decimal.toDouble
    if kind in (_K.INT, _K.STRING):
        if kind is _K.INT:
            exact: Fraction | float = Fraction(cast(int, value))
        else:
            exact = _cast_ok(column, lit, str_to_double(str(value)))
        double = float(exact)
        # ANSI Spark compares these in double, legacy Spark in float: agree or give up.
        if narrow and math.isfinite(double) and round_float32(Fraction(double)) != double:
            raise _MightMatchError("ANSI and legacy Spark compare it with FLOAT differently")
        return double
    raise UnsupportedTypeError(
        f"cannot compare column '{column.name}' of type {column.type} with the "
        f"{kind.value.upper()} literal {lit}: Spark SQL rejects this comparison"
    )


def _approximate(column: BoundColumn, domain: Domain, value: float) -> Fraction:
    """A double against an integer or decimal column, which Spark widens to double.

    Exact when that widening is lossless for the values involved: integers of at
    most 32 bits, any integer against a double below 2**53, decimals of at most 15
    digits against a double whose shortest form has at most 15 digits (two such
    decimals never round to the same double). NaN and the infinities lie beyond
    every value.
    """
    lo, hi = _bounds(column.type, domain)
    if math.isnan(value) or value == math.inf:
        return Fraction(hi + 1)
    if value == -math.inf:
        return Fraction(lo - 1)
    if domain is Domain.INT:
        # Widening to double is monotone, exact up to 2**53 and never exceeds hi + 1.
        bits: int = column.type.bit_width
        if bits <= 32 or abs(value) < 2**53 or not lo <= value <= hi + 1:
            return Fraction(value)
        raise _MightMatchError("Spark compares a 64-bit integer with a DOUBLE after rounding it")
    shortest = Decimal(repr(value))
    precision: int = column.type.precision
    if precision <= 15 and len(shortest.normalize().as_tuple().digits) <= 15:
        return Fraction(shortest) * Fraction(10) ** int(column.type.scale)
    raise _MightMatchError("Spark compares this DECIMAL column with a DOUBLE after rounding it")


def _temporal(column: BoundColumn, domain: Domain, lit: Literal) -> Fraction:
    """A date, timestamp or string literal in the ticks of a DATE or TIMESTAMP column.

    Spark compares a DATE with a TIMESTAMP as timestamps (the date at midnight in
    the session zone), and a TIMESTAMP_NTZ with a TIMESTAMP as instants (the wall
    time read in the session zone). Those casts are monotone, so the comparison
    becomes one on the column's own values (see :func:`_through_cast`).
    """
    kind, value = lit.kind, lit.value
    zone = current_zone()
    if domain is Domain.DATE:
        if kind is _K.STRING:
            return Fraction(_cast_ok(column, lit, _parsed(str_to_date, value)))
        assert isinstance(value, int)
        if kind is _K.DATE:
            return Fraction(value)
        if kind is _K.TIMESTAMP_NTZ:
            return Fraction(value, MICROS_PER_DAY)
        offset = fixed_offset_micros(zone)
        if offset is not None:
            return Fraction(value + offset, MICROS_PER_DAY)
        guess = value // MICROS_PER_DAY
        return _through_cast(lambda day: _instant(day * MICROS_PER_DAY), value, guess, 2)
    with_zone = column.type.tz is not None
    if kind is _K.STRING:
        micros = Fraction(_string_micros(column, lit))
    else:
        assert isinstance(value, int)
        if kind is _K.DATE:
            wall = value * MICROS_PER_DAY
            micros = Fraction(_instant(wall) if with_zone else wall)
        elif kind is _K.TIMESTAMP_NTZ:
            micros = Fraction(_instant(value) if with_zone else value)
        elif with_zone:
            micros = Fraction(value)
        else:  # a TIMESTAMP_NTZ column read as instants in the session zone
            offset = fixed_offset_micros(zone)
            if offset is not None:
                micros = Fraction(value + offset)
            else:
                micros = _through_cast(_instant, value, value, 2 * MICROS_PER_DAY)
    return micros * _TICKS_PER_SECOND[column.type.unit] / 10**6


def _through_cast(cast_up: Any, target: int, guess: int, window: int) -> Fraction:
    """The point ``x`` with ``v op x`` <=> ``cast_up(v) op target`` for every column
    value ``v``, given a non-decreasing ``cast_up``: the value whose cast equals the
    target, else half-way between the two values the target falls between."""
    low, high = guess - window, guess + window
    first = first_at_least(cast_up, target, low, high)
    after = first_at_least(cast_up, target + 1, low, high)
    if first in (low, high + 1) or after in (low, high + 1):
        raise _MightMatchError("the session time zone's offset is beyond what skipindex models")
    if after - first > 1:  # two wall times (a daylight-saving gap) cast to this instant
        raise _MightMatchError("a daylight-saving change maps two wall times to this instant")
    return Fraction(first) if after == first + 1 else Fraction(2 * first - 1, 2)


def _instant(wall: int) -> int:
    try:
        return wall_to_instant(wall, current_zone())
    except OverflowError:
        raise _MightMatchError("a time beyond years 1..9999 in a zone with rules") from None


def _string_micros(column: BoundColumn, lit: Literal) -> int:
    """A string compared with a timestamp column: an instant for a TIMESTAMP column;
    for a zone-less (TIMESTAMP_NTZ) column the wall time, unless the string names a
    zone (unsure what Spark makes of it then: might match)."""
    text = str(lit.value)
    if column.type.tz is not None:
        return int(_cast_ok(column, lit, _parsed(str_to_timestamp, text)))
    wall = int(
        _cast_ok(column, lit, _parsed(lambda t: str_to_timestamp(t, ignore_zone=True), text))
    )
    if zone_of(text) is not None and _instant(wall) != _parsed(str_to_timestamp, text):
        # Spark may read the string as that zone's instant, or ignore the zone.
        raise _MightMatchError("the string's time zone is ignored by a TIMESTAMP_NTZ column")
    return wall


def _parsed(parse: Any, text: object) -> Any:
    try:
        return parse(str(text))
    except UnrepresentableError as exc:
        reason = f"skipindex does not replicate Spark's cast of {text!r}: {exc}"
        raise _MightMatchError(reason) from None


def _cast_ok(column: BoundColumn, lit: Literal, value: Any) -> Any:
    if value is None:
        raise UnsupportedTypeError(
            f"cannot compare column '{column.name}' of type {column.type} with {lit}: "
            f"Spark SQL casts the string to the column's type and that cast fails"
        )
    return value


def _decoded(value: bytes) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise _MightMatchError("the binary literal is not UTF-8 text") from None


def _encoded(value: str) -> bytes:
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        raise _MightMatchError("the string literal holds a lone surrogate") from None
