"""Bound leaves from a column and a literal already cast to its domain
(:func:`~skipindex.expressions.coercion.coerce`'s targets): rounded onto the
values the column can hold, clamped to its range, NaN and -0.0 as Spark orders
them, IN lists deduplicated; a condition no value can meet is FALSE, one every
value meets is ``IS NOT NULL``."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pyarrow as pa

from skipindex._distinct import distinct
from skipindex._types import Domain, sort_values
from skipindex.expressions.coercion import Target, bounds
from skipindex.expressions.nodes import (
    AlwaysFalse,
    AnyPredicate,
    BoundColumn,
    BoundComparison,
    BoundIn,
    BoundIsNull,
    BoundValue,
    Op,
)

__all__ = ["compare_value", "integer_members", "member_values"]

_ORDERED = (Domain.INT, Domain.DECIMAL, Domain.DATE, Domain.TIMESTAMP, Domain.BOOLEAN)


def compare_value(column: BoundColumn, domain: Domain, op: Op, target: Target) -> AnyPredicate:
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
    lo, hi = bounds(column.type, domain)
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


def member_values(
    column: BoundColumn, domain: Domain, targets: list[Target], negated: bool
) -> AnyPredicate:
    """``column [NOT] IN targets``: values no row can hold are dropped, duplicates merged."""
    kept: list[Target] = []  # in the same form as targets: ticks, doubles, str, bytes
    if domain in _ORDERED:
        lo, hi = bounds(column.type, domain)
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
        return compare_value(column, domain, Op.NE if negated else Op.EQ, kept[0])
    values: tuple[BoundValue, ...] = tuple(
        _value(column.type, domain, int(t)) if isinstance(t, Fraction) else t for t in kept
    )
    return BoundIn(column, values, negated)


def integer_members(column: BoundColumn, values: list[int], negated: bool) -> AnyPredicate | None:
    """:func:`member_values` for INT literals on an integer column, with numpy (a
    join's key list holds thousands, and a Fraction each cost most of its bind);
    None where a value is past 64 bits."""
    try:
        keys = distinct(np.array(values, dtype=np.int64))
    except OverflowError:
        return None
    lo, hi = bounds(column.type, Domain.INT)
    hi = min(hi, bounds(pa.int64(), Domain.INT)[1])  # uint64's top is past int64's
    keys = keys[(keys >= lo) & (keys <= hi)]
    if len(keys) < 2:  # none, or one: FALSE, every non-NULL row, or a comparison
        return member_values(column, Domain.INT, [Fraction(k) for k in keys.tolist()], negated)
    return BoundIn(column, tuple(keys.tolist()), negated)


def _holds(left: Fraction, op: Op, right: Fraction) -> bool:
    return {
        Op.EQ: left == right,
        Op.NE: left != right,
        Op.LT: left < right,
        Op.LE: left <= right,
        Op.GT: left > right,
        Op.GE: left >= right,
    }[op]


def _value(arrow_type: pa.DataType, domain: Domain, ticks: int) -> BoundValue:
    if domain is Domain.DECIMAL:
        return Decimal(f"{ticks}E{-arrow_type.scale}")  # exact: at the column's scale
    if domain is Domain.BOOLEAN:
        return bool(ticks)
    return ticks
