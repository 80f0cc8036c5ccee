"""Spark's casts of a literal to the type of the column it is compared with.

:func:`coerce` turns a literal into a *target* in the column's domain: exact
ticks (a ``Fraction``) for integer-like domains (ints, decimals at the column's
scale, date days, timestamp ticks of the column's unit, booleans), a double for
floating columns, ``str``/``bytes`` for strings and binaries. Where Spark's cast
is not replicated exactly it raises :class:`MightMatchError` (the leaf becomes
"might match"); where Spark itself rejects the comparison,
:class:`~skipindex.errors.UnsupportedTypeError`. Temporal literals are read in
the session zone (:mod:`skipindex.expressions.timezones`).
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Any, cast

import pyarrow as pa
import pyarrow.types as pat

from skipindex._types import Domain, spark_type_name
from skipindex.errors import UnsupportedTypeError
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
from skipindex.expressions.nodes import BoundColumn, Literal, LiteralKind
from skipindex.expressions.timezones import (
    MICROS_PER_DAY,
    current_zone,
    first_at_least,
    fixed_offset_micros,
    wall_to_instant,
)

__all__ = ["CastFailsError", "MightMatchError", "Target", "bounds", "coerce"]

_K = LiteralKind
_TICKS_PER_SECOND = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}
_TEMPORAL = (_K.DATE, _K.TIMESTAMP, _K.TIMESTAMP_NTZ, _K.STRING)
Target = Fraction | float | str | bytes


class MightMatchError(Exception):
    """This leaf cannot be bound exactly: it becomes Unsupported with this reason."""


class CastFailsError(UnsupportedTypeError):
    """A string Spark's cast to the column's type cannot read. Spark raises only
    when it evaluates the comparison on a row, which AND and OR may never do."""


def bounds(arrow_type: pa.DataType, domain: Domain) -> tuple[int, int]:
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


def coerce(column: BoundColumn, domain: Domain, lit: Literal) -> Target:
    """``lit`` in the column's domain: exact ticks (Fraction) for integer-like domains."""
    kind, value, arrow_type = lit.kind, lit.value, column.type
    if domain is Domain.STRING:
        if kind is _K.STRING:
            return str(value)
        if kind is _K.BINARY:
            assert isinstance(value, bytes)
            return _decoded(value)
        raise MightMatchError(f"Spark casts the string column to {kind.value.upper()} here")
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
        f"cannot compare column '{column.name}' of type {spark_type_name(arrow_type)} with the "
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
            raise MightMatchError("ANSI and legacy Spark compare it with FLOAT differently")
        return double
    raise UnsupportedTypeError(
        f"cannot compare column '{column.name}' of type {spark_type_name(column.type)} with the "
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
    lo, hi = bounds(column.type, domain)
    if math.isnan(value) or value == math.inf:
        return Fraction(hi + 1)
    if value == -math.inf:
        return Fraction(lo - 1)
    if domain is Domain.INT:
        # Widening to double is monotone, exact up to 2**53 and never exceeds hi + 1.
        bits: int = column.type.bit_width
        if bits <= 32 or abs(value) < 2**53 or not lo <= value <= hi + 1:
            return Fraction(value)
        raise MightMatchError("Spark compares a 64-bit integer with a DOUBLE after rounding it")
    shortest = Decimal(repr(value))
    precision: int = column.type.precision
    if precision <= 15 and len(shortest.normalize().as_tuple().digits) <= 15:
        return Fraction(shortest) * Fraction(10) ** int(column.type.scale)
    raise MightMatchError("Spark compares this DECIMAL column with a DOUBLE after rounding it")


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
        raise MightMatchError("the session time zone's offset is beyond what skipindex models")
    if after - first > 1:  # two wall times (a daylight-saving gap) cast to this instant
        raise MightMatchError("a daylight-saving change maps two wall times to this instant")
    return Fraction(first) if after == first + 1 else Fraction(2 * first - 1, 2)


def _instant(wall: int) -> int:
    try:
        return wall_to_instant(wall, current_zone())
    except OverflowError:
        raise MightMatchError("a time beyond years 1..9999 in a zone with rules") from None


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
        raise MightMatchError("the string's time zone is ignored by a TIMESTAMP_NTZ column")
    return wall


def _parsed(parse: Any, text: object) -> Any:
    try:
        return parse(str(text))
    except UnrepresentableError as exc:
        reason = f"skipindex does not replicate Spark's cast of {text!r}: {exc}"
        raise MightMatchError(reason) from None


def _cast_ok(column: BoundColumn, lit: Literal, value: Any) -> Any:
    if value is None:
        raise CastFailsError(
            f"cannot compare column '{column.name}' of type {spark_type_name(column.type)} "
            f"with {lit}: Spark SQL casts the string to the column's type and that cast fails"
        )
    return value


def _decoded(value: bytes) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise MightMatchError("the binary literal is not UTF-8 text") from None


def _encoded(value: str) -> bytes:
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        raise MightMatchError("the string literal holds a lone surrogate") from None
