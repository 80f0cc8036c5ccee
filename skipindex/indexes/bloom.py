"""Bloom filter per file: Parquet's split-block Bloom filter (SBBF).

Each value is hashed with XXH64 (seed 0) of its Parquet PLAIN encoding as Arrow
writes the column's type to Parquet, and the filter layout is parquet-format's
SBBF, so the bitset is the one parquet-cpp would write for the same values and
size (the unit tests check this byte for byte against pyarrow's writer):

* int8/16/32, uint8/16/32, dates -> INT32: 4 bytes little-endian (uint32 as
  its bit pattern, narrower ints sign- or zero-extended);
* int64, uint64, timestamps -> INT64: 8 bytes little-endian (ticks of the
  column's unit; Parquet would store timestamp[s] as milliseconds, which does
  not matter here because build and probe agree);
* float16/32/64 -> their 2/4/8 IEEE bytes little-endian;
* decimals -> FIXED_LEN_BYTE_ARRAY: big-endian two's complement of the
  unscaled value, in the fewest bytes that hold the precision;
* strings, binary -> the raw bytes, without PLAIN's length prefix.

One deliberate deviation: floats are normalised before hashing (-0.0 -> 0.0,
every NaN -> the canonical NaN) because Spark treats those as equal; Parquet
hashes the raw bits, so its filters miss ``x = 0.0`` when the file holds -0.0.

The filter is sized from the file's distinct non-null count and ``fpp``. A file
without non-null values gets an empty one-block filter: nothing matches ``=``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.types as pat

from skipindex import _distinct
from skipindex._types import Domain, normalise_floats, physical_type, to_physical
from skipindex.errors import IndexCorruptError, InvalidSpecError
from skipindex.expressions.nodes import (
    BoundComparison,
    BoundHasElement,
    BoundIn,
    BoundIsNull,
    BoundLeaf,
    BoundMatch,
    BoundValue,
    Op,
)
from skipindex.indexes import _sbbf
from skipindex.indexes._column_work import ColumnWork
from skipindex.indexes._xxh64 import hash_binary, hash_fixed, hash_u32, hash_u64
from skipindex.indexes.base import FileBatch, FileLevelKind, IndexSpec

__all__ = ["Bloom", "BloomKind", "ValueCodec", "check_filter_params", "filter_verdicts"]


@dataclass(frozen=True)
class Bloom(IndexSpec):
    """A split-block Bloom filter per file, answering ``=`` and ``IN``.

    ``fpp`` is the target false-positive rate; ``max_bytes`` caps one file's
    filter (rounded down to a power of two, at least 32 bytes).
    """

    kind: ClassVar[str] = "bloom"
    fpp: float = 0.01
    max_bytes: int = 1 << 20

    def __post_init__(self) -> None:
        super().__post_init__()
        check_filter_params(self, self.fpp, self.max_bytes)


class BloomKind(FileLevelKind):
    spec = Bloom
    values_only = True
    domains = frozenset(Domain) - {Domain.BOOLEAN}
    # Longer IN lists are not worth hashing and probing: the kind declines them.
    max_in_values: ClassVar[int] = 4096

    options: Bloom

    def __init__(self, column: str, arrow_type: pa.DataType, params: dict[str, Any]) -> None:
        super().__init__(column, arrow_type, params)
        self._codec = ValueCodec(physical_type(arrow_type))

    def payload_type(self) -> pa.StructType:
        return pa.struct([("filter", pa.binary())])

    def build(self, values: pa.Array, work: ColumnWork | None = None) -> dict[str, Any]:
        distinct = work.sorted_distinct() if work is not None else None
        if distinct is None:
            hashes = self._codec.hash_array(to_physical(values))
        else:  # a bitmap kind on this column sorted it already
            hashes = self._codec.hash_array(distinct, distinct=True)
        size = _sbbf.num_bytes(len(hashes), self.options.fpp, self.options.max_bytes)
        return {"filter": _sbbf.build(hashes, size)}

    def answers(self, leaf: BoundLeaf) -> bool:
        if leaf.column.name != self.column:
            return False
        if isinstance(leaf, BoundComparison):
            return leaf.op is Op.EQ
        if isinstance(leaf, BoundIn):
            # Declining huge lists lets a kind that can narrow them answer instead.
            return not leaf.negated and len(leaf.values) <= self.max_in_values
        return False

    def might_match(self, leaf: BoundLeaf, files: FileBatch) -> np.ndarray:
        if not self.answers(leaf) or isinstance(leaf, BoundIsNull | BoundMatch | BoundHasElement):
            return np.ones(len(files), dtype=bool)
        values = leaf.values if isinstance(leaf, BoundIn) else (leaf.value,)
        hashes = self._codec.hash_literals(values)
        return filter_verdicts(
            files, f"Bloom index on '{self.column}'", hashes, _sbbf.might_contain
        )


def check_filter_params(spec: IndexSpec, fpp: Any, max_bytes: Any) -> None:
    """A filter kind's ``fpp`` and ``max_bytes``, or an error naming the spec's column."""
    name = f"{type(spec).__name__} index on '{spec.subject}'"
    if isinstance(fpp, bool) or not isinstance(fpp, int | float) or not 0 < fpp < 1:
        raise InvalidSpecError(
            f"{name}: fpp must be a number strictly between 0 and 1, got {fpp!r}; "
            "0.01 is a good default"
        )
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int):
        raise InvalidSpecError(f"{name}: max_bytes must be an int, got {max_bytes!r}")
    if not _sbbf.MIN_BYTES <= max_bytes <= _sbbf.MAX_BYTES:
        raise InvalidSpecError(
            f"{name}: max_bytes must be between {_sbbf.MIN_BYTES} and {_sbbf.MAX_BYTES}, "
            f"got {max_bytes}"
        )


def filter_verdicts(
    files: FileBatch,
    index: str,
    hashes: np.ndarray,
    probe: Callable[[_sbbf.Filters, np.ndarray], np.ndarray],
) -> np.ndarray:
    """Per file, whether ``probe`` finds ``hashes`` in its SBBF payload (``filter``):
    a file the index does not know might match, an empty file never does. A filter
    that is not whole 32-byte blocks is an error naming ``index``."""
    known = files.known()
    filters = _sbbf.Filters.from_arrow(files.payloads.field("filter"))
    damaged = known & ((filters.lengths <= 0) | (filters.lengths % _sbbf.MIN_BYTES != 0))
    if damaged.any():
        raise IndexCorruptError(
            f"{index}: {int(damaged.sum())} filter(s) are not a whole number of 32-byte "
            "blocks; rebuild the index"
        )
    hit = probe(filters, hashes)
    return np.asarray((hit | ~known) & (files.num_rows > 0), dtype=bool)


class ValueCodec:
    """Hashes a column's values, and literals for it, the same way.

    ``phys`` is the physical type (what ``build`` receives); the literal side
    drops values no row of the column can equal, so they never reach a filter.
    """

    def __init__(self, phys: pa.DataType) -> None:
        self.phys = phys
        if pat.is_decimal(phys):
            self.precision: int = phys.precision
            self.scale: int = phys.scale
            self.width = _decimal_width(self.precision)

    # ------------------------------------------------------------------ columns

    def hash_array(self, values: pa.Array, *, distinct: bool = False) -> np.ndarray:
        """Distinct hashes of the non-null values of a physical column
        (``distinct``: the values are already distinct and non-null)."""
        values = values if distinct else values.drop_null()
        if pat.is_floating(values.type):  # normalised, then deduplicated by bits
            return self._hash_floats(values.to_numpy(zero_copy_only=False))
        if pat.is_decimal(values.type):  # Arrow has no unique kernel for every width
            hashes = hash_fixed(_decimal_rows(values, self.width))
            return hashes if distinct else _distinct.distinct(hashes)
        values = values if distinct else pc.unique(values)
        if pat.is_integer(values.type):
            return self._hash_ints(values.to_numpy(zero_copy_only=False))
        return hash_binary(values)

    def _hash_ints(self, ints: np.ndarray) -> np.ndarray:
        if ints.dtype.itemsize == 8:
            return hash_u64(ints)
        if ints.dtype.itemsize < 4:  # INT32 holds the sign- or zero-extended value
            ints = ints.astype(np.int32)
        return hash_u32(ints)

    def _hash_floats(self, floats: np.ndarray) -> np.ndarray:
        bits = normalise_floats(floats).view(f"<u{floats.dtype.itemsize}")
        bits = pc.unique(pa.array(bits)).to_numpy(zero_copy_only=False)
        if bits.dtype.itemsize == 8:
            return hash_u64(bits)
        if bits.dtype.itemsize == 4:
            return hash_u32(bits)
        return hash_fixed(bits.astype("<u2").view(np.uint8).reshape(-1, 2))

    # ------------------------------------------------------------------ literals

    def hash_literals(self, values: Sequence[BoundValue]) -> np.ndarray:
        """Hashes of the literals that some value of the column could equal."""
        phys = self.phys
        if pat.is_integer(phys):
            dtype = np.dtype(phys.to_pandas_dtype())
            limits = np.iinfo(dtype)
            ints = [i for v in values if (i := _as_int(v)) is not None]
            ints = [i for i in ints if limits.min <= i <= limits.max]
            return self._hash_ints(np.array(ints, dtype=dtype))
        if pat.is_floating(phys):
            return self._hash_floats(self._float_literals(values, np.dtype(phys.to_pandas_dtype())))
        if pat.is_decimal(phys):
            unscaled = [u for v in values if (u := self._unscaled(v)) is not None]
            raw = b"".join(u.to_bytes(self.width, "big", signed=True) for u in unscaled)
            rows = np.frombuffer(raw, dtype=np.uint8).reshape(-1, self.width)
            return hash_fixed(rows)
        blobs = [v.encode() if isinstance(v, str) else v for v in values]
        return hash_binary(pa.array(blobs, pa.binary()))

    @staticmethod
    def _float_literals(values: Iterable[BoundValue], dtype: np.dtype[Any]) -> np.ndarray:
        # Literals arrive as doubles (float32 columns compare in double, like
        # Spark): one that does not survive the round trip equals no value.
        numbers = [float(v) for v in values if isinstance(v, int | float | Decimal)]
        doubles = np.array(numbers, dtype=np.float64)
        with np.errstate(over="ignore"):
            narrow = doubles.astype(dtype)
        exact = (narrow.astype(np.float64) == doubles) | np.isnan(doubles)
        return np.asarray(narrow[exact])

    def _unscaled(self, value: BoundValue) -> int | None:
        """The unscaled integer of a decimal literal, or None if no value equals it."""
        if not isinstance(value, Decimal | int) or isinstance(value, bool):
            return None
        sign, digits, exponent = Decimal(value).as_tuple()
        if not isinstance(exponent, int):  # NaN or infinity
            return None
        magnitude = int("".join(map(str, digits)) or "0")
        shift = exponent + self.scale
        factor: int = 10 ** abs(shift)  # int ** int is typed Any: pin it
        if shift >= 0:
            magnitude *= factor
        else:
            magnitude, rest = divmod(magnitude, factor)
            if rest:  # more fractional digits than the column's scale
                return None
        limit: int = 10**self.precision
        if magnitude >= limit:
            return None
        return -magnitude if sign else magnitude


def _as_int(value: BoundValue) -> int | None:
    """An integral literal as an int; None for anything no integer equals."""
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        return None
    if isinstance(value, int):
        return value
    if not math.isfinite(value) or value != int(value):
        return None
    return int(value)


def _decimal_width(precision: int) -> int:
    """Fewest bytes of two's complement holding ``precision`` decimal digits
    (Arrow's FIXED_LEN_BYTE_ARRAY width for decimals in Parquet)."""
    width = 1
    while 10**precision > 2 ** (8 * width - 1):
        width += 1
    return width


def _decimal_rows(values: pa.Array, width: int) -> np.ndarray:
    """(n, width) big-endian two's complement bytes of an Arrow decimal array.

    Arrow stores decimals little-endian in ``byte_width`` bytes; the value fits
    in ``width`` bytes, so the dropped high bytes are pure sign extension.
    """
    byte_width = values.type.byte_width
    raw = np.frombuffer(values.buffers()[1], dtype=np.uint8).reshape(-1, byte_width)
    rows = raw[values.offset : values.offset + len(values), ::-1]
    return np.ascontiguousarray(rows[:, byte_width - width :])
