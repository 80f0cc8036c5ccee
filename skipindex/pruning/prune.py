"""``prune(path, where)``: the files that might hold matching rows. No Spark here.

The table is listed (so new files are kept and deleted files never returned),
the newest manifest is read, and only the segment columns the predicate needs
are loaded. A listed file is *covered* when the index holds a row with the same
path, size and mtime; every other file is kept.
"""

from __future__ import annotations

import time
import warnings
from collections import Counter, defaultdict
from dataclasses import replace
from functools import partial
from typing import Literal

import numpy as np
import pyarrow as pa

from skipindex.column_paths import column_key, split_name
from skipindex.errors import IndexCorruptError
from skipindex.expressions import prepare
from skipindex.expressions.calls import is_expression_field
from skipindex.indexes import kind_for
from skipindex.pruning.batches import all_cached, batch_key, unit_keys, units_of
from skipindex.pruning.columns import predicate_columns, top_level
from skipindex.pruning.coverage import covered_files, listing_positions
from skipindex.pruning.deleted_rows import DELETED, live_rows
from skipindex.pruning.evaluate import ROW_LEVELS, IndexColumn, RowLevel
from skipindex.pruning.iceberg import by_field_id, planned, snapshot_view
from skipindex.pruning.listed import Listed, list_table
from skipindex.pruning.options import PruneOptions
from skipindex.pruning.partition_index import partition_index
from skipindex.pruning.result import LazyPaths, PruneResult
from skipindex.pruning.row_groups import kept_rows
from skipindex.pruning.session import Session, Where
from skipindex.pruning.streamed import evaluate_groups, groups_of
from skipindex.spark.widening import binding_schema
from skipindex.store import query_log
from skipindex.store.cache import batch_cache
from skipindex.store.damage import repairable
from skipindex.store.iceberg import AsOf
from skipindex.store.location import CatalogSpec, Listing, StorageOptions, TableLocation, TablePath
from skipindex.store.manifest import Manifest, load_latest, manifest_versions
from skipindex.store.partitions import logged_partitions, table_partitions
from skipindex.store.segments import read_segments

__all__ = [
    "OnDamaged",
    "PruneResult",
    "RowLevel",
    "Where",
    "check_options",
    "prune",
    "prune_listed",
]

# What prune does with an index it cannot read: raise IndexCorruptError, or keep
# every file with a warning.
OnDamaged = Literal["raise", "keep"]

_READ_ATTEMPTS = 5


def prune(
    path: TablePath,
    where: Where,
    *,
    time_zone: str | None = None,
    case_sensitive: bool | None = None,
    on_damaged: OnDamaged = "raise",
    storage_options: StorageOptions | None = None,
    row_level: RowLevel = "auto",
    catalog: CatalogSpec | None = None,
    snapshot_id: int | None = None,
    as_of: AsOf | None = None,
    options: PruneOptions | None = None,
) -> PruneResult:
    """Files under ``path`` that might hold a row for which ``where`` is TRUE.

    ``where`` is a Spark SQL boolean expression or a PySpark ``Column``; its
    literals mean what they mean in a Spark session in ``time_zone``. The default
    is the active session's zone for a Column, else what a new Spark session
    uses: the ``TZ`` environment variable, else the system zone (``read()``
    passes its session's ``spark.sql.session.timeZone``).
    Column names match case-insensitively unless ``case_sensitive`` (default:
    the building session's ``spark.sql.caseSensitive``).
    ``on_damaged="keep"`` turns a damaged index into a warning and keeps every
    file instead of raising :class:`~skipindex.errors.IndexCorruptError`.
    ``storage_options`` configure an object store (endpoint, credentials, region).
    With row-level bitmaps on every condition, the files kept are exactly those
    holding a match. ``row_level="auto"`` (the default) combines the bitmaps on a
    sample of each file's rows first, and leaves out the full pass where the
    sample shows many matching rows: the same files, fewer narrowed row sets
    (``result.rows``, ``row_groups``). ``"always"`` narrows every kept file's.
    ``"estimate"`` (opt-in) keeps unexamined the files whose conditions' value
    ranges predict many matches, as if the columns were independent: cheaper,
    and it may keep files holding no match (where conditions are correlated).
    An Iceberg table is named by ``catalog`` (a name pyiceberg's configuration
    knows, or the catalog's properties) and ``path`` its identifier
    (``db.table``), or by the path of its ``metadata.json``; ``snapshot_id``
    prunes as of that snapshot (default: the current one), ``as_of`` as of the
    snapshot current at that time (an aware datetime, ISO 8601 with an offset,
    or epoch milliseconds). ``options`` bound the prune's memory and threads
    (:class:`~skipindex.PruneOptions`; default: the environment's).
    """
    started = time.perf_counter()
    check_options(on_damaged, row_level)
    listed = list_table(path, storage_options, catalog, snapshot_id, as_of)
    return prune_listed(
        listed,
        where,
        time_zone=time_zone,
        case_sensitive=case_sensitive,
        on_damaged=on_damaged,
        row_level=row_level,
        started=started,
        options=options,
    )


def prune_listed(
    listed: Listed,
    where: Where,
    *,
    time_zone: str | None = None,
    case_sensitive: bool | None = None,
    on_damaged: OnDamaged = "raise",
    row_level: RowLevel = "auto",
    started: float | None = None,
    options: PruneOptions | None = None,
) -> PruneResult:
    """:func:`prune` over the files ``listed`` holds."""
    check_options(on_damaged, row_level)
    started = time.perf_counter() if started is None else started
    session = Session.of(where, time_zone, case_sensitive, row_level, options)
    location, listing = listed.location, listed.listing
    try:
        result = _prune_latest(location, listing, where, session, started)
    except IndexCorruptError as exc:
        if on_damaged == "raise":
            with repairable(location.user_root):
                raise
        warnings.warn(f"skipindex: {exc}; keeping every file", stacklevel=3)
        result = _keep_all(location, listing, where, started, f"{exc}; kept every file")
    result = replace(result, not_parquet=listing.not_parquet, swapping=listed.swapping)
    iceberg = location.iceberg.name if location.iceberg is not None else None
    query_log.record(location.user_root, iceberg, result)  # when enabled; never raises
    return result


def check_options(on_damaged: OnDamaged, row_level: RowLevel) -> None:
    """Refuse an option value before any work is done."""
    if on_damaged not in ("raise", "keep"):
        raise ValueError(f"on_damaged must be 'raise' or 'keep', not {on_damaged!r}")
    if row_level not in ROW_LEVELS:
        choices = ", ".join(repr(r) for r in ROW_LEVELS)
        raise ValueError(f"row_level must be one of {choices}, not {row_level!r}")


def _prune_latest(
    location: TableLocation,
    listing: Listing,
    where: Where,
    session: Session,
    started: float,
) -> PruneResult:
    """Prune against the newest version. A concurrent build may commit and clean
    up the files of the version being read; then the newer version is used."""
    for attempt in range(_READ_ATTEMPTS):
        seen = manifest_versions(location)
        try:
            manifest = load_latest(location)
            if manifest is None:
                return _keep_all(location, listing, where, started, "table has no skipindex index")
            return _prune(location, manifest, listing, where, session, started)
        except IndexCorruptError:
            if attempt + 1 == _READ_ATTEMPTS or manifest_versions(location)[-1:] == seen[-1:]:
                raise  # nothing newer appeared: the damage is real
    raise AssertionError("unreachable")


def _prune(
    location: TableLocation,
    manifest: Manifest,
    listing: Listing,
    where: Where,
    session: Session,
    started: float,
) -> PruneResult:
    view = manifest.spark_view
    if location.iceberg is not None:  # columns by field id; partitions from its manifests
        manifest = snapshot_view(location.iceberg, manifest)
        partitions = []
    else:
        if listing.id_schema is not None:  # Delta column mapping: renames keep the field id
            manifest = by_field_id(listing.id_schema, manifest)
        partitions = table_partitions(
            listing, time_zone=session.zone, infer_types=view.partition_type_inference
        )
    hidden = {p.name.lower() for p in partitions}  # a partition column hides a data column
    # Indexed columns bind in the recorded type (it holds every indexed value);
    # the others in one no file's type can be wider than (see _widening).
    indexed = {d.column for d in manifest.indexes}
    typed = binding_schema(manifest.arrow_schema, indexed)
    data_fields = [
        f
        for f in typed
        # an expression's values, bound by its key, only while an index holds them
        if (f.name in indexed if is_expression_field(f) else f.name.lower() not in hidden)
    ]
    schema = pa.schema([*data_fields, *(p.field for p in partitions)])
    case_sensitive = (
        view.case_sensitive if session.case_sensitive is None else session.case_sensitive
    )
    bound = prepare(where, schema, case_sensitive=case_sensitive, time_zone=session.zone)
    columns = predicate_columns(bound)
    wanted = [
        d
        for d in manifest.indexes
        if d.column in columns
        and (d.expression is not None or split_name(d.column)[0].lower() not in hidden)
    ]
    fields = {d.field: (d.column, kind_for(d, manifest.arrow_schema)) for d in wanted}
    # This prune's entries in the batch cache: none is evicted to make room for another.
    listing_key = batch_key(location, manifest, "<listing>")
    options = session.options
    units = units_of(manifest, options.unit_bytes)
    in_use = {listing_key, *unit_keys(location, units, fields)}
    # Payloads too large to cache are read and evaluated a group at a time.
    unread = [f for f in fields if not all_cached(location, units, f)]
    plan = groups_of(
        location, manifest, units, unread, batch_cache.max_bytes, options.working_bytes
    )
    streamed = {f: fields[f] for f in plan.fields}
    kept = {f: found for f, found in fields.items() if f not in streamed}
    segments = read_segments(location, manifest, ["row_group_rows"])
    covered, positions = covered_files(segments, listing, listing_key, in_use)
    indexes: dict[str, list[IndexColumn]] = defaultdict(list)  # over every file already
    num_rows = segments.column("num_rows").to_numpy()
    notes = []
    listed_at = None  # per segment row, its file's place in the listing (partitions need it)
    for partition in partitions:
        key = column_key((partition.name,))
        if key not in columns:
            continue
        if listed_at is None:
            listed_at = listing_positions(len(segments), covered, positions)
        if partition.type is None:
            notes.append(f"partition column {partition.name}: {partition.why}; might match")
            continue
        indexes[key].append(partition_index(partition, listed_at, num_rows))
    evaluated = bound
    if listing.deleted:  # rows deletion vectors removed: exact kinds keep live matches only
        paths = segments.column("path").to_pylist()
        found = live_rows(bound, listing.deleted, paths, num_rows)
        if found is not None:
            evaluated, deletions = found
            indexes[DELETED.name].append(deletions)
    try:
        evaluation = evaluate_groups(
            location,
            plan.groups,
            kept,
            streamed,
            indexes,
            evaluated,
            num_rows,
            session.row_level,
            in_use,
            options,
        )
    except IndexCorruptError as exc:  # raised only where stored bytes are decoded
        names = ", ".join(f"{d.kind} on {d.column}" for d in wanted)
        raise IndexCorruptError(
            f"index data ({names}) of {location.user_root} is damaged: {exc}; rebuild it with "
            f"`skipindex drop {location.user_root} --all` and `skipindex build`"
        ) from exc
    # An unreadable file (not Parquet, say) has no payloads and no rows: always kept.
    # A readable one with a note lacks payloads only for the columns named there.
    noted = np.asarray(segments.column("error").is_valid().to_numpy(zero_copy_only=False))
    unreadable = noted & (num_rows == 0)
    might_match = evaluation.might_match | unreadable
    notes.extend(_notes(segments, noted & ~unreadable))
    keep = ~covered.copy()
    keep[covered] = might_match[positions[covered]]
    by_iceberg = planned(location, listing, bound)  # Iceberg's partitions and metrics
    if by_iceberg is not None:
        keep &= by_iceberg
        notes.append(
            f"Iceberg's own planning (partition values, column metrics) keeps "
            f"{int(by_iceberg.sum())} of {len(listing)} files; with the index, {int(keep.sum())}"
        )
    kept_in_order = listing.in_order(np.flatnonzero(keep))
    groups, rows, listed = kept_rows(
        location, listing, keep & covered, positions, segments, evaluation
    )
    return PruneResult(
        files=location.user_paths(listing, kept_in_order),
        total=len(listing),
        predicate=_describe_where(where),
        bound=str(bound),
        covered=int(covered.sum()),
        version=manifest.version,
        leaves=evaluation.leaves,
        row_level_files=evaluation.row_level_files,
        row_level_skipped=evaluation.row_level_skipped,
        row_level_sampled=evaluation.row_level_sampled,
        row_level_likely=evaluation.row_level_likely,
        seconds=time.perf_counter() - started,
        warnings=notes,
        spark_schema=manifest.spark_schema,
        time_zone=session.zone_text,
        partitions=[replace(p, values=p.values.take(kept_in_order)) for p in partitions],
        row_groups=groups,
        rows=rows,
        listed=listed,
        columns=top_level(columns, manifest),
        iceberg_kept=None if by_iceberg is None else int(by_iceberg.sum()),
        deleted=_deleted_of(location, listing, kept_in_order),
        listed_bytes=int(listing.sizes.sum()),
        kept_bytes=int(listing.sizes[keep].sum()),
        skipped_paths=LazyPaths(partial(location.user_paths, listing, np.flatnonzero(~keep))),
    )


def _deleted_of(
    location: TableLocation, listing: Listing, kept: np.ndarray
) -> dict[str, np.ndarray]:
    """The deleted rows of the kept files that have any, by their full paths."""
    if not listing.deleted:
        return {}
    relative = listing.path_list(kept)
    return {
        location.user_path(path): listing.deleted[path]
        for path in relative
        if path in listing.deleted
    }


def _notes(segments: pa.Table, noted: np.ndarray) -> list[str]:
    """Why some files have no index data for some columns (explain() shows it)."""
    if not noted.any():
        return []
    texts = segments.column("error").filter(pa.array(noted)).to_pylist()
    counts = Counter(texts)
    return [f"{n} file(s) partly not indexed (always kept for it): {t}" for t, n in counts.items()]


def _keep_all(
    location: TableLocation, listing: Listing, where: Where, started: float, why: str
) -> PruneResult:
    order = listing.in_order()
    listed_bytes = int(listing.sizes.sum())
    return PruneResult(
        files=location.user_paths(listing, order),
        total=len(listing),
        predicate=_describe_where(where),
        bound="(not evaluated)",
        seconds=time.perf_counter() - started,
        warnings=[why],
        # a table's logged partition values travel with its files (read() needs them)
        partitions=[replace(p, values=p.values.take(order)) for p in logged_partitions(listing)],
        deleted=_deleted_of(location, listing, order),
        listed_bytes=listed_bytes,
        kept_bytes=listed_bytes,  # every file kept
    )


def _describe_where(where: Where) -> str:
    return where if isinstance(where, str) else str(where)
