"""Spark's rules for turning a literal into another type, without Spark.

Used three ways: folding ``CAST(<literal> AS <type>)`` in SQL text and in
PySpark Columns, and (in binding) casting a string literal to the type of the
column it is compared with, which is what Spark does for ``date_col = '2020-01-01'``.

Two outcomes besides a value:

* :class:`InvalidCastError` -- Spark (ANSI mode, the default) would fail the query.
* :class:`UnrepresentableError` -- Spark accepts the input but skipindex does not
  replicate the result (a time without a date, a year beyond 9999, a zone name
  Python does not know...). Callers turn it into "might match", never a guess.

The string grammars follow Spark's ``Cast`` (trimmed input; dates accept any
suffix after the day; timestamps keep at most microseconds; doubles follow
Java's ``Double.parseDouble`` plus Spark's ``inf``/``nan`` spellings).
"""

from __future__ import annotations

import math
import re
from datetime import date, tzinfo
from decimal import ROUND_DOWN, ROUND_HALF_UP, Context, Decimal
from fractions import Fraction
from typing import TypeVar

from skipindex.expressions.calendar import days_from_civil
from skipindex.expressions.nodes import Literal, LiteralKind
from skipindex.expressions.timezones import (
    MICROS_PER_DAY,
    current_zone,
    instant_to_wall,
    wall_to_instant,
    zone_named,
)

__all__ = [
    "InvalidCastError",
    "UnrepresentableError",
    "cast_value",
    "days_from_civil",
    "days_since_epoch",
    "fraction_to_double",
    "round_float32",
    "str_to_bool",
    "str_to_date",
    "str_to_double",
    "str_to_int",
    "str_to_timestamp",
    "zone_of",
]

_EPOCH_DAY = date(1970, 1, 1)
_MICROS_RANGE = (-(2**63), 2**63 - 1)  # Spark's TIMESTAMP is a signed 64-bit count


class InvalidCastError(ValueError):
    """Spark would reject this cast (malformed input or overflow)."""


class UnrepresentableError(ValueError):
    """Spark accepts this input, but skipindex cannot reproduce its value exactly."""


_INT_BITS = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}
_TYPE = re.compile(r"\s*([A-Z_]+)\s*(?:\(\s*(\d+)\s*(?:,\s*(-?\d+)\s*)?\))?\s*", re.IGNORECASE)


def cast_value(lit: Literal, type_sql: str) -> Literal | None:
    """``CAST(lit AS type_sql)`` as Spark folds it; None when skipindex does not fold
    that combination (the comparison then becomes Unsupported)."""
    match = _TYPE.fullmatch(type_sql)
    if match is None:
        return None
    name = match.group(1).upper()
    if lit.kind is LiteralKind.NULL:
        return lit
    try:
        return _cast(lit, name, match.group(2), match.group(3))
    except UnrepresentableError:
        return None


def _cast(lit: Literal, name: str, precision: str | None, scale: str | None) -> Literal | None:
    kind, value = lit.kind, lit.value
    if name in ("DOUBLE", "FLOAT"):
        if kind is LiteralKind.STRING:
            exact = _str_to_number(str(value), float32=name == "FLOAT")
        elif kind in (LiteralKind.INT, LiteralKind.DECIMAL, LiteralKind.FLOAT):
            assert isinstance(value, (int, Decimal, float))
            finite = not isinstance(value, float) or math.isfinite(value)
            exact = Fraction(value) if finite else float(value)
        elif kind is LiteralKind.BOOLEAN:
            exact = Fraction(int(bool(value)))
        else:
            return None
        if isinstance(exact, float):
            return Literal(LiteralKind.FLOAT, exact)
        rounded = round_float32(exact) if name == "FLOAT" else fraction_to_double(exact)
        return Literal(LiteralKind.FLOAT, rounded)
    if name in _INT_BITS:
        number = _to_integer(lit)
        if number is None:
            return None
        bits = _INT_BITS[name]
        if not -(2 ** (bits - 1)) <= number < 2 ** (bits - 1):
            raise InvalidCastError(f"{number} overflows {name}")
        return Literal(LiteralKind.INT, number)
    if name == "DECIMAL":
        return _to_decimal(lit, int(precision or 10), int(scale or 0))
    if name == "DATE":
        if kind is LiteralKind.STRING:
            return Literal(LiteralKind.DATE, _required(str_to_date(str(value)), value, name))
        if kind in (LiteralKind.TIMESTAMP, LiteralKind.TIMESTAMP_NTZ):
            assert isinstance(value, int)
            wall = value if kind is LiteralKind.TIMESTAMP_NTZ else _wall(value, current_zone())
            return Literal(LiteralKind.DATE, wall // MICROS_PER_DAY)
        return lit if kind is LiteralKind.DATE else None
    if name in ("TIMESTAMP", "TIMESTAMP_LTZ", "TIMESTAMP_NTZ"):
        target = LiteralKind.TIMESTAMP_NTZ if name == "TIMESTAMP_NTZ" else LiteralKind.TIMESTAMP
        if kind is LiteralKind.STRING:
            stamp = str_to_timestamp(str(value), ignore_zone=name == "TIMESTAMP_NTZ")
            return Literal(target, _required(stamp, value, name))
        if kind in (LiteralKind.DATE, LiteralKind.TIMESTAMP_NTZ, LiteralKind.TIMESTAMP):
            assert isinstance(value, int)
            if kind is target:
                return lit
            wall = value * MICROS_PER_DAY if kind is LiteralKind.DATE else value
            if target is LiteralKind.TIMESTAMP_NTZ:  # from TIMESTAMP: its wall clock
                wall = wall if kind is LiteralKind.DATE else _wall(value, current_zone())
                return Literal(target, wall)
            return Literal(target, _instant(wall, current_zone()))
        return None
    if name == "BOOLEAN":
        if kind is LiteralKind.STRING:
            return Literal(LiteralKind.BOOLEAN, _required(str_to_bool(str(value)), value, name))
        if kind is LiteralKind.INT:
            return Literal(LiteralKind.BOOLEAN, value != 0)
        return lit if kind is LiteralKind.BOOLEAN else None
    if name == "BINARY":
        if kind is LiteralKind.STRING:
            return Literal(LiteralKind.BINARY, str(value).encode("utf-8", "surrogatepass"))
        return lit if kind is LiteralKind.BINARY else None
    return None  # STRING targets lose VARCHAR(n) lengths in sqlglot: not folded


_V = TypeVar("_V")
_WIDE = Context(prec=200)  # decimal256 has 76 digits: never round while rescaling


def _required(value: _V | None, text: object, name: str) -> _V:
    if value is None:
        raise InvalidCastError(f"'{text}' is not a valid {name}")
    return value


def _to_integer(lit: Literal) -> int | None:
    value = lit.value
    if lit.kind is LiteralKind.INT:
        return int(value)  # type: ignore[arg-type]
    if lit.kind is LiteralKind.DECIMAL:
        assert isinstance(value, Decimal)
        return int(value.to_integral_value(rounding=ROUND_DOWN))  # Spark truncates
    if lit.kind is LiteralKind.FLOAT:
        assert isinstance(value, float)
        if not math.isfinite(value):
            raise InvalidCastError(f"{value} cannot be cast to an integer")
        return math.trunc(value)
    if lit.kind is LiteralKind.STRING:
        number = str_to_int(str(value))
        if number is None:
            raise InvalidCastError(f"{lit} is not a valid integer")
        return number
    if lit.kind is LiteralKind.BOOLEAN:
        return int(bool(value))
    return None


def _to_decimal(lit: Literal, precision: int, scale: int) -> Literal | None:
    value = lit.value
    if lit.kind is LiteralKind.INT:
        number = Decimal(int(value))  # type: ignore[arg-type]
    elif lit.kind is LiteralKind.DECIMAL:
        assert isinstance(value, Decimal)
        number = value
    elif lit.kind is LiteralKind.STRING:
        text = str(value).strip()
        if not _DECIMAL.fullmatch(text):
            raise InvalidCastError(f"{lit} is not a valid DECIMAL")
        number = Decimal(text)
    else:
        return None  # double -> decimal goes through Java's Double.toString: not replicated
    quantized = number.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP, context=_WIDE)
    if quantized.adjusted() >= precision - scale and quantized != 0:
        raise InvalidCastError(f"{number} overflows DECIMAL({precision}, {scale})")
    return Literal(LiteralKind.DECIMAL, quantized)


# --------------------------------------------------------------------------- strings

_INTEGER = re.compile(r"[+-]?\d+")
_DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_JAVA_DOUBLE = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)[fFdD]?")
_JAVA_SPECIAL = re.compile(r"([+-]?)(NaN|Infinity)[fFdD]?")
_JAVA_HEX = re.compile(
    r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?\d+[fFdD]?"
)
_SPARK_SPECIAL = {
    "inf": math.inf,
    "+inf": math.inf,
    "infinity": math.inf,
    "+infinity": math.inf,
    "-inf": -math.inf,
    "-infinity": -math.inf,
    "nan": math.nan,
}
_TRUE = frozenset({"t", "true", "y", "yes", "1"})
_FALSE = frozenset({"f", "false", "n", "no", "0"})


def str_to_int(text: str) -> int | None:
    """Spark's string -> BIGINT (ANSI): optional sign and digits only."""
    text = text.strip()
    return int(text) if _INTEGER.fullmatch(text) else None


def str_to_bool(text: str) -> bool | None:
    text = text.strip().lower()
    return True if text in _TRUE else False if text in _FALSE else None


def str_to_double(text: str) -> float | None:
    """Spark's string -> DOUBLE; None when Spark would reject the string."""
    try:
        value = _str_to_number(text, float32=False)
    except InvalidCastError:
        return None
    return value if isinstance(value, float) else fraction_to_double(value)


def _str_to_number(text: str, *, float32: bool) -> Fraction | float:
    """The exact value a numeric string denotes (a float only for NaN and infinities)."""
    text = text.strip()
    if match := _JAVA_DOUBLE.fullmatch(text):
        return Fraction(Decimal(match.group(1)))
    if match := _JAVA_SPECIAL.fullmatch(text):
        if match.group(2) == "NaN":
            return math.nan
        return -math.inf if match.group(1) == "-" else math.inf
    if _JAVA_HEX.fullmatch(text):
        if float32:
            raise UnrepresentableError("hexadecimal FLOAT literal")
        try:
            return float.fromhex(text.rstrip("fFdD"))
        except OverflowError as exc:
            raise UnrepresentableError(f"'{text}' overflows a DOUBLE") from exc
    special = _SPARK_SPECIAL.get(text.lower())
    if special is None:
        raise InvalidCastError(f"'{text}' is not a valid number")
    return special


def str_to_date(text: str) -> int | None:
    """Spark's string -> DATE, as days since 1970-01-01:
    ``[+-]yyyy[-m[m][-d[d][( |T)anything]]]``."""
    match = _DATE.fullmatch(text.strip())
    if match is None:
        return None
    sign, year, month, day = match.group(1, 2, 3, 4)
    return _days(sign, year, month, day)


def str_to_timestamp(text: str, *, ignore_zone: bool = False) -> int | None:
    """Spark's string -> TIMESTAMP as microseconds since the epoch (an instant).

    Without a zone in the text the wall time is read in the session zone
    (:func:`~skipindex.expressions.timezones.current_zone`); with one (``Z``,
    ``+02:00``, ``UTC+2``, ``Europe/Paris``) in that zone. ``ignore_zone`` is
    TIMESTAMP_NTZ's rule: the wall time itself, any zone ignored.
    """
    text = text.strip()
    match = _TIMESTAMP.fullmatch(text)
    if match is None:
        if _TIME_ONLY.fullmatch(text):
            raise UnrepresentableError(f"'{text}' is a time on the current date")
        return None
    sign, year, month, day, hour, minute, second, fraction, zone = match.groups()
    days = _days(sign, year, month, day)
    if days is None:
        return None
    hours, minutes, seconds = int(hour or 0), int(minute or 0), int(second or 0)
    if hours > 23 or minutes > 59 or seconds > 59:
        return None
    micros = int((fraction or "")[:6].ljust(6, "0"))
    wall = days * MICROS_PER_DAY + ((hours * 60 + minutes) * 60 + seconds) * 10**6 + micros
    stamp = wall if ignore_zone else _instant(wall, _zone(zone) if zone else current_zone())
    return stamp if _MICROS_RANGE[0] <= stamp <= _MICROS_RANGE[1] else None


def zone_of(text: str) -> str | None:
    """The zone a timestamp string names, if any (``Z``, ``+02:00``, ``Europe/Paris``)."""
    match = _TIMESTAMP.fullmatch(text.strip())
    return match.group(9) if match else None


def _instant(wall: int, zone: tzinfo) -> int:
    try:
        return wall_to_instant(wall, zone)
    except OverflowError:
        raise UnrepresentableError("a wall time beyond 1..9999 in a zone with rules") from None


def _wall(instant: int, zone: tzinfo) -> int:
    try:
        return instant_to_wall(instant, zone)
    except OverflowError:
        raise UnrepresentableError("an instant beyond years 1..9999 in a zone with rules") from None


_DATE = re.compile(r"([+-]?)(\d{4,7})(?:-(\d{1,2})(?:-(\d{1,2})(?:[ T].*)?)?)?", re.DOTALL)
_TIMESTAMP = re.compile(
    r"([+-]?)(\d{4,7})(?:-(\d{1,2})(?:-(\d{1,2})"
    r"(?:[ T](\d{1,2})(?::(\d{1,2})(?::(\d{1,2})(?:\.(\d*))?)?)?"
    r"\s*(Z|[+-][\d:]+|(?:UTC|GMT|UT)(?:[+-][\d:]+)?|[A-Za-z][\w/+\-]*)?)?)?)?",
    re.IGNORECASE,
)
_TIME_ONLY = re.compile(r"T?\d{1,2}:\d{1,2}(:\d{1,2}(\.\d*)?)?.*")


def _days(sign: str, year: str, month: str | None, day: str | None) -> int | None:
    number = -int(year) if sign == "-" else int(year)
    month_number, day_number = int(month or 1), int(day or 1)
    if not 1 <= month_number <= 12 or not 1 <= day_number <= _month_length(number, month_number):
        return None
    days = days_from_civil(number, month_number, day_number)
    return days if -(2**31) <= days < 2**31 else None


def _month_length(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _zone(text: str) -> tzinfo:
    try:
        return zone_named("UTC" if text.upper() == "Z" else text)
    except ValueError as exc:  # unknown to Python; Java may know it
        raise UnrepresentableError(f"time zone {text!r}") from exc


# --------------------------------------------------------------------------- numbers


def round_float32(value: Fraction) -> float:
    """The float32 nearest to ``value`` (ties to even), as a Python float.

    Exact: rounding through a double first could round twice.
    """
    if value == 0:
        return 0.0
    magnitude = abs(value)
    exponent = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    if Fraction(2) ** exponent > magnitude:
        exponent -= 1  # now 2**exponent <= magnitude < 2**(exponent + 1)
    quantum = Fraction(2) ** (max(exponent, -126) - 23)
    rounded = round(magnitude / quantum) * quantum
    result = math.inf if rounded >= 2**128 else float(rounded)
    return -result if value < 0 else result


def fraction_to_double(value: Fraction) -> float:
    """Correctly rounded, overflowing to an infinity like Java's parseDouble."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def days_since_epoch(day: date) -> int:
    return (day - _EPOCH_DAY).days
