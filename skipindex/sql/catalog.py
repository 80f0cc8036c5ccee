"""The tables a query names: views :func:`register` made, paths, and their schemas.

``register(spark, name, path)`` makes a temporary view that reads the table as
Spark reads ``parquet.`path```: the view's SQL names the path, so each query
lists the folder again (new files show, as with the path itself). A Delta
table's view is its snapshot's files (the folder also holds removed files),
typed as the Delta log types them, and remembers the snapshot's version.
The registration is remembered per session; a query uses it only while the
view of that name is still the one registered (a view replaced since is just
a view).

For every table a query names, :func:`resolve` asks Spark for its schema, as
the query will see it: what qualifies columns, what a view over the kept files
must be typed as, and (for an indexed table) where its index is.
"""

from __future__ import annotations

import functools
import hashlib
import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from skipindex.errors import SkipIndexError
from skipindex.reading.delta import delta_rows, logical_schema, physical_schema
from skipindex.reading.read import delta_spark_schema
from skipindex.sql.derive import Catalog, Parsed
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
    view_text: str | None  # Parquet: the view's SQL
    frame: Any  # Delta: the DataFrame the view is
    delta_version: int | None


@dataclass(frozen=True)
class Source:
    """An indexed table a reference reads, typed as the reference sees it."""

    path: str
    location: TableLocation
    storage_options: tuple[tuple[str, str], ...]
    schema: Any  # pyspark StructType
    must_replace: bool = False  # Spark cannot read the reference itself (delta. paths)
    delta_version: int | None = None  # a registered Delta view's snapshot


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
# Per session and view name: the registration, the fingerprint of what Spark's
# schema of it depends on, and that schema (see _view_schema).
_schemas: weakref.WeakKeyDictionary[Any, dict[str, tuple[Registration, Any, Any]]] = (
    weakref.WeakKeyDictionary()
)


def register(
    spark: Any, name: str, path: str, *, storage_options: StorageOptions | None = None
) -> None:
    """Make ``name`` a temporary view of the table at ``path`` that :func:`sql`
    prunes with the table's index (replacing a view of that name)."""
    location = locate(path, storage_options)
    options = tuple(sorted((storage_options or {}).items()))
    quoted = "`" + name.replace("`", "``") + "`"
    if location.is_delta:
        version = delta_version(location.uri, location.user_root, dict(location.options))
        frame = _delta_frame(spark, location)
        frame.createOrReplaceTempView(name)
        entry = Registration(name, location.user_root, options, None, frame, version)
    else:
        text = f"SELECT * FROM parquet.{_path_sql(location.user_root)}"  # noqa: S608
        spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW {quoted} AS {text}")
        entry = Registration(name, location.user_root, options, text, None, None)
    _registrations.setdefault(spark, {})[name.lower()] = entry


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


def _still_registered(spark: Any, entry: Registration) -> bool:
    if entry.view_text is not None:
        text = _view_text(spark, entry.name)
        if text is not None:
            return text == entry.view_text
    try:
        current = spark.table(_quoted(entry.name))
        expected = entry.frame if entry.frame is not None else spark.sql(entry.view_text)
        return bool(current.sameSemantics(expected))
    except Exception:
        return False


def _view_text(spark: Any, name: str) -> str | None:
    """A temporary view's SQL (classic sessions; None where it is out of reach)."""
    try:
        found = spark._jsparkSession.sessionState().catalog().getRawTempView(name)
        if not found.isDefined():
            return ""
        text = found.get().tableMeta().viewText()
        return str(text.get()) if text.isDefined() else ""
    except Exception:
        return None


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def resolve(spark: Any, parsed: Parsed) -> tuple[Catalog, dict[TableKey, Source]]:
    """The schema of every table ``parsed`` names (as column -> Spark type, for
    :func:`~skipindex.sql.derive.derive`), and the indexed ones' sources."""
    catalog: dict[TableKey, Mapping[str, str]] = {}
    sources: dict[TableKey, Source] = {}
    ctes = _cte_names(parsed)
    settings = _Settings(spark)
    for reference in parsed.references:
        key = reference.key
        if key in catalog or key.kind == "other" or (key.kind == "name" and key.name in ctes):
            continue
        found = _source(spark, key, parsed.case_sensitive, settings)
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


class _Settings:
    """The session's settings, asked of Spark once per query: in one call
    where the session is classic (0.5 ms; ``conf.getAll`` converts entry by
    entry, 15-25 ms). The text only ever has to equal itself."""

    def __init__(self, spark: Any) -> None:
        self._spark = spark

    @functools.cached_property
    def items(self) -> Any:
        try:
            return str(self._spark._jsparkSession.conf().getAll().toString())
        except Exception:  # Spark Connect: no JVM session here
            return tuple(sorted(self._spark.conf.getAll.items()))


def _source(spark: Any, key: TableKey, case_sensitive: bool, settings: _Settings) -> Source | None:
    try:
        known = _known.get() or {}
        if key.kind == "name" and key.name.lower() in known:
            return known[key.name.lower()]
        if key.kind == "name":
            entry = registration(spark, key.name, case_sensitive)
            if entry is None:
                return None
            location = locate(entry.path, dict(entry.storage_options))
            schema = _view_schema(spark, entry, location, settings)
            return Source(
                entry.path, location, entry.storage_options, schema, False, entry.delta_version
            )
        location = locate(key.name)
        if key.kind == "parquet":
            if location.is_delta:
                return None  # Spark reads the folder's files, removed ones included
            return Source(key.name, location, (), _schema_of(spark, key))
        if key.kind == "delta" and location.is_delta:
            schema = _schema_of(spark, key)  # with Spark's Delta connector, its schema
            if schema is not None:
                return Source(key.name, location, (), schema)
            return Source(key.name, location, (), delta_spark_schema(location), True)
    except (SkipIndexError, OSError, ValueError):
        return None
    return None


def _view_schema(
    spark: Any, entry: Registration, location: TableLocation, settings: _Settings
) -> Any:
    """The schema Spark gives the registered view: asked once, then again only
    when the table's files or the session's settings have changed since.

    Spark infers a folder's schema from its files (their footers, and partition
    folders from their paths) and the session's settings; asking analyses the
    view, which lists the folder and reads a footer, about what the query itself
    costs Spark to plan. A listing of the same files (path, size, mtime) under the
    same settings gets the same schema."""
    state = _fingerprint(location, settings)
    cached = _schemas.get(spark, {}).get(entry.name.lower())
    if state is not None and cached is not None and cached[0] is entry and cached[1] == state:
        return cached[2]
    schema = spark.table(_quoted(entry.name)).schema
    if state is not None:
        _schemas.setdefault(spark, {})[entry.name.lower()] = (entry, state, schema)
    return schema


def _fingerprint(location: TableLocation, settings: _Settings) -> tuple[Any, ...] | None:
    """What Spark's schema of the table depends on: its files, any summary files
    beside them and the session's settings (None: not known, ask Spark)."""
    try:
        listing = location.list_table()
        summaries = location.fs.get_file_info(
            [f"{location.root}/_metadata", f"{location.root}/_common_metadata"]
        )
        session = settings.items
    except Exception:
        return None
    files = hashlib.sha256()
    for part in (listing.paths.to_pylist(), listing.sizes.tolist(), listing.mtimes_ms.tolist()):
        files.update(repr(part).encode())
    stamps = tuple((int(i.type), i.size, i.mtime_ns) for i in summaries)
    return files.hexdigest(), tuple(listing.not_parquet), stamps, session


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
