"""A long IN list of integers on an integer column is bound with numpy
(``integer_members``): it must bind exactly as the literal-by-literal path does
(``member_values`` over each literal coerced), for every integer type, keys past
the type's range or past 64 bits, duplicates, one key or none, and NOT IN."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from skipindex._types import Domain
from skipindex.expressions.bound_leaves import integer_members, member_values
from skipindex.expressions.coercion import coerce
from skipindex.expressions.nodes import BoundColumn, Literal, LiteralKind
from tests._support import examples

_TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint32(), pa.uint64()]
_KEYS = st.one_of(
    st.integers(-300, 300),  # around the small types' ends
    st.integers(-(2**63), 2**63 - 1),
    st.integers(-(2**70), 2**70),  # past 64 bits: not for numpy
)


@settings(max_examples=examples(300), deadline=None)
@given(st.sampled_from(_TYPES), st.lists(_KEYS, max_size=40), st.booleans())
def test_integer_members_bind_as_each_literal_does(arrow_type, keys, negated):
    column = BoundColumn("x", arrow_type)
    fast = integer_members(column, keys, negated)
    targets = [coerce(column, Domain.INT, Literal(LiteralKind.INT, k)) for k in keys]
    expected = member_values(column, Domain.INT, targets, negated)
    if any(not -(2**63) <= k < 2**63 for k in keys):
        assert fast is None  # left to the literal-by-literal path
    else:
        assert fast == expected
