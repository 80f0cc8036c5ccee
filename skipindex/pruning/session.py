"""What a Spark session's settings make of a predicate: its time zone, how it
matches column names, and how hard a prune looks at row level."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import tzinfo
from typing import TYPE_CHECKING, TypeAlias

from skipindex.errors import InvalidPredicateError
from skipindex.expressions.timezones import default_time_zone, zone_named
from skipindex.pruning.evaluate import RowLevel
from skipindex.pruning.options import PruneOptions, active

if TYPE_CHECKING:
    from pyspark.sql import Column

__all__ = ["Session", "Where"]

# A Spark SQL boolean expression, or a PySpark Column (classic or Spark Connect).
Where: TypeAlias = "str | Column"


@dataclass(frozen=True)
class Session:
    """What a Spark session's settings make of a predicate."""

    zone: tzinfo
    zone_text: str
    case_sensitive: bool | None
    row_level: RowLevel = "auto"  # not a session setting: how hard to look
    options: PruneOptions = field(default_factory=active)  # nor these: memory and threads

    @classmethod
    def of(
        cls,
        where: Where,
        time_zone: str | None,
        case_sensitive: bool | None,
        row_level: RowLevel,
        options: PruneOptions | None = None,
    ) -> Session:
        """``where``'s literals read in ``time_zone``; by default the zone of the
        session a Column belongs to, else what a new Spark session uses."""
        zone_text = time_zone or _column_session_zone(where) or default_time_zone()
        try:
            zone = zone_named(zone_text)
        except ValueError as exc:
            raise InvalidPredicateError(f"time_zone: {exc}") from None
        return cls(zone, zone_text, case_sensitive, row_level, options or active())


def _column_session_zone(where: Where) -> str | None:
    """A PySpark Column's literals mean what its session makes of them: that
    session's zone (pyspark is already imported when a Column exists)."""
    if isinstance(where, str) or not type(where).__module__.startswith("pyspark"):
        return None
    if ".connect." in type(where).__module__:
        from pyspark.sql.connect.session import SparkSession
    else:
        from pyspark.sql import SparkSession  # type: ignore[assignment]

    session = SparkSession.getActiveSession()
    return str(session.conf.get("spark.sql.session.timeZone")) if session is not None else None
