"""Kinds sharing one ColumnWork (as the indexer runs them: row-level kinds first,
one work per column) build exactly the payloads each builds on its own."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
from hypothesis import given, settings

from skipindex._types import to_physical
from skipindex.errors import UnsupportedTypeError
from skipindex.indexes import KINDS
from skipindex.indexes._column_work import ColumnWork
from skipindex.indexes.base import IndexKind
from tests._support import examples
from tests.unit.indexes.test_bitmap_oracle import ALL_TYPES, Case, cases


def _kinds(arrow_type: pa.DataType) -> list[IndexKind]:
    """Every kind that takes this type, row-level first (the indexer's order)."""
    out = []
    for kind_class in KINDS.values():
        try:
            out.append(kind_class("c", arrow_type, {}))
        except UnsupportedTypeError:  # Bloom takes no booleans
            continue
    return sorted(out, key=lambda k: not k.row_level)


def _stored(kind: IndexKind, payload: dict[str, Any]) -> str:
    """The payload as a segment stores it (repr: NaN compares equal to NaN)."""
    return repr(pa.array([payload], type=kind.payload_type()).to_pylist())


@settings(max_examples=examples(300))
@given(cases(types=ALL_TYPES))
def test_shared_work_builds_the_same_payloads(case: Case) -> None:
    kinds = _kinds(case.column_type.arrow_type)
    for values in map(to_physical, case.files):
        work = ColumnWork(values, kinds[0].domain)
        for kind in kinds:
            assert _stored(kind, kind.build(values, work)) == _stored(kind, kind.build(values))


def test_bloom_takes_its_values_from_an_earlier_sort() -> None:
    values = pa.array(np.arange(1000) % 37, pa.int64())
    kinds = {k.kind: k for k in _kinds(pa.int64())}
    work = ColumnWork(values, kinds["bloom"].domain)
    assert work.sorted_distinct() is None  # nothing sorted yet: Bloom hashes into a set
    kinds["range_bitmap"].build(values, work)
    distinct = work.sorted_distinct()
    assert distinct is not None
    assert distinct.to_pylist() == list(range(37))
