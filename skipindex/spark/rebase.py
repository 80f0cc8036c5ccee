"""Spark's LEGACY-calendar read rules: dates and timestamps written in the hybrid
Julian calendar (by Spark < 3.0, or in LEGACY mode) are rebased as Spark rebases
them (see :mod:`skipindex.spark.view`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from skipindex.expressions.timezones import fixed_offset_micros, zone_named

if TYPE_CHECKING:
    from skipindex.spark.settings import SparkView

__all__ = ["Rebase", "has_temporal", "julian_to_gregorian_days"]

_VERSION_KEY = b"org.apache.spark.version"
_LEGACY_DATETIME_KEY = b"org.apache.spark.legacyDateTime"
_LEGACY_INT96_KEY = b"org.apache.spark.legacyINT96"
_TIME_ZONE_KEY = b"org.apache.spark.timeZone"
_GREGORIAN_START = -141427  # 1582-10-15: days before it are Julian in the hybrid calendar
_MICROS_PER_DAY = 86_400 * 10**6
_JULIAN_EPOCH_OFFSET = 2440588  # Julian Day Number of 1970-01-01
_SAFE_AFTER_DAY = -25566  # 1900-01-02: no zone's LEGACY rebase moves a later instant


class Rebase:
    """Spark's LEGACY-calendar read rules for one file."""

    def __init__(self, parquet: pq.ParquetFile, view: SparkView, int96: set[str]) -> None:
        meta = parquet.metadata.metadata or {}
        version = meta.get(_VERSION_KEY)
        spark_version = version.decode("utf-8", "replace") if version else None
        if spark_version is None:
            self.datetime = view.datetime_rebase_mode.upper() == "LEGACY"
            self.int96 = view.int96_rebase_mode.upper() == "LEGACY"
        else:
            self.datetime = spark_version < "3.0.0" or _LEGACY_DATETIME_KEY in meta
            self.int96 = spark_version < "3.1.0" or _LEGACY_INT96_KEY in meta
        zone = meta.get(_TIME_ZONE_KEY)
        self.zone = zone.decode("utf-8", "replace") if zone else view.time_zone
        # Always known: an INT96 column follows the INT96 rule even when only the
        # datetime rule is LEGACY (and the other way round).
        self.int96_columns = int96

    def legacy(self, top: str) -> bool:
        """Whether Spark rebases the dates and timestamps of column ``top``."""
        return self.int96 if top in self.int96_columns else self.datetime

    def apply(self, array: pa.Array, top: str) -> pa.Array | str:
        if not has_temporal(array.type) or not self.legacy(top):
            return array
        return _rebase_array(array, self.zone)


def has_temporal(arrow_type: pa.DataType) -> bool:
    return bool(pa.types.is_date(arrow_type) or pa.types.is_timestamp(arrow_type))


def _rebase_array(array: pa.Array, zone: str) -> pa.Array | str:
    if pa.types.is_date(array.type):
        days = pc.fill_null(array.cast(pa.date32()).view(pa.int32()), 0).to_numpy()
        rebased = julian_to_gregorian_days(days.astype(np.int64)).astype(np.int32)
        return pa.array(rebased, pa.int32(), mask=_nulls(array)).view(pa.date32()).cast(array.type)
    per_day = {"s": 86_400, "ms": 86_400 * 10**3, "us": _MICROS_PER_DAY, "ns": 86_400 * 10**9}[
        array.type.unit
    ]
    ticks = pc.fill_null(array.view(pa.int64()), 0).to_numpy().astype(np.int64)
    days = np.floor_divide(ticks, per_day)
    if array.type.tz is not None and _is_utc(zone):
        shifted = ticks + (julian_to_gregorian_days(days) - days) * per_day
        return pa.array(shifted, pa.int64(), mask=_nulls(array)).view(array.type)
    if (days < _SAFE_AFTER_DAY).any():
        # Spark rebases these through java.util.TimeZone's offsets, which differ
        # from tzdata's up to 1900 for many zones: not modelled.
        return (
            f"timestamps before 1900 written in LEGACY calendar mode (zone {zone}) are "
            "rebased by rules skipindex does not model: not indexed"
        )
    return array


def _is_utc(zone: str) -> bool:
    try:
        return fixed_offset_micros(zone_named(zone)) == 0
    except ValueError:  # a zone Python does not know: not modelled
        return False


def _nulls(array: pa.Array) -> np.ndarray | None:
    if not array.null_count:
        return None
    return np.asarray(array.is_null().to_numpy(zero_copy_only=False), dtype=bool)


def julian_to_gregorian_days(days: np.ndarray) -> np.ndarray:
    """Spark's ``rebaseJulianToGregorianDays``, vectorised: a day count in the hybrid
    calendar (Julian before 1582-10-15) -> the proleptic Gregorian day with the same
    year, month and day (a Julian Feb 29 the Gregorian calendar lacks rolls to Mar 1)."""
    jdn = days + _JULIAN_EPOCH_OFFSET
    c = jdn + 32082
    d = (4 * c + 3) // 1461
    e = c - (1461 * d) // 4
    m = (5 * e + 2) // 153
    day = e - (153 * m + 2) // 5 + 1
    month = m + 3 - 12 * (m // 10)
    year = d - 4800 + m // 10
    a = (14 - month) // 12
    y = year + 4800 - a
    mm = month + 12 * a - 3
    gregorian = day + (153 * mm + 2) // 5 + 365 * y + y // 4 - y // 100 + y // 400 - 32045
    return np.where(days < _GREGORIAN_START, gregorian - _JULIAN_EPOCH_OFFSET, days)
