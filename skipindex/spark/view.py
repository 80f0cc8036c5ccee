"""Read a Parquet file's columns as Spark reads them, with pyarrow and no Spark.

The index must hold the values *Spark* reads, so each rule of Spark's Parquet
reader that changes a value is modelled here, and tested against Spark:

* INT96 timestamps (Spark's default ``outputTimestampType``, and Hive/Impala's)
  are read as microseconds, never through nanoseconds (which wrap outside
  1677-2262 and turn ``9999-12-31`` into 1816), and those Spark's writer wrapped
  (past year 287,000, before 4713 BC) as Spark reads them (:mod:`skipindex.spark.int96`);
* each column is cast exactly into the table's recorded type, or reported with
  the wider type its values need (:mod:`skipindex.spark.widening`);
* files written in LEGACY calendar mode (footer key ``org.apache.spark.legacyDateTime``
  or ``legacyINT96``, or written by Spark < 3.0 / < 3.1 for INT96, or carrying no
  Spark version while the session reads in LEGACY mode) are rebased from the
  hybrid Julian calendar: dates exactly, timestamps exactly in UTC; an old
  timestamp rebased in another zone is not modelled and the file is not indexed
  on that column ("might match") (:mod:`skipindex.spark.rebase`);
* columns, and struct fields at every level, match case-insensitively unless
  ``spark.sql.caseSensitive``; two fields matching one name make the column
  unreadable to Spark, so it is not indexed;
* dictionary-encoded Arrow columns (a pandas Categorical) are their values.

Everything Spark would refuse or read differently is reported as a reason
string instead of an array; the indexer then stores no payload for that file
and column, which prune answers with "might match".
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from skipindex.column_paths import ColumnPath, join_path, resolve_path
from skipindex.spark.collations import collated_columns
from skipindex.spark.int96 import spark_int96
from skipindex.spark.rebase import Rebase, has_temporal, julian_to_gregorian_days
from skipindex.spark.settings import SparkView
from skipindex.spark.widening import cast_exactly

__all__ = [
    "SparkView",
    "julian_to_gregorian_days",
    "normalise_type",
    "read_columns",
    "int96_columns",
    "spark_columns",
    "without_views",
]


def normalise_type(arrow_type: pa.DataType) -> pa.DataType:
    """The type Spark gives a column pyarrow reads as ``arrow_type``; a view type
    (``string_view``, which parquet-rs, DataFusion and Polars store in a file's
    Arrow schema) as its large twin, which every pyarrow kernel takes."""
    if pa.types.is_dictionary(arrow_type):
        return normalise_type(arrow_type.value_type)
    if pa.types.is_struct(arrow_type):
        children = (arrow_type.field(i) for i in range(arrow_type.num_fields))
        return pa.struct([f.with_type(normalise_type(f.type)) for f in children])
    if pa.types.is_string_view(arrow_type):
        return pa.large_string()
    if pa.types.is_binary_view(arrow_type):
        return pa.large_binary()
    if pa.types.is_list_view(arrow_type) or pa.types.is_large_list_view(arrow_type):
        return pa.large_list(
            arrow_type.value_field.with_type(normalise_type(arrow_type.value_type))
        )
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        item = arrow_type.value_field.with_type(normalise_type(arrow_type.value_type))
        return pa.large_list(item) if pa.types.is_large_list(arrow_type) else pa.list_(item)
    if pa.types.is_map(arrow_type):
        key, item = arrow_type.key_field, arrow_type.item_field
        return pa.map_(
            key.with_type(normalise_type(key.type)), item.with_type(normalise_type(item.type))
        )
    return arrow_type


def without_views(table: pa.Table) -> pa.Table:
    """``table`` with every view-typed column (at any depth) cast to its large
    twin: pyarrow reads what a file's Arrow schema says, and ``take``, ``filter``,
    sorting and ``is_in`` have no kernels for view types."""
    wanted = [f.with_type(_without_view_types(f.type)) for f in table.schema]
    if all(f.type == t.type for f, t in zip(table.schema, wanted, strict=True)):
        return table
    return table.cast(pa.schema(wanted, metadata=table.schema.metadata))


def _without_view_types(arrow_type: pa.DataType) -> pa.DataType:
    if pa.types.is_dictionary(arrow_type):
        value = _without_view_types(arrow_type.value_type)
        return pa.dictionary(arrow_type.index_type, value, arrow_type.ordered)
    return normalise_type(arrow_type)


def open_file(source: Any, filesystem: Any = None, **options: Any) -> pq.ParquetFile:
    """A Parquet file opened so INT96 comes back as microseconds (``options``: more
    ``pyarrow.parquet.ParquetFile`` arguments)."""
    options.setdefault("coerce_int96_timestamp_unit", "us")
    return pq.ParquetFile(source, filesystem=filesystem, **options)


def file_schema(parquet: pq.ParquetFile, int96: set[str] | None = None) -> pa.Schema:
    """The file's Arrow schema as Spark types it (INT96 as UTC micros, no dictionaries).
    ``int96``: the file's INT96 columns, if already known."""
    int96 = int96_columns(parquet) if int96 is None else int96
    fields = []
    for field in parquet.schema_arrow:
        arrow_type = normalise_type(field.type)
        if field.name in int96 and pa.types.is_timestamp(arrow_type):
            arrow_type = pa.timestamp("us", tz="UTC")
        fields.append(pa.field(field.name, arrow_type, field.nullable))
    return pa.schema(fields)


def read_columns(
    parquet: pq.ParquetFile,
    wanted: Sequence[tuple[ColumnPath, pa.DataType]],
    view: SparkView,
    dictionaries: Collection[ColumnPath] = (),
    reopen: Callable[..., pq.ParquetFile] | None = None,
) -> tuple[dict[ColumnPath, pa.Array | str], int]:
    """Each wanted column (a path and the table's type for it) as Spark reads it
    from this file, or the reason it cannot be indexed here; and the bytes read.

    Of ``dictionaries``, whose kinds all take dictionary-encoded rows or value
    sets (see :func:`value_set`), a top-level string or binary column is read as
    one DictionaryArray (``reopen(read_dictionary=..., metadata=...)`` opens the
    file so): no string decoded per row."""
    int96 = int96_columns(parquet)
    schema = file_schema(parquet, int96)
    num_rows = parquet.metadata.num_rows
    collated = collated_columns(parquet)
    found: dict[ColumnPath, ColumnPath | str] = {}  # spelled as in the file; () if absent
    for path, _ in wanted:
        try:
            resolved = resolve_path(schema, path, case_sensitive=view.case_sensitive)
        except LookupError as exc:
            found[path] = f"Spark cannot read column {exc} in this file; not indexed"
            continue
        found[path] = resolved[0] if resolved else ()
        if resolved and resolved[0][0] in collated:
            found[path] = (
                f"column '{join_path(path)}' has Spark collation {collated[resolved[0][0]]}: "
                "Spark compares it by that collation, not byte by byte; not indexed"
            )
    tops = sorted({where[0] for where in found.values() if not isinstance(where, str) and where})
    as_dictionaries = {
        spelled[0]
        for path in dictionaries
        if not isinstance(spelled := found.get(path, ""), str)
        and len(spelled) == 1
        and _is_bytes(schema.field(spelled[0]).type)
    }
    if as_dictionaries and reopen is not None:
        parquet = reopen(read_dictionary=sorted(as_dictionaries), metadata=parquet.metadata)
    table = None
    if tops:  # read, then type as Spark does (INT96 as zoned micros)
        table = parquet.read(columns=tops)
        table = table.cast(
            pa.schema(
                [
                    f if pa.types.is_dictionary(f.type) else schema.field(f.name)
                    for f in table.schema
                ]
            )
        )
    rebase = Rebase(parquet, view, int96)
    in_millis: dict[str, pa.Table] = {}  # INT96 columns read again, in milliseconds
    out: dict[ColumnPath, pa.Array | str] = {}
    for path, table_type in wanted:
        spelled = found[path]
        if isinstance(spelled, str):
            out[path] = spelled
        elif not spelled:
            out[path] = pa.nulls(num_rows, normalise_type(table_type))  # what Spark reads
        else:
            assert table is not None
            extracted = _extract(table, spelled, path in dictionaries)
            array: pa.Array | str = extracted
            if spelled[0] in int96 and pa.types.is_timestamp(extracted.type):
                array = _int96_as_spark(parquet, spelled, extracted, in_millis, reopen)
            if not isinstance(array, str):
                array = rebase.apply(array, spelled[0])
            out[path] = array if isinstance(array, str) else _as_table_type(array, table_type, path)
    return out, int(table.nbytes) if table is not None else 0


def _int96_as_spark(
    parquet: pq.ParquetFile,
    spelled: ColumnPath,
    micros: pa.Array,
    in_millis: dict[str, pa.Table],
    reopen: Callable[..., pq.ParquetFile] | None,
) -> pa.Array | str:
    """An INT96 column's values as Spark reads them (see :mod:`skipindex.spark.int96`)."""
    top = spelled[0]
    if top not in in_millis:
        if reopen is None:
            return f"INT96 column '{join_path(spelled)}' can only be checked when reopened"
        again = reopen(coerce_int96_timestamp_unit="ms", metadata=parquet.metadata)
        in_millis[top] = again.read(columns=[top])
    values = spark_int96(micros, _extract(in_millis[top], spelled))
    if isinstance(values, str):
        return f"column '{join_path(spelled)}': {values}"
    return values


def _is_bytes(arrow_type: pa.DataType) -> bool:
    return bool(
        pa.types.is_string(arrow_type)
        or pa.types.is_large_string(arrow_type)
        or pa.types.is_binary(arrow_type)
        or pa.types.is_large_binary(arrow_type)
    )


def spark_columns(
    parquet: pq.ParquetFile, target: pa.Schema, view: SparkView
) -> list[str | None] | str:
    """Per ``target`` column, the file column Spark reads it from (None: not in
    the file, read as NULLs), where pyarrow reads it exactly as Spark does (see
    :func:`reads_as`); else why not. Stricter than :func:`read_columns`: an exact
    spelling does not win over a second case-insensitive match (Spark refuses)."""
    int96 = int96_columns(parquet)
    schema = file_schema(parquet, int96)
    rebase = Rebase(parquet, view, int96)
    picks: list[str | None] = []
    for wanted in target:
        hits = [
            f
            for f in schema
            if f.name == wanted.name
            or (not view.case_sensitive and f.name.lower() == wanted.name.lower())
        ]
        if len(hits) > 1:
            return f"column '{wanted.name}' matches {len(hits)} columns"
        if not hits:
            picks.append(None)
            continue
        found = hits[0]
        if not reads_as(found.type, wanted.type):
            return f"column '{found.name}' is {found.type} here, not {wanted.type}"
        if has_temporal(found.type) and rebase.legacy(found.name):
            return f"column '{found.name}' is rebased from the LEGACY calendar"
        picks.append(found.name)
    return picks


_FLAT_TYPES = (
    pa.types.is_boolean,
    pa.types.is_integer,
    pa.types.is_floating,
    pa.types.is_decimal,
    pa.types.is_string,
    pa.types.is_large_string,
    pa.types.is_binary,
    pa.types.is_large_binary,
    pa.types.is_date32,
    pa.types.is_timestamp,
)


def is_flat(arrow_type: pa.DataType) -> bool:
    """A type :func:`spark_columns` vouches for (no nesting, no intervals)."""
    return any(check(arrow_type) for check in _FLAT_TYPES)


def reads_as(file_type: pa.DataType, target: pa.DataType) -> bool:
    """Whether a column pyarrow reads as ``file_type`` (after :func:`file_schema`)
    casts losslessly to ``target``, the type Spark reads it as."""
    if not (is_flat(file_type) and is_flat(target)):
        return False
    if file_type == target:
        return True
    if pa.types.is_timestamp(file_type) and pa.types.is_timestamp(target):
        same_kind = (file_type.tz is None) == (target.tz is None)
        return same_kind and file_type.unit in ("ms", "us") and target.unit == "us"
    widened = {(pa.large_string(), pa.string()), (pa.large_binary(), pa.binary())}
    return (file_type, target) in widened


def _extract(table: pa.Table, spelled: ColumnPath, dictionary: bool = False) -> pa.Array:
    """The column at a path; a NULL struct makes its fields NULL (as in Spark). A
    dictionary column stays one (its row groups' dictionaries unified) where
    ``dictionary`` allows and only its indices are null; else it is decoded."""
    column = table.column(spelled[0])
    if pa.types.is_dictionary(column.type):
        if dictionary and all(c.dictionary.null_count == 0 for c in column.chunks):
            unified: pa.Array = column.unify_dictionaries().combine_chunks()
            return unified
        column = column.cast(column.type.value_type)
    array: pa.Array = column.combine_chunks()
    for name in spelled[1:]:
        struct_type = array.type
        index = struct_type.get_field_index(name)
        array = array.flatten()[index] if isinstance(array, pa.StructArray) else array.field(index)
    return array


def value_set(column: pa.Array) -> pa.Array:
    """What a kind that needs only distinct values and the null count is given
    for a dictionary column: its dictionary's values, then its nulls. Every
    value the rows hold, maybe a few more (which only widens min-max or adds
    Bloom false positives). Any other column is returned as it is."""
    if not isinstance(column, pa.DictionaryArray):
        return column
    nulls = pa.nulls(column.null_count, column.dictionary.type)  # the indices' nulls
    return pa.concat_arrays([column.dictionary, nulls])


def rows_of(column: pa.Array) -> pa.Array:
    """A column with one value per row (a dictionary column decoded)."""
    if isinstance(column, pa.DictionaryArray):
        return column.cast(column.dictionary.type)
    return column


def _as_table_type(array: pa.Array, table_type: pa.DataType, path: ColumnPath) -> pa.Array | str:
    """The column in the recorded type, or why not (a :class:`NotIndexed` that may
    name the wider type its values need)."""
    if isinstance(array, pa.DictionaryArray):  # the table's type for its values
        values = _as_table_type(array.dictionary, table_type, path)
        if isinstance(values, str):
            return values
        return pa.DictionaryArray.from_arrays(array.indices, values)
    return cast_exactly(array, table_type, path)


def int96_columns(parquet: pq.ParquetFile) -> set[str]:
    """Top-level columns with an INT96 leaf (Spark writes INT96 only for timestamps)."""
    names = set()
    schema = parquet.metadata.schema
    for i in range(len(schema)):
        column = schema.column(i)
        if column.physical_type == "INT96":
            names.add(column.path.split(".")[0])
    return names
