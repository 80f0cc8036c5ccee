"""The Bloom kind: Parquet-compatible SBBF, no false negatives, fpp near target."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skipindex._types import to_physical
from skipindex.errors import IndexCorruptError, InvalidSpecError, UnsupportedTypeError
from skipindex.expressions.nodes import (
    BoundColumn,
    BoundComparison,
    BoundIn,
    BoundIsNull,
    BoundLeaf,
    BoundValue,
    Op,
)
from skipindex.indexes import _sbbf
from skipindex.indexes._xxh64 import hash_u64
from skipindex.indexes.base import FileBatch
from skipindex.indexes.bloom import Bloom, BloomKind

# --------------------------------------------------------------------------- helpers


def _kind(arrow_type: pa.DataType, **params: Any) -> BloomKind:
    return BloomKind("c", arrow_type, params)


def _batch(kind: BloomKind, files: Sequence[pa.Array | None]) -> FileBatch:
    """One payload per file; None stands for a file the index does not know."""
    payloads = [None if f is None else kind.build(to_physical(f)) for f in files]
    rows = np.array([1 if f is None else len(f) for f in files], dtype=np.int64)
    return FileBatch(rows, pa.array(payloads, kind.payload_type()))


def _eq(kind: BloomKind, value: BoundValue) -> BoundComparison:
    return BoundComparison(BoundColumn("c", kind.arrow_type), Op.EQ, value)


def _in(kind: BloomKind, values: Sequence[BoundValue]) -> BoundIn:
    return BoundIn(BoundColumn("c", kind.arrow_type), tuple(values))


def _matches(kind: BloomKind, leaf: BoundLeaf, files: Sequence[pa.Array | None]) -> list[bool]:
    return [bool(b) for b in kind.might_match(leaf, _batch(kind, files))]


def _unscaled(scale: int) -> Callable[[int], Decimal]:
    # From a string, exactly: Decimal arithmetic would round to 28 digits.
    return lambda u: Decimal(f"{u}E-{scale}")


# Per type: a strategy of Python values for pa.array, and how such a value is
# bound in a predicate (the column's physical domain, see BoundValue).
_FLOAT32 = st.floats(width=32).map(lambda f: float(np.float32(f)))
_CASES: dict[str, tuple[pa.DataType, st.SearchStrategy[Any], Callable[[Any], BoundValue]]] = {
    "int8": (pa.int8(), st.integers(-(2**7), 2**7 - 1), int),
    "int16": (pa.int16(), st.integers(-(2**15), 2**15 - 1), int),
    "int32": (pa.int32(), st.integers(-(2**31), 2**31 - 1), int),
    "int64": (pa.int64(), st.integers(-(2**63), 2**63 - 1), int),
    "uint8": (pa.uint8(), st.integers(0, 2**8 - 1), int),
    "uint16": (pa.uint16(), st.integers(0, 2**16 - 1), int),
    "uint32": (pa.uint32(), st.integers(0, 2**32 - 1), int),
    "uint64": (pa.uint64(), st.integers(0, 2**64 - 1), int),
    "float32": (pa.float32(), _FLOAT32, float),
    "float64": (pa.float64(), st.floats(), float),
    "decimal(9,2)": (
        pa.decimal128(9, 2),
        st.integers(-(10**9) + 1, 10**9 - 1).map(_unscaled(2)),
        Decimal,
    ),
    "decimal(38,10)": (
        pa.decimal128(38, 10),
        st.integers(-(10**38) + 1, 10**38 - 1).map(_unscaled(10)),
        Decimal,
    ),
    "decimal256(60,0)": (
        pa.decimal256(60, 0),
        st.integers(-(10**60) + 1, 10**60 - 1).map(_unscaled(0)),
        Decimal,
    ),
    "string": (pa.string(), st.text(), str),
    "large_string": (pa.large_string(), st.text(), str),
    "binary": (pa.binary(), st.binary(), bytes),
    "date32": (pa.date32(), st.integers(-100_000, 100_000), int),
    "timestamp_us": (pa.timestamp("us", tz="UTC"), st.integers(-(2**62), 2**62), int),
    "timestamp_ns": (pa.timestamp("ns"), st.integers(-(2**63), 2**63 - 1), int),
}


def _column(arrow_type: pa.DataType, values: list[Any]) -> pa.Array:
    if pa.types.is_date32(arrow_type):
        return pa.array(values, pa.int32()).cast(arrow_type)
    if pa.types.is_timestamp(arrow_type):
        return pa.array(values, pa.int64()).cast(arrow_type)
    return pa.array(values, arrow_type)


# --------------------------------------------------------------------------- no false negatives


@pytest.mark.parametrize("case", sorted(_CASES))
@given(data=st.data())
def test_every_present_value_might_match(case: str, data: st.DataObject) -> None:
    arrow_type, values, bind = _CASES[case]
    rows = data.draw(st.lists(st.none() | values, max_size=60))
    other = data.draw(st.lists(values, max_size=10))
    kind = _kind(arrow_type)
    present = [bind(v) for v in rows if v is not None]
    files = [_column(arrow_type, rows), _column(arrow_type, other)]
    batch = _batch(kind, files)
    for value in present:
        assert kind.might_match(_eq(kind, value), batch)[0], value
    if present:
        leaf = _in(kind, sorted(set(present), key=repr)[:50])
        assert kind.might_match(leaf, batch)[0]


@pytest.mark.parametrize("arrow_type", [pa.float32(), pa.float64(), pa.float16()])
def test_signed_zeros_and_nans_are_equal(arrow_type: pa.DataType) -> None:
    width = arrow_type.bit_width
    floats = np.dtype(f"float{width}")
    # NaNs with other payloads and signs than the canonical one.
    nan_bits = {16: [0x7E01, 0xFE00], 32: [0x7FC00001, 0xFFC00000], 64: [0x7FF8000000000001]}
    nans = np.array(nan_bits[width], dtype=f"uint{width}").view(floats)
    kind = _kind(arrow_type)
    only_nans = pa.array(nans)
    minus_zero = pa.array(np.array([-0.0], dtype=floats))
    plus_zero = pa.array(np.array([0.0], dtype=floats))
    assert _matches(kind, _eq(kind, math.nan), [only_nans, plus_zero]) == [True, False]
    assert _matches(kind, _eq(kind, 0.0), [minus_zero, plus_zero]) == [True, True]
    assert _matches(kind, _eq(kind, -0.0), [minus_zero, plus_zero]) == [True, True]


def test_float32_literal_that_no_float32_equals() -> None:
    kind = _kind(pa.float32())
    file = pa.array(np.array([0.1, 1e38, 2.5], dtype=np.float32))
    assert _matches(kind, _eq(kind, 0.1), [file]) == [False]  # the double 0.1
    assert _matches(kind, _eq(kind, float(np.float32(0.1))), [file]) == [True]
    assert _matches(kind, _eq(kind, 1e300), [file]) == [False]  # would overflow to inf
    assert _matches(kind, _eq(kind, 2.5), [file]) == [True]
    assert _matches(kind, _in(kind, [0.1, 2.5]), [file]) == [True]


def test_literals_outside_the_column_type_match_nothing() -> None:
    int8 = _kind(pa.int8())
    file = pa.array([1, -1], pa.int8())
    # -1 as uint32 bits, 255 as a byte, and values beyond int8 must not alias.
    for value in (2**32 - 1, 255, 1 + 2**8, -(2**40)):
        assert _matches(int8, _eq(int8, value), [file]) == [False]
    assert _matches(int8, _eq(int8, 1.0), [file]) == [True]
    assert _matches(int8, _eq(int8, 1.5), [file]) == [False]

    dec = _kind(pa.decimal128(5, 2))
    file = pa.array([Decimal("1.50"), Decimal("-999.99")], pa.decimal128(5, 2))
    assert _matches(dec, _eq(dec, Decimal("1.5")), [file]) == [True]
    assert _matches(dec, _eq(dec, Decimal("1.500")), [file]) == [True]
    assert _matches(dec, _eq(dec, Decimal("-999.99")), [file]) == [True]
    assert _matches(dec, _eq(dec, Decimal("1.505")), [file]) == [False]  # beyond the scale
    assert _matches(dec, _eq(dec, Decimal("1000.00")), [file]) == [False]  # beyond precision
    assert _matches(dec, _eq(dec, Decimal("NaN")), [file]) == [False]


def test_strings_compare_as_utf8_bytes() -> None:
    kind = _kind(pa.string())
    file = pa.array(["", "é", "日本", None, "a\x00b"])
    for value in ("", "é", "日本", "a\x00b"):
        assert _matches(kind, _eq(kind, value), [file]) == [True]
    assert _matches(kind, _eq(kind, "e\u0301"), [file]) == [False]  # not normalised


# --------------------------------------------------------------------------- files and payloads


@pytest.mark.parametrize("values", [[], [None], [None, None, None]])
def test_empty_or_all_null_file_matches_nothing(values: list[None]) -> None:
    kind = _kind(pa.int64())
    payload = kind.build(pa.array(values, pa.int64()))
    assert payload == {"filter": bytes(32)}
    file = pa.array(values, pa.int64())
    assert _matches(kind, _eq(kind, 0), [file]) == [False]
    assert _matches(kind, _in(kind, [0, 1, 2]), [file]) == [False]


def test_unknown_files_might_match_and_empty_files_do_not() -> None:
    kind = _kind(pa.int32())
    batch = FileBatch(
        np.array([10, 0, 5], dtype=np.int64),
        pa.array([None, None, kind.build(pa.array([1], pa.int32()))], kind.payload_type()),
    )
    assert kind.might_match(_eq(kind, 7), batch).tolist() == [True, False, False]


def test_many_files_vectorised_and_sliced() -> None:
    kind = _kind(pa.int64())
    files = [pa.array(np.arange(i * 100, i * 100 + 100)) for i in range(300)]
    batch = _batch(kind, files)
    sliced = FileBatch(batch.num_rows[7:], batch.payloads.slice(7))
    for probe in (0, 750, 29_999, 12_345):
        expected = np.arange(300) == probe // 100
        assert kind.might_match(_eq(kind, probe), batch)[expected].all()
        assert kind.might_match(_eq(kind, probe), sliced)[expected[7:]].all()
        assert kind.might_match(_eq(kind, probe), batch).sum() <= 12  # ~1% of 300 expected
    hits = kind.might_match(_in(kind, [5, 1005, 29_950]), batch)
    assert hits[[0, 10, 299]].all()
    assert hits.sum() <= 20


def test_damaged_filter_is_reported() -> None:
    kind = _kind(pa.int64())
    payloads = pa.array([{"filter": b"\x00" * 33}], kind.payload_type())
    with pytest.raises(IndexCorruptError, match="'c'"):
        kind.might_match(_eq(kind, 1), FileBatch(np.array([3]), payloads))


# --------------------------------------------------------------------------- leaves and specs


def test_answers_only_equality_and_in_on_its_column() -> None:
    kind = _kind(pa.int64())
    column = BoundColumn("c", pa.int64())
    assert kind.answers(BoundComparison(column, Op.EQ, 1))
    assert kind.answers(BoundIn(column, (1, 2)))
    assert not kind.answers(BoundIn(column, (1, 2), negated=True))
    assert not kind.answers(BoundIsNull(column))
    assert not kind.answers(BoundComparison(BoundColumn("d", pa.int64()), Op.EQ, 1))
    for op in (Op.NE, Op.LT, Op.LE, Op.GT, Op.GE):
        assert not kind.answers(BoundComparison(column, op, 1))


def test_long_in_lists_are_declined_and_might_match() -> None:
    kind = _kind(pa.int64())
    values = tuple(range(10**6, 10**6 + kind.max_in_values + 1))
    leaf = _in(kind, values)
    assert not kind.answers(leaf)
    assert _matches(kind, leaf, [pa.array([1, 2, 3])]) == [True]
    assert kind.answers(_in(kind, values[:-1]))


@pytest.mark.parametrize(
    "params",
    [
        {"fpp": 0},
        {"fpp": 1},
        {"fpp": -0.1},
        {"fpp": math.nan},
        {"fpp": "0.01"},
        {"fpp": True},
        {"max_bytes": 16},
        {"max_bytes": 2**40},
        {"max_bytes": 1024.0},
        {"buckets": 3},
    ],
)
def test_invalid_parameters(params: dict[str, Any]) -> None:
    with pytest.raises(InvalidSpecError) as info:
        _kind(pa.int64(), **params)
    assert isinstance(info.value, ValueError)


def test_spec() -> None:
    spec = Bloom("l_partkey", fpp=0.05)
    assert spec.kind == "bloom"
    assert spec.params() == {"fpp": 0.05, "max_bytes": 1 << 20}
    with pytest.raises(InvalidSpecError):
        Bloom("x", fpp=2.0)
    assert BloomKind.spec is Bloom
    assert BloomKind.kind == "bloom"
    assert not BloomKind.row_level


def test_booleans_are_not_indexed() -> None:
    with pytest.raises(UnsupportedTypeError, match="bloom"):
        _kind(pa.bool_())


# --------------------------------------------------------------------------- sizing and fpp


def test_sizing_follows_the_formula() -> None:
    for ndv in (0, 1, 10, 1000, 12_345, 10**6):
        for fpp in (0.001, 0.01, 0.05, 0.3):
            bits = -8 * ndv / math.log(1 - fpp ** (1 / 8))
            size = _sbbf.num_bytes(ndv, fpp, _sbbf.MAX_BYTES)
            assert size >= 32
            assert size & (size - 1) == 0  # a power of two
            assert size * 8 >= math.floor(bits)
            assert size == 32 or size * 4 < bits  # the next power of two, no more
    assert _sbbf.num_bytes(10**9, 0.01, 1 << 20) == 1 << 20
    assert _sbbf.num_bytes(10**9, 0.01, 1000) == 512  # cap rounded down to a power of two


def test_filter_size_follows_distinct_count_and_cap() -> None:
    values = pa.array(np.repeat(np.arange(5000), 3))  # 5,000 distinct in 15,000 rows
    size = len(_kind(pa.int64(), fpp=0.01).build(values)["filter"])
    assert size == _sbbf.num_bytes(5000, 0.01)
    capped = _kind(pa.int64(), max_bytes=1024).build(values)["filter"]
    assert len(capped) == 1024


def _false_positive_rate(fpp: float, ndv: int, probes: int) -> tuple[float, int]:
    rng = np.random.default_rng(42)
    drawn = rng.choice(2**40, size=ndv + probes, replace=False)
    present, absent = drawn[:ndv], drawn[ndv:]
    bitset = _kind(pa.int64(), fpp=fpp).build(pa.array(present))["filter"]
    assert _sbbf.contains(bitset, hash_u64(present)).all()
    return float(_sbbf.contains(bitset, hash_u64(absent)).mean()), len(bitset)


@pytest.mark.parametrize("fpp", [0.01, 0.05])
def test_measured_false_positive_rate(fpp: float) -> None:
    # Sizes round up to a power of two, so a filter is usually emptier than the
    # formula assumes: with as many values as the formula puts in 16 KiB, the
    # measured rate is the target; with fewer (10,000 here), it is below it.
    bits_per_value = -8 / math.log(1 - fpp ** (1 / 8))
    full = int(0.98 * 2**17 / bits_per_value)
    rate, size = _false_positive_rate(fpp, full, 40_000)
    assert size == 2**14
    assert 0.5 * fpp <= rate <= 2 * fpp, rate
    rate, size = _false_positive_rate(fpp, 10_000, 40_000)
    assert size == _sbbf.num_bytes(10_000, fpp)
    assert 0.05 * fpp <= rate <= fpp, rate


# --------------------------------------------------------------------------- the SBBF itself


def _reference_filter(hashes: Sequence[int], size: int) -> bytes:
    """parquet-format BloomFilter.md, transcribed literally (one hash at a time)."""
    salt = [int(s) for s in _sbbf.SALT]
    words = [0] * (size // 4)
    for h in hashes:
        block = ((h >> 32) * (size // 32)) >> 32
        key = h & 0xFFFFFFFF
        for i in range(8):
            words[block * 8 + i] |= 1 << (((key * salt[i]) & 0xFFFFFFFF) >> 27)
    return b"".join(w.to_bytes(4, "little") for w in words)


@given(
    st.lists(st.integers(0, 2**64 - 1), max_size=300),
    st.sampled_from([32, 64, 256, 4096]),
    st.lists(st.integers(0, 2**64 - 1), max_size=20),
)
def test_build_and_check_match_the_spec(hashes: list[int], size: int, probes: list[int]) -> None:
    bitset = _sbbf.build(np.array(hashes, dtype=np.uint64), size)
    assert bitset == _reference_filter(hashes, size)
    assert _sbbf.contains(bitset, np.array(hashes, dtype=np.uint64)).all()
    expected = [_reference_filter([p], size) for p in probes]
    words = np.frombuffer(bitset, dtype="<u4")
    for probe, alone in zip(probes, expected, strict=True):
        inside = bool((np.frombuffer(alone, dtype="<u4") & ~words).max(initial=0) == 0)
        assert _sbbf.contains(bitset, np.array([probe], dtype=np.uint64))[0] == inside
        filters = _sbbf.Filters.from_arrow(pa.array([bitset, None, bitset], pa.binary()))
        assert _sbbf.might_contain(filters, np.array([probe], dtype=np.uint64)).tolist() == [
            inside,
            False,
            inside,
        ]


def test_multi_hash_check_equals_one_hash_at_a_time() -> None:
    rng = np.random.default_rng(7)
    bitsets = [
        _sbbf.build(rng.integers(0, 2**63, 50, dtype=np.uint64), size)
        for size in rng.choice([32, 64, 128, 1024], 400)
    ]
    filters = _sbbf.Filters.from_arrow(pa.array(bitsets, pa.large_binary()))
    probes = rng.integers(0, 2**63, 300, dtype=np.uint64)
    expected = np.array([_sbbf.contains(b, probes).any() for b in bitsets])
    assert (_sbbf.might_contain(filters, probes) == expected).all()
    assert expected.any()
    assert not expected.all()


# --------------------------------------------------------------------------- Parquet compatibility


def _parquet_bloom_filter(path: Path, column: int) -> bytes:
    """The bitset of a column chunk's Bloom filter, as written by parquet-cpp.

    The filter is a Thrift compact ``BloomFilterHeader`` followed by the bitset;
    the header's first field is ``numBytes`` (field 1, i32: byte 0x15, then a
    zigzag varint), and the bitset is the region's last ``numBytes`` bytes.
    """
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(column)
    assert chunk.bloom_filter_offset is not None
    with path.open("rb") as f:
        f.seek(chunk.bloom_filter_offset)
        raw = f.read(chunk.bloom_filter_length)
    assert raw[0] == 0x15
    value, shift, pos = 0, 0, 1
    while True:
        byte = raw[pos]
        value |= (byte & 0x7F) << shift
        shift, pos = shift + 7, pos + 1
        if not byte & 0x80:
            break
    num_bytes = (value >> 1) ^ -(value & 1)
    return raw[len(raw) - num_bytes :]


def test_identical_to_parquet_cpp_filters(tmp_path: Path) -> None:
    """pyarrow's Parquet writer builds SBBFs too: for the same values and size,
    ours must be byte-identical (hash, plain encoding and layout all agree)."""
    rng = np.random.default_rng(3)
    n = 2000
    floats = rng.normal(size=n) * 1e6  # no -0.0 or NaN: the one deliberate difference
    columns = {
        "i8": pa.array(rng.integers(-128, 128, n), pa.int8()),
        "u16": pa.array(rng.integers(0, 2**16, n), pa.uint16()),
        "i32": pa.array(rng.integers(-(2**31), 2**31, n), pa.int32()),
        "u32": pa.array(rng.integers(0, 2**32, n), pa.uint32()),
        "i64": pa.array(rng.integers(-(2**63), 2**63 - 1, n, dtype=np.int64)),
        "u64": pa.array(rng.integers(0, 2**64 - 1, n, dtype=np.uint64)),
        "f32": pa.array(floats.astype(np.float32)),
        "f64": pa.array(floats),
        "str": pa.array([f"{v}é" if v % 7 else "" for v in rng.integers(0, 10**6, n)]),
        "bin": pa.array([bytes(r) for r in rng.integers(0, 256, (n, 3), dtype=np.uint8)]),
        "dec9": pa.array(
            [Decimal(int(u)).scaleb(-2) for u in rng.integers(-9999, 9999, n)],
            pa.decimal128(9, 2),
        ),
        "dec20": pa.array(
            [Decimal(int(u)).scaleb(-3) for u in rng.integers(-(2**62), 2**62, n)],
            pa.decimal128(20, 3),
        ),
        "dec40": pa.array(
            [Decimal(int(u)) for u in rng.integers(-(2**62), 2**62, n)], pa.decimal256(40, 0)
        ),
        "date": pa.array(rng.integers(-5000, 30000, n).astype(np.int32)).cast(pa.date32()),
        "ts": pa.array(rng.integers(0, 2**60, n)).cast(pa.timestamp("us", tz="UTC")),
    }
    path = tmp_path / "bloom.parquet"
    table = pa.table(columns)
    options = {name: {"ndv": n, "fpp": 0.02} for name in columns}
    pq.write_table(table, path, bloom_filter_options=options, row_group_size=n)
    for index, (name, array) in enumerate(columns.items()):
        theirs = _parquet_bloom_filter(path, index)
        kind = _kind(array.type)
        hashes = kind._codec.hash_array(to_physical(array))
        assert _sbbf.build(hashes, len(theirs)) == theirs, name
        # ...and probing their filter through the kind finds every value.
        batch = FileBatch(np.array([n]), pa.array([{"filter": theirs}], kind.payload_type()))
        values = [v for v in to_physical(array).to_pylist() if v is not None][:200]
        if name.startswith("f"):
            values = [float(v) for v in values]
        assert kind.might_match(_in(kind, values), batch).all(), name
        for value in values[:20]:
            assert kind.might_match(_eq(kind, value), batch).all(), (name, value)


@pytest.mark.parametrize("fpp", [0.001, 0.01, 0.05, 0.2])
@pytest.mark.parametrize("ndv", [1, 100, 3000, 70_000])
def test_sizing_equals_parquet_cpp(tmp_path: Path, ndv: int, fpp: float) -> None:
    # parquet-cpp sizes from the chunk's distinct count, not only the option's ndv.
    path = tmp_path / "size.parquet"
    pq.write_table(
        pa.table({"x": pa.array(np.arange(ndv))}),
        path,
        bloom_filter_options={"x": {"ndv": ndv, "fpp": fpp}},
    )
    assert len(_parquet_bloom_filter(path, 0)) == _sbbf.num_bytes(ndv, fpp)
