"""The type Spark reads a column in over the whole table, and casting a file into it.

Spark types a Parquet table from one footer (the first file by path), or with
``mergeSchema`` from all of them, and reads every file's column in that type:

* timestamps of any unit are ``TIMESTAMP`` (or ``TIMESTAMP_NTZ``): microseconds,
  so a file written in milliseconds is read exactly in microseconds;
* decimals of one scale merge to the widest precision; a file of a smaller
  precision or scale is read exactly in a wider decimal type (Spark refuses to
  read it in a narrower one);
* a file of a narrower integer or float type is read exactly in a wider one
  (``mergeSchema`` refuses to merge them, but the first file may be the wide one).

So the index binds literals to, and holds values in, a type that holds every
value of every indexed file: the *join* of their types (:func:`join_types`). A
file whose values do not fit the recorded type reports the join, and the build
widens the recorded type and indexes again (see :mod:`skipindex.indexing.build`).
Columns with no index are bound in an *open* type (:func:`open_type`), so that
no literal is ruled out by the width of whichever file was read first.
"""

from __future__ import annotations

import base64
from collections.abc import Collection, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.types as pat

from skipindex._types import spark_type_name
from skipindex.column_paths import join_path, split_name

__all__ = [
    "NotIndexed",
    "binding_schema",
    "cast_exactly",
    "join_types",
    "open_type",
    "spark_type",
    "types_from_text",
    "types_to_text",
    "with_type_at",
]

MAX_DECIMAL_DIGITS = 38
# Columns bound in this decimal type hold every Spark decimal literal exactly.
OPEN_DECIMAL = pa.decimal256(2 * MAX_DECIMAL_DIGITS, MAX_DECIMAL_DIGITS)


class NotIndexed(str):
    """Why a file's column is not indexed; ``wider`` is the type that would hold
    its values (the join of the file's type and the recorded one), if any."""

    wider: pa.DataType | None = None

    def __new__(cls, reason: str, wider: pa.DataType | None = None) -> NotIndexed:
        made = super().__new__(cls, reason)
        made.wider = wider
        return made


def spark_type(arrow_type: pa.DataType) -> pa.DataType:
    """The type Spark reads a column pyarrow reads as ``arrow_type`` in: dictionaries
    as their values, timestamps of any unit as microseconds (zone kept)."""
    if pat.is_dictionary(arrow_type):
        return spark_type(arrow_type.value_type)
    if pat.is_struct(arrow_type):
        children = (arrow_type.field(i) for i in range(arrow_type.num_fields))
        return pa.struct([f.with_type(spark_type(f.type)) for f in children])
    if pat.is_timestamp(arrow_type) and arrow_type.unit != "us":
        return pa.timestamp("us", tz=arrow_type.tz)
    return arrow_type


def join_types(left: pa.DataType, right: pa.DataType) -> pa.DataType | None:
    """The narrowest type that holds every value of both, as Spark compares them
    (``left`` wins ties, e.g. a zone's spelling); None when none does."""
    left, right = spark_type(left), spark_type(right)
    if left == right:
        return left
    if pat.is_timestamp(left) and pat.is_timestamp(right):
        return left if (left.tz is None) == (right.tz is None) else None
    if pat.is_decimal(left) and pat.is_decimal(right):
        scale = max(left.scale, right.scale)
        digits = max(left.precision - left.scale, right.precision - right.scale)
        if digits + scale > MAX_DECIMAL_DIGITS:
            return None
        return pa.decimal128(digits + scale, scale)
    if pat.is_integer(left) and pat.is_integer(right):
        return _join_ints(left, right)
    if pat.is_floating(left) and pat.is_floating(right):
        return left if left.bit_width >= right.bit_width else right
    return None


def _join_ints(left: pa.DataType, right: pa.DataType) -> pa.DataType | None:
    signed = [t for t in (left, right) if pat.is_signed_integer(t)]
    if len(signed) != 1:  # both signed, or both unsigned: the wider one
        return left if left.bit_width >= right.bit_width else right
    unsigned = right if signed[0] is left else left
    bits = max(signed[0].bit_width, 2 * unsigned.bit_width)
    return {8: pa.int8(), 16: pa.int16(), 32: pa.int32(), 64: pa.int64()}.get(bits)


def cast_exactly(
    array: pa.Array, table_type: pa.DataType, column: Sequence[str]
) -> pa.Array | NotIndexed:
    """``array`` (a file's column, typed as the file holds it) in the recorded
    type, or why not: only casts that keep every value (floats must round-trip;
    Arrow's safe cast rounds doubles to floats)."""
    if array.type == table_type:
        return array
    differ = (
        f"column '{join_path(column)}' is {spark_type_name(array.type)} here, "
        f"not {spark_type_name(table_type)}"
    )
    if pat.is_timestamp(array.type) and array.type.unit == "ns":
        return NotIndexed(
            f"column '{join_path(column)}' holds nanosecond timestamps, which Spark refuses "
            "to read (INT64 TIMESTAMP(NANOS)); not indexed"
        )
    wider = join_types(table_type, array.type)
    timestamps = pat.is_timestamp(array.type) and pat.is_timestamp(table_type)
    if timestamps and wider is None:
        return NotIndexed(
            f"{differ}: a zone-less and a zoned timestamp differ to Spark; not indexed"
        )
    try:
        cast = array.cast(spark_type(table_type), safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        if wider is not None and wider != table_type:
            return NotIndexed(f"{differ}: its values need {spark_type_name(wider)}", wider)
        return NotIndexed(f"{differ}: not indexed")
    if pat.is_floating(table_type) and not _round_trips(array, cast):
        return NotIndexed(f"{differ}: its values need {spark_type_name(array.type)}", array.type)
    return cast


def _round_trips(array: pa.Array, cast: pa.Array) -> bool:
    back = cast.cast(array.type)
    same = pc.or_kleene(pc.equal(back, array), pc.and_(pc.is_nan(back), pc.is_nan(array)))
    return bool(np.all(pc.fill_null(same, True).to_numpy(zero_copy_only=False)))


def open_type(arrow_type: pa.DataType) -> pa.DataType:
    """A type for binding a column no index is built on: one that holds every
    value any file's type for it could, so that no literal is ruled out because
    the footer read first was narrow (``x > 1000`` on a DECIMAL(5,2) first file)."""
    arrow_type = spark_type(arrow_type)
    if pat.is_struct(arrow_type):
        children = (arrow_type.field(i) for i in range(arrow_type.num_fields))
        return pa.struct([f.with_type(open_type(f.type)) for f in children])
    if pat.is_decimal(arrow_type):
        return OPEN_DECIMAL
    if pat.is_integer(arrow_type) and arrow_type != pa.uint64():
        return pa.int64()
    if pat.is_floating(arrow_type):
        return pa.float64()
    return arrow_type


def binding_schema(schema: pa.Schema, indexed: Collection[str]) -> pa.Schema:
    """``schema`` as prune binds literals against it: indexed columns (keys in
    ``indexed``) in their recorded type, which the index's values are in; every
    other column in its :func:`open_type`."""
    paths = [(k,) if k in schema.names else split_name(k) for k in indexed]
    return pa.schema([_bind_field(f, [p[1:] for p in paths if p[0] == f.name]) for f in schema])


def _bind_field(field: pa.Field, inner: list[tuple[str, ...]]) -> pa.Field:
    if () in inner:
        return field
    if not inner or not pat.is_struct(field.type):
        return field.with_type(open_type(field.type))
    children = [field.type.field(i) for i in range(field.type.num_fields)]
    return field.with_type(
        pa.struct([_bind_field(c, [p[1:] for p in inner if p[0] == c.name]) for c in children])
    )


def with_type_at(schema: pa.Schema, key: str, new_type: pa.DataType) -> pa.Schema:
    """``schema`` with the column (or struct field) ``key`` retyped."""
    path = (key,) if key in schema.names else split_name(key)
    at = schema.get_field_index(path[0])
    return schema.set(at, _retyped(schema.field(at), path[1:], new_type))


def _retyped(field: pa.Field, rest: tuple[str, ...], new_type: pa.DataType) -> pa.Field:
    if not rest:
        return field.with_type(new_type)
    children = [field.type.field(i) for i in range(field.type.num_fields)]
    return field.with_type(
        pa.struct([_retyped(c, rest[1:], new_type) if c.name == rest[0] else c for c in children])
    )


def types_to_text(types: Mapping[str, pa.DataType]) -> str:
    """Column key -> type, as text a task can report ("" for none)."""
    if not types:
        return ""
    schema = pa.schema([pa.field(key, t) for key, t in types.items()])
    return base64.b64encode(schema.serialize().to_pybytes()).decode("ascii")


def types_from_text(text: str) -> dict[str, pa.DataType]:
    """The inverse of :func:`types_to_text`."""
    if not text:
        return {}
    schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(text)))
    return {f.name: f.type for f in schema}
