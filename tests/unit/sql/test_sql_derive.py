"""What skipindex.sql derives for each table reference, from SQL text alone (no Spark):
which conditions hold on every row a reference contributes, and which do not."""

from __future__ import annotations

import pytest

from skipindex.sql.derive import Derivation, derive, parse
from skipindex.sql.references import TableKey

CATALOG = {
    TableKey("name", "fact"): {
        "id": "bigint",
        "k1": "int",
        "k2": "string",
        "d": "date",
        "ts": "timestamp",
        "q": "int",
        "f": "double",
        "big": "bigint",
    },
    TableKey("name", "dim"): {"k1": "int", "region": "string", "grp": "int", "f": "double"},
    TableKey("name", "dim2"): {"k2": "string", "cat": "string", "big": "bigint"},
    TableKey("parquet", "/lake/t"): {"k1": "int", "x": "int"},
}


def run(query: str) -> tuple[Derivation, dict[str, str | None]]:
    parsed = parse(query)
    assert parsed is not None
    derivation = derive(parsed, CATALOG)
    names = {}
    for ref in parsed.references:
        if ref.number in derivation.tables:
            names[ref.alias or ref.written] = derivation.where(ref.number)
    return derivation, names


def where(query: str) -> dict[str, str | None]:
    return run(query)[1]


def test_written_conditions_reach_their_table():
    assert where("SELECT * FROM fact WHERE year(d) = 2020 AND q > 5 OR id = 1") == {
        "fact": "(YEAR(`d`) = 2020 AND `q` > 5 OR `id` = 1)"
    }


def test_functions_an_expression_index_may_hold_are_kept():
    assert where("SELECT * FROM fact f WHERE lower(f.k2) = 'ab' AND hour(ts) = 3") == {
        "f": "(LOWER(`k2`) = 'ab') AND (HOUR(`ts`) = 3)"
    }


def test_conditions_that_prune_cannot_use_are_dropped():
    assert (
        where(
            "SELECT * FROM fact WHERE coalesce(q, 0) = 0 AND my_udf(id) "
            "AND id IN (SELECT k1 FROM dim) AND k1 = 3"
        )["fact"]
        == "(`k1` = 3)"
    )


def test_inner_join_conditions_and_transfer_across_equal_columns():
    found = where(
        "SELECT * FROM fact f JOIN dim a ON f.k1 = a.k1 AND a.grp = 2 "
        "WHERE a.region = 'ASIA' AND f.q BETWEEN 1 AND 3 AND a.k1 < 10"
    )
    assert found == {
        "f": "(`q` BETWEEN 1 AND 3) AND (`k1` < 10)",
        "a": "(`region` = 'ASIA') AND (`k1` < 10) AND (`grp` = 2)",
    }


def test_no_transfer_between_different_types():
    assert where("SELECT * FROM fact f JOIN dim2 b ON f.k1 = b.big WHERE b.big = 3")["f"] is None
    assert where("SELECT * FROM fact f JOIN dim a ON f.f = a.f WHERE a.f = 0.0")["f"] is None
    assert where("SELECT * FROM fact f JOIN dim a ON f.id = a.k1 WHERE a.k1 = 3")["f"] is None


def test_left_join():
    found = where(
        "SELECT * FROM fact f LEFT JOIN dim a ON f.k1 = a.k1 AND a.grp = 3 AND f.q = 1 "
        "WHERE a.region IS NULL AND f.id > 7"
    )
    # WHERE on the null-supplying side, ON on the preserved side: neither filters.
    assert found == {"f": "(`id` > 7)", "a": "(`grp` = 3)"}


def test_a_left_join_takes_the_preserved_sides_conditions_on_its_keys():
    """q78's shape: a year fixed on the preserved side reaches, through the ON
    equality, the null-supplying side (and through its GROUP BY, its table);
    never the other way."""
    found = where(
        "SELECT * FROM fact f LEFT JOIN dim a ON f.k1 = a.k1 AND a.k1 = 4 "
        "WHERE f.k1 = 5 AND a.region IS NULL"
    )
    assert found == {"f": "(`k1` = 5)", "a": "(`k1` = 4) AND (`k1` = 5)"}
    found = where(
        "WITH w AS (SELECT k1 AS wk, sum(q) AS n FROM fact GROUP BY k1) "
        "SELECT * FROM dim a LEFT JOIN w ON w.wk = a.k1 WHERE a.k1 = 3 AND coalesce(w.n, 0) > 0"
    )
    assert found == {"a": "(`k1` = 3)", "fact": "(`k1` = 3)"}
    found = where("SELECT * FROM dim a RIGHT JOIN fact f ON f.k1 = a.k1 WHERE f.k1 = 2")
    assert found == {"f": "(`k1` = 2)", "a": "(`k1` = 2)"}
    for join in ("FULL JOIN", "LEFT JOIN"):  # nothing preserved / the key of the padded side
        found = where(f"SELECT * FROM fact f {join} dim a ON f.k1 = a.k1 WHERE a.k1 IS NULL")
        assert found == {"f": None, "a": None}, join


def test_right_and_full_joins():
    assert where(
        "SELECT * FROM dim a RIGHT JOIN fact f ON f.k1 = a.k1 AND a.grp = 1 AND f.q = 2 "
        "WHERE f.id = 3 AND a.region = 'EU'"
    ) == {"a": "(`grp` = 1)", "f": "(`id` = 3)"}
    assert where(
        "SELECT * FROM fact f FULL JOIN dim a ON f.k1 = a.k1 AND a.grp = 1 WHERE f.id = 3"
    ) == {"f": None, "a": None}


def test_null_supplying_side_of_an_earlier_left_join_stays_so():
    found = where(
        "SELECT * FROM fact f LEFT JOIN dim a ON f.k1 = a.k1 JOIN dim2 b ON a.region = b.cat "
        "AND a.grp = 1 AND b.cat = 'x'"
    )
    assert found["a"] is None  # a.grp = 1 in a later inner ON: a was null-supplying there
    assert found["b"] == "(`cat` = 'x')"


def test_semi_and_anti_joins():
    assert where(
        "SELECT * FROM fact f LEFT SEMI JOIN dim a ON f.k1 = a.k1 AND a.grp = 2 AND f.q = 1"
    ) == {"f": "(`q` = 1)", "a": "(`grp` = 2)"}
    assert where(
        "SELECT * FROM fact f LEFT ANTI JOIN dim a ON f.k1 = a.k1 AND a.grp = 2 AND f.q = 1"
    ) == {"f": None, "a": "(`grp` = 2)"}


def test_cte_referenced_twice_gets_the_or_of_both():
    found = where(
        "WITH c AS (SELECT id, k1 FROM fact WHERE q < 10) "
        "SELECT * FROM c x JOIN c y ON x.id = y.id WHERE x.k1 = 1 AND y.k1 = 2"
    )
    assert found == {"fact": "(`q` < 10) AND ((`k1` = 1) OR (`k1` = 2))"}


def test_cte_reference_without_conditions_pushes_nothing():
    found = where(
        "WITH c AS (SELECT id, k1 FROM fact) SELECT * FROM c UNION ALL SELECT * FROM c WHERE k1 = 2"
    )
    assert found == {"fact": None}


def test_conditions_on_grouping_keys_move_below_the_group_by():
    """q04 and q11's shape: a year's totals, filtered by the year outside."""
    found = where(
        "WITH t AS (SELECT k1 AS key, d AS day, sum(q) AS total FROM fact WHERE q > 0 "
        "GROUP BY k1, d HAVING sum(q) > 3) SELECT * FROM t WHERE t.day = DATE '2024-01-01' "
        "AND t.total > 10 AND t.key IN (1, 2)"
    )
    assert found == {
        "fact": "(`q` > 0) AND (`d` = CAST('2024-01-01' AS DATE)) AND (`k1` IN (1, 2))"
    }
    # through a UNION ALL of grouped branches, by position, and a join's keys
    found = where(
        "SELECT * FROM (SELECT k1, count(*) AS n FROM fact GROUP BY k1 "
        "UNION ALL SELECT k1, count(*) AS n FROM dim GROUP BY k1) u WHERE u.k1 = 5"
    )
    assert found == {"fact": "(`k1` = 5)", "dim": "(`k1` = 5)"}


def test_grouping_keys_of_a_derived_table_lead_to_its_tables():
    """q75's shape: a CTE grouping a UNION of channels by year, read twice with
    two years: each channel's rows take the OR of both."""
    found = where(
        "WITH t AS (SELECT k1, sum(q) AS total FROM (SELECT k1, q FROM fact "
        "UNION SELECT k1, grp AS q FROM dim) u GROUP BY k1) "
        "SELECT * FROM t a, t b WHERE a.k1 = 5 AND b.k1 = 6 AND a.total > b.total"
    )
    assert found == {
        "fact": "((`k1` = 5) OR (`k1` = 6))",
        "dim": "((`k1` = 5) OR (`k1` = 6))",
    }
    # a double behind the derived table's column still keeps -0.0 and 0.0 in one group
    found = where(
        "SELECT * FROM (SELECT f, count(*) AS n FROM (SELECT f FROM fact WHERE q = 1) u "
        "GROUP BY f) g WHERE g.f = 0.0"
    )
    assert found == {"fact": "(`q` = 1)"}


def test_group_by_keeps_what_would_change_its_groups():
    for inner, outer in (
        ("SELECT k1, count(*) AS n FROM fact WHERE q = 1 GROUP BY k1", "g.n = 5"),  # an aggregate
        ("SELECT k1, count(*) AS n FROM fact WHERE q = 1 GROUP BY ROLLUP (k1)", "g.k1 = 5"),
        ("SELECT k1, count(*) AS n FROM fact WHERE q = 1 GROUP BY CUBE (k1)", "g.k1 IS NULL"),
        ("SELECT f, count(*) AS n FROM fact WHERE q = 1 GROUP BY f", "g.f = 0.0"),  # -0.0, 0.0
        ("SELECT k1 + 1 AS k1, count(*) AS n FROM fact WHERE q = 1 GROUP BY k1 + 1", "g.k1 = 5"),
        ("SELECT k1, count(*) AS n FROM fact WHERE q = 1 GROUP BY k1 LIMIT 3", "g.k1 = 5"),
    ):
        assert where(f"SELECT * FROM ({inner}) g WHERE {outer}") == {"fact": "(`q` = 1)"}, inner


def test_derived_tables_with_windows_or_limits_take_nothing_from_outside():
    for inner in (
        "SELECT k1, row_number() OVER (ORDER BY id) AS n FROM fact WHERE q = 1",
        "SELECT k1, q AS n FROM fact WHERE q = 1 LIMIT 5",
        "SELECT k1, max(q) AS n FROM fact WHERE q = 1",
    ):
        assert where(f"SELECT * FROM ({inner}) g WHERE g.k1 = 5") == {"fact": "(`q` = 1)"}, inner


def test_derived_table_passes_plain_columns_only():
    found = where(
        "SELECT * FROM (SELECT id AS i, k1 + 1 AS k, q FROM fact) t WHERE t.i = 1 AND t.k = 2"
        " AND t.q > 3"
    )
    assert found == {"fact": "(`id` = 1) AND (`q` > 3)"}


def test_union_branches_of_one_type():
    found = where(
        "SELECT * FROM (SELECT k1 FROM fact WHERE q = 1 UNION ALL SELECT k1 FROM dim) u "
        "WHERE u.k1 = 5"
    )
    assert found == {"fact": "(`q` = 1) AND (`k1` = 5)", "dim": "(`k1` = 5)"}


def test_union_branches_of_different_types_take_nothing():
    # int and bigint: the union is bigint, and 5 is compared after widening.
    found = where(
        "SELECT * FROM (SELECT k1 FROM fact UNION ALL SELECT big FROM dim2) u WHERE k1 = 5"
    )
    assert found == {"fact": None, "dim2": None}
    found = where("SELECT * FROM (SELECT k1 FROM fact UNION SELECT 7) u WHERE k1 = 5")
    assert found == {"fact": None}


def test_subqueries_keep_their_own_conditions_only():
    found = where(
        "SELECT * FROM fact f WHERE EXISTS (SELECT 1 FROM dim a WHERE a.k1 = f.k1 AND a.grp = 1)"
        " AND f.k1 NOT IN (SELECT k1 FROM dim2 WHERE cat = 'x')"
    )
    assert found == {"f": None, "a": "(`grp` = 1)", "dim2": "(`cat` = 'x')"}


def test_equi_joins_are_dynamic_candidates_where_the_fact_must_match():
    derivation, _ = run(
        "SELECT * FROM fact f JOIN dim a ON f.k1 = a.k1 LEFT JOIN dim2 b ON f.k2 = b.k2 "
        "WHERE a.region = 'ASIA'"
    )
    pairs = {(j.fact, j.fact_column, j.dim, j.dim_column) for j in derivation.joins}
    assert (0, "k1", 1, "k1") in pairs  # fact rows must match a dim row
    assert (1, "k1", 0, "k1") in pairs
    assert (2, "k2", 0, "k2") in pairs  # b is null-supplying: b rows must match f
    assert (0, "k2", 2, "k2") not in pairs  # f is preserved by the LEFT JOIN


def test_in_subquery_is_a_dynamic_candidate_both_ways():
    derivation, found = run("SELECT * FROM fact WHERE k1 IN (SELECT k1 FROM dim WHERE grp = 1)")
    # dim's keys prune fact (a semi-join); fact's keys prune dim, which only follows:
    # a dim row whose k1 is no kept fact row's decides nothing
    assert {(j.fact, j.dim, j.follows) for j in derivation.joins} == {(0, 1, False), (1, 0, True)}
    assert found == {"fact": None, "dim": "(`grp` = 1)"}
    derivation, _ = run("SELECT * FROM fact WHERE k1 NOT IN (SELECT k1 FROM dim WHERE grp = 1)")
    assert derivation.joins == []  # one NULL k1 in dim makes every row's answer NULL
    derivation, _ = run("SELECT * FROM fact WHERE k1 IN (SELECT k1 FROM dim LIMIT 3)")
    assert derivation.joins == []  # which rows a LIMIT keeps depends on all of them
    derivation, _ = run("SELECT * FROM fact WHERE k1 IN (SELECT max(k1) FROM dim GROUP BY grp)")
    assert derivation.joins == []  # a group's answer depends on all of its rows
    derivation, _ = run("SELECT * FROM fact WHERE k1 IN (SELECT k1 FROM dim) OR q = 1")
    assert derivation.joins == []  # not a conjunct: rows pass without a match
    # A subquery that joins: the projected table follows the outer keys (its y is
    # every value it gives); the outer rows are not pruned by one side's keys alone.
    derivation, _ = run(
        "SELECT * FROM fact f WHERE f.k1 IN (SELECT d.k1 FROM dim d JOIN dim2 e ON d.grp = e.big)"
    )
    joined = {(j.fact, j.fact_column, j.dim, j.follows) for j in derivation.joins}
    assert (1, "k1", 0, True) in joined
    assert not any(j.fact == 0 for j in derivation.joins)


def test_exists_and_not_exists_are_semi_and_anti_join_candidates():
    exists = "SELECT * FROM fact f WHERE f.q = 1 AND EXISTS (SELECT * FROM dim d WHERE "
    derivation, _ = run(exists + "d.k1 = f.k1 AND d.f <> f.f)")
    assert {(j.fact, j.fact_column, j.dim) for j in derivation.joins} == {
        (1, "k1", 0),  # f's keys prune d: a d row no f row matches never meets the WHERE
        (0, "k1", 1),  # and d's keys prune f: an f row no d row matches fails EXISTS
    }
    derivation, _ = run(exists.replace("EXISTS", "NOT EXISTS") + "d.k1 = f.k1)")
    # the f rows NOT EXISTS keeps are those no d row matches: d's keys cannot prune f
    assert [(j.fact, j.dim) for j in derivation.joins] == [(1, 0)]
    derivation, _ = run(exists + "d.k1 = f.k1 GROUP BY d.k1 HAVING count(*) > 1)")
    assert [(j.fact, j.dim) for j in derivation.joins] == [(1, 0)]  # grouped: f's keys only
    derivation, _ = run(exists + "d.k1 = f.k1 OR d.grp = 2)")
    assert derivation.joins == []  # the correlation is not a conjunct of the WHERE
    derivation, _ = run(
        "SELECT * FROM fact f WHERE EXISTS (SELECT * FROM dim d LEFT JOIN dim2 e "
        "ON d.k1 = e.k1 WHERE e.k2 = f.k2 OR e.k2 IS NULL)"
    )
    assert derivation.joins == []
    derivation, _ = run("SELECT * FROM fact f WHERE f.q = 1 OR EXISTS (SELECT * FROM dim d "
                        "WHERE d.k1 = f.k1)")  # fmt: skip
    assert derivation.joins == []  # not a conjunct: f rows without a match stay


def test_dynamic_candidates_need_joinable_key_types():
    derivation, _ = run("SELECT * FROM fact f JOIN dim a ON f.k2 = a.k1 WHERE a.grp = 1")
    assert derivation.joins == []  # string = int compares as numbers in Spark
    derivation, _ = run("SELECT * FROM fact f JOIN dim a ON f.f = a.f WHERE a.grp = 1")
    assert derivation.joins == []  # doubles: -0.0 joins 0.0
    derivation, _ = run("SELECT * FROM fact f JOIN dim a ON f.big = a.k1 WHERE a.grp = 1")
    assert {(j.fact, j.dim) for j in derivation.joins} == {(0, 1), (1, 0)}  # ints of any width


@pytest.mark.parametrize(
    "query",
    [
        "SELECT *, rand(1) FROM fact WHERE q = 1",
        "SELECT monotonically_increasing_id() FROM fact WHERE q = 1",
        "SELECT input_file_name() FROM fact WHERE q = 1",
        "SELECT _metadata.file_path FROM fact WHERE q = 1",
        "SELECT * FROM fact WHERE q = 1 AND uuid() IS NOT NULL",
    ],
)
def test_layout_dependent_queries_run_as_written(query):
    derivation, _ = run(query)
    assert derivation.why_whole is not None
    assert derivation.conditions == {}


def test_using_and_natural_joins():
    found = where("SELECT * FROM fact JOIN dim USING (k1) WHERE k1 = 3 AND q = 1")
    assert found == {"fact": "(`q` = 1)", "dim": None}
    # An inner natural join filters both sides; a common column (k1) is coalesced.
    found = where("SELECT * FROM fact NATURAL JOIN dim WHERE q = 1 AND k1 = 2")
    assert found == {"fact": "(`q` = 1)", "dim": None}
    # grp = 1 rejects the rows padded for dim: the left join is inner
    found = where("SELECT * FROM fact NATURAL LEFT JOIN dim WHERE grp = 1 AND q = 1")
    assert found == {"fact": "(`q` = 1)", "dim": "(`grp` = 1)"}
    found = where("SELECT * FROM fact NATURAL LEFT JOIN dim WHERE grp IS NULL AND q = 1")
    assert found == {"fact": "(`q` = 1)", "dim": None}


def test_names_are_case_insensitive_and_paths_resolve():
    assert where("SELECT * FROM FACT WHERE Q = 1 AND fact.K1 = 2") == {
        "FACT": "(`q` = 1) AND (`k1` = 2)"
    }
    assert where("SELECT * FROM parquet.`/lake/t` WHERE x > 1") == {
        "parquet.`/lake/t`": "(`x` > 1)"
    }


def test_unknown_tables_and_columns_derive_nothing_for_them():
    assert where("SELECT * FROM fact f JOIN other o ON f.k1 = o.k1 WHERE o.z = 1 AND f.q = 2") == {
        "f": "(`q` = 2)"
    }
    assert where("SELECT * FROM fact WHERE nope = 1") == {"fact": None}


def test_a_cte_named_like_a_table_is_not_the_table():
    assert where(
        "WITH dim AS (SELECT k1 FROM fact WHERE q = 1) SELECT * FROM dim WHERE k1 = 2"
    ) == {"fact": "(`q` = 1) AND (`k1` = 2)"}


def test_pushed_through_nested_derived_tables_and_set_operations():
    found = where(
        "SELECT * FROM (SELECT * FROM (SELECT id, d FROM fact a WHERE q = 1 "
        "UNION ALL SELECT id, d FROM fact b) v) w WHERE w.d > DATE '2020-01-01'"
    )
    assert found == {
        "a": "(`q` = 1) AND (`d` > CAST('2020-01-01' AS DATE))",
        "b": "(`d` > CAST('2020-01-01' AS DATE))",
    }


def test_a_left_join_whose_where_rejects_nulls_is_inner():
    """q93's shape: the WHERE compares the null-supplying side's column, so rows
    padded for it never survive (Spark's EliminateOuterJoin)."""
    derivation, found = run(
        "SELECT * FROM fact f LEFT JOIN dim a ON f.k1 = a.k1 AND a.grp = 3 "
        "WHERE a.region = 'EU' AND f.id > 7"
    )
    assert found == {
        "f": "(`id` > 7)",
        "a": "(`region` = 'EU') AND (`grp` = 3)",
    }
    assert any(j.fact == 0 and j.dim == 1 for j in derivation.joins)  # a's keys prune f
    for where_clause in (
        "a.region IS NULL",
        "coalesce(a.region, 'x') = 'x'",
        "a.region = 'EU' OR f.id = 1",
    ):
        found = where(f"SELECT * FROM fact f LEFT JOIN dim a ON f.k1 = a.k1 WHERE {where_clause}")
        assert found["a"] is None, where_clause  # padded rows may survive: still outer


def test_join_keys_reach_the_tables_of_a_union_all():
    """q05 and q54's shape: a date dimension joined to a UNION ALL of fact tables."""
    parsed = parse(
        "SELECT * FROM (SELECT k1, q FROM fact UNION ALL "
        "SELECT k1, x AS q FROM parquet.`/lake/t`) u JOIN dim a ON u.k1 = a.k1 "
        "WHERE a.region = 'EU'"
    )
    assert parsed is not None
    derivation = derive(parsed, CATALOG)
    written = {r.number: r.written for r in parsed.references}
    found = {(written[j.fact], j.fact_column, written[j.dim]) for j in derivation.joins}
    assert ("fact", "k1", "dim") in found
    assert ("parquet.`/lake/t`", "k1", "dim") in found
    # not through an aggregate's value, nor a CTE another reference reads unjoined
    for query in (
        "SELECT * FROM (SELECT q, count(*) AS k1 FROM fact GROUP BY q) u JOIN dim a ON u.k1 = a.k1 "
        "WHERE a.region = 'EU'",
        "WITH c AS (SELECT k1 FROM fact) SELECT * FROM c JOIN dim a ON c.k1 = a.k1 "
        "WHERE a.region = 'EU' UNION ALL SELECT k1 FROM c",
    ):
        parsed = parse(query)
        assert parsed is not None
        derivation = derive(parsed, CATALOG)
        written = {r.number: r.written for r in parsed.references}
        assert not [j for j in derivation.joins if written[j.fact] == "fact"], query


def test_a_cte_joined_by_each_of_its_references_is_pruned_by_the_union_of_their_keys():
    """q02's shape: a grouped CTE read twice, once joined to 2001's weeks, once to 2002's."""
    text = (
        "WITH c AS (SELECT grp, sum(q) AS total FROM fact JOIN dim ON fact.k1 = dim.k1 "
        "GROUP BY grp) "
        "SELECT * FROM c y JOIN dim2 a ON y.grp = a.big JOIN c z ON y.total = z.total "
        "JOIN dim2 b ON z.grp = b.big WHERE a.cat = 'x' AND b.cat = 'y'"
    )
    parsed = parse(text)
    assert parsed is not None
    derivation = derive(parsed, CATALOG)
    written = {r.number: r.alias or r.written for r in parsed.references}
    # never one reference's keys alone
    assert not [j for j in derivation.joins if written[j.dim] in ("a", "b")]
    (group,) = derivation.any_joins
    assert {(written[j.fact], j.fact_column, written[j.dim]) for j in group} == {
        ("dim", "grp", "a"),
        ("dim", "grp", "b"),
    }
    # a reference inside a join in brackets counts too: one reference's keys alone
    # would drop the rows the other reads (neither a group nor a join for a alone)
    parsed = parse(
        "WITH c AS (SELECT k1 FROM fact) "
        "SELECT a.k1 FROM dim a JOIN c c3 ON c3.k1 = a.k1 WHERE a.region = 'x' UNION ALL "
        "SELECT b.big FROM dim a JOIN (dim2 b JOIN c c2 ON b.big = c2.k1) ON a.grp = b.big"
    )
    assert parsed is not None
    found = derive(parsed, CATALOG)
    written = {r.number: r.alias or r.written for r in parsed.references}
    assert not [j for j in found.joins if written[j.fact] == "fact"], found.joins
    assert found.any_joins == []
    # a reference not joined on the column keeps every row: no group
    for query in (
        text.replace("JOIN dim2 b ON z.grp = b.big", "JOIN dim2 b ON z.total = b.big"),
        text + " AND y.total IN (SELECT total FROM c)",  # a third reference
    ):
        parsed = parse(query)
        assert parsed is not None
        assert derive(parsed, CATALOG).any_joins == [], query


def test_what_cannot_move_is_left_out_of_a_pushed_condition():
    """q04's shape: a CTE read twice, each reference filtered by its year and by a
    column that is a literal inside: the years move, weakened to their OR."""
    found = where(
        "WITH t AS (SELECT k1 AS key, grp AS yr, 's' AS kind, count(*) AS n FROM dim "
        "GROUP BY k1, grp UNION ALL SELECT k1 AS key, q AS yr, 'c' AS kind, count(*) AS n "
        "FROM fact GROUP BY k1, q) SELECT * FROM t a JOIN t b ON a.key = b.key "
        "WHERE a.yr = 1 AND a.kind = 's' AND b.yr = 2 AND b.kind = 's'"
    )
    assert found == {"dim": "((`grp` = 1) OR (`grp` = 2))", "fact": "((`q` = 1) OR (`q` = 2))"}
    # an OR with a disjunct that moves nothing moves nothing
    found = where("SELECT * FROM (SELECT k1, q + 1 AS q1 FROM fact) t WHERE t.k1 = 1 OR t.q1 = 2")
    assert found == {"fact": None}


def test_an_uncorrelated_subquery_condition_is_kept_for_the_key_query_only():
    """q58's shape: the dates of one week, by subquery. No index evaluates it, so
    it prunes nothing, but Spark's key query over the dimension holds it."""
    derivation, found = run(
        "SELECT * FROM fact f JOIN dim a ON f.k1 = a.k1 WHERE a.grp IN "
        "(SELECT d.grp FROM dim d WHERE d.region = (SELECT max(region) FROM dim2 WHERE k2 = 'x'))"
    )
    assert found == {"f": None, "a": None, "d": None, "dim2": "(`k2` = 'x')"}
    (text,) = derivation.key_only[1]
    assert text.startswith("`grp` IN (SELECT d.grp AS grp FROM dim AS d WHERE d.region = ")
    assert "session" not in text  # tables as the query names them
    assert any(j.fact == 0 and j.dim == 1 for j in derivation.joins)
    for condition in (
        "a.grp IN (SELECT d.grp FROM dim d WHERE d.k1 = a.k1)",  # correlated
        "a.grp IN (SELECT k1 FROM c)",  # a CTE of the query
        "a.grp + f.q IN (SELECT k1 FROM dim)",  # two sources
        "a.grp = 1 OR EXISTS (SELECT 1 FROM dim2 WHERE dim2.k2 = f.k2)",  # correlated EXISTS
        "a.grp IN (SELECT d.grp FROM dim d LEFT SEMI JOIN c ON d.k1 > 0)",  # a CTE, semi
    ):
        derivation, _ = run(
            f"WITH c AS (SELECT k1 FROM dim) SELECT * FROM fact f JOIN dim a ON f.k1 = a.k1 "
            f"WHERE {condition}"
        )
        assert derivation.key_only == {}, condition
    # a CTE defined before the one holding the subquery, which it does not read (q58)
    derivation, _ = run(
        "WITH c AS (SELECT k1 FROM dim), e AS (SELECT f.q FROM fact f JOIN dim a "
        "ON f.k1 = a.k1 WHERE a.grp IN (SELECT grp FROM dim2 JOIN dim ON dim2.big = dim.grp)) "
        "SELECT * FROM c JOIN e ON c.k1 = e.q"
    )
    assert list(derivation.key_only) == [2], derivation.key_only  # a
    derivation, _ = run(  # on the null-supplying side of a LEFT JOIN: not its rows' filter
        "SELECT * FROM fact f LEFT JOIN dim a ON f.k1 = a.k1 "
        "WHERE a.grp IN (SELECT grp FROM dim) OR a.grp IS NULL"
    )
    assert derivation.key_only == {}
