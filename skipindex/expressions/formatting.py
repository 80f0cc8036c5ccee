"""Values as SQL literals, for explain(): any date or timestamp Spark holds,
beyond Python's years 1..9999."""

from __future__ import annotations

import math
from decimal import Decimal

import pyarrow as pa

__all__ = ["format_days", "format_micros", "format_value"]


def format_value(value: object, arrow_type: pa.DataType) -> str:
    """A bound value as a SQL literal of its column's type (for explain())."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, bytes):
        return f"X'{value.hex().upper()}'"
    if isinstance(value, float):
        if math.isnan(value):
            return "CAST('NaN' AS DOUBLE)"
        if math.isinf(value):
            return f"CAST('{'-' if value < 0 else ''}Infinity' AS DOUBLE)"
        return repr(value)
    if isinstance(value, int) and pa.types.is_date(arrow_type):
        return f"DATE '{format_days(value)}'"
    if isinstance(value, int) and pa.types.is_timestamp(arrow_type):
        per_second = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[arrow_type.unit]
        seconds, ticks = divmod(value, per_second)
        fraction = f".{ticks:0{len(str(per_second)) - 1}d}" if ticks else ""
        zone = " UTC" if arrow_type.tz is not None else ""
        keyword = "TIMESTAMP" if arrow_type.tz is not None else "TIMESTAMP_NTZ"
        return f"{keyword} '{format_micros(seconds * 10**6)}{fraction}{zone}'"
    if isinstance(value, Decimal) and pa.types.is_decimal256(arrow_type):
        # A column bound in its open type (no index on it): the literal's digits,
        # not the 38 decimals of that type.
        text = format(value, "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    return str(value)


def format_days(days: int) -> str:
    """``yyyy-mm-dd`` of a proleptic Gregorian day number, any year."""
    era, day_of_era = divmod(days + 719468, 146097)
    leap_days = day_of_era // 1460 - day_of_era // 36524 + day_of_era // 146096
    year_of_era = (day_of_era - leap_days) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    shifted_month = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * shifted_month + 2) // 5 + 1
    month = shifted_month + (3 if shifted_month < 10 else -9)
    year = year_of_era + era * 400 + (month <= 2)
    shown = f"{abs(year):04d}"
    return f"{'-' if year < 0 else ''}{shown}-{month:02d}-{day:02d}"


def format_micros(micros: int) -> str:
    """``yyyy-mm-dd hh:mm:ss[.ffffff]`` of microseconds since 1970-01-01T00:00."""
    days, rest = divmod(micros, 86_400 * 10**6)
    seconds, fraction = divmod(rest, 10**6)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    tail = f".{fraction:06d}" if fraction else ""
    return f"{format_days(days)} {hours:02d}:{minutes:02d}:{seconds:02d}{tail}"
