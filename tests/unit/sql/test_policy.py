"""The planning policy: what the planning modules read, set per call and restored."""

from __future__ import annotations

import skipindex as si
from skipindex.reading.policy import DEFAULT, active, using
from skipindex.sql.dynamic import key_bound, key_condition


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


def test_the_readers_choices_weigh_the_policys_costs():
    """How si.read and si.sql hand kept files to Spark is the same policy's."""
    from types import SimpleNamespace

    from skipindex.reading.read import _filter_pays, _folder_pays

    most = SimpleNamespace(kept=90, total=100, listed_bytes=100 << 20, kept_bytes=90 << 20)
    assert _folder_pays(most)  # ten skipped files of 1 MB save less than 90 paths cost
    with using(si.PlanningPolicy(path_seconds=0.0)):
        assert not _folder_pays(most)  # paths cost nothing: always name them
    with using(si.PlanningPolicy(folder_share=0.95)):
        assert not _folder_pays(most)
    assert not _filter_pays(most)  # 90 MB of rows filtered cost more than naming
    with using(si.PlanningPolicy(name_seconds=1.0)):
        assert _filter_pays(most)
