"""The estimate that decides whether a long join-key list is tried key by key."""

from __future__ import annotations

import math

import pytest

from skipindex.sql.dynamic import MAX_KEYS, ROW_CODE_KEYS, key_bound
from skipindex.sql.key_use import USEFUL_MATCHES, KeyList, expected_matches


def test_lists_answered_row_by_row_multiply_their_shares():
    # SSB Q3.4 at SF1: 1,209 of 150,000 customers, 84 of 10,000 suppliers, a month
    lists = [KeyList(1209, 1209 / 150_000, True), KeyList(84, 84 / 10_000, True)]
    lists.append(KeyList(31, 31 / 2556, True))
    expected = expected_matches(60_000, lists, 0)
    assert expected == pytest.approx(60_000 * math.prod(x.share for x in lists))
    assert expected < USEFUL_MATCHES  # tried: most files hold no such row
    alone = expected_matches(60_000, lists[:1], 0)
    assert alone is not None
    assert alone > USEFUL_MATCHES  # alone, every file holds some of those customers


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
    assert key_bound(None, {"bloom", "minmax"}) == MAX_KEYS
    assert key_bound(None, {"bloom", "bitsliced_bitmap"}) == ROW_CODE_KEYS > MAX_KEYS
    assert key_bound(3, {"bitsliced_bitmap"}) == 3
    assert key_bound(0, {"bitsliced_bitmap"}) == 0
