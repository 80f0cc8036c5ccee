"""``x + c``, ``x - c``, ``c - x``, ``x * c`` and ``CAST(x AS <wider type>)``
compared with a literal, as conditions on ``x`` (see :mod:`.functions`).

Spark computes ``x + c`` in the wider of the two types: integers can overflow,
which under ANSI mode fails the query and otherwise wraps around, so a wrapped
value may satisfy the comparison from the other end. The rewritten condition
therefore also keeps the rows where the result may overflow (``x`` within
``c`` of the type's end): a superset, exact everywhere else. Decimals are exact
while the result's precision stays within 38 digits (beyond, Spark rounds: no
rewrite). Doubles round, but monotonically, so ``x + c >= k`` is ``x >= t`` for
the least double ``t`` whose sum reaches ``k``, found by stepping from ``k - c``
one ulp at a time with Python's doubles, which are Java's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction

import pyarrow as pa

from skipindex.expressions.nodes import (
    AlwaysFalse,
    And,
    Call,
    ColumnName,
    Comparison,
    IsNull,
    Literal,
    LiteralKind,
    Op,
    Or,
    Predicate,
)

__all__ = ["arithmetic", "widening_cast"]

_K = LiteralKind
_MAX_STEPS = 64  # ulps from k - c to the exact threshold: a few in practice
_DECIMAL = re.compile(r"DECIMAL\((\d+),\s*(\d+)\)")
_INTEGER_BITS = {"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64}
_DIGITS = {8: 3, 16: 5, 32: 10, 64: 19}  # decimal digits of each integer width


def arithmetic(call: Call, op: Op, lit: Literal, column_type: pa.DataType) -> Predicate | None:
    """``call op lit`` for ``call`` one of ``x + c``, ``c + x``, ``x - c``, ``c - x``,
    ``x * c``, ``c * x``; None where no exact rule applies."""
    if len(call.args) != 2:
        return None
    left, right = call.args
    if isinstance(left, str | tuple) and isinstance(right, Literal):
        column, constant, column_first = left, right, True
    elif isinstance(left, Literal) and isinstance(right, str | tuple):
        column, constant, column_first = right, left, False
    else:
        return None
    c = _exact(constant)
    k = _exact(lit)
    if pa.types.is_floating(column_type) or c is None or k is None:
        return _floating(call.name, column, column_first, constant, op, lit, column_type)
    if pa.types.is_date(column_type):
        return _dates(call.name, column, column_first, constant, op, lit)
    if call.name == "*":
        if c <= 0:
            return None
        return _scaled(column, c, op, k, column_type)
    if call.name == "-" and not column_first:  # c - x op k  <=>  x op' c - k
        return _shifted(column, op.mirror(), c - k, -c, column_type, negated=True)
    shift = c if call.name == "+" else -c
    return _shifted(column, op, k - shift, shift, column_type)


def _exact(lit: Literal) -> Fraction | None:
    if lit.kind in (_K.INT, _K.DECIMAL) and not isinstance(lit.value, bool):
        assert isinstance(lit.value, int | Decimal)
        return Fraction(lit.value)
    return None


def _literal(value: Fraction) -> Literal:
    """An exact literal of ``value`` (a decimal whose expansion ends, else None)."""
    if value.denominator == 1:
        return Literal(_K.INT, int(value))
    return Literal(_K.DECIMAL, Decimal(value.numerator) / Decimal(value.denominator))


def _integer_range(column_type: pa.DataType) -> tuple[int, int] | None:
    if pa.types.is_signed_integer(column_type):
        bits = column_type.bit_width
        return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return None


def _decimal_ok(column_type: pa.DataType, constant: Fraction, multiply: bool) -> bool:
    """Whether Spark computes ``x (op) c`` exactly: its result fits 38 digits."""
    p, s = column_type.precision, column_type.scale
    text = str(Decimal(constant.numerator) / Decimal(constant.denominator))
    digits = text.lstrip("-").replace(".", "")
    sc = len(text.split(".")[1]) if "." in text else 0
    pc = max(len(digits.lstrip("0")), sc, 1)
    if multiply:
        return bool(p + pc + 1 <= 38 and s + sc <= 38)
    return bool(max(p - s, pc - sc) + max(s, sc) + 1 <= 38)


def _shifted(column: ColumnName, op: Op, bound: Fraction, shift: Fraction,
             column_type: pa.DataType, negated: bool = False) -> Predicate | None:  # fmt: skip
    """``x op bound`` (exact where ``x + shift`` does not overflow), with the rows
    where it may overflow kept too."""
    if pa.types.is_decimal(column_type):
        if not _decimal_ok(column_type, abs(shift), multiply=False):
            return None
        return _compare(column, op, bound)
    limits = _integer_range(column_type)
    if limits is None or shift.denominator != 1:
        return None  # (an int plus a decimal is decimal arithmetic: exact, but rare)
    low, high = limits
    condition = _compare(column, op, bound)
    # x + shift leaves [low, high] for x > high - shift (shift > 0) or x < low - shift;
    # for c - x, for x < c - high or x > c - low.
    c = -shift if negated else shift
    if negated:
        risky = [Comparison(column, Op.LT, _literal(c - high)),
                 Comparison(column, Op.GT, _literal(c - low))]  # fmt: skip
    elif shift > 0:
        risky = [Comparison(column, Op.GT, _literal(high - shift))]
    else:
        risky = [Comparison(column, Op.LT, _literal(low - shift))]
    return Or((condition, *risky))


def _scaled(column: ColumnName, c: Fraction, op: Op, k: Fraction,
            column_type: pa.DataType) -> Predicate | None:  # fmt: skip
    """``x * c op k`` (c > 0): ``x op k / c``, rounded to what the column holds."""
    if pa.types.is_decimal(column_type):
        if not _decimal_ok(column_type, c, multiply=True):
            return None
        return _on_grid(column, op, k / c, Fraction(1, 10**column_type.scale))
    limits = _integer_range(column_type)
    if limits is None or c.denominator != 1:
        return None
    low, high = limits
    condition = _on_grid(column, op, k / c, Fraction(1))
    risky = [Comparison(column, Op.GT, _literal(Fraction(high // int(c)))),
             Comparison(column, Op.LT, _literal(Fraction(-(-low // int(c)))))]  # fmt: skip
    return Or((condition, *risky))


def _on_grid(column: ColumnName, op: Op, bound: Fraction, step: Fraction) -> Predicate:
    """``x op bound`` for an ``x`` that is a multiple of ``step``, with a bound
    rounded onto that grid (so the literal is exact)."""
    units = bound / step
    if units.denominator == 1:
        return _compare(column, op, bound)
    floor, ceil = math.floor(units) * step, math.ceil(units) * step
    if op is Op.EQ:
        return AlwaysFalse()
    if op is Op.NE:
        return IsNull(column, negated=True)
    if op in (Op.GT, Op.GE):
        return _compare(column, Op.GE, ceil)
    return _compare(column, Op.LE, floor)


def _compare(column: ColumnName, op: Op, bound: Fraction) -> Predicate:
    if bound.denominator == 1 or _terminates(bound):
        return Comparison(column, op, _literal(bound))
    # No exact decimal: round inwards on a fine grid (10^-38 is below any scale).
    return _on_grid(column, op, bound, Fraction(1, 10**38))


def _terminates(value: Fraction) -> bool:
    d = value.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    return d == 1


def _dates(name: str, column: ColumnName, column_first: bool, constant: Literal, op: Op,
           lit: Literal) -> Predicate | None:  # fmt: skip
    """``d + n`` / ``d - n`` (days) against a DATE."""
    if constant.kind is not _K.INT or lit.kind is not _K.DATE or name == "*":
        return None
    if name == "-" and not column_first:
        return None
    n, day = int(constant.value), int(lit.value)  # type: ignore[arg-type]
    shift = n if name == "+" else -n
    return Comparison(column, op, Literal(_K.DATE, day - shift))


def _floating(name: str, column: ColumnName, column_first: bool, constant: Literal, op: Op,
              lit: Literal, column_type: pa.DataType) -> Predicate | None:  # fmt: skip
    """A double column: the sum rounds, monotonically; the threshold is found
    by stepping. (float32 columns and other literals: no rewrite.)"""
    if not pa.types.is_float64(column_type):
        return None
    c, k = _double(constant), _double(lit)
    if c is None or k is None or not (math.isfinite(c) and math.isfinite(k)) or op is Op.NE:
        return None
    if name == "*" and c <= 0:
        return None
    if name == "-" and not column_first:
        return None  # decreasing: left to an index on the expression

    def f(x: float) -> float:
        return x * c if name == "*" else x + c if name == "+" else x - c

    guess = k / c if name == "*" else k - c if name == "+" else k + c
    at_least = _least(f, k, guess, strict=False)
    above = _least(f, k, guess, strict=True)
    if at_least is None or above is None:
        return None
    low, high = Literal(_K.FLOAT, at_least), Literal(_K.FLOAT, above)
    if op is Op.EQ:  # f(x) = k: at least k and not above it
        if at_least == above:
            return AlwaysFalse()
        return And((Comparison(column, Op.GE, low), Comparison(column, Op.LT, high)))
    return {
        Op.GE: Comparison(column, Op.GE, low),
        Op.GT: Comparison(column, Op.GE, high),
        Op.LT: Comparison(column, Op.LT, low),
        Op.LE: Comparison(column, Op.LT, high),
    }[op]


def _double(lit: Literal) -> float | None:
    if lit.kind in (_K.INT, _K.DECIMAL, _K.FLOAT) and not isinstance(lit.value, bool):
        assert isinstance(lit.value, int | Decimal | float)
        return float(lit.value)
    return None


def _least(f: Callable[[float], float], k: float, guess: float, strict: bool) -> float | None:
    """The least double x with f(x) >= k (> k when ``strict``), near ``guess``."""

    def reaches(x: float) -> bool:
        value = f(x)
        return bool(value > k if strict else value >= k)

    x = guess
    for _ in range(_MAX_STEPS):
        if not math.isfinite(x):
            return None
        if reaches(x):
            below = math.nextafter(x, -math.inf)
            if not reaches(below):
                return x
            x = below
        else:
            x = math.nextafter(x, math.inf)
    return None


def widening_cast(call: Call, column: ColumnName, op: Op, lit: Literal,
                  column_type: pa.DataType) -> Predicate | None:  # fmt: skip
    """``CAST(x AS t) op v`` is ``x op v`` where every value of ``x`` is exactly
    a value of ``t`` and the order is kept (a wider integer, decimal or double)."""
    target = call.args[1] if len(call.args) > 1 else None
    if not isinstance(target, Literal) or lit.kind not in (_K.INT, _K.DECIMAL, _K.FLOAT):
        return None
    if not _widens(column_type, str(target.value).upper().replace(" ", "")):
        return None
    return Comparison(column, op, lit)


def _widens(source: pa.DataType, target: str) -> bool:
    decimal = _DECIMAL.fullmatch(target.replace(" ", ""))
    if pa.types.is_signed_integer(source):
        bits = int(source.bit_width)
        if target in _INTEGER_BITS:
            return _INTEGER_BITS[target] >= bits
        if decimal:
            return int(decimal.group(1)) - int(decimal.group(2)) >= _DIGITS[bits]
        return (target == "DOUBLE" and bits <= 32) or (target == "FLOAT" and bits <= 16)
    if pa.types.is_float32(source):
        return target in ("FLOAT", "DOUBLE")
    if pa.types.is_float64(source):
        return target == "DOUBLE"
    if pa.types.is_decimal(source) and decimal:
        p, s = int(decimal.group(1)), int(decimal.group(2))
        return bool(p - s >= source.precision - source.scale and s >= source.scale)
    return False
