"""A query run again is parsed and derived once (sql/remembered.py), and what is
kept is never changed by deriving or by a run's use of it."""

from __future__ import annotations

from skipindex.sql import remembered
from skipindex.sql.derive import derive, parse
from tests.unit.sql.test_sql_derive import CATALOG

QUERY = (
    "WITH recent AS (SELECT * FROM dim WHERE region = 'EU') "
    "SELECT f.id FROM fact f JOIN recent r ON f.k1 = r.k1 WHERE f.q > 5 AND r.grp = 2"
)


def _conditions(derivation):
    return {n: [str(c.node) for c in found] for n, found in derivation.conditions.items()}


def test_the_same_text_is_parsed_and_derived_once_and_matches_a_fresh_derivation():
    first = remembered.parsed(QUERY, False)
    assert first is not None
    assert remembered.parsed(QUERY, False) is first
    text_before = first.tree.sql()
    derivation = remembered.derived(first, CATALOG)
    assert first.tree.sql() == text_before  # derive qualified a copy
    assert remembered.derived(first, CATALOG) is derivation
    fresh = parse(QUERY)
    assert fresh is not None
    assert _conditions(derivation) == _conditions(derive(fresh, CATALOG))
    assert derivation.conditions  # the join carried the dimension's conditions somewhere
    assert remembered.parsed(QUERY, True) is not first  # the case rule is part of the key


def test_other_schemas_are_derived_anew():
    query = remembered.parsed(QUERY, False)
    assert query is not None
    narrowed = {key: dict(columns) for key, columns in CATALOG.items()}
    narrowed[next(iter(narrowed))]["extra"] = "int"
    assert remembered.derived(query, narrowed) is not remembered.derived(query, CATALOG)


def test_only_the_latest_queries_are_kept(monkeypatch):
    monkeypatch.setattr(remembered, "_KEPT", 3)
    texts = [f"SELECT id FROM fact WHERE q = {n}" for n in range(5)]
    kept = [remembered.parsed(text, False) for text in texts]
    assert remembered.parsed(texts[-1], False) is kept[-1]
    assert remembered.parsed(texts[0], False) is not kept[0]  # let go, parsed again
