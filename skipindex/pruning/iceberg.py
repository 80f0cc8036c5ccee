"""Pruning an Iceberg table: columns by field id, and Iceberg's own planning.

The index names columns as the table named them when it was built; a snapshot
may call them otherwise since (a rename keeps the field id). :func:`snapshot_view`
matches the index's definitions to the snapshot's columns by field id, binds the
predicate against the snapshot's schema, and leaves out a definition whose
column changed type since (``int`` promoted to ``long``: its payloads are in the
old type; the next build indexes it again).

Iceberg's planning decides too (:func:`planned`): the snapshot's manifests
hold each file's partition values, under whichever partition spec wrote it
(identity, bucket, truncate, year/month/day/hour), and per-file column metrics;
pyiceberg's scan planning rules files out by them, as Iceberg's own readers do,
and a file it rules out holds no matching row. Only conditions whose meaning is
the same in Spark and in Iceberg are handed over (integers, decimals, strings,
dates, timestamps, booleans; equalities, ranges, IN, IS [NOT] NULL); the rest
count as TRUE there, which only keeps more.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import numpy as np
import pyarrow as pa

from skipindex._types import Domain, domain_of
from skipindex.column_paths import field_at, join_path
from skipindex.expressions.calls import is_expression_field
from skipindex.expressions.nodes import (
    AlwaysFalse,
    And,
    AnyPredicate,
    BoundComparison,
    BoundIn,
    BoundIsNull,
    BoundPredicate,
    Op,
    Or,
    children_of,
)
from skipindex.expressions.visitors import fold
from skipindex.store.iceberg import IcebergSource, field_ids, iceberg_arrow_schema, plain_path
from skipindex.store.location import Listing, TableLocation
from skipindex.store.manifest import Manifest

__all__ = ["by_field_id", "planned", "snapshot_view"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_HANDED_OVER = {Domain.INT, Domain.DECIMAL, Domain.STRING, Domain.DATE, Domain.TIMESTAMP,
                Domain.BOOLEAN}  # fmt: skip


def snapshot_view(source: IcebergSource, manifest: Manifest) -> Manifest:
    """``manifest`` as the snapshot sees the table: its schema the snapshot's (with
    the index's expression fields), its definitions renamed by field id, those on
    a dropped or retyped column left out."""
    return by_field_id(iceberg_arrow_schema(source), manifest)


def by_field_id(snapshot: pa.Schema, manifest: Manifest) -> Manifest:
    """``manifest`` as a table whose files are read by field id sees it now
    (``snapshot``: its schema, each field with its id): see :func:`snapshot_view`."""
    now = field_ids(snapshot)
    then = field_ids(manifest.arrow_schema)
    renamed = {join_path(path): join_path(now[i]) for i, path in then.items() if i in now}
    definitions = []
    for definition in manifest.indexes:
        if definition.expression is not None:
            definitions.append(definition)
            continue
        column = renamed.get(definition.column)
        if column is None:
            continue
        before = field_at(manifest.arrow_schema, definition.column).type
        if field_at(snapshot, column).type != before:
            continue
        definitions.append(replace(definition, column=column))
    extra = [f for f in manifest.arrow_schema if is_expression_field(f)]
    schema = pa.schema([*snapshot, *extra])
    return replace(manifest, arrow_schema=schema, indexes=tuple(definitions))


def planned(location: TableLocation, listing: Listing, bound: BoundPredicate) -> np.ndarray | None:
    """Per listed file, whether Iceberg's planning (partition values, metrics)
    may keep it for ``bound``; None where it has nothing to say."""
    source = location.iceberg
    if source is None or source.snapshot_id is None:
        return None
    # pyiceberg binds a filter to the table's current schema: name each column as
    # that schema does (by field id), whatever the snapshot called it.
    from pyiceberg.io.pyarrow import schema_to_pyarrow

    table = source.loaded()
    current = field_ids(schema_to_pyarrow(table.schema(), include_field_ids=True))
    ids = {join_path(path): i for i, path in field_ids(iceberg_arrow_schema(source)).items()}
    names = {key: join_path(current[i]) for key, i in ids.items() if i in current}
    expression = _to_iceberg(bound, names)
    from pyiceberg.expressions import AlwaysTrue

    if isinstance(expression, AlwaysTrue):
        return None
    scan = table.scan(row_filter=expression, snapshot_id=source.snapshot_id)
    try:
        kept = {plain_path(task.file.file_path) for task in scan.plan_files()}
    except ValueError as exc:  # pyiceberg plans no scan over equality deletes
        if "equality" in str(exc).lower():
            return None  # the index alone decides: it covers every row
        raise
    prefix = plain_path(location.user_root).rstrip("/") + "/"
    paths = listing.paths.to_pylist()
    return np.array([prefix + path in kept for path in paths], dtype=bool)


def _to_iceberg(bound: BoundPredicate, names: dict[str, str]) -> Any:
    """``bound`` as a pyiceberg expression over the columns ``names`` (the
    snapshot's key -> the current schema's); what Iceberg might judge otherwise
    than Spark (floats, binary, !=, NOT IN) or cannot name as TRUE."""
    from pyiceberg import expressions

    ice: Any = expressions  # pydantic models: their signatures are not what mypy sees

    def visit(node: AnyPredicate, parts: list[Any]) -> Any:
        if isinstance(node, And):
            return _fold(ice.And, parts, ice.AlwaysTrue())
        if isinstance(node, Or):
            return _fold(ice.Or, parts, ice.AlwaysFalse())
        if isinstance(node, AlwaysFalse):
            return ice.AlwaysFalse()
        if not isinstance(node, BoundComparison | BoundIn | BoundIsNull):
            return ice.AlwaysTrue()  # AlwaysTrue, Unsupported
        name = names.get(node.column.name)
        if name is None:  # a column the current schema dropped, an expression's values
            return ice.AlwaysTrue()
        if isinstance(node, BoundIsNull):
            return ice.NotNull(name) if node.negated else ice.IsNull(name)
        if domain_of(node.column.type) not in _HANDED_OVER:
            return ice.AlwaysTrue()
        if isinstance(node, BoundIn):
            if node.negated:
                return ice.AlwaysTrue()
            values = {_value(v, node.column.type) for v in node.values}
            return ice.AlwaysTrue() if None in values else ice.In(name, values)
        operators = {Op.EQ: ice.EqualTo, Op.LT: ice.LessThan, Op.LE: ice.LessThanOrEqual,
                     Op.GT: ice.GreaterThan, Op.GE: ice.GreaterThanOrEqual}  # fmt: skip
        operator = operators.get(node.op)
        value = _value(node.value, node.column.type)
        if operator is None or value is None:
            return ice.AlwaysTrue()
        return operator(name, value)

    return fold(cast(AnyPredicate, bound), children_of, visit)


def _fold(combine: Any, parts: list[Any], empty: Any) -> Any:
    if not parts:
        return empty
    out = parts[0]
    for part in parts[1:]:
        out = combine(out, part)
    return out


def _value(value: Any, arrow_type: pa.DataType) -> Any:
    """A bound value as pyiceberg takes it (dates and timestamps as ISO text);
    None beyond what Python's dates hold (years 1..9999)."""
    try:
        return _converted(value, arrow_type)
    except (OverflowError, ValueError):
        return None


def _converted(value: Any, arrow_type: pa.DataType) -> Any:
    if pa.types.is_date(arrow_type):
        return (_EPOCH + timedelta(days=int(value))).date().isoformat()
    if pa.types.is_timestamp(arrow_type):
        moment = _EPOCH + timedelta(microseconds=int(value))
        text = moment.isoformat(timespec="microseconds")
        return text if arrow_type.tz is not None else text.removesuffix("+00:00")
    return value
