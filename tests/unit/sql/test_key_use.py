"""The estimate that decides whether a long join-key list is tried key by key, and
the conditions key lists and ranges holding keys become."""

from __future__ import annotations

import datetime
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skipindex.reading.policy import DEFAULT
from skipindex.sql.any_keys import union_keys
from skipindex.sql.conjuncts import render
from skipindex.sql.derive import EquiJoin
from skipindex.sql.dynamic import (
    Keys,
    Spans,
    key_bound,
    spans_condition,
)
from skipindex.sql.file_ranges import keys_within
from skipindex.sql.key_use import (
    KeyList,
    expected_matches,
    key_conditions,
    key_form,
)


def test_lists_answered_row_by_row_multiply_their_shares():
    # SSB Q3.4 at SF1: 1,209 of 150,000 customers, 84 of 10,000 suppliers, a month
    lists = [KeyList(1209, 1209 / 150_000, True), KeyList(84, 84 / 10_000, True)]
    lists.append(KeyList(31, 31 / 2556, True))
    expected = expected_matches(60_000, lists, 0)
    assert expected == pytest.approx(60_000 * math.prod(x.share for x in lists))
    assert expected < DEFAULT.useful_matches  # tried: most files hold no such row
    alone = expected_matches(60_000, lists[:1], 0)
    assert alone is not None
    assert alone > DEFAULT.useful_matches  # alone, every file holds some of those customers


def test_a_list_answered_per_file_counts_only_its_own_share():
    lists = [KeyList(1209, 0.008, False), KeyList(84, 0.0084, True)]
    assert expected_matches(60_000, lists, 0) == pytest.approx(60_000 * 0.008)
    # a row-level list does not meet a per-file one on the same row
    assert expected_matches(60_000, lists, 1) == pytest.approx(60_000 * 0.0084)


def test_an_unknown_share_is_not_estimated_and_counts_as_every_row_for_others():
    lists = [KeyList(10, None, True), KeyList(84, 0.0084, True)]
    assert expected_matches(60_000, lists, 0) is None
    assert expected_matches(60_000, lists, 1) == pytest.approx(60_000 * 0.0084)


def test_the_key_bound_is_the_callers_else_wider_on_bit_sliced_bitmaps():
    assert key_bound(None, {"bloom", "minmax"}) == DEFAULT.max_keys
    wider = key_bound(None, {"bloom", "bitsliced_bitmap"})
    assert wider == DEFAULT.row_code_keys > DEFAULT.max_keys
    assert key_bound(3, {"bitsliced_bitmap"}) == 3
    assert key_bound(0, {"bitsliced_bitmap"}) == 0


def test_ranges_holding_the_keys_are_cut_at_their_widest_gaps():
    spans = Spans(((0, 9), (12, 20), (100, 110), (113, 120), (1000, 1005)), files=5)
    whole = spans_condition("f", "k", spans, 16)
    assert render(whole).count("BETWEEN") == 5
    cut = render(spans_condition("f", "k", spans, 2))
    # the widest gap (120 -> 1000) stays; the narrower ones are covered
    assert cut == "`k` BETWEEN 0 AND 120 OR `k` BETWEEN 1000 AND 1005"
    days = Spans(((datetime.date(2001, 1, 1), datetime.date(2001, 1, 31)),), files=1)
    assert render(spans_condition("f", "d", days, 16)) == (
        "`d` BETWEEN CAST('2001-01-01' AS DATE) AND CAST('2001-01-31' AS DATE)"
    )
    assert render(spans_condition("f", "k", Spans((), files=1), 16)) == "FALSE"


def test_ranges_become_a_condition_beside_key_lists():
    join = EquiJoin(0, "k", 1, "k2", "f.k = g.k2")
    lists = [(join, Spans(((5, 9),), files=3), {"minmax"}), (join, [1, 2, 3], {"minmax"})]
    found = key_conditions("f", lists, None, [("g", None), ("g", None)])
    assert [render(c.node) for c in found] == ["`k` BETWEEN 5 AND 9", "`k` BETWEEN 1 AND 3"]
    assert found[0].note == "the min-max of g's 3 kept files through f.k = g.k2"


def test_a_ctes_references_give_the_union_of_their_keys_only_when_each_gives_keys():
    first, second = EquiJoin(0, "w", 1, "w", "a.w = c.w"), EquiJoin(0, "w", 2, "w", "b.w = c.w")
    both = union_keys(
        [first, second], [Keys(first, [3, 1], "", 0.1), Keys(second, [2, 3], "", 0.2)], 10
    )
    assert both.values == [1, 2, 3]
    assert both.join.fact == 0
    assert both.join.text == "a.w = c.w / b.w = c.w"
    assert both.seconds == pytest.approx(0.3)
    one = union_keys([first, second], [Keys(first, [1], "", 0.0), None], 10)
    assert one.values is None  # the other reference's rows would be dropped
    failed = Keys(second, None, "more than 10 keys", 0.0)
    assert (
        "more than 10 keys"
        in union_keys([first, second], [Keys(first, [1], "", 0), failed], 10).note
    )
    many = union_keys([first, second], [Keys(first, [1, 2], "", 0), Keys(second, [3], "", 0)], 2)
    assert many.values is None


def test_a_self_joins_long_list_on_bit_sliced_bitmaps_is_tried_on_a_small_table():
    # 6,418 orders of 720,000 rows, 18,000 rows a file: 160 matches a file expected
    lists = [KeyList(6418, 6418 / 720_000, True)]
    kinds = {"bitsliced_bitmap", "minmax"}
    assert not key_form(kinds, lists, 0, 18_000.0, 720_000).listed  # estimated: a range
    assert key_form(kinds, lists, 0, 18_000.0, 720_000, same_table=True).listed
    assert key_form(kinds, lists, 0, 18_000.0, 720_000, same_table=True).one_list
    assert not key_form(kinds, lists, 0, 18_000.0, DEFAULT.tried_rows + 1, same_table=True).listed
    assert not key_form({"minmax", "range_bitmap"}, lists, 0, 18_000.0, 720_000, True).listed


@given(
    keys=st.lists(st.integers(-(2**64), 2**64) | st.integers(-60, 200), max_size=40),
    start=st.integers(-60, 60),
    steps=st.lists(st.tuples(st.integers(1, 30), st.integers(0, 20)), max_size=6),
)
def test_keys_within_the_indexed_ranges_are_those_a_range_holds(keys, start, steps):
    ranges = []  # sorted and disjoint, as indexed_ranges gives them
    for gap, width in steps:
        low = start if not ranges else ranges[-1][1] + gap
        ranges.append((low, low + width))
    expected = [k for k in keys if any(low <= k <= high for low, high in ranges)]
    if ranges and any(not -(2**63) <= k < 2**63 for k in keys):
        expected = keys  # past 64 bits: not compared, kept (unless no file holds a value)
    assert keys_within(keys, ranges) == expected


def test_dates_within_the_indexed_ranges_and_other_keys_as_they_are():
    day = datetime.date(2001, 3, 1)
    ranges = [(day, day + datetime.timedelta(days=9))]
    days = [
        day - datetime.timedelta(days=1),
        day,
        day + datetime.timedelta(days=9),
        datetime.date(2030, 1, 1),
    ]
    assert keys_within(days, ranges) == days[1:3]
    assert keys_within(["a", "b"], [(1, 2)]) == ["a", "b"]  # strings: not bounded here
    assert keys_within([1, 2], []) == []  # no indexed file holds a value


def test_a_list_not_tried_key_by_key_on_bit_sliced_bitmaps_lists_its_runs():
    lists = [KeyList(5000, 0.5, True)]
    assert key_form({"bitsliced_bitmap", "minmax"}, lists, 0, 60_000.0).runs_list
    assert not key_form({"range_bitmap"}, lists, 0, 60_000.0).runs_list
    short = [KeyList(10, 0.0001, True)]  # listed: one list already (one_list)
    assert not key_form({"bitsliced_bitmap"}, short, 0, 60_000.0).runs_list


def test_a_list_not_tried_on_a_column_the_files_are_not_clustered_by_is_one_range():
    lists = [KeyList(15_801, 15_801 / 18_000, True)]  # q33: most items, over date-sorted sales
    scattered = key_form({"bitsliced_bitmap", "minmax"}, lists, 0, 72_000.0, clustered=False)
    assert not scattered.listed
    assert scattered.max_ranges == 1
    assert not scattered.runs_list
    dated = key_form({"bitsliced_bitmap", "minmax"}, lists, 0, 72_000.0, clustered=True)
    assert dated.max_ranges is None  # its runs skip files: kept, as one list
    assert dated.runs_list
    short = [KeyList(10, 10 / 18_000, True)]
    assert key_form({"bitsliced_bitmap"}, short, 0, 72_000.0, clustered=False).max_ranges is None
