"""Hive-style partition columns (``year=2024/...``): free, exact file pruning.

A file's partition values are in its path, so they need no index: at prune
time they become a min-max payload with min = max = the value
(:mod:`skipindex.pruning.partition_index`). What the values *are* follows
Spark's ``PartitioningUtils`` over the files listed now:

* names are unescaped (``%XX`` is one character each, as ``unescapePathName``:
  ``p=%C3%A9`` is ``'Ã©'``, not ``'é'``); numbers are typed from the raw text;
* each value is typed int, bigint, decimal(p,0), double, timestamp (read in
  the session zone), date or string, in that order of preference, and a
  column takes the wider type of its values (int + double -> double,
  bigint + double -> string, date + timestamp -> timestamp, anything + string
  -> string), so a folder ``p=abc`` arriving later turns ``p`` into a string;
* ``__HIVE_DEFAULT_PARTITION__`` is NULL; ``NaN`` is a double NaN;
* a partition column hides a data column of the same name.

Where Spark's answer is not modelled exactly (Java's exotic number spellings,
fractional-second timestamps, a value cast from double to string...) the column
gets no type, its conditions are "might match", and ``explain()`` says why.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import tzinfo
from decimal import Decimal

import pyarrow as pa
import pyarrow.compute as pc

from skipindex.expressions.casts import str_to_date, str_to_timestamp
from skipindex.expressions.timezones import session_zone

__all__ = ["HIVE_NULL", "PartitionColumn", "partition_columns", "partition_names", "unescape"]

HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_INTEGER = re.compile(r"[+-]?[0-9]+")
_PLAIN_DOUBLE = re.compile(r"[+-]?(?:[0-9]+\.[0-9]+|\.[0-9]+)")
_SPECIAL_DOUBLE = frozenset({"NaN", "Infinity", "+Infinity", "-Infinity"})
# Anything Java's BigDecimal or Double.parseDouble might accept beyond the plain forms.
_JAVA_NUMBER = re.compile(
    r"\s*[+-]?(?:NaN|Infinity|0[xX][0-9a-fA-F.]*(?:[pP][+-]?\d+)?|(?:\d+\.?\d*|\.\d+)"
    r"(?:[eE][+-]?\d+)?)[fFdD]?\s*"
)
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}")
_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)

# Value kinds, in Spark's order of preference; "null" and "unsure" are outside it.
_NUMERIC = ("int", "long", "decimal", "double")


@dataclass(frozen=True)
class PartitionColumn:
    """One partition column over the listed files. ``type`` is None when skipindex
    cannot be sure of the type Spark gives it (``why`` says why)."""

    name: str
    type: pa.DataType | None
    values: pa.Array  # per listed file, of ``type`` (or strings when it is None)
    why: str = ""

    @property
    def field(self) -> pa.Field:
        return pa.field(self.name, self.type or pa.string())


def unescape(text: str) -> str:
    """Spark's ``unescapePathName``: each ``%XX`` becomes the one character U+00XX."""
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)


def partition_names(relative_path: str) -> list[str]:
    """The partition column names in a file's path, outermost first."""
    return [name for name, _ in _raw_values(relative_path)]


def _raw_values(relative_path: str) -> list[tuple[str, str]]:
    pairs = []
    for part in relative_path.split("/")[:-1]:
        name, sep, value = part.partition("=")
        if sep and name:
            pairs.append((unescape(name), value))
    return pairs


def partition_columns(
    listed: Sequence[str] | pa.StringArray, *, time_zone: tzinfo, infer_types: bool = True
) -> list[PartitionColumn]:
    """The partition columns of the files at ``listed`` (relative paths), typed as
    Spark types them when it lists exactly these files in a session in ``time_zone``."""
    listed = listed if isinstance(listed, pa.Array) else pa.array(listed, pa.string())
    nested = pc.match_substring(listed, "/")
    if not pc.any(nested).as_py():  # every file at the root
        return []
    # A file's values are its folder's: each folder is read once, however many
    # files it holds (a million files in a thousand folders), and the typed
    # values are handed out per file by the folder's position. Typing depends
    # only on the set of values, which the folders hold as the files do.
    folders = pc.if_else(nested, pc.replace_substring_regex(listed, r"/[^/]*$", "/"), "")
    encoded = pc.dictionary_encode(folders)
    distinct: list[str] = encoded.dictionary.to_pylist()
    names = partition_names(distinct[encoded.indices[0].as_py()])
    raw: dict[str, list[str | None]] = {name: [] for name in names}
    consistent = True
    for folder in distinct:
        pairs = _raw_values(folder)
        if [n for n, _ in pairs] != names:
            consistent = False  # Spark refuses such a table; never prune by it
        found = dict(pairs)
        for name in names:
            raw[name].append(found.get(name))
    with session_zone(time_zone):
        columns = [_column(name, raw[name], infer_types, consistent) for name in names]
    return [replace(c, values=c.values.take(encoded.indices)) for c in columns]


def _column(
    name: str, raw: list[str | None], infer_types: bool, consistent: bool
) -> PartitionColumn:
    shown = [None if v is None or v == HIVE_NULL else unescape(v) for v in raw]
    if not consistent or any(v is None for v in raw) or any(v == "" for v in raw):
        why = "its folders are not the same in every path"
        return PartitionColumn(name, None, pa.array(shown, pa.string()), why)
    values = [None if v == HIVE_NULL else v for v in raw]
    if not infer_types:
        return PartitionColumn(name, pa.string(), pa.array(shown, pa.string()))
    distinct = {v for v in values if v is not None}
    kinds = {v: _kind(v) for v in distinct}
    if "unsure" in kinds.values():
        odd = next(v for v, k in kinds.items() if k == "unsure")
        why = f"skipindex does not model Spark's type for the value {unescape(odd)!r}"
        return PartitionColumn(name, None, pa.array(shown, pa.string()), why)
    kind = _wider(set(kinds.values()))
    try:
        arrow_type, typed = _typed(kind, values, kinds)
    except ValueError as exc:
        return PartitionColumn(name, None, pa.array(shown, pa.string()), str(exc))
    return PartitionColumn(name, arrow_type, typed)


def _kind(raw: str) -> str:
    """What Spark's ``inferPartitionColumnValue`` makes of one raw (escaped) value."""
    if _INTEGER.fullmatch(raw):
        number = int(raw)
        if _INT32[0] <= number <= _INT32[1]:
            return "int"
        if _INT64[0] <= number <= _INT64[1]:
            return "long"
        return "decimal" if len(raw.lstrip("+-")) <= 38 else "double"
    if _PLAIN_DOUBLE.fullmatch(raw) or raw in _SPECIAL_DOUBLE:
        return "double"
    if _JAVA_NUMBER.fullmatch(raw) or any(c.isdigit() and not c.isascii() for c in raw):
        return "unsure"  # 1e3 is a decimal to Spark, 1.5d a double, Unicode digits ints...
    text = unescape(raw)
    if _TIMESTAMP.fullmatch(text):
        return "timestamp" if str_to_timestamp(text) is not None else "unsure"
    if _DATE.fullmatch(raw):
        return "date" if str_to_date(raw) is not None else "unsure"
    if _DATE.match(text):
        return "unsure"  # a date with more after it: formatter rules not modelled
    return "string"


def _wider(kinds: set[str]) -> str:
    """Spark's ``findWiderTypeForPartitionColumn`` over a column's value kinds."""
    if not kinds:
        return "string"  # all NULL
    if len(kinds) == 1:
        return next(iter(kinds))
    if kinds <= set(_NUMERIC):
        if "double" in kinds:
            return "double" if kinds == {"int", "double"} else "string"
        return "decimal" if "decimal" in kinds else "long"
    if kinds == {"date", "timestamp"}:
        return "timestamp"
    return "string"


def _typed(
    kind: str, values: list[str | None], kinds: dict[str, str]
) -> tuple[pa.DataType, pa.Array]:
    if kind == "string":
        texts = [None if v is None else _as_string(v, kinds[v]) for v in values]
        return pa.string(), pa.array(texts, pa.string())
    if kind in ("int", "long"):
        arrow_type = pa.int32() if kind == "int" else pa.int64()
        return arrow_type, pa.array([None if v is None else int(v) for v in values], arrow_type)
    if kind == "decimal":
        digits = max(len(v.lstrip("+-")) for v in values if v is not None)
        arrow_type = pa.decimal128(max(digits, 20 if "long" in kinds.values() else 10), 0)
        numbers = [None if v is None else Decimal(int(v)) for v in values]
        return arrow_type, pa.array(numbers, arrow_type)
    if kind == "double":
        doubles = [None if v is None else float(v) for v in values]  # NaN, Infinity too
        return pa.float64(), pa.array(doubles, pa.float64())
    if kind == "date":
        days = [None if v is None else str_to_date(v) for v in values]
        return pa.date32(), pa.array(days, pa.int32()).cast(pa.date32())
    micros = [None if v is None else _instant(v, kinds[v]) for v in values]
    zoned = pa.timestamp("us", tz="UTC")
    return zoned, pa.array(micros, pa.int64()).cast(zoned)


def _as_string(raw: str, kind: str) -> str:
    """A value as Spark casts it to the column's string type."""
    if kind in ("int", "long", "decimal"):
        return str(int(raw))  # `p=007` next to `p=abc` reads as '7'
    if kind in ("string", "date", "timestamp"):
        return unescape(raw)  # these spellings round-trip through Spark's cast unchanged
    raise ValueError(f"Spark casts the double {raw!r} to a string in Java's spelling")


def _instant(raw: str, kind: str) -> int:
    text = unescape(raw)
    value = str_to_timestamp(f"{text} 00:00:00" if kind == "date" else text)
    assert value is not None  # _kind checked it parses
    return value
