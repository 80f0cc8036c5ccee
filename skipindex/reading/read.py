"""``read(spark, path, where)``: prune, then let Spark read only the kept files."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any, TypeVar

import pyarrow as pa

from skipindex.errors import TableChangedError
from skipindex.pruning.prune import OnDamaged, PruneResult, RowLevel, Where, prune
from skipindex.reading.delta import delta_rows, logical_schema, physical_schema
from skipindex.reading.folder import folder_frame
from skipindex.reading.held import held_folder, held_is_safe, without_files
from skipindex.reading.iceberg import iceberg_rows
from skipindex.reading.policy import PlanningPolicy, active, using
from skipindex.reading.row_groups import plan_read
from skipindex.spark.session import empty_frame, is_connect, read_parquet_paths
from skipindex.spark.settings import SparkView
from skipindex.store import query_log
from skipindex.store.delta import delta_spark_schema_json
from skipindex.store.iceberg import AsOf, snapshot_as_of
from skipindex.store.location import CatalogSpec, StorageOptions, TableLocation, TablePath, locate
from skipindex.store.swaps import moved_out, plans_in_flux

__all__ = ["again_after_swaps", "kept_rows", "read"]


_T = TypeVar("_T")
# Prune and resolve again when a kept file vanished in between (an in-place swap).
SWAP_ATTEMPTS = 3


def read(
    spark: Any,
    path: TablePath,
    where: Where,
    *,
    on_damaged: OnDamaged = "raise",
    storage_options: StorageOptions | None = None,
    row_level: RowLevel = "auto",
    row_groups: bool = True,
    catalog: CatalogSpec | None = None,
    snapshot_id: int | None = None,
    as_of: AsOf | None = None,
    policy: PlanningPolicy | None = None,
) -> Any:
    """A DataFrame of the rows of ``path`` for which ``where`` is TRUE.

    Only the files :func:`~skipindex.prune` keeps are opened, pruned with this
    session's time zone and case sensitivity (``catalog``, ``snapshot_id`` and
    ``as_of`` as :func:`~skipindex.prune` takes them). Partitioned tables keep their
    partition columns (``basePath``, typed as Spark types them over the whole
    table, not just the kept files), an empty result has the table's schema, and
    listing many paths runs no Spark job. Where most files are kept and those
    skipped save less reading than naming the kept ones costs Spark, Spark
    reads the folder itself, as plain Spark does; reading the same files again with the
    same session settings, it is handed the schema it inferred the first time
    instead of running a job to infer it again.

    With ``row_groups`` (the default), a kept file of which the row groups and
    pages holding candidate rows cost at most 3/4 of its bytes is read by a
    Python data source that opens only those row groups (and, in them, only
    those pages) and passes on only the rows the bitmaps left; Spark still
    filters every row. That source reads every column of those
    groups (Spark gives Python sources no column pruning), so it is used only
    when those row groups, all together, cost less than a Spark scan of the
    files' predicate columns would by enough to repay the source's fixed cost
    (see :mod:`skipindex.reading.row_groups`). Only files
    pyarrow reads exactly as Spark does qualify (local, partition columns of a
    modelled type, flat columns of the table's types, no LEGACY calendar).

    A kept file that is gone when Spark resolves the paths (an in-place cluster,
    such as the maintenance service's bin-packing, swapped it meanwhile) makes it
    prune again, up to three times. A swap landing after this returns, while
    Spark runs the query, fails the query with a missing file: run it again.
    On Spark Connect the server resolves the paths when the query runs, out of
    this check's reach: see "Readers while it bin-packs" in the user guide.

    ``policy`` (:class:`~skipindex.PlanningPolicy`) sets what these choices weigh
    (default: the active policy, as ``si.sql`` sets it).
    """
    view = SparkView.of_session(spark)
    if as_of is not None:  # one snapshot for the prune and the read
        snapshot_id = snapshot_as_of(os.fspath(path), catalog, as_of, snapshot_id)

    def attempt() -> Any:
        with query_log.source("read"):  # logged as a read, where the query log is on
            result = prune(
                path,
                where,
                time_zone=view.time_zone,
                case_sensitive=view.case_sensitive,
                on_damaged=on_damaged,
                storage_options=storage_options,
                row_level=row_level,
                catalog=catalog,
                snapshot_id=snapshot_id,
            )
        location = locate(path, storage_options, catalog=catalog, snapshot_id=snapshot_id)
        if location.iceberg is not None:
            return iceberg_rows(spark, result, location.iceberg, location.user_root).filter(where)
        held = None if location.is_delta else held_folder(spark, location)
        frame = kept_rows(
            spark,
            result,
            location,
            view,
            row_groups=row_groups,
            whole=folder_frame,
            held=held and held.frame,
        )
        assert frame is not None  # given ``whole``, kept_rows always returns a frame
        # DataFrame.filter takes SQL text and (classic or Connect) Columns
        return frame.filter(where)

    with using(policy or active()):  # an enclosing block's policy holds, as for prune
        return again_after_swaps(attempt)


def again_after_swaps(attempt: Callable[[], _T]) -> _T:
    """``attempt()``, a prune and a read of its kept files, made again (up to
    SWAP_ATTEMPTS times in all) where a kept file was gone by the time Spark
    resolved or listed the kept files: an in-place cluster (or a writer) moved it."""
    for number in range(1, SWAP_ATTEMPTS + 1):
        try:
            return attempt()
        except Exception as exc:
            if number < SWAP_ATTEMPTS and _gone_since_listed(exc):
                continue  # list again
            raise
    raise AssertionError("unreachable")  # the last attempt returns or raises


class _KeptFileMovedError(TableChangedError):
    """A kept file was moved out of the table while Spark listed the kept files."""


def _gone_since_listed(exc: Exception) -> bool:
    """Spark found a kept file missing when it resolved the paths, or a kept file
    is gone since Spark listed them: the table changed between the prune and the
    read (a maintenance bin-pack, say)."""
    if isinstance(exc, _KeptFileMovedError):
        return True
    text = str(exc)
    return "PATH_NOT_FOUND" in text or "FileNotFoundException" in text


def _listed_whole(spark: Any, location: TableLocation, frame: Any, paths: list[str]) -> Any:
    """``frame``, read from ``paths``, once Spark's listing of them is known to
    have missed none (see :func:`~skipindex.store.swaps.moved_out`). A classic
    session lists them as the frame is made; a Connect server lists them again
    each time the query runs, which no check here can cover."""
    if is_connect(spark):
        return frame
    gone = moved_out(location, paths)
    if gone:
        raise _KeptFileMovedError(
            f"{location.user_root}: {len(gone)} kept file(s) moved out while Spark listed "
            f"them (an in-place cluster), e.g. {gone[0]}; read again"
        )
    return frame


def kept_rows(
    spark: Any,
    result: PruneResult,
    location: TableLocation,
    view: SparkView,
    *,
    schema: Any = None,
    row_groups: bool = True,
    whole: Callable[[Any, Any, TableLocation, PruneResult], Any] | None = None,
    held: Any = None,
    leave_out: Callable[[Any, TableLocation, list[str]], Any] = without_files,
) -> Any:
    """The rows of the files ``result`` kept, as one DataFrame (not filtered).

    Typed as Spark types the whole table (partition columns over every listed
    file, a Delta table as its log says), or as ``schema`` where given; with
    ``row_groups``, files worth it are read by their candidate row groups (see
    :func:`read`). Where most files are kept and the rest are small (see
    :func:`_folder_pays`), reading the table itself beats listing the kept ones:
    ``whole(spark, reader, location, result)`` reads it then, and without
    ``whole`` this returns None there. Given ``held``, a relation over the whole
    folder that holds its listing (:mod:`.held`), the kept files are that
    relation without the skipped files' rows (``leave_out``: :func:`.held.without_files`,
    or :func:`.held.left_out` for SQL text): no path is looked up, no folder
    listed again. Only while the kept files are small (:func:`_filter_pays`):
    Spark evaluates that filter on every row it reads, so larger kept sets are named.
    """
    root = location.user_root
    if location.is_delta:
        # A Delta folder holds files earlier commits removed: read only the snapshot's
        # files (never the folder), typed and partitioned as the Delta log says.
        values = pa.table({p.name: p.values for p in result.partitions})
        raw = delta_spark_schema(location, raw=True)
        schema = logical_schema(raw) if schema is None else schema
        physical = physical_schema(raw)
        return delta_rows(spark, root, result.files, values, schema, result.deleted, physical)
    if schema is None:
        schema = _schema(result)
    if not result.files:
        if schema is None:
            schema = spark.read.option("basePath", root).parquet(root).schema
        return empty_frame(spark, schema)
    reader = spark.read.option("basePath", root)
    if row_groups and schema is not None:
        by_groups = _read_by_row_groups(spark, reader, schema, result, location, view)
        if by_groups is not None:
            return by_groups
    if held is not None and _filter_pays(result) and held_is_safe(location, result):
        frame = leave_out(held, location, result.skipped_files)
        if frame is not None:
            return frame
    untyped = any(p.type is None for p in result.partitions)
    if (_folder_pays(result) or untyped) and _folder_is_safe(location, result):
        # Little to skip (or partition types only Spark can infer over the whole
        # table): read the folder the way plain Spark does, unless it holds files
        # named as another format (x.csv), which Spark would fail on.
        return None if whole is None else whole(spark, reader, location, result)
    if schema is None and result.partitions:
        # Spark would type the partition columns over the kept files only, which can
        # differ from the whole table's types: take the whole table's schema.
        schema = reader.parquet(root).schema
    if schema is not None:
        reader = reader.schema(schema)
    frame = read_parquet_paths(spark, reader, result.files)
    return _listed_whole(spark, location, frame, result.files)


def _folder_pays(result: PruneResult) -> bool:
    """Whether reading the whole folder beats naming the kept files to Spark: most
    files are kept, and those skipped save less reading than the paths cost."""
    policy = active()
    if result.kept <= policy.folder_share * result.total:
        return False
    per_file = policy.read_seconds_per_byte * result.listed_bytes / max(result.total, 1)
    return (result.total - result.kept) * per_file <= result.kept * policy.path_seconds


def _filter_pays(result: PruneResult) -> bool:
    """Whether the held relation's filter on each row's file costs less than
    naming the kept files (the policy's ``filter_seconds_per_byte``)."""
    policy = active()
    return result.kept_bytes * policy.filter_seconds_per_byte <= policy.name_seconds


def _folder_is_safe(location: TableLocation, result: PruneResult) -> bool:
    """Whether Spark may list the folder itself: no file named as another format
    (Spark would fail on it), and no in-place cluster moving files or just done
    (Spark's listing is no snapshot: taken during the moves it can miss a group's
    old and new files both; the kept files, named, fail loudly if moved instead).
    A plan stages and verifies its files for seconds before it moves any, so one
    with no folder now moves nothing while Spark lists."""
    return not (result.not_parquet or result.swapping or plans_in_flux(location))


def _read_by_row_groups(
    spark: Any,
    reader: Any,
    schema: Any,
    result: PruneResult,
    location: TableLocation,
    view: SparkView,
) -> Any:
    """The kept files' rows, those worth it read by row groups (None: none is)."""
    from skipindex.reading.source import arrow_target, load

    planned = plan_read(result, location, view, arrow_target(schema))
    if planned is None:
        return None
    splits, whole = planned
    frame = load(spark, schema, splits, view)
    if whole:
        scan = read_parquet_paths(spark, reader.schema(schema), whole)
        frame = _listed_whole(spark, location, scan, whole).unionByName(frame)
    return frame


def delta_spark_schema(location: TableLocation, *, raw: bool = False) -> Any:
    """A Delta table's Spark schema: its log holds it as Spark's own JSON (``raw``:
    with the column mapping's ids and physical names, else as readers show it)."""
    from pyspark.sql.types import StructType

    text = delta_spark_schema_json(location.uri, location.user_root, dict(location.options))
    schema = StructType.fromJson(json.loads(text))
    return schema if raw else logical_schema(schema)


def _schema(result: PruneResult) -> Any:
    """The table's Spark schema: data columns as recorded at build time, partition
    columns as the listing types them now (a later ``p=abc`` folder makes ``p`` a
    string for the whole table, not only for the files that were kept)."""
    from pyspark.sql.types import StructField, StructType

    if not result.spark_schema:
        return None
    recorded = StructType.fromJson(json.loads(result.spark_schema))
    typed = {p.name.lower(): (p.name, _spark_type(p.type)) for p in result.partitions}
    if any(spark_type is None for _, spark_type in typed.values()):
        return None
    # A data column a partition column hides keeps its place, with the partition's type.
    fields = [
        StructField(*typed.pop(f.name.lower()), True) if f.name.lower() in typed else f
        for f in recorded.fields
    ]
    fields.extend(StructField(name, spark_type, True) for name, spark_type in typed.values())
    return StructType(fields)


def _spark_type(arrow_type: pa.DataType | None) -> Any:
    from pyspark.sql import types as T  # noqa: N812

    if arrow_type is None:
        return None
    if pa.types.is_decimal(arrow_type):
        return T.DecimalType(arrow_type.precision, arrow_type.scale)
    simple = {
        pa.int32(): T.IntegerType(),
        pa.int64(): T.LongType(),
        pa.float64(): T.DoubleType(),
        pa.date32(): T.DateType(),
        pa.timestamp("us", tz="UTC"): T.TimestampType(),
        pa.string(): T.StringType(),
    }
    return simple.get(arrow_type)
