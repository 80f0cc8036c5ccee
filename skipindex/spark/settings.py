"""The session settings that change what Spark reads from a Parquet file."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["SparkView"]


@dataclass(frozen=True)
class SparkView:
    """The session settings that change what Spark reads (recorded at build time)."""

    case_sensitive: bool = False
    datetime_rebase_mode: str = "CORRECTED"  # spark.sql.parquet.datetimeRebaseModeInRead
    int96_rebase_mode: str = "CORRECTED"  # spark.sql.parquet.int96RebaseModeInRead
    time_zone: str = "UTC"  # spark.sql.session.timeZone, for LEGACY timestamp rebasing
    partition_type_inference: bool = True  # ...partitionColumnTypeInference.enabled

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any] | None) -> SparkView:
        known = {k: v for k, v in (doc or {}).items() if k in cls.__dataclass_fields__}
        return cls(**known)

    @classmethod
    def of_session(cls, spark: Any) -> SparkView:
        from skipindex.spark.session import session_conf

        def conf(key: str, default: str) -> str:
            return session_conf(spark, key, default)

        return cls(
            case_sensitive=conf("spark.sql.caseSensitive", "false").lower() == "true",
            datetime_rebase_mode=conf(
                "spark.sql.parquet.datetimeRebaseModeInRead", "CORRECTED"
            ).upper(),
            int96_rebase_mode=conf("spark.sql.parquet.int96RebaseModeInRead", "CORRECTED").upper(),
            time_zone=conf("spark.sql.session.timeZone", "UTC"),
            partition_type_inference=conf(
                "spark.sql.sources.partitionColumnTypeInference.enabled", "true"
            ).lower()
            == "true",
        )
