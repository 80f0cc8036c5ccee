"""One reference pruned: its predicate through :func:`~skipindex.prune`, and a
DataFrame of the kept files typed exactly as the reference is.

The frame is :func:`~skipindex.reading.read.kept_rows`, read()'s own reading
path (basePath for partition folders, row groups where they pay, the empty
table's schema when nothing is kept), given the schema Spark gives the
reference itself, and checked against it: a frame whose schema differs in any
way (names, order, types, nullability) is not used. It is not filtered:
Spark applies the query's own conditions, so a predicate that only prunes
(carried across a join, or the keys of another table) never filters a row.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from skipindex.errors import SkipIndexError
from skipindex.expressions.nodes import Predicate
from skipindex.pruning.prune import PruneResult
from skipindex.reading.held import LeftOut, left_out, without_files
from skipindex.reading.read import again_after_swaps, kept_rows
from skipindex.spark.session import is_connect
from skipindex.spark.settings import SparkView
from skipindex.sql.catalog import Source
from skipindex.sql.references import Reference
from skipindex.store import query_log
from skipindex.store.delta import delta_version
from skipindex.store.swaps import plans_in_flux

__all__ = ["Pruned", "prune_source", "reference_whole", "whole_frame"]

_READ_WHOLE = (
    "most files can hold a match, and skipping the rest saves less than naming the kept "
    "files costs: Spark reads the table itself"
)
_MOVED_ON = "the Delta table has new commits since register(): read as registered"


@dataclass(frozen=True)
class Pruned:
    """What pruning one reference gave: the frame to read (None: the reference is
    read as written) and why."""

    # What prune was given: SQL text, or an unbound predicate (a join's key lists,
    # whose text, thousands of keys long, costs 10-20 ms to parse again).
    given: str | Predicate | None
    result: PruneResult | None
    frame: Any
    note: str
    seconds: float

    @property
    def where(self) -> str | None:
        """What prune was given, as text (for the plan's account)."""
        given = self.given
        return given if given is None or isinstance(given, str) else str(given)


def prune_source(
    spark: Any,
    source: Source,
    where: str | Predicate | None,
    view: SparkView,
    *,
    row_groups: bool = True,
    as_text: bool = False,
) -> Pruned:
    """The files of ``source`` that can hold a row for which ``where`` (SQL text,
    or an unbound predicate already parsed) is TRUE. ``as_text``: the held
    relation less the skipped files may be a :class:`~skipindex.reading.held.LeftOut`
    for the query's text rather than a DataFrame."""
    started = time.perf_counter()

    def done(result: PruneResult | None, frame: Any, note: str) -> Pruned:
        return Pruned(where, result, frame, note, time.perf_counter() - started)

    if where is None and not source.must_replace:
        return done(None, None, "no condition holds on every row it contributes")
    if source.delta_version is not None and not _same_snapshot(source):
        return done(None, None, _MOVED_ON)
    # an in-place cluster may move a kept file meanwhile: then prune again
    return again_after_swaps(lambda: _pruned(spark, source, where, view, row_groups, as_text, done))


def _pruned(
    spark: Any,
    source: Source,
    where: str | Predicate | None,
    view: SparkView,
    row_groups: bool,
    as_text: bool,
    done: Callable[[PruneResult | None, Any, str], Pruned],
) -> Pruned:
    try:
        with query_log.source("sql"):  # logged as an si.sql reference, where the log is on
            # prune parses text, binds a predicate as given
            result = source.prune(where or "TRUE", view.time_zone, view.case_sensitive)
    except SkipIndexError as exc:
        if not source.must_replace:
            return done(None, None, f"not pruned: {exc}")
        with query_log.paused():  # the listing only: not a query of the workload
            result = source.prune("TRUE", view.time_zone, view.case_sensitive)
    if source.delta_version is not None and not _same_snapshot(source):
        # no result: its files are the new snapshot's, not those read (nor their keys)
        return done(None, None, _MOVED_ON)
    if result.kept == result.total and not source.must_replace:
        return done(result, None, "every file can hold a match")
    frame = kept_rows(
        spark,
        result,
        source.location,
        view,
        schema=source.schema,
        row_groups=row_groups,
        held=source.held,
        leave_out=left_out if as_text and _text_pays(spark, source) else without_files,
    )
    if frame is None:
        return done(result, None, _READ_WHOLE)
    if isinstance(frame, LeftOut):
        return done(result, frame, "")
    frame = _typed_as(frame, source.schema)
    if frame is None:
        return done(result, None, "a view of the kept files would be typed otherwise")
    return done(result, frame, "")


def reference_whole(spark: Any, reference: Reference, source: Source | None) -> Any:
    """``reference`` read whole (None: read as written). A registered view is
    read as written: it is itself the relation that holds the table's listing.
    A ``parquet.`` path is the relation held for its folder while the folder's
    files are the same (:func:`whole_frame`)."""
    if source is None or reference.why_whole is not None or source.registered:
        return None
    if reference.key.kind != "parquet":
        return None
    return whole_frame(spark, source)


def whole_frame(spark: Any, source: Source) -> Any:
    """Every row of the Parquet folder ``source`` names, from the relation held for
    it (:mod:`~skipindex.reading.held`): Spark neither lists the folder nor infers
    its schema again, where ``parquet.`path``` costs both at every analysis
    (0.1 s a reference to a folder of one to 40 files, in local mode). None where
    no relation is held (Spark Connect), or where an in-place cluster may be moving
    the folder's files (then it is read as written: a listing of the moving folder
    is Spark's own)."""
    if source.held is None or source.must_replace or plans_in_flux(source.location):
        return None
    return _typed_as(source.held, source.schema)


def _same_snapshot(source: Source) -> bool:
    location = source.location
    try:
        current = delta_version(location.uri, location.user_root, dict(location.options))
    except SkipIndexError:
        return False
    return current == source.delta_version


def _text_pays(spark: Any, source: Source) -> bool:
    """Whether the skipped files are left out in the query's text: in a classic
    session (where a ``where()`` is an analysis in the JVM; a Connect client
    builds it locally and sends it with the query), over a held relation typed
    exactly as the reference (a LeftOut selects its columns as they are)."""
    if is_connect(spark) or source.held is None:
        return False
    return bool(source.held.schema == source.schema)


def _typed_as(frame: Any, schema: Any) -> Any:
    """``frame`` with exactly ``schema`` (columns reordered if that is all that
    differs), or None."""
    if frame.schema == schema:
        return frame
    if sorted(frame.schema.names) != sorted(schema.names) or len(set(schema.names)) != len(
        schema.names
    ):
        return None
    ordered = frame.select(*("`" + n.replace("`", "``") + "`" for n in schema.names))
    return ordered if ordered.schema == schema else None
