"""A ``SQL`` relation: the same query, over the kept files of its indexed tables.

The query runs through :func:`skipindex.sql_plan` in the client's own session
(see :mod:`.sessions`), so it means exactly what it means there. A policy's
table name is read as its Parquet folder only once the session says the name is
that folder: not a temporary view, a catalog table of provider ``parquet`` at
that location, with no storage options and no partitions kept in the catalog,
and typed as Spark types the folder. Anything else is left as the client sent it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from skipindex.sql.derive import parse
from skipindex.sql.plan import SqlPlan
from skipindex.sql.query import sql_plan
from skipindex.sql.references import Reference

__all__ = ["SqlRewrite", "may_name_an_index", "rewrite_sql"]

_PATH_REFERENCE = re.compile(r"\b(parquet|delta)\s*\.\s*`", re.IGNORECASE)


@dataclass(frozen=True)
class SqlRewrite:
    relation: Any  # spark.connect.Relation: the query over the kept files
    plan: SqlPlan


def rewrite_sql(session: Any, node: Any, tables: Mapping[str, str]) -> SqlRewrite | None:
    """The pruned form of the ``SQL`` relation ``node`` (None: send it as it is)."""
    sql = node.sql
    if sql.args or sql.pos_args or sql.named_arguments or sql.pos_arguments:
        return None  # a parameterized query: its markers are not ours to fill
    text = str(sql.query)
    if not may_name_an_index(text, tables):
        return None  # no extra round trip for a query that reads no indexed table
    by_folder = _names_as_folders(session, text, tables)
    if by_folder is None:
        return None
    plan = sql_plan(session, by_folder)
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


def _names_as_folders(session: Any, text: str, tables: Mapping[str, str]) -> str | None:
    """``text`` with each reference to a policy table the session confirms
    replaced by ``parquet.`folder``` (None: the text does not parse)."""
    parsed = parse(text)
    if parsed is None:
        return None
    from sqlglot import exp

    ctes = {cte.alias_or_name.lower() for cte in parsed.tree.find_all(exp.CTE)}
    spans: dict[tuple[int, int], str] = {}
    confirmed: dict[str, bool] = {}
    for reference in parsed.references:
        name = reference.key.name.lower()
        if reference.key.kind != "name" or name in ctes or name not in tables:
            continue
        if name not in confirmed:
            confirmed[name] = _is_the_folder(session, reference.written, tables[name])
        if confirmed[name]:
            spans[(reference.start, reference.end)] = _folder_reference(reference, tables[name])
    out, at = [], 0
    for (start, end), replacement in sorted(spans.items()):
        out += [text[at:start], replacement]
        at = end
    return "".join([*out, text[at:]])


def _folder_reference(reference: Reference, folder: str) -> str:
    quoted = "parquet.`" + folder.replace("`", "``") + "`"
    return reference.replacement(quoted)


def _is_the_folder(session: Any, written: str, folder: str) -> bool:
    """Whether ``written`` names, in the client's session, the Parquet folder ``folder``."""
    try:
        rows = session.sql(f"DESCRIBE TABLE EXTENDED {written}").collect()
    except Exception:  # not a table the client can see: not ours to read
        return False
    details = {str(r[0]).strip(): str(r[1] or "").strip() for r in rows if r[0]}
    if details.get("Type", "").upper() not in ("EXTERNAL", "MANAGED"):
        return False  # a view (temporary or not) may be anything
    if details.get("Provider", "").lower() != "parquet":
        return False
    if details.get("Partition Provider", "").lower() == "catalog":
        return False  # partitions the catalog lists, wherever they are
    if details.get("Storage Properties", "") not in ("", "[]"):
        return False  # options may change what Spark reads
    try:
        if _normal(details.get("Location", "")) != _normal(folder):
            return False
        table = session.table(written).schema
        quoted = folder.replace("`", "``")
        files = session.sql(f"SELECT * FROM parquet.`{quoted}`").schema  # noqa: S608 -- a path
    except Exception:
        return False
    return bool(table == files)


def _normal(path: str) -> str:
    """A local folder as a plain path (``file:/x``, ``file:///x`` and ``/x/`` alike)."""
    if path.startswith("file:"):
        path = "/" + path.removeprefix("file:").lstrip("/")
    return posixpath.normpath(path) if path else path
