"""Tables ``cluster`` must not rewrite, and why, before anything is planned.

Only a table's own writer may change an Iceberg table's files or a Delta
table's in place (their logs would not know). A Delta table may be clustered
into a new folder of plain Parquet only where that folder holds the same rows
with the same values: not with deletion vectors (the files hold deleted rows),
column mapping (the files' column names are not the table's) or partition
values that Spark would read otherwise from the new folder names.
"""

from __future__ import annotations

from skipindex.errors import UnsupportedTableError
from skipindex.expressions.timezones import default_time_zone, zone_named
from skipindex.store.location import TableLocation
from skipindex.store.partitions import folders_misread

__all__ = ["refuse_delta", "refuse_iceberg"]


def refuse_iceberg(src: str, named_by_catalog: bool) -> None:
    if named_by_catalog or src.endswith(".metadata.json"):
        raise UnsupportedTableError(
            f"cluster cannot rewrite the Iceberg table {src}: its files change only through "
            "an Iceberg commit, which needs an Iceberg writer (Spark's rewrite_data_files "
            "procedure with a sort order); skipindex indexes the result with catalog="
        )


def refuse_delta(location: TableLocation, in_place: bool) -> None:
    if not location.is_delta:
        return
    if in_place:
        raise UnsupportedTableError(
            f"{location.user_root} is a Delta table: rewriting its files in place would "
            "break its log; cluster it into a new location (dst=...), or use Delta's OPTIMIZE"
        )
    listing = location.list_table()
    if listing.deleted or listing.id_schema is not None:
        what = "deletion vectors" if listing.deleted else "column mapping"
        why = f"it has {what}, which a folder of Parquet files cannot carry"
    else:
        why = folders_misread(listing, time_zone=zone_named(default_time_zone())) or ""
        why = why and f"{why}, so the new table's values would change"
    if why:
        raise UnsupportedTableError(
            f"cannot cluster Delta table {location.user_root} into a Parquet folder: {why}; "
            "use Delta's OPTIMIZE ZORDER BY instead"
        )
