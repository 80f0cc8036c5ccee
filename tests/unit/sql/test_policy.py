"""The planning policy: what the planning modules read, set per call and restored."""

from __future__ import annotations

import skipindex as si
from skipindex.sql.dynamic import key_bound, key_condition
from skipindex.sql.policy import DEFAULT, active, using


def test_a_policy_holds_for_its_block_and_the_default_after():
    assert active() is DEFAULT
    with using(si.PlanningPolicy(max_keys=7, row_code_keys=9)):
        assert key_bound(None, {"bloom"}) == 7
        assert key_bound(None, {"bitsliced_bitmap"}) == 9
        with using(None):
            assert key_bound(None, {"bloom"}) == DEFAULT.max_keys
        assert active().max_keys == 7
    assert key_bound(None, {"bloom"}) == DEFAULT.max_keys


def test_the_knobs_decide_how_a_key_list_is_written():
    scattered = list(range(0, 400, 10))  # 40 keys, no two consecutive
    with using(si.PlanningPolicy(bitmap_keys=100)):
        listed = key_condition("t", "k", scattered, rows_by_key=True)
    with using(si.PlanningPolicy(bitmap_keys=10)):
        covered = key_condition("t", "k", scattered, rows_by_key=True)
    assert listed.sql().startswith("t.k IN (0, 10")
    assert covered.sql() == "t.k BETWEEN 0 AND 390"
