"""Brute-force oracle and Hypothesis strategies shared by the bitmap kinds' tests.

The oracle evaluates a bound leaf on the real rows under Spark semantics: NULL
never satisfies a comparison / IN / NOT IN; NaN = NaN and NaN sorts above every
other value; -0.0 = 0.0; float32 values compare widened to double; strings in
code-point (= UTF-8 byte) order. The tests in this module check the oracle and
the helpers themselves; ``test_*_bitmap.py`` import the rest.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given
from hypothesis import strategies as st
from pyroaring import AbstractBitMap, BitMap

from skipindex._types import to_physical
from skipindex.expressions.nodes import (
    BoundColumn,
    BoundComparison,
    BoundIn,
    BoundIsNull,
    BoundLeaf,
    Op,
)
from skipindex.indexes._bitmap_build import group_distinct
from skipindex.indexes._bitmap_query import merge
from skipindex.indexes._roaring import bitmap_of, from_bytes, to_bytes
from skipindex.indexes.base import FileBatch, IndexKind

# --------------------------------------------------------------------------- oracle


def spark_key(value: Any) -> tuple[int, Any]:
    if isinstance(value, float) and math.isnan(value):
        return (1, 0.0)
    return (0, value)


def satisfies(leaf: BoundLeaf, value: Any) -> bool:
    if isinstance(leaf, BoundIsNull):
        return (value is None) != leaf.negated
    if value is None:
        return False
    key = spark_key(value)
    if isinstance(leaf, BoundIn):
        return any(key == spark_key(v) for v in leaf.values) != leaf.negated
    other = spark_key(leaf.value)
    return {
        Op.EQ: key == other,
        Op.NE: key != other,
        Op.LT: key < other,
        Op.LE: key <= other,
        Op.GT: key > other,
        Op.GE: key >= other,
    }[leaf.op]


def oracle_rows(leaf: BoundLeaf, values: pa.Array) -> set[int]:
    return {i for i, v in enumerate(to_physical(values).to_pylist()) if satisfies(leaf, v)}


def distinct_count(values: pa.Array) -> int:
    return len({spark_key(v) for v in to_physical(values).to_pylist() if v is not None})


# --------------------------------------------------------------------------- strategies


@dataclass(frozen=True)
class ColumnType:
    arrow_type: pa.DataType
    values: st.SearchStrategy[Any]  # physical Python values
    literals: st.SearchStrategy[Any]  # further literals, often absent from the data

    def __repr__(self) -> str:
        return f"ColumnType({self.arrow_type})"


def _floats(width: int) -> st.SearchStrategy[float]:
    special = st.sampled_from([0.0, -0.0, math.nan, math.inf, -math.inf, 1.5, -1.5])
    return st.one_of(special, st.floats(width=width))  # type: ignore[arg-type]


def _decimals(scale: int, digits: int) -> st.SearchStrategy[Decimal]:
    """Decimals of ``digits`` digits, ``scale`` after the point; built from the
    unscaled integer as text, so the 28-digit default context never rounds."""
    small = st.integers(-(10**4), 10**4)  # collisions and neighbours are likely
    unscaled = st.one_of(small, st.integers(-(10**digits) + 1, 10**digits - 1))
    return unscaled.map(lambda i: Decimal(f"{i}E-{scale}"))


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=4)
_WIDE = st.integers(-(2**70), 2**70)

COLUMN_TYPES = [
    ColumnType(pa.int8(), st.integers(-128, 127), _WIDE),
    ColumnType(pa.int16(), st.integers(-40, 40), st.integers(-50, 50)),
    ColumnType(pa.int32(), st.integers(-(2**31), 2**31 - 1), _WIDE),
    ColumnType(pa.int64(), st.integers(-(2**63), 2**63 - 1), _WIDE),
    ColumnType(pa.int64(), st.integers(1, 200_000), st.integers(-5, 200_005)),
    ColumnType(pa.uint8(), st.integers(0, 255), _WIDE),
    ColumnType(pa.uint64(), st.integers(0, 2**64 - 1), _WIDE),
    ColumnType(pa.float32(), _floats(32), _floats(64)),
    ColumnType(pa.float64(), _floats(64), _floats(64)),
    ColumnType(pa.decimal128(9, 2), _decimals(2, 9), _decimals(2, 12)),
    ColumnType(pa.decimal128(38, 10), _decimals(10, 38), _decimals(10, 38)),
    ColumnType(pa.string(), _TEXT, _TEXT),
    ColumnType(pa.large_string(), _TEXT, _TEXT),
    ColumnType(pa.binary(), st.binary(max_size=3), st.binary(max_size=3)),
    ColumnType(pa.date32(), st.integers(-100_000, 100_000), st.integers(-200_000, 200_000)),
    ColumnType(
        pa.timestamp("us", tz="UTC"), st.integers(-(2**62), 2**62), st.integers(-(2**63), 2**63 - 1)
    ),
    ColumnType(
        pa.timestamp("us", tz="UTC"),
        st.integers(1_600_000_000_000_000, 1_600_000_000_100_000),
        st.integers(1_599_999_999_999_000, 1_600_000_000_101_000),
    ),
    ColumnType(pa.bool_(), st.booleans(), st.booleans()),
]
# Arrow types a Parquet read rarely yields; the bitmap kinds take them too.
EXTRA_TYPES = [
    ColumnType(pa.decimal64(12, 3), _decimals(3, 12), _decimals(3, 12)),
    ColumnType(pa.decimal256(45, 5), _decimals(5, 45), _decimals(5, 45)),
]
ALL_TYPES = COLUMN_TYPES + EXTRA_TYPES


def in_values(values: Sequence[Any]) -> tuple[Any, ...]:
    """IN values as bound: distinct (Spark equality), non-null, sorted NaN last."""
    unique = {spark_key(v): v for v in values}
    return tuple(unique[k] for k in sorted(unique))


def leaves(column: BoundColumn, literal: st.SearchStrategy[Any]) -> st.SearchStrategy[BoundLeaf]:
    comparison = st.builds(BoundComparison, st.just(column), st.sampled_from(list(Op)), literal)
    membership = st.builds(
        lambda vs, negated: BoundIn(column, in_values(vs), negated),
        st.lists(literal, min_size=1, max_size=6),
        st.booleans(),
    )
    is_null = st.builds(BoundIsNull, st.just(column), st.booleans())
    return st.one_of(comparison, comparison, membership, is_null)


@dataclass(frozen=True)
class Case:
    column_type: ColumnType
    files: list[pa.Array]
    leaves: list[BoundLeaf]


@st.composite
def cases(
    draw: st.DrawFn,
    max_rows: int = 40,
    max_pool: int = 12,
    types: Sequence[ColumnType] = tuple(COLUMN_TYPES),
) -> Case:
    ct = draw(st.sampled_from(types))
    pool = draw(st.lists(ct.values, min_size=1, max_size=max_pool))
    value = st.sampled_from(pool)
    if draw(st.booleans()):
        value = st.one_of(value, ct.values)
    files = []
    for _ in range(draw(st.integers(1, 3))):
        null_share = draw(st.sampled_from([0, 0, 1, 3, -1]))  # -1: every row null
        row = st.none() if null_share < 0 else st.one_of([st.none()] * null_share + [value] * 3)
        rows = draw(st.lists(row, max_size=max_rows))
        if draw(st.booleans()):  # a sliced array: buffers start at a non-zero offset
            files.append(pa.array([pool[0], *rows], type=ct.arrow_type)[1:])
        else:
            files.append(pa.array(rows, type=ct.arrow_type))
    literal = st.one_of(st.sampled_from(pool), ct.values, ct.literals)
    column = BoundColumn("c", ct.arrow_type)
    return Case(ct, files, draw(st.lists(leaves(column, literal), min_size=1, max_size=8)))


# --------------------------------------------------------------------------- checking


def file_batch(kind: IndexKind, files: Sequence[pa.Array]) -> FileBatch:
    """Payloads of ``files`` plus a trailing unknown file, as a sliced struct column
    (the way a segment is assembled: ``pa.array(payloads, type=...)``)."""
    payloads = [None, *(kind.build(to_physical(f)) for f in files), None]
    column = pa.array(payloads, type=kind.payload_type())[1:]
    return FileBatch(np.array([len(f) for f in files] + [7], dtype=np.int64), column)


def check(
    kind: IndexKind,
    files: Sequence[pa.Array],
    leaves: Sequence[BoundLeaf],
    exact: Callable[[pa.Array], bool],
    batch: FileBatch | None = None,
) -> None:
    """Compare ``matching_rows`` against the oracle for every file and leaf:
    equal where ``exact(file)``, else a superset that never holds a NULL row
    for a comparison (and exact anyway for IS [NOT] NULL)."""
    batch = batch or file_batch(kind, files)
    unknown = len(files)
    positions = np.arange(unknown, -1, -1)  # every file, in reverse
    for leaf in leaves:
        assert kind.answers(leaf)
        results = kind.matching_rows(leaf, batch, positions)
        assert len(results) == len(positions)
        for position, rows in zip(positions, results, strict=True):
            if position == unknown:
                assert rows is None
                continue
            values = files[position]
            # None: every row might match. Allowed only where no row is NULL, since
            # a comparison never holds on a NULL row.
            assert rows is None or isinstance(rows, AbstractBitMap)
            got = set(range(len(values))) if rows is None else set(rows)
            expected = oracle_rows(leaf, values)
            if exact(values) or isinstance(leaf, BoundIsNull):
                assert got == expected, (leaf, values, sorted(got), sorted(expected))
            else:
                assert got >= expected, (leaf, values, sorted(got), sorted(expected))
                nonnull = set(np.flatnonzero(values.is_valid().to_numpy(zero_copy_only=False)))
                assert got <= nonnull, (leaf, values)


def parquet_batch(kind: IndexKind, files: Sequence[pa.Array], path: Path) -> FileBatch:
    """The payloads written to a real Parquet file and read back."""
    batch = file_batch(kind, files)
    pq.write_table(pa.table({"num_rows": batch.num_rows, "payload": batch.payloads}), path)
    table = pq.read_table(path)
    return FileBatch(table.column("num_rows").to_numpy(), table.column("payload").combine_chunks())


def sample_files(arrow_type: pa.DataType, seed: int) -> list[pa.Array]:
    """A few deterministic files of ``arrow_type`` with nulls, for round trips."""
    rng = np.random.default_rng(seed)
    files = []
    for size, distinct in ((500, 7), (300, 200), (0, 1), (5, 1)):
        base = rng.integers(-50, 50, size=distinct)
        ints = base[rng.integers(0, distinct, size=size)]
        nulls = rng.random(size) < 0.1
        if size == 5:
            nulls[:] = True
        files.append(_typed(ints.tolist(), nulls, arrow_type))
    return files


def _typed(ints: list[int], nulls: np.ndarray, arrow_type: pa.DataType) -> pa.Array:
    if pa.types.is_floating(arrow_type):
        values: list[Any] = [math.nan if i == 49 else -0.0 if i == 0 else i / 4 for i in ints]
    elif pa.types.is_decimal(arrow_type):
        values = [Decimal(i).scaleb(-2) for i in ints]
    elif pa.types.is_string(arrow_type):
        values = [f"é{i}" if i % 3 else "" for i in ints]
    elif pa.types.is_binary(arrow_type):
        values = [i.to_bytes(2, "big", signed=True) for i in ints]
    elif pa.types.is_boolean(arrow_type):
        values = [i % 2 == 0 for i in ints]
    else:
        values = ints
    return pa.array([None if n else v for v, n in zip(values, nulls, strict=True)], arrow_type)


ROUND_TRIP_TYPES = [
    pa.int32(),
    pa.float32(),
    pa.float64(),
    pa.decimal128(10, 2),
    pa.string(),
    pa.binary(),
    pa.date32(),
    pa.timestamp("us", tz="UTC"),
    pa.bool_(),
]


def round_trip_leaves(arrow_type: pa.DataType, files: Sequence[pa.Array]) -> list[BoundLeaf]:
    """Leaves over values present in the files plus a few absent ones."""
    column = BoundColumn("c", arrow_type)
    present = [v for f in files for v in to_physical(f).to_pylist() if v is not None][:6]
    out: list[BoundLeaf] = [BoundIsNull(column), BoundIsNull(column, True)]
    for value in present:
        out += [BoundComparison(column, op, value) for op in Op]
    if present:
        out += [BoundIn(column, in_values(present[:3])), BoundIn(column, in_values(present), True)]
    return out


# --------------------------------------------------------------------------- self-tests


def test_oracle_spark_semantics() -> None:
    column = BoundColumn("c", pa.float64())
    values = pa.array([1.0, math.nan, -0.0, None, math.inf])
    assert oracle_rows(BoundComparison(column, Op.EQ, math.nan), values) == {1}
    assert oracle_rows(BoundComparison(column, Op.GT, math.inf), values) == {1}
    assert oracle_rows(BoundComparison(column, Op.EQ, 0.0), values) == {2}
    assert oracle_rows(BoundComparison(column, Op.NE, 1.0), values) == {1, 2, 4}
    assert oracle_rows(BoundIn(column, (1.0,), negated=True), values) == {1, 2, 4}
    assert oracle_rows(BoundIsNull(column), values) == {3}
    f32 = BoundColumn("c", pa.float32())
    assert oracle_rows(BoundComparison(f32, Op.EQ, 0.1), pa.array([0.1], pa.float32())) == set()
    assert distinct_count(values) == 4


def test_portable_serialization() -> None:
    """Roaring portable format: cookie 12346 (no runs) or 12347 (with runs)."""
    sparse = to_bytes(bitmap_of(np.array([1, 5, 70_000], dtype=np.uint32)))
    runs = to_bytes(bitmap_of(np.arange(10, 5000, dtype=np.uint32)))
    assert int.from_bytes(sparse[:4], "little") == 12346
    assert int.from_bytes(runs[:2], "little") == 12347
    assert from_bytes(sparse) == BitMap([1, 5, 70_000])
    assert from_bytes(runs) == BitMap(range(10, 5000))
    assert from_bytes(None) == BitMap()


def test_group_distinct_is_equi_depth() -> None:
    counts = np.array([1, 1, 50, 1, 1, 1, 1, 1, 1, 1])
    groups = group_distinct(counts, 4)
    assert groups[0] == 0
    assert np.all(np.diff(groups) >= 0)
    assert groups[-1] < 4
    assert groups[2] != groups[3]  # the frequent value closes its bucket


def test_merge_ranges() -> None:
    assert merge([(3, 5), (0, 1), (1, 2), (4, 8), (9, 9)]) == [(0, 2), (3, 8)]


@given(cases())
def test_strategies_build_valid_cases(case: Case) -> None:
    for values in case.files:
        assert values.type == case.column_type.arrow_type
    for leaf in case.leaves:
        if isinstance(leaf, BoundIn):
            assert len({spark_key(v) for v in leaf.values}) == len(leaf.values)
