"""The workload the advisor plans for: per query, the predicate that prunes the table.

Queries come from the query log (what ``prune``, ``read`` and ``sql`` recorded
for this table: each distinct predicate once, weighted by how often it ran) or
from texts: a SQL query names the table by one of ``names`` (default: the
folder's name) or as ``parquet.`/path```, and the conditions every row it
contributes meets are derived exactly as ``si.sql`` derives them (through
joins, CTEs, subqueries; :mod:`skipindex.sql.derive`); any other text is a
predicate (``l_shipdate >= DATE '1994-01-01'``). A query that gives the table
no condition reads every file whatever the plan: it is kept, so that totals
say so.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq
import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from skipindex._types import spark_type_name
from skipindex.errors import InvalidPredicateError, InvalidSpecError
from skipindex.sql.derive import derive, parse
from skipindex.sql.references import TableKey
from skipindex.store import query_log
from skipindex.store.location import TableLocation

__all__ = ["Query", "from_log", "from_texts", "read_queries", "table_schema"]


@dataclass(frozen=True)
class Query:
    """One query of the workload as this table sees it."""

    label: str  # for people: "q3" or the first words of the text
    where: str | None  # the predicate that prunes the table (None: reads it whole)
    weight: float = 1.0  # how many times it runs
    time_zone: str = "UTC"


def table_schema(location: TableLocation) -> pa.Schema:
    """The schema of the table's first data file (the advisor's columns)."""
    files = location.list_data_files()
    if not files:
        raise InvalidPredicateError(f"{location.user_root}: no data files to advise on")
    with location.fs.open_input_file(f"{location.root}/{files[0].path}") as handle:
        return pq.read_schema(handle)


def from_texts(
    texts: Sequence[str] | Mapping[str, str],
    location: TableLocation,
    schema: pa.Schema,
    names: Iterable[str] = (),
    time_zone: str = "UTC",
) -> list[Query]:
    """Each text as a query of the table (SQL) or a predicate over it, labelled
    by its name (``texts`` a mapping) or its number."""
    keys = {TableKey("name", n.lower()) for n in names} or {
        TableKey("name", os.path.basename(location.user_root.rstrip("/")).lower())
    }
    keys.add(TableKey("parquet", location.user_root))
    columns = {f.name.lower(): spark_type_name(f.type) for f in schema}
    found: list[Query] = []
    named = (
        texts.items()
        if isinstance(texts, Mapping)
        else [(f"q{n}", t) for n, t in enumerate(texts, start=1)]
    )
    for label, text in named:
        if not _is_query(text):
            found.append(Query(label, text.strip(), 1.0, time_zone))
            continue
        found.extend(_references(text, label, keys, columns, time_zone))
    return found


def _is_query(text: str) -> bool:
    try:
        tree = sqlglot.parse_one(text, dialect="spark")
    except SqlglotError:
        return False
    return isinstance(tree, exp.Query)


def _references(
    text: str, label: str, keys: set[TableKey], columns: dict[str, str], zone: str
) -> list[Query]:
    parsed = parse(text)
    if parsed is None:
        return []
    mine = [r for r in parsed.references if r.key in keys]
    if not mine:
        return []  # the query does not read this table
    derivation = derive(parsed, {r.key: columns for r in mine})
    out = []
    for position, reference in enumerate(mine):
        where = None if derivation.why_whole else derivation.where(reference.number)
        suffix = f".{position + 1}" if len(mine) > 1 else ""
        out.append(Query(f"{label}{suffix}", where, 1.0, zone))
    return out


def from_log(log: str, location: TableLocation, limit: int = 10_000) -> list[Query]:
    """The table's logged prunes, each distinct (predicate, zone) once with its count."""
    records = query_log.queries(log, location.user_root, limit=limit)
    counts = Counter((r.predicate, r.time_zone) for r in records)
    return [
        Query(f"log{number}", None if where == "TRUE" else where, float(count), zone)
        for number, ((where, zone), count) in enumerate(counts.most_common(), start=1)
    ]


def read_queries(path: str) -> dict[str, str]:
    """The queries of a file: each ended by ``;`` (the last may not be), named by
    a ``-- name`` line before it, else by its number."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        raise InvalidSpecError(f"cannot read the queries file {path}: {exc.strerror}") from None
    found: dict[str, str] = {}
    for number, chunk in enumerate((c for c in text.split(";") if c.strip()), start=1):
        lines = [line for line in chunk.strip().splitlines() if line.strip()]
        name = f"q{number}"
        if lines and lines[0].lstrip().startswith("--"):
            name = lines.pop(0).lstrip()[2:].strip() or name
        if lines:
            found[name] = "\n".join(lines)
    return found
