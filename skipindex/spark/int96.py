"""INT96 timestamps as Spark reads them, from what pyarrow can read of them.

An INT96 holds a Julian day (4 bytes) and nanoseconds within it (8 bytes).
Spark reads both as *signed* numbers, ``(day - 2440588) * 86400e6 + nanos / 1000``
in 64-bit arithmetic (wrapping); pyarrow reads both as *unsigned* ones. They
agree for every timestamp from 4713 BC to far past year 9999, but not where
Spark's own writer wrapped: ``TIMESTAMP '294247-01-10 04:00:54.775807'`` (the
largest microsecond count, Delta's data-skipping test case) is stored with a
negative day and negative nanoseconds, which pyarrow reads as a time in 1746 BC.

pyarrow gives no access to the raw bytes, but reading the column in
milliseconds never overflows (so it is exact), and the microsecond reading is
exact modulo 2**64: together they give pyarrow's exact (unsigned) microsecond
count, and from it Spark's. Spark writes whole microseconds, so a wrapped
day's nanoseconds are a negative multiple of 1000. The one day whose readings
could be either (Julian day 0 with negative nanoseconds, or a day of 4128 BC)
is reported as not indexable.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["spark_int96"]

_EPOCH_DAY = 2440588  # Julian day of 1970-01-01
_US_PER_DAY = 86_400 * 10**6
_MS_PER_DAY = 86_400 * 10**3
_TWO_64 = 2**64
# Milliseconds since Julian day 0 of a value whose day pyarrow reads as 2**31 or
# more: Spark's day there is negative (a wrapped or pre-4713 BC timestamp).
_NEGATIVE_DAY_MS = 2**31 * _MS_PER_DAY
# Julian day 0 with negative nanoseconds reads, unsigned, as a day of 4128 BC.
_AMBIGUOUS_MS = ((_TWO_64 - 86_400 * 10**9) // 10**6, (_TWO_64 - 1) // 10**6)
_NOT_MODELLED = "INT96 timestamps around 4128 BC or 4713 BC are not indexed"


def spark_int96(micros: pa.Array, millis: pa.Array) -> pa.Array | str:
    """The values Spark reads from an INT96 column that pyarrow read as ``micros``
    and as ``millis`` (timestamp arrays of the same rows), typed as ``micros``;
    or why they cannot be told."""
    u = pc.fill_null(micros.view(pa.int64()), 0).to_numpy().astype(np.int64)
    m = pc.fill_null(millis.view(pa.int64()), 0).to_numpy().astype(np.int64)
    since_day_zero = m + _EPOCH_DAY * _MS_PER_DAY  # exact: m is at most about 3.7e17
    low, high = _AMBIGUOUS_MS
    if ((since_day_zero >= low) & (since_day_zero <= high)).any():
        return _NOT_MODELLED
    negative_day = since_day_zero >= _NEGATIVE_DAY_MS
    if not negative_day.any():
        return micros  # pyarrow read exactly what Spark reads
    out = u.copy()
    for at in np.flatnonzero(negative_day):
        value = wrapped_day_micros(int(m[at]), int(u[at]))
        if value is None:
            return _NOT_MODELLED
        out[at] = value
    nulls = None
    if micros.null_count:
        nulls = np.asarray(micros.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    return pa.array(out, pa.int64(), mask=nulls).view(micros.type)


def wrapped_day_micros(millis: int, micros: int) -> int | None:
    """Spark's value of one INT96 whose day is negative to Spark, from pyarrow's
    millisecond reading and (wrapped) microsecond reading; None if not one
    Spark's writer makes (a day below -2**31 + 2440588, or nanoseconds that
    are 0 or make the reading ambiguous)."""
    # pyarrow's exact microseconds: (day + 2**32 - epoch) * us/day + (2**64 + nanos) // 1000
    exact = 1000 * millis + (micros - 1000 * millis) % _TWO_64
    if exact - 1000 * millis >= 1000:
        return None  # the readings disagree
    if exact % _US_PER_DAY == 0:  # zero nanoseconds, or negative ones that read the same
        return None
    value = exact - _TWO_64 // 1000 - 2**32 * _US_PER_DAY  # (day - epoch) * us/day + nanos/1000
    days = -(-value // _US_PER_DAY)  # day - epoch: nanos are negative, so round up
    if not -(2**31) <= days <= -1 - _EPOCH_DAY:
        return None
    return (value + 2**63) % _TWO_64 - 2**63  # Spark's long arithmetic wraps
