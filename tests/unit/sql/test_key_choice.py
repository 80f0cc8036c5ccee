"""Where a join's keys may come from (``sql/key_choice.py``): pure functions of
the measured sides and the planning policy, checked rule by rule and as
properties over any sides."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from skipindex.reading.policy import PlanningPolicy
from skipindex.sql.key_choice import (
    Attempt,
    KeyChoice,
    Retry,
    Sides,
    choose_keys,
    retry,
    why_not_ask,
)

MiB = 2**20
POLICY = PlanningPolicy()  # key_query_bytes 64 MiB, key_side_share 2, rows_per_key_bound 4


def test_a_small_key_side_of_a_large_fact_may_ask_spark():
    sides = Sides(matching_rows=100, relay=False, read=1000 * MiB, key_read=MiB)
    assert choose_keys(sides, 4096, False, False, POLICY) == KeyChoice(None, False, None)


def test_a_round_that_allows_no_spark_query_reads_keys_locally():
    sides = Sides(100, False, 1000 * MiB, MiB)
    assert choose_keys(sides, 4096, False, True, POLICY) == KeyChoice(None, True, None)


def test_many_matching_rows_want_no_keys_unless_ranges_answer():
    sides = Sides(4 * 4096 + 1, False, 1000 * MiB, MiB)
    none = choose_keys(sides, 4096, False, False, POLICY)
    assert none.why_none is not None
    assert "16,385 rows" in none.why_none
    ranges = choose_keys(sides, 4096, True, False, POLICY)
    assert ranges == KeyChoice(None, True, None)  # as ranges, from its kept rows only


def test_a_pruned_side_too_small_for_a_spark_query_takes_local_keys_only():
    sides = Sides(100, False, POLICY.key_query_bytes - 1, MiB)
    choice = choose_keys(sides, 4096, False, False, POLICY)
    assert choice.why_none is None
    assert choice.local_only
    assert choice.why_not_asked is not None
    assert "too small" in choice.why_not_asked


def test_a_key_side_not_much_smaller_gives_keys_from_few_kept_files_only():
    few = Sides(100, False, 200 * MiB, 150 * MiB)  # 150 MiB * 2 > 200 MiB
    assert choose_keys(few, 4096, False, False, POLICY).why_none is not None
    small = Sides(100, False, 40 * MiB, 30 * MiB)  # below local_key_side_bytes
    choice = choose_keys(small, 4096, False, False, POLICY)
    assert choice.why_none is None
    assert choice.local_only
    assert choice.why_not_asked is not None
    assert "not much smaller" in choice.why_not_asked


def test_a_relay_is_narrowed_however_small_but_not_one_file_by_a_larger_side():
    relay = Sides(100, True, None, None)
    assert choose_keys(relay, 4096, False, False, POLICY) == KeyChoice(None, False, None)
    larger = Sides(100, True, None, None, relay_larger=True)
    assert choose_keys(larger, 4096, False, False, POLICY).why_none is not None


def test_keys_expected_in_every_file_are_not_looked_for():
    sides = Sides(100, False, 1000 * MiB, MiB, likely_skips=POLICY.least_skips / 2)
    none = choose_keys(sides, 4096, True, False, POLICY)  # not even as ranges
    assert none.why_none is not None
    assert "expected in every file" in none.why_none
    some = Sides(100, False, 1000 * MiB, MiB, likely_skips=POLICY.least_skips)
    assert choose_keys(some, 4096, False, False, POLICY) == KeyChoice(None, False, None)
    unknown = Sides(100, False, 1000 * MiB, MiB, likely_skips=None)
    assert choose_keys(unknown, 4096, False, False, POLICY) == KeyChoice(None, False, None)


def test_a_held_query_is_asked_only_while_it_still_pays():
    assert why_not_ask(Sides(0, False, 1000 * MiB, MiB), POLICY) is None
    assert why_not_ask(Sides(0, True, None, None), POLICY) is None
    assert "too small" in str(why_not_ask(Sides(0, False, MiB, MiB // 4), POLICY))
    assert "not much smaller" in str(why_not_ask(Sides(0, False, 100 * MiB, 80 * MiB), POLICY))


sizes = st.one_of(st.none(), st.integers(0, 2**40))


@given(
    rows=st.integers(0, 10**8),
    relay=st.booleans(),
    read=sizes,
    key_read=sizes,
    relay_larger=st.booleans(),
    bound=st.integers(1, 20000),
    spans=st.booleans(),
    local_only=st.booleans(),
)
def test_no_spark_query_where_it_cannot_pay(
    rows, relay, read, key_read, relay_larger, bound, spans, local_only
):
    sides = Sides(rows, relay, read, key_read, relay_larger and relay)
    choice = choose_keys(sides, bound, spans, local_only, POLICY)
    if choice.why_none is not None:
        assert not choice.local_only
        assert choice.why_not_asked is None
        return
    spark_allowed = not choice.local_only
    if spark_allowed:  # a Spark query only where the round allows one, and it pays
        assert not local_only
        assert read is None or read >= POLICY.key_query_bytes
        assert relay or key_read is None or read is None or key_read * 2 <= read
        assert rows <= POLICY.rows_per_key_bound * bound
    # where keys are read locally only, a reason is given exactly when the round
    # itself allowed Spark and this join did not
    if choice.why_not_asked is not None:
        assert choice.local_only
        assert not local_only


def test_a_join_never_tried_is_tried_in_full():
    assert retry(Retry(False, False, False, False, False)) is Attempt.FIRST


def test_a_join_tried_again_rereads_only_a_large_side_nothing_narrowed_yet():
    assert retry(Retry(True, False, False, True, True)) is Attempt.REREAD
    assert retry(Retry(True, False, True, True, False)) is Attempt.RANGES  # too small
    assert retry(Retry(True, False, True, False, True)) is Attempt.RANGES  # narrowed already
    assert retry(Retry(True, False, False, False, True)) is Attempt.NONE  # no ranges answer


@given(
    tried=st.booleans(),
    fed=st.booleans(),
    by_ranges=st.booleans(),
    whole=st.booleans(),
    large=st.booleans(),
)
def test_a_retry_never_asks_spark_nor_reads_where_it_cannot_pay(
    tried, fed, by_ranges, whole, large
):
    attempt = retry(Retry(tried, fed, by_ranges, whole, large))
    if not (tried or fed):
        assert attempt is Attempt.FIRST  # only a first try may ask Spark
        return
    assert attempt is not Attempt.FIRST
    if attempt is Attempt.REREAD:  # kept rows read again only where it can repay
        assert whole
        assert large
    if attempt is Attempt.RANGES:
        assert by_ranges
    if attempt is Attempt.NONE:
        assert not by_ranges
        assert not (whole and large)
