"""``Filter`` over a ``Read`` of an indexed Parquet folder: the same filters over
the kept files.

``spark.read.parquet(path).filter(a).where(b)`` arrives as filters stacked on a
``Read`` of the folder. Where the read is plain (format ``parquet``, one path,
no schema, options or predicates of the client's) and the folder holds a
skipindex index, the read becomes ``si.read``'s reading of the files the filters'
conjunction can match, typed exactly as Spark types the folder (else nothing
changes). The client's filters stay as they were sent: Spark still applies them,
with the client's own column references.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from skipindex.expressions.column import parse_column
from skipindex.expressions.leaves import connect
from skipindex.expressions.visitors import Shape
from skipindex.gateway.sql_node import indexed_folder_bytes
from skipindex.spark.settings import SparkView
from skipindex.sql.catalog import Source
from skipindex.sql.frames import Pruned, prune_source
from skipindex.store.location import locate

__all__ = ["ReadRewrite", "rewrite_filtered_read"]


@dataclass(frozen=True)
class ReadRewrite:
    relation: Any  # spark.connect.Relation: the filters over the kept files
    path: str
    pruned: Pruned


def rewrite_filtered_read(
    session_for: Callable[[], Any], node: Any, fit: Callable[[Any, Any], Any], min_bytes: int
) -> ReadRewrite | None:
    """The pruned form of the ``Filter`` relation ``node`` (None: send it as it is).
    ``session_for()`` gives the client's session, asked for only where it is needed;
    ``fit(relation, read)`` gives the kept files' relation the read's plan id."""
    filters, below = [], node
    while below.WhichOneof("rel_type") == "filter":
        filters.append(below)
        below = below.filter.input
    read = below.read if below.WhichOneof("rel_type") == "read" else None
    if read is None or read.WhichOneof("read_type") != "data_source" or read.is_streaming:
        return None
    source = read.data_source
    plain = not (source.schema or source.options or source.predicates)
    if source.format.lower() != "parquet" or len(source.paths) != 1 or not plain:
        return None
    path = str(source.paths[0])
    if indexed_folder_bytes(path) < max(min_bytes, 1):
        return None  # not indexed, or too small for the round trips to pay
    location = locate(path)
    session = session_for()
    view = SparkView.of_session(session)
    conditions = [parse_column(f.filter.condition) for f in filters]
    where = conditions[0] if len(conditions) == 1 else connect(Shape.AND, conditions)
    schema = session.read.parquet(path).schema
    pruned = prune_source(session, Source(path, location, (), schema), where, view)
    if pruned.frame is None:
        return None
    kept = fit(pruned.frame._plan.plan(session.client), below)
    rewritten = type(node)()
    rewritten.CopyFrom(node)
    innermost = rewritten
    for _ in range(len(filters) - 1):
        innermost = innermost.filter.input
    innermost.filter.input.CopyFrom(kept)
    return ReadRewrite(rewritten, path, pruned)
