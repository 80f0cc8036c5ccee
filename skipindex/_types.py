"""Value domains: how a column's Arrow type compares, hashes and sorts.

Every indexable Arrow type falls into one :class:`Domain`. Bound literal values
live in the domain's Python representation (:data:`BoundValue`) so that index
kinds never re-derive casts.
"""

from __future__ import annotations

import enum
import math
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.types as pat

__all__ = [
    "BoundValue",
    "Domain",
    "domain_of",
    "normalise_floats",
    "sort_values",
    "to_scalar",
    "value_sort_key",
]


# A bound value lives in its column's domain:
#   integers, dates (days), timestamps (ticks of the column's unit) -> int
#   decimals -> Decimal quantized to the column's scale
#   floats -> float (float32 columns compare in double, like Spark)
#   strings -> str, binary -> bytes, booleans -> bool
BoundValue = int | Decimal | float | str | bytes | bool


class Domain(enum.Enum):
    INT = "int"
    DECIMAL = "decimal"
    FLOAT = "float"
    STRING = "string"
    BINARY = "binary"
    DATE = "date"
    TIMESTAMP = "timestamp"
    BOOLEAN = "boolean"


def domain_of(arrow_type: pa.DataType) -> Domain | None:
    """The domain of an Arrow type, or None for types no index can take."""
    if pat.is_integer(arrow_type):
        return Domain.INT
    if pat.is_decimal(arrow_type):
        return Domain.DECIMAL
    if pat.is_floating(arrow_type):
        return Domain.FLOAT
    if (
        pat.is_string(arrow_type)
        or pat.is_large_string(arrow_type)
        or pat.is_string_view(arrow_type)
    ):
        return Domain.STRING
    if (
        pat.is_binary(arrow_type)
        or pat.is_large_binary(arrow_type)
        or pat.is_fixed_size_binary(arrow_type)
        or pat.is_binary_view(arrow_type)
    ):
        return Domain.BINARY
    if pat.is_date(arrow_type):
        return Domain.DATE
    if pat.is_timestamp(arrow_type):
        return Domain.TIMESTAMP
    if pat.is_boolean(arrow_type):
        return Domain.BOOLEAN
    return None


def physical_type(arrow_type: pa.DataType) -> pa.DataType:
    """The Arrow type whose Python values are the bound-value representation.

    Dates become int32 days, date64 becomes int32 days too, timestamps become
    int64 ticks; everything else is itself (strings to ``pa.string()``).
    """
    domain = domain_of(arrow_type)
    if domain is Domain.DATE:
        return pa.int32()
    if domain is Domain.TIMESTAMP:
        return pa.int64()
    if domain is Domain.STRING:
        return pa.string()
    if domain is Domain.BINARY:
        return pa.binary()
    return arrow_type


def to_physical(array: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Cast a column to its physical representation (dates as days, etc.)."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    domain = domain_of(array.type)
    if domain is Domain.DATE:
        if pat.is_date64(array.type):
            array = array.cast(pa.date32())
        return array.view(pa.int32())
    if domain is Domain.TIMESTAMP:
        return array.view(pa.int64())
    if domain is Domain.STRING and not pat.is_string(array.type):
        return array.cast(pa.string())
    if domain is Domain.BINARY and not pat.is_binary(array.type):
        return array.cast(pa.binary())
    return array


def to_scalar(value: BoundValue, arrow_type: pa.DataType) -> pa.Scalar:
    """A bound value as an Arrow scalar of the column's *physical* type."""
    phys = physical_type(arrow_type)
    if pat.is_floating(phys):
        return pa.scalar(float(value), pa.float64())
    return pa.scalar(value, phys)


def normalise_floats(values: np.ndarray) -> np.ndarray:
    """-0.0 -> 0.0 and every NaN -> the canonical NaN (Spark treats them equal)."""
    out = np.where(values == 0, 0.0, values).astype(values.dtype, copy=False)
    out[np.isnan(out)] = np.nan
    return out


def value_sort_key(value: Any) -> tuple[int, Any]:
    """Sort key in Spark order: NaN after every other value."""
    if isinstance(value, float) and math.isnan(value):
        return (1, 0.0)
    if isinstance(value, Decimal):
        return (0, value)
    return (0, value)


def sort_values(values: list[Any]) -> list[Any]:
    return sorted(values, key=value_sort_key)


def spark_type_name(arrow_type: pa.DataType) -> str:
    """The SQL name Spark gives the column (``DATE``, not ``date32[day]``), for messages."""
    if pat.is_dictionary(arrow_type):
        return spark_type_name(arrow_type.value_type)
    if pat.is_decimal(arrow_type):
        return f"DECIMAL({arrow_type.precision},{arrow_type.scale})"
    if pat.is_timestamp(arrow_type):
        return "TIMESTAMP" if arrow_type.tz is not None else "TIMESTAMP_NTZ"
    if pat.is_struct(arrow_type):
        inner = ", ".join(f"{f.name}: {spark_type_name(f.type)}" for f in arrow_type)
        return f"STRUCT<{inner}>"
    if pat.is_list(arrow_type) or pat.is_large_list(arrow_type):
        return f"ARRAY<{spark_type_name(arrow_type.value_type)}>"
    if pat.is_map(arrow_type):
        return (
            f"MAP<{spark_type_name(arrow_type.key_type)}, {spark_type_name(arrow_type.item_type)}>"
        )
    names = {
        pa.int8(): "TINYINT",
        pa.int16(): "SMALLINT",
        pa.int32(): "INT",
        pa.int64(): "BIGINT",
        pa.float32(): "FLOAT",
        pa.float64(): "DOUBLE",
        pa.bool_(): "BOOLEAN",
        pa.date32(): "DATE",
        pa.null(): "VOID",
    }
    if arrow_type in names:
        return names[arrow_type]
    domain = domain_of(arrow_type)
    if domain is Domain.STRING:
        return "STRING"
    if domain is Domain.BINARY:
        return "BINARY"
    return str(arrow_type).upper()
