"""A join's key list reaches prune as a predicate made from its tree
(``conjuncts.prune_where``), not as text written out and parsed back: it must be
exactly the predicate prune makes of that text, in any session zone, beside any
written condition."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlglot import exp

from skipindex.expressions.binding import prepare
from skipindex.expressions.sql import parse_sql
from skipindex.expressions.timezones import session_zone, zone_named
from skipindex.sql.conjuncts import Condition, prune_where, render
from skipindex.sql.dynamic import key_condition
from tests._support import examples

ZONES = ["UTC", "America/Los_Angeles", "Asia/Kathmandu"]

_KEYS = st.one_of(
    st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=60),
    st.lists(st.integers(-40, 40), min_size=1, max_size=60),  # runs become BETWEEN
    st.lists(
        st.decimals(-(10**6), 10**6, places=2, allow_nan=False, allow_infinity=False),
        min_size=1,
        max_size=30,
    ),
    st.lists(st.text(max_size=6), min_size=1, max_size=30),  # quotes, backslashes, unicode
    st.lists(st.dates(datetime.date(1, 1, 1), datetime.date(9999, 12, 31)), min_size=1),
)
_FLAGS = st.tuples(st.booleans(), st.booleans(), st.booleans(), st.sampled_from([None, 2, 16]))


def _text(conditions: list[Condition]) -> str:
    return " AND ".join(f"({render(c.node)})" for c in conditions)


@settings(max_examples=examples(200), deadline=None)
@given(_KEYS, _FLAGS, st.sampled_from(ZONES))
def test_a_key_list_is_the_predicate_its_text_parses_to(keys, flags, zone):
    values = sorted(set(keys))
    rows_by_key, ranges, one_list, max_ranges = flags
    node = key_condition("f", "k", values, rows_by_key, ranges, one_list, max_ranges)
    made = prune_where([Condition(node, "dynamic")], zone)
    with session_zone(zone_named(zone)):
        assert made == parse_sql(render(node)), render(node)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.integers(0, 10**6), min_size=1, max_size=40), st.sampled_from(ZONES))
def test_written_conditions_mean_what_they_mean_in_the_session_zone(keys, zone):
    """A timestamp literal is an instant in the session's zone: parsed beside the
    key list, it binds as prune binds the whole text."""
    written = [
        Condition(exp.condition("f.ts >= TIMESTAMP '2021-03-14 02:30:00'"), "written"),
        Condition(exp.condition("f.d < DATE '2021-03-15' OR f.s = 'é'"), "pushed"),
    ]
    lists = [
        Condition(key_condition("f", "k", sorted(set(keys)), False), "dynamic"),
        Condition(key_condition("f", "amt", [Decimal("1.50"), Decimal("-2.25")], False), "dynamic"),
    ]
    schema = pa.schema(
        [
            ("ts", pa.timestamp("us", tz="UTC")),
            ("d", pa.date32()),
            ("s", pa.string()),
            ("k", pa.int64()),
            ("amt", pa.decimal128(9, 2)),
        ]
    )
    made = prune_where([*written, *lists], zone)
    assert not isinstance(made, str)
    expected = prepare(_text([*written, *lists]), schema, time_zone=zone)
    assert prepare(made, schema, time_zone=zone) == expected


def test_text_prune_cannot_parse_stays_text_for_prune_to_report():
    broken = Condition(exp.condition("f.d = DATE 'not a date'"), "written")
    keys = Condition(key_condition("f", "k", [1, 5, 9], False), "dynamic")
    made = prune_where([broken, keys], "UTC")
    assert made == _text([broken, keys])


def test_conditions_without_key_lists_are_text():
    written = [Condition(exp.condition("f.k > 3"), "written")]
    assert prune_where(written, "UTC") == "(`k` > 3)"
    assert prune_where([], "UTC") is None
