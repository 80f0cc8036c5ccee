"""A ``SQL`` relation: the same query, over the kept files of its indexed tables.

The query runs through :func:`skipindex.sql_plan` in the client's own session
(see :mod:`.sessions`), so it means exactly what it means there. A policy's
table name is pruned as its Parquet folder only once the session says, at this
query, that the name is that folder: ``DESCRIBE TABLE EXTENDED`` shows a catalog
table (not a temporary view, which may be anything) of provider ``parquet`` at
that location, with no storage options and no partitions kept in the catalog.
The kept files are then read with the table's own schema, as Spark reads the
table. Anything else is left as the client sent it.
"""

from __future__ import annotations

import posixpath
import re
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from skipindex.sql.catalog import Source, known_tables
from skipindex.sql.derive import Parsed, parse
from skipindex.sql.plan import SqlPlan
from skipindex.sql.query import sql_plan
from skipindex.store.location import locate

__all__ = ["SqlRewrite", "indexed_folder_bytes", "may_name_an_index", "rewrite_sql"]

_PATH_REFERENCE = re.compile(r"\b(parquet|delta)\s*\.\s*`", re.IGNORECASE)
# (session, what DESCRIBE said) -> the table's schema: DESCRIBE lists every column
# and its type, so while its answer is the same, so is the schema.
_SCHEMAS: dict[tuple[Any, ...], Any] = {}
_SCHEMAS_MAX = 4096
_LOCK = threading.Lock()


@dataclass(frozen=True)
class SqlRewrite:
    relation: Any  # spark.connect.Relation: the query over the kept files
    plan: SqlPlan


def rewrite_sql(
    session_for: Callable[[], Any], node: Any, tables: Mapping[str, str], min_bytes: int
) -> SqlRewrite | None:
    """The pruned form of the ``SQL`` relation ``node`` (None: send it as it is).
    ``session_for()`` gives the client's session; where no indexed table it names
    reaches ``min_bytes``, the query goes as sent before any round trip."""
    sql = node.sql
    if sql.args or sql.pos_args or sql.named_arguments or sql.pos_arguments:
        return None  # a parameterized query: its markers are not ours to fill
    text = str(sql.query)
    if not may_name_an_index(text, tables):
        return None  # no extra round trip for a query that reads no indexed table
    parsed = parse(text)
    if parsed is None or _largest_indexed(parsed, tables) < min_bytes:
        return None
    session = session_for()
    with known_tables(_confirmed(session, parsed, tables)):
        plan = sql_plan(session, text)
    if not any(reference.replaced for reference in plan.references):
        return None  # nothing skipped: Spark gets the query exactly as sent
    relation = plan.frame._plan.plan(session.client)
    return SqlRewrite(relation, plan)


def may_name_an_index(text: str, tables: Mapping[str, str]) -> bool:
    """Whether ``text`` may read an indexed table: a path, or a policy table's name."""
    lowered = text.lower()
    return bool(_PATH_REFERENCE.search(text)) or any(
        re.search(rf"\b{re.escape(name)}\b", lowered) for name in tables
    )


def _largest_indexed(parsed: Parsed, tables: Mapping[str, str]) -> int:
    """Bytes of the largest indexed folder the query names (policy tables and paths).
    The largest, not the sum: the gateway's cost grows with the references it
    plans, and three small facts one query reads save no more than one of them."""
    folders = set()
    for reference in parsed.references:
        name = reference.key.name
        if reference.key.kind == "name" and name.lower() in tables:
            folders.add(tables[name.lower()])
        elif reference.key.kind == "parquet":
            folders.add(name)
    return max((indexed_folder_bytes(folder) for folder in folders), default=0)


def indexed_folder_bytes(folder: str) -> int:
    """The bytes of ``folder``'s data files where it holds an index, else 0."""
    try:
        location = locate(folder)
        if location.is_delta or not location.exists(location.index_dir):
            return 0
        return int(location.list_table().sizes.sum())
    except Exception:  # not a folder we can read: nothing to prune there
        return 0


def _confirmed(session: Any, parsed: Parsed, tables: Mapping[str, str]) -> dict[str, Source]:
    """The policy tables the query names that the session confirms are their folders."""
    named = {r.key.name.lower(): r.written for r in parsed.references if r.key.kind == "name"}
    asked = [(name, written) for name, written in named.items() if name in tables]
    # One round trip per name, all at once: a star schema names a table per dimension.
    with ThreadPoolExecutor(max_workers=min(8, len(asked) or 1)) as pool:
        schemas = list(
            pool.map(lambda item: _folder_table_schema(session, item[1], tables[item[0]]), asked)
        )
    return {
        name: Source(tables[name], locate(tables[name]), (), schema)
        for (name, _), schema in zip(asked, schemas, strict=True)
        if schema is not None
    }


def _folder_table_schema(session: Any, written: str, folder: str) -> Any | None:
    """The schema of the table ``written`` names in the client's session, where it
    is a plain catalog table over the Parquet folder ``folder`` (else None)."""
    try:
        rows = _command_rows(session, f"DESCRIBE TABLE EXTENDED {written}")
    except Exception:  # not a table the client can see: not ours to read
        return None
    details = {str(r[0]).strip(): str(r[1] or "").strip() for r in rows if r[0]}
    if details.get("Type", "").upper() not in ("EXTERNAL", "MANAGED"):
        return None  # a view (temporary or not) may be anything
    if details.get("Provider", "").lower() != "parquet":
        return None
    if details.get("Partition Provider", "").lower() == "catalog":
        return None  # partitions the catalog lists, wherever they are
    if details.get("Storage Properties", "") not in ("", "[]"):
        return None  # options may change what Spark reads
    if _normal(details.get("Location", "")) != _normal(folder):
        return None
    key = (session.session_id, tuple(tuple(map(str, r)) for r in rows))
    with _LOCK:
        known = _SCHEMAS.get(key)
    if known is not None:
        return known
    try:
        schema = session.table(written).schema
    except Exception:
        return None
    with _LOCK:
        if len(_SCHEMAS) > _SCHEMAS_MAX:
            _SCHEMAS.clear()
        _SCHEMAS[key] = schema
    return schema


def _command_rows(session: Any, text: str) -> list[tuple[Any, ...]]:
    """The rows of a SQL command, from the command's own answer where it holds
    them (one round trip, where ``session.sql(text).collect()`` takes two)."""
    import pyarrow as pa
    from pyspark.sql.connect.plan import SQL

    _, properties, _ = session.client.execute_command(SQL(text).command(session.client))
    relation = properties.get("sql_command_result")
    if relation is not None and relation.WhichOneof("rel_type") == "local_relation":
        local = relation.local_relation
        if local.HasField("data"):
            table = pa.ipc.open_stream(local.data).read_all()
            return [tuple(row.values()) for row in table.to_pylist()]
    return [tuple(row) for row in session.sql(text).collect()]


def _normal(path: str) -> str:
    """A local folder as a plain path (``file:/x``, ``file:///x`` and ``/x/`` alike)."""
    if path.startswith("file:"):
        path = "/" + path.removeprefix("file:").lstrip("/")
    return posixpath.normpath(path) if path else path
