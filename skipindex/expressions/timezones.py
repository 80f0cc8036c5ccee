"""The session time zone, and wall-clock <-> instant conversions the way Java does them.

A timestamp literal without a zone (``TIMESTAMP '2024-01-01 03:00:00'``), a
string cast to a timestamp, a date compared with a timestamp: Spark reads each
in ``spark.sql.session.timeZone``. Parsing and binding read the zone from
:data:`SESSION_ZONE`, a context variable (Spark itself keeps its SQLConf per
thread); :func:`session_zone` sets it for one ``prepare()``.

Conversions follow ``java.time``: a wall time in a daylight-saving gap moves
forward by the gap, one in an overlap takes the earlier offset (PEP 495's
``fold=0`` gives the same instants). Instants are microseconds since the epoch;
wall times are microseconds since 1970-01-01T00:00 on the clock of the zone.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = [
    "MICROS_PER_DAY",
    "SESSION_ZONE",
    "current_zone",
    "default_time_zone",
    "first_at_least",
    "instant_to_wall",
    "instant_wall",
    "wall_instant",
    "wall_span",
    "session_zone",
    "wall_to_instant",
    "zone_named",
    "zone_name",
]

MICROS_PER_DAY = 86_400 * 10**6
SESSION_ZONE: ContextVar[tzinfo] = ContextVar("skipindex_session_zone", default=UTC)

_EPOCH = datetime(1970, 1, 1)  # naive: wall clock arithmetic
_UTC_NAMES = frozenset(
    {"UTC", "Z", "GMT", "UT", "UCT", "ZULU", "UNIVERSAL", "GREENWICH",
     "ETC/UTC", "ETC/GMT", "ETC/UCT", "ETC/ZULU", "ETC/UNIVERSAL", "ETC/GREENWICH",
     "ETC/GMT0", "ETC/GMT+0", "ETC/GMT-0", "GMT0", "GMT+0", "GMT-0"}
)  # fmt: skip
_OFFSET = re.compile(r"(?:UTC|GMT|UT)?([+-])(\d{1,2})(?::?(\d{2}))?(?::?(\d{2}))?", re.IGNORECASE)


def zone_named(name: str) -> tzinfo:
    """A zone as Spark's session zone accepts it: a region (``Europe/Oslo``), ``UTC``,
    or an offset (``+05:30``, ``GMT+2``). Raises ValueError naming the zone."""
    text = name.strip()
    if text.upper() in _UTC_NAMES:
        return UTC
    if match := _OFFSET.fullmatch(text):
        sign, hours, minutes, seconds = match.groups()
        delta = timedelta(hours=int(hours), minutes=int(minutes or 0), seconds=int(seconds or 0))
        if delta > timedelta(hours=18):
            raise ValueError(f"time zone offset {name!r} is beyond +-18:00")
        return timezone(-delta if sign == "-" else delta)
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise ValueError(
            f"unknown time zone {name!r}: use a region such as 'Europe/Oslo' or an offset "
            "such as '+05:30'"
        ) from exc


def zone_name(zone: tzinfo) -> str:
    """A name :func:`zone_named` reads back (for ``explain()``)."""
    key = getattr(zone, "key", None)
    if isinstance(key, str):
        return key
    if zone is UTC:
        return "UTC"
    offset = zone.utcoffset(None)
    if offset is None:
        return str(zone)
    total = int(offset.total_seconds())
    sign = "-" if total < 0 else "+"
    hours, rest = divmod(abs(total), 3600)
    return f"{sign}{hours:02d}:{rest // 60:02d}"


def default_time_zone() -> str:
    """The zone a new Spark session uses unless told otherwise: the JVM's default,
    which is the ``TZ`` environment variable, else the system's ``/etc/localtime``."""
    configured = os.environ.get("TZ", "").lstrip(":")
    if configured:
        return configured
    try:
        target = str(Path("/etc/localtime").resolve())
    except OSError:
        return "UTC"
    marker = "/zoneinfo/"
    return target.split(marker, 1)[1] if marker in target else "UTC"


@contextmanager
def session_zone(zone: tzinfo) -> Iterator[None]:
    token = SESSION_ZONE.set(zone)
    try:
        yield
    finally:
        SESSION_ZONE.reset(token)


def current_zone() -> tzinfo:
    return SESSION_ZONE.get()


def fixed_offset_micros(zone: tzinfo) -> int | None:
    """The zone's offset if it never changes (UTC, ``+05:30``), else None."""
    if zone is UTC:
        return 0
    if isinstance(zone, timezone):
        offset = zone.utcoffset(None)
        return offset // timedelta(microseconds=1)
    key = getattr(zone, "key", "")
    if isinstance(key, str) and key.upper() in _UTC_NAMES:
        return 0
    return None


def wall_to_instant(wall: int, zone: tzinfo) -> int:
    """The instant a wall-clock time denotes in ``zone`` (java.time's rules).

    Raises OverflowError beyond Python's years 1..9999 in a zone whose offset
    changes (no rule is known there)."""
    fixed = fixed_offset_micros(zone)
    if fixed is not None:
        return wall - fixed
    moment = (_EPOCH + timedelta(microseconds=wall)).replace(tzinfo=zone, fold=0)
    offset = moment.utcoffset()
    assert offset is not None
    return wall - offset // timedelta(microseconds=1)


def instant_to_wall(instant: int, zone: tzinfo) -> int:
    """The wall-clock time of an instant in ``zone`` (OverflowError as above)."""
    fixed = fixed_offset_micros(zone)
    if fixed is not None:
        return instant + fixed
    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=instant)
    offset = moment.astimezone(zone).utcoffset()
    assert offset is not None
    return instant + offset // timedelta(microseconds=1)


def first_at_least(monotone: Callable[[int], int], target: int, low: int, high: int) -> int:
    """The smallest ``x`` in ``[low, high]`` with ``monotone(x) >= target`` (``high + 1``
    if none), for a non-decreasing ``monotone``: a binary search, about 40 steps."""
    while low <= high:
        middle = (low + high) // 2
        if monotone(middle) >= target:
            high = middle - 1
        else:
            low = middle + 1
    return low


def wall_instant(wall: int, zone: tzinfo) -> int | None:
    """:func:`wall_to_instant`, or None where the zone's rules are unknown."""
    try:
        return wall_to_instant(wall, zone)
    except (OverflowError, ValueError):
        return None


def instant_wall(instant: int, zone: tzinfo) -> int | None:
    """:func:`instant_to_wall`, or None where the zone's rules are unknown."""
    try:
        return instant_to_wall(instant, zone)
    except (OverflowError, ValueError):
        return None


# Any instant whose wall clock is W lies within this much of W (offsets are
# at most 18 hours); offsets are sampled this often around it.
_REACH = 19 * 3600 * 10**6
_SAMPLE = 1800 * 10**6


def wall_span(wall: int, zone: tzinfo) -> tuple[int, int] | None:
    """Instants ``(low, high)`` such that every instant whose wall clock in
    ``zone`` is at least ``wall`` is at least ``low``, and every one whose wall
    clock is below ``wall`` is below ``high``: the two ends of a range of wall
    clock times as instants. Both are ``wall`` less the offset where the offset
    is the same throughout the hours around it (the usual case: exact), else
    they differ by the offset's change (a daylight-saving transition nearby).
    None where the zone's rules are unknown (beyond Python's years 1..9999)."""
    fixed = fixed_offset_micros(zone)
    if fixed is not None:
        return wall - fixed, wall - fixed
    offsets = set()
    for instant in range(wall - _REACH, wall + _REACH + 1, _SAMPLE):
        found = instant_wall(instant, zone)
        if found is None:
            return None
        offsets.add(found - instant)
    return wall - max(offsets), wall - min(offsets)
