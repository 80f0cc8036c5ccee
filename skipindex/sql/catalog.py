"""The tables a query names: views :func:`register` made, paths, and their schemas.

``register(spark, name, path)`` makes a temporary view of a DataFrame, as plain
Spark at its best does: ``spark.read.parquet(path)`` lists the folder and infers
its schema once, and every query over the view reuses both. A file added later
shows once the view is refreshed (``REFRESH TABLE name``) or registered again,
as with any Spark view of a DataFrame; si.sql reads what the view holds, less
the files its index skips. A Delta table's view is its snapshot's files (the
folder also holds removed files), typed as the Delta log types them, and
remembers the snapshot's version.
The registration is remembered per session; a query uses it only while the
view of that name is still the one registered (a view replaced since is just
a view).

For every table a query names, :func:`resolve` asks Spark for its schema, as
the query will see it: what qualifies columns, what a view over the kept files
must be typed as, and (for an indexed table) where its index is.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass
from functools import partial
from typing import Any

from skipindex.errors import SkipIndexError
from skipindex.pruning.listed import Listed, list_table
from skipindex.pruning.prune import RowLevel, prune, prune_listed
from skipindex.pruning.result import PruneResult
from skipindex.reading.delta import delta_rows, logical_schema, physical_schema
from skipindex.reading.held import Held, held_folder
from skipindex.reading.read import delta_spark_schema
from skipindex.sql.derive import Catalog, Parsed
from skipindex.sql.held_listing import HeldListing
from skipindex.sql.references import TableKey
from skipindex.store.delta import delta_version
from skipindex.store.location import StorageOptions, TableLocation, locate

__all__ = [
    "Registration",
    "Source",
    "known_tables",
    "register",
    "resolve",
    "same_name",
    "spark_type",
]


@dataclass(frozen=True)
class Registration:
    """A view :func:`register` made."""

    name: str
    path: str
    storage_options: tuple[tuple[str, str], ...]
    held: Held  # the DataFrame the view is: it holds the listing and the schema
    delta_version: int | None  # Delta: the snapshot the view is
    listing: HeldListing | None = None  # a Parquet view's listing, renewed with Spark's
    view: Any = None  # the session catalog's entry for the view as made (JVM), if reachable


@dataclass(frozen=True)
class Source:
    """An indexed table a reference reads, typed as the reference sees it."""

    path: str
    location: TableLocation
    storage_options: tuple[tuple[str, str], ...]
    schema: Any  # pyspark StructType
    must_replace: bool = False  # Spark cannot read the reference itself (delta. paths)
    delta_version: int | None = None  # a registered Delta view's snapshot
    # A relation over the whole table that holds its listing (a Parquet folder): the
    # registered view's own DataFrame, or one held per folder (reading/held.py).
    held: Any = None
    registered: bool = False  # the reference names a view register() made
    # The files the registered view holds (None: listed by each prune, as prune does).
    listed: Listed | None = None

    def prune(
        self, where: Any, time_zone: str, case_sensitive: bool, row_level: RowLevel = "auto"
    ) -> PruneResult:
        """:func:`~skipindex.prune` of this table: over the files the view holds
        where it holds them, else over the table as listed now."""
        if self.listed is not None:
            return prune_listed(
                self.listed,
                where,
                time_zone=time_zone,
                case_sensitive=case_sensitive,
                row_level=row_level,
            )
        return prune(
            self.path,
            where,
            time_zone=time_zone,
            case_sensitive=case_sensitive,
            storage_options=dict(self.storage_options) or None,
            row_level=row_level,
        )


def same_name(name: str, column: str, case_sensitive: bool) -> bool:
    """Whether ``name`` names ``column`` as the session compares names."""
    return name == column or (not case_sensitive and name.lower() == column.lower())


def spark_type(schema: Any, column: str, case_sensitive: bool) -> str | None:
    """The Spark type (``simpleString``) of the one field of ``schema`` that
    ``column`` names (None: none, or more than one)."""
    hits = [f for f in schema.fields if same_name(f.name, column, case_sensitive)]
    return hits[0].dataType.simpleString() if len(hits) == 1 else None


# Table names whose source a caller already established in this session (the
# gateway: a catalog table it confirmed is a Parquet folder), lower-cased.
_known: ContextVar[Mapping[str, Source] | None] = ContextVar("skipindex_known_tables", default=None)


@contextmanager
def known_tables(sources: Mapping[str, Source]) -> Iterator[None]:
    """In the block, a query's unqualified reference to one of ``sources``' names
    (compared ignoring case, as Spark's catalog compares table names) is that
    source, unless the query defines the name itself (a CTE)."""
    token = _known.set({name.lower(): source for name, source in sources.items()})
    try:
        yield
    finally:
        _known.reset(token)


_registrations: weakref.WeakKeyDictionary[Any, dict[str, Registration]] = (
    weakref.WeakKeyDictionary()
)


def register(
    spark: Any, name: str, path: str, *, storage_options: StorageOptions | None = None
) -> None:
    """Make ``name`` a temporary view of the table at ``path`` that :func:`sql`
    prunes with the table's index (replacing a view of that name). The view is
    a DataFrame's: it holds the folder's listing and schema as Spark took them
    now, until ``REFRESH TABLE name`` or another ``register``."""
    location = locate(path, storage_options)
    options = tuple(sorted((storage_options or {}).items()))
    if location.is_delta:
        version = delta_version(location.uri, location.user_root, dict(location.options))
        frame = _delta_frame(spark, location)
        frame.createOrReplaceTempView(name)
        entry = Registration(
            name, location.user_root, options, Held.of(frame), version, None, _view(spark, name)
        )
    else:
        from skipindex.spark.session import escape_glob

        relist = partial(list_table, location.user_root, storage_options)
        before = _listed_now(relist)
        frame = spark.read.parquet(escape_glob(location.user_root))
        frame.createOrReplaceTempView(name)
        listing = None if before is None else HeldListing.take(frame, relist, before)
        entry = Registration(
            name, location.user_root, options, Held.of(frame), None, listing, _view(spark, name)
        )
    _registrations.setdefault(spark, {})[name.lower()] = entry


def _listed_now(relist: Callable[[], Listed]) -> Listed | None:
    """The table listed now; None where skipindex cannot list it (its prunes will
    say why, as they do for a view registered before)."""
    try:
        return relist()
    except (SkipIndexError, OSError):
        return None


def _path_sql(path: str) -> str:
    return "`" + path.replace("`", "``") + "`"


def _delta_frame(spark: Any, location: TableLocation) -> Any:
    """Every file of the Delta table's current snapshot, typed as its log says."""
    listing = location.list_table()
    order = listing.in_order()
    values = listing.partition_values
    assert values is not None  # a Delta listing carries its logged partition values
    paths = location.user_paths(listing, order)
    raw = delta_spark_schema(location, raw=True)
    deleted = {location.user_path(p): rows for p, rows in listing.deleted.items()}
    return delta_rows(
        spark,
        location.user_root,
        paths,
        values.take(order),
        logical_schema(raw),
        deleted,
        physical_schema(raw),
    )


def registration(spark: Any, name: str, case_sensitive: bool) -> Registration | None:
    """The registration behind view ``name``, if the view is still the one
    :func:`register` made."""
    entries = _registrations.get(spark, {})
    entry = entries.get(name.lower())
    if entry is None or (case_sensitive and entry.name != name):
        return None
    return entry if _still_registered(spark, entry) else None


def _view(spark: Any, name: str) -> Any:
    """The session catalog and its entry for temporary view ``name`` now (JVM
    objects; None on Spark Connect)."""
    try:
        catalog = spark._jsparkSession.sessionState().catalog()
        return catalog, catalog.getRawTempView(name)
    except Exception:
        return None


def _still_registered(spark: Any, entry: Registration) -> bool:
    """Whether the temporary view of ``entry``'s name is still the DataFrame
    :func:`register` made: its catalog entry is the one made then (the same
    object, or one equal to it field by field: two calls into the JVM), else
    its plan is the DataFrame's."""
    if entry.view is not None:
        catalog, made = entry.view
        with suppress(Exception):  # the JVM out of reach: ask as below
            return bool(catalog.getRawTempView(entry.name).equals(made))
    try:
        found = spark._jsparkSession.sessionState().catalog().getRawTempView(entry.name)
        if not found.isDefined():
            return False
        plan = found.get().plan()
        return bool(plan.isDefined() and plan.get().equals(_analyzed(entry.held.frame)))
    except Exception:  # Spark Connect: no JVM here; ask Spark whether the plans agree
        try:
            return bool(spark.table(_quoted(entry.name)).sameSemantics(entry.held.frame))
        except Exception:
            return False


def _analyzed(frame: Any) -> Any:
    return frame._jdf.queryExecution().analyzed()


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def resolve(spark: Any, parsed: Parsed) -> tuple[Catalog, dict[TableKey, Source]]:
    """The schema of every table ``parsed`` names (as column -> Spark type, for
    :func:`~skipindex.sql.derive.derive`), and the indexed ones' sources."""
    catalog: dict[TableKey, Mapping[str, str]] = {}
    sources: dict[TableKey, Source] = {}
    ctes = _cte_names(parsed)
    for reference in parsed.references:
        key = reference.key
        if key in catalog or key.kind == "other" or (key.kind == "name" and key.name in ctes):
            continue
        found = _source(spark, key, parsed.case_sensitive)
        schema = found.schema if found is not None else _schema_of(spark, key)
        if schema is None:
            continue
        if found is not None:
            sources[key] = found
        catalog[key] = _columns(schema, parsed.case_sensitive)
    return catalog, sources


def _cte_names(parsed: Parsed) -> set[str]:
    from sqlglot import exp

    names = {cte.alias_or_name for cte in parsed.tree.find_all(exp.CTE)}
    return names if parsed.case_sensitive else {n.lower() for n in names}


def _source(spark: Any, key: TableKey, case_sensitive: bool) -> Source | None:
    try:
        known = _known.get() or {}
        if key.kind == "name" and key.name.lower() in known:
            return known[key.name.lower()]
        if key.kind == "name":
            entry = registration(spark, key.name, case_sensitive)
            if entry is None:
                return None
            listed = None if entry.listing is None else entry.listing.current()
            location = (
                locate(entry.path, dict(entry.storage_options))
                if listed is None
                else listed.location
            )
            held = entry.held.frame if entry.delta_version is None else None
            return Source(
                entry.path,
                location,
                entry.storage_options,
                entry.held.schema,  # the view's own: it holds its schema
                delta_version=entry.delta_version,
                held=held,
                registered=True,
                listed=listed,
            )
        location = locate(key.name)
        if key.kind == "parquet":
            if location.is_delta:
                return None  # Spark reads the folder's files, removed ones included
            held = held_folder(spark, location)
            if held is None:
                return Source(key.name, location, (), _schema_of(spark, key))
            return Source(key.name, location, (), held.schema, held=held.frame)
        if key.kind == "delta" and location.is_delta:
            schema = _schema_of(spark, key)  # with Spark's Delta connector, its schema
            if schema is not None:
                return Source(key.name, location, (), schema)
            return Source(key.name, location, (), delta_spark_schema(location), True)
    except (SkipIndexError, OSError, ValueError):
        return None
    return None


def _schema_of(spark: Any, key: TableKey) -> Any:
    """The schema Spark gives the reference (None where Spark cannot read it)."""
    text = _quoted(key.name) if key.kind == "name" else f"{key.kind}.{_path_sql(key.name)}"
    try:
        return spark.sql(f"SELECT * FROM {text}").schema  # noqa: S608
    except Exception:
        return None


def _columns(schema: Any, case_sensitive: bool) -> dict[str, str]:
    return {
        (f.name if case_sensitive else f.name.lower()): f.dataType.simpleString()
        for f in schema.fields
    }
