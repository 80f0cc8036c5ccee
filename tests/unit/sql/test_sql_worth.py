"""Which references' keys can skip files somewhere (``worth.keys_reach_files``):
q84's one-file dimensions, whose keys end at a column only min-max answers over
unclustered files, are not worth pruning; q72's second date dimension, between
1999's weeks and inventory, is."""

from __future__ import annotations

from typing import Any

import pytest

from skipindex.sql import worth
from skipindex.sql.derive import EquiJoin

# reference -> (files, why its join column skips nothing, or None)
TABLES = {
    0: (40, None),  # inventory: bitmaps on the date key
    1: (1, None),  # d2
    2: (1, None),  # d1
    3: (40, "only min-max answers the column, and each file spans most of its range"),
    4: (1, None),  # customer_demographics
    5: (1, None),  # customer
}


@pytest.fixture(autouse=True)
def _tables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worth, "one_file", lambda source: TABLES[source][0] == 1)
    monkeypatch.setattr(worth, "why_keys_skip_nothing", lambda source, column: TABLES[source][1])


def _join(fact: int, dim: int) -> EquiJoin:
    return EquiJoin(fact, "k", dim, "k", f"{fact} = {dim}")


def _reach(number: int, joins: list[EquiJoin], besides: tuple[int, ...] = ()) -> bool:
    source_of: Any = lambda n: n  # noqa: E731  (the fake tables above are their numbers)
    return worth.keys_reach_files(number, joins, source_of, besides)


def test_keys_reach_a_table_of_several_files_through_one_file_tables():
    joins = [_join(1, 2), _join(0, 1)]  # d1 -> d2 -> inventory
    assert _reach(2, joins)
    assert _reach(1, joins)
    assert not _reach(1, joins, besides=(0,))  # never back through where its keys came from


def test_keys_that_end_in_one_file_tables_or_at_an_unclustered_min_max_reach_nothing():
    joins = [_join(4, 5), _join(3, 4), _join(5, 4)]  # customer <-> cd -> store_returns
    assert not _reach(5, joins)
    assert not _reach(4, joins)
    assert not _reach(0, joins)  # no join takes its keys
    assert _reach(5, [*joins, _join(0, 4)])  # cd's keys reaching inventory: worth it


def test_two_sides_filtered_only_by_subqueries_do_not_wait_for_each_others_keys():
    joins = [_join(0, 1), _join(1, 0)]  # inventory <-> d2, each with a subquery condition
    # Both filtered by key-only conditions: neither counts as narrowed by the other,
    # else each would drop its subquery for keys the other never computes.
    assert not worth.narrowed_by_keys(0, joins, 0, filtered={0, 1}, conditioned=set())
    assert not worth.narrowed_by_keys(1, joins, 1, filtered={0, 1}, conditioned=set())
    # d2 with conditions of its own gives keys: inventory is narrowed by them.
    assert worth.narrowed_by_keys(0, joins, 0, filtered={0, 1}, conditioned={1})
    # One way only (q58: the IN subquery's table narrows the outer reference).
    assert worth.narrowed_by_keys(0, [_join(0, 1)], 0, filtered={1}, conditioned=set())
    assert not worth.narrowed_by_keys(0, joins, None, filtered={0, 1}, conditioned={1})
