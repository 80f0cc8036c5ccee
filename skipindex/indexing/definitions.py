"""Index definitions: what a build's specs add to the current ones, validated.

A spec on a column names it as the table spells it (its key). A spec on an
expression (``expr=``) names it by its canonical key
(:func:`~skipindex.expressions.indexed.define_expression`), keeps the text as
written, and the session time zone Spark computes its values in; Spark types it
(:class:`ExpressionType`), and the table schema records that type under the key,
marked as an expression's (:func:`~skipindex.expressions.indexed.expression_field`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import pyarrow as pa

from skipindex._types import domain_of, spark_type_name
from skipindex.column_paths import column_key, field_at, join_path, resolve_path, split_name
from skipindex.errors import (
    InvalidSpecError,
    UnknownColumnError,
    UnsupportedTableError,
    UnsupportedTypeError,
)
from skipindex.expressions.calls import is_expression_field
from skipindex.expressions.indexed import define_expression, expression_field
from skipindex.expressions.nodes import Call
from skipindex.expressions.sql import expression_operand
from skipindex.indexes import kind_for
from skipindex.indexes.base import IndexSpec
from skipindex.indexing.expression_task import ExpressionType
from skipindex.indexing.runners import Runner
from skipindex.spark.settings import SparkView
from skipindex.store.delta import PHYSICAL_NAME, delta_spark_schema_json
from skipindex.store.location import DataFile, TableLocation
from skipindex.store.manifest import IndexDef, Manifest, load_latest
from skipindex.store.schema import table_types

__all__ = [
    "TableState",
    "Typer",
    "data_columns",
    "define",
    "define_table",
    "expression_key_of",
    "resolve_column",
    "spec_columns",
    "typed",
    "with_expressions",
]


# Spark's types of expressions (texts) computed in a time zone; None where the
# runner cannot ask Spark (in-process): recorded types are then kept.
Typer = Callable[[Sequence[str], str], "list[ExpressionType] | None"]


def spec_columns(spec: IndexSpec) -> list[str]:
    """The columns (text form) a spec reads: its column, or its expression's."""
    if spec.expr is None:
        return [spec.column]
    operand = expression_operand(spec.expr)
    names = operand.columns() if isinstance(operand, Call) else []
    return [join_path((n,) if isinstance(n, str) else n) for n in names]


def define(
    current: Manifest | None,
    specs: Sequence[IndexSpec] | None,
    schema: pa.Schema,
    partitions: Sequence[str],
    view: SparkView,
) -> tuple[list[IndexDef], int]:
    """Current definitions plus ``specs``; a spec on an indexed (column, kind)
    with other parameters replaces it. Validates columns and types up front
    (an expression's type only once Spark has said it: :func:`with_expressions`)."""
    definitions = list(current.indexes) if current else []
    next_id = current.next_index_id if current else 0
    for spec in specs or ():
        expression = spec.expr
        if expression is None:
            column = resolve_column(
                spec.column, schema, partitions, case_sensitive=view.case_sensitive
            )
        else:
            column = expression_key_of(
                expression, schema, partitions, case_sensitive=view.case_sensitive
            )
        params = spec.params()
        existing = [d for d in definitions if (d.column, d.kind) == (column, spec.kind)]
        if existing and existing[0].same_definition(column, spec.kind, params):
            continue
        definitions = [d for d in definitions if d not in existing]
        definition = IndexDef(
            id=next_id,
            column=column,
            kind=spec.kind,
            params=params,
            arrow_type="",
            field=f"{spec.kind}_{next_id}",
            expression=expression,
            time_zone=None if expression is None else _zone_of(definitions, column, view),
        )
        if expression is None:
            definition = replace(definition, arrow_type=str(field_at(schema, column).type))
            kind_for(definition, schema)  # raises UnsupportedTypeError for a bad type
        definitions.append(definition)
        next_id += 1
    return definitions, next_id


def _zone_of(definitions: Sequence[IndexDef], key: str, view: SparkView) -> str:
    """The zone an expression's values are computed in: the one its other indexes
    use (one key, one field, one zone), else the build session's."""
    zones = [d.time_zone for d in definitions if d.column == key and d.time_zone]
    return zones[0] if zones else view.time_zone


def expression_key_of(
    text: str, schema: pa.Schema, partitions: Sequence[str] = (), *, case_sensitive: bool = False
) -> str:
    """The key an expression index on ``text`` has over ``schema``. Partition
    columns are not in it: their values come from folder names, typed over the
    listing of the moment, and prune already skips files by them."""
    hidden = {p.lower() for p in partitions}
    for name in spec_columns(IndexSpec(expr=text)):
        if split_name(name)[0].lower() in hidden:
            raise UnknownColumnError(
                f"cannot index expr={text!r}: '{split_name(name)[0]}' is a partition column "
                "(prune already skips files by their folders' values); index an expression "
                "of data columns"
            )
    return define_expression(text, schema, case_sensitive=case_sensitive)[0]


def with_expressions(
    schema: pa.Schema, definitions: Sequence[IndexDef], typer: Typer | None
) -> pa.Schema:
    """``schema`` holding one field per expression of ``definitions``, typed as
    Spark types it (``typer``), and none for expressions no longer indexed.
    Without ``typer`` (checking specs before Spark starts) new expressions are
    left out. Raises what a kind that cannot take the type raises."""
    keys = {d.column: d for d in definitions if d.expression is not None}
    fields = [f for f in schema if not is_expression_field(f) or f.name in keys]
    out = pa.schema(fields, metadata=schema.metadata)
    if typer is None or not keys:
        return out
    by_zone: dict[str, list[IndexDef]] = {}
    for d in keys.values():
        by_zone.setdefault(d.time_zone or "UTC", []).append(d)
    for zone, group in by_zone.items():
        found = typer([d.expression or "" for d in group], zone)
        for at, d in enumerate(group):
            known = d.column in out.names
            if found is None:
                if not known:
                    raise InvalidSpecError(
                        f"an index on expr={d.expression!r} needs Spark to compute its values: "
                        "build it with Spark (build_index(..., spark=spark) or `skipindex "
                        "build`), not in-process"
                    )
                continue
            spark = found[at]
            field = expression_field(
                d.column, spark.arrow_type, d.expression or "", zone, spark.zone_dependent
            )
            at_key = out.get_field_index(d.column)
            out = out.set(at_key, field) if known else out.append(field)
    return out


def typed(definitions: list[IndexDef], schema: pa.Schema) -> list[IndexDef]:
    """The definitions, each naming its column's type in ``schema``, checked
    against its kind (an expression not in ``schema`` yet is left as it is)."""
    out = []
    for d in definitions:
        if d.column not in schema.names and d.expression is not None:
            out.append(d)
            continue
        arrow_type = field_at(schema, d.column).type
        if d.expression is not None:
            try:
                kind_for(d, schema)
            except UnsupportedTypeError:
                raise UnsupportedTypeError(
                    f"index kind '{d.kind}' cannot index expr={d.expression!r}: Spark computes "
                    f"it as {spark_type_name(arrow_type)}"
                ) from None
        out.append(replace(d, arrow_type=str(arrow_type)))
    return out


def resolve_column(
    column: str, schema: pa.Schema, partitions: Sequence[str] = (), *, case_sensitive: bool = False
) -> str:
    """The key of the column a spec names (``"s.f"`` is field f of struct s)."""
    columns = pa.schema([f for f in schema if not is_expression_field(f)])
    path = (column,) if column in columns.names else split_name(column)
    if path[0].lower() in {p.lower() for p in partitions}:
        raise UnknownColumnError(
            f"cannot index '{column}': it is a partition column (a data column of that name "
            "is hidden by it, as in Spark), and prune() already skips files by their "
            "folder's partition values"
        )
    try:
        resolved = resolve_path(columns, path, case_sensitive=case_sensitive)
    except LookupError as exc:
        raise UnknownColumnError(f"cannot index column {exc}") from None
    if resolved is not None:
        return column_key(resolved[0])
    if not columns.names:
        raise UnknownColumnError(
            f"cannot index '{column}': the table has no readable Parquet files yet, "
            "so its columns are unknown; build once data has arrived"
        )
    indexable = [n for n in columns.names if domain_of(columns.field(n).type) is not None]
    raise UnknownColumnError(
        f"cannot index unknown column '{column}'; the table's columns are: {', '.join(indexable)}"
    )


@dataclass(frozen=True)
class TableState:
    """The table as a build attempt sees it, and the definitions on it."""

    current: Manifest | None
    listing: Sequence[DataFile]  # sorted by path
    schema: pa.Schema  # to record (with the expressions' fields)
    first: pa.Schema  # the first file's types
    partitions: list[str]
    definitions: list[IndexDef]
    next_id: int
    spark_schema: str | None = None  # Spark's schema of the table, for read()
    read_schema: str | None = None  # ...of its data columns, to compute expressions over


def define_table(
    location: TableLocation,
    specs: Sequence[IndexSpec] | None,
    view: SparkView,
    runner: Runner | None = None,
) -> TableState:
    """The table as it is now (current manifest, listing, schema to record and the
    first file's types, partition columns) and the definitions ``specs`` give on
    it; raises what a bad spec must raise. Without ``runner`` (no Spark yet),
    new expressions are checked but not typed."""
    current = load_latest(location)
    listing = location.list_table().sorted_files()
    wanted = [c for spec in specs or () for c in spec_columns(spec)]
    schema, first = table_types(location, listing, current, wanted)
    partitions = location.partition_names(listing)
    if any(s.expr is not None for s in specs or ()) and _mapped(location, schema):
        raise UnsupportedTableError(
            f"{location.user_root} is a Delta table with column mapping: expression indexes "
            "are computed by Spark from the files' columns, which are named otherwise there; "
            "index the columns themselves"
        )
    definitions, next_id = define(current, specs, schema, partitions, view)
    spark_schema = read_schema = None
    typer: Typer | None = None
    if runner is not None:
        spark_schema = _spark_schema(location, listing, runner)
        read_schema = data_columns(spark_schema, partitions)
        columns = pa.schema([f for f in schema if not is_expression_field(f)])

        def typer(texts: Sequence[str], zone: str) -> list[ExpressionType] | None:
            return runner.expression_types(read_schema, columns, texts, zone)

    schema = with_expressions(schema, definitions, typer)
    return TableState(
        current,
        listing,
        schema,
        first,
        partitions,
        typed(definitions, schema),
        next_id,
        spark_schema,
        read_schema,
    )


def _mapped(location: TableLocation, schema: pa.Schema) -> bool:
    """Whether the table names its files' columns by a Delta column mapping."""
    return location.iceberg is None and any(
        f.metadata and PHYSICAL_NAME in f.metadata for f in schema
    )


def _spark_schema(
    location: TableLocation, listing: Sequence[DataFile], runner: Runner
) -> str | None:
    """Spark's schema of the table, for read(): a Delta table's log states it (as
    Spark's JSON); a folder's is what Spark makes of a file and its folders."""
    if location.is_delta:
        return delta_spark_schema_json(location.uri, location.user_root, dict(location.options))
    return runner.spark_schema(location, listing[0]) if listing else None


def data_columns(spark_schema: str | None, partitions: Sequence[str]) -> str | None:
    """Spark's schema of the table (JSON) without its partition columns."""
    if spark_schema is None:
        return None
    doc = json.loads(spark_schema)
    hidden = {p.lower() for p in partitions}
    doc["fields"] = [f for f in doc.get("fields", []) if f["name"].lower() not in hidden]
    return json.dumps(doc)
