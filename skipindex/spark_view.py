"""Read a Parquet file's columns as Spark reads them, with pyarrow and no Spark.

The index must hold the values *Spark* reads, so each rule of Spark's Parquet
reader that changes a value is modelled here, and tested against Spark:

* INT96 timestamps (Spark's default ``outputTimestampType``, and Hive/Impala's)
  are read as microseconds, never through nanoseconds (which wrap outside
  1677-2262 and turn ``9999-12-31`` into 1816);
* files written in LEGACY calendar mode (footer key ``org.apache.spark.legacyDateTime``
  or ``legacyINT96``, or written by Spark < 3.0 / < 3.1 for INT96, or carrying no
  Spark version while the session reads in LEGACY mode) are rebased from the
  hybrid Julian calendar: dates exactly, timestamps exactly in UTC; an old
  timestamp rebased in another zone is not modelled and the file is not indexed
  on that column ("might match");
* columns, and struct fields at every level, match case-insensitively unless
  ``spark.sql.caseSensitive``; two fields matching one name make the column
  unreadable to Spark, so it is not indexed;
* dictionary-encoded Arrow columns (a pandas Categorical) are their values.

Everything Spark would refuse or read differently is reported as a reason
string instead of an array; the indexer then stores no payload for that file
and column, which prune answers with "might match".
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from skipindex._types import spark_type_name
from skipindex.column_paths import ColumnPath, join_path, resolve_path
from skipindex.expressions.timezones import fixed_offset_micros, zone_named

__all__ = ["SparkView", "normalise_type", "read_columns", "spark_columns"]

_VERSION_KEY = b"org.apache.spark.version"
_LEGACY_DATETIME_KEY = b"org.apache.spark.legacyDateTime"
_LEGACY_INT96_KEY = b"org.apache.spark.legacyINT96"
_TIME_ZONE_KEY = b"org.apache.spark.timeZone"
_GREGORIAN_START = -141427  # 1582-10-15: days before it are Julian in the hybrid calendar
_MICROS_PER_DAY = 86_400 * 10**6
_JULIAN_EPOCH_OFFSET = 2440588  # Julian Day Number of 1970-01-01
_SAFE_AFTER_DAY = -25566  # 1900-01-02: no zone's LEGACY rebase moves a later instant


@dataclass(frozen=True)
class SparkView:
    """The session settings that change what Spark reads (recorded at build time)."""

    case_sensitive: bool = False
    datetime_rebase_mode: str = "CORRECTED"  # spark.sql.parquet.datetimeRebaseModeInRead
    int96_rebase_mode: str = "CORRECTED"  # spark.sql.parquet.int96RebaseModeInRead
    time_zone: str = "UTC"  # spark.sql.session.timeZone, for LEGACY timestamp rebasing
    partition_type_inference: bool = True  # ...partitionColumnTypeInference.enabled

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any] | None) -> SparkView:
        known = {k: v for k, v in (doc or {}).items() if k in cls.__dataclass_fields__}
        return cls(**known)

    @classmethod
    def of_session(cls, spark: Any) -> SparkView:
        from skipindex._spark import session_conf

        def conf(key: str, default: str) -> str:
            return session_conf(spark, key, default)

        return cls(
            case_sensitive=conf("spark.sql.caseSensitive", "false").lower() == "true",
            datetime_rebase_mode=conf(
                "spark.sql.parquet.datetimeRebaseModeInRead", "CORRECTED"
            ).upper(),
            int96_rebase_mode=conf("spark.sql.parquet.int96RebaseModeInRead", "CORRECTED").upper(),
            time_zone=conf("spark.sql.session.timeZone", "UTC"),
            partition_type_inference=conf(
                "spark.sql.sources.partitionColumnTypeInference.enabled", "true"
            ).lower()
            == "true",
        )


def normalise_type(arrow_type: pa.DataType) -> pa.DataType:
    """The type Spark gives a column pyarrow reads as ``arrow_type``."""
    if pa.types.is_dictionary(arrow_type):
        return normalise_type(arrow_type.value_type)
    if pa.types.is_struct(arrow_type):
        children = (arrow_type.field(i) for i in range(arrow_type.num_fields))
        return pa.struct([f.with_type(normalise_type(f.type)) for f in children])
    return arrow_type


def open_file(source: Any, filesystem: Any = None, **options: Any) -> pq.ParquetFile:
    """A Parquet file opened so INT96 comes back as microseconds (``options``: more
    ``pyarrow.parquet.ParquetFile`` arguments)."""
    return pq.ParquetFile(
        source, filesystem=filesystem, coerce_int96_timestamp_unit="us", **options
    )


def file_schema(parquet: pq.ParquetFile, int96: set[str] | None = None) -> pa.Schema:
    """The file's Arrow schema as Spark types it (INT96 as UTC micros, no dictionaries).
    ``int96``: the file's INT96 columns, if already known."""
    int96 = _int96_columns(parquet) if int96 is None else int96
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
    int96 = _int96_columns(parquet)
    schema = file_schema(parquet, int96)
    num_rows = parquet.metadata.num_rows
    found: dict[ColumnPath, ColumnPath | str] = {}  # spelled as in the file; () if absent
    for path, _ in wanted:
        try:
            resolved = resolve_path(schema, path, case_sensitive=view.case_sensitive)
        except LookupError as exc:
            found[path] = f"Spark cannot read column {exc} in this file; not indexed"
            continue
        found[path] = resolved[0] if resolved else ()
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
    rebase = _Rebase(parquet, view, int96)
    out: dict[ColumnPath, pa.Array | str] = {}
    for path, table_type in wanted:
        spelled = found[path]
        if isinstance(spelled, str):
            out[path] = spelled
        elif not spelled:
            out[path] = pa.nulls(num_rows, normalise_type(table_type))  # what Spark reads
        else:
            assert table is not None
            array = rebase.apply(_extract(table, spelled, path in dictionaries), spelled[0])
            out[path] = array if isinstance(array, str) else _as_table_type(array, table_type, path)
    return out, int(table.nbytes) if table is not None else 0


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
    int96 = _int96_columns(parquet)
    schema = file_schema(parquet, int96)
    rebase = _Rebase(parquet, view, int96)
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
        if _has_temporal(found.type) and rebase.legacy(found.name):
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
    if isinstance(array, pa.DictionaryArray):  # the table's type for its values
        values = _as_table_type(array.dictionary, table_type, path)
        if isinstance(values, str):
            return values
        return pa.DictionaryArray.from_arrays(array.indices, values)
    if array.type == table_type:
        return array
    differ = (
        f"column '{join_path(path)}' is {spark_type_name(array.type)} here, "
        f"not {spark_type_name(table_type)}"
    )
    timestamps = pa.types.is_timestamp(array.type) and pa.types.is_timestamp(table_type)
    if timestamps and (array.type.tz is None) != (table_type.tz is None):
        return f"{differ}: a zone-less and a zoned timestamp differ to Spark; not indexed"
    try:
        return array.cast(normalise_type(table_type), safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return f"{differ}: not indexed"


def _int96_columns(parquet: pq.ParquetFile) -> set[str]:
    """Top-level columns with an INT96 leaf (Spark writes INT96 only for timestamps)."""
    names = set()
    schema = parquet.metadata.schema
    for i in range(len(schema)):
        column = schema.column(i)
        if column.physical_type == "INT96":
            names.add(column.path.split(".")[0])
    return names


class _Rebase:
    """Spark's LEGACY-calendar read rules for one file."""

    def __init__(self, parquet: pq.ParquetFile, view: SparkView, int96: set[str]) -> None:
        meta = parquet.metadata.metadata or {}
        version = meta.get(_VERSION_KEY)
        spark_version = version.decode("utf-8", "replace") if version else None
        if spark_version is None:
            self.datetime = view.datetime_rebase_mode.upper() == "LEGACY"
            self.int96 = view.int96_rebase_mode.upper() == "LEGACY"
        else:
            self.datetime = spark_version < "3.0.0" or _LEGACY_DATETIME_KEY in meta
            self.int96 = spark_version < "3.1.0" or _LEGACY_INT96_KEY in meta
        zone = meta.get(_TIME_ZONE_KEY)
        self.zone = zone.decode("utf-8", "replace") if zone else view.time_zone
        # Always known: an INT96 column follows the INT96 rule even when only the
        # datetime rule is LEGACY (and the other way round).
        self.int96_columns = int96

    def legacy(self, top: str) -> bool:
        """Whether Spark rebases the dates and timestamps of column ``top``."""
        return self.int96 if top in self.int96_columns else self.datetime

    def apply(self, array: pa.Array, top: str) -> pa.Array | str:
        if not _has_temporal(array.type) or not self.legacy(top):
            return array
        return _rebase_array(array, self.zone)


def _has_temporal(arrow_type: pa.DataType) -> bool:
    return bool(pa.types.is_date(arrow_type) or pa.types.is_timestamp(arrow_type))


def _rebase_array(array: pa.Array, zone: str) -> pa.Array | str:
    if pa.types.is_date(array.type):
        days = pc.fill_null(array.cast(pa.date32()).view(pa.int32()), 0).to_numpy()
        rebased = julian_to_gregorian_days(days.astype(np.int64)).astype(np.int32)
        return pa.array(rebased, pa.int32(), mask=_nulls(array)).view(pa.date32()).cast(array.type)
    per_day = {"s": 86_400, "ms": 86_400 * 10**3, "us": _MICROS_PER_DAY, "ns": 86_400 * 10**9}[
        array.type.unit
    ]
    ticks = pc.fill_null(array.view(pa.int64()), 0).to_numpy().astype(np.int64)
    days = np.floor_divide(ticks, per_day)
    if array.type.tz is not None and _is_utc(zone):
        shifted = ticks + (julian_to_gregorian_days(days) - days) * per_day
        return pa.array(shifted, pa.int64(), mask=_nulls(array)).view(array.type)
    if (days < _SAFE_AFTER_DAY).any():
        # Spark rebases these through java.util.TimeZone's offsets, which differ
        # from tzdata's up to 1900 for many zones: not modelled.
        return (
            f"timestamps before 1900 written in LEGACY calendar mode (zone {zone}) are "
            "rebased by rules skipindex does not model: not indexed"
        )
    return array


def _is_utc(zone: str) -> bool:
    try:
        return fixed_offset_micros(zone_named(zone)) == 0
    except ValueError:  # a zone Python does not know: not modelled
        return False


def _nulls(array: pa.Array) -> np.ndarray | None:
    if not array.null_count:
        return None
    return np.asarray(array.is_null().to_numpy(zero_copy_only=False), dtype=bool)


def julian_to_gregorian_days(days: np.ndarray) -> np.ndarray:
    """Spark's ``rebaseJulianToGregorianDays``, vectorised: a day count in the hybrid
    calendar (Julian before 1582-10-15) -> the proleptic Gregorian day with the same
    year, month and day (a Julian Feb 29 the Gregorian calendar lacks rolls to Mar 1)."""
    jdn = days + _JULIAN_EPOCH_OFFSET
    c = jdn + 32082
    d = (4 * c + 3) // 1461
    e = c - (1461 * d) // 4
    m = (5 * e + 2) // 153
    day = e - (153 * m + 2) // 5 + 1
    month = m + 3 - 12 * (m // 10)
    year = d - 4800 + m // 10
    a = (14 - month) // 12
    y = year + 4800 - a
    mm = month + 12 * a - 3
    gregorian = day + (153 * mm + 2) // 5 + 365 * y + y // 4 - y // 100 + y // 400 - 32045
    return np.where(days < _GREGORIAN_START, gregorian - _JULIAN_EPOCH_OFFSET, days)
