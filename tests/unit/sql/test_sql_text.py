"""The text skipindex.sql hands Spark, and the key lists it hands prune (no Spark)."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest

from skipindex.expressions import parse_sql
from skipindex.expressions.nodes import In
from skipindex.sql.conjuncts import render
from skipindex.sql.derive import parse
from skipindex.sql.dynamic import in_node, key_condition
from skipindex.sql.references import TableKey
from skipindex.sql.text import placeholder, substitute


def test_references_spans_and_keys():
    text = "SELECT * FROM lineorder l JOIN `Customer` ON x = y, parquet.`/a/b` WHERE 1 = 1"
    parsed = parse(text)
    assert parsed is not None
    refs = parsed.references
    assert [text[r.start : r.end] for r in refs] == ["lineorder", "`Customer`", "parquet.`/a/b`"]
    assert [r.key for r in refs] == [
        TableKey("name", "lineorder"),
        TableKey("name", "customer"),
        TableKey("parquet", "/a/b"),
    ]
    assert [r.alias for r in refs] == ["l", None, None]
    assert refs[0].replacement("{v}") == "{v}"  # its alias qualifies its columns
    assert refs[1].replacement("{v}") == "{v} AS `Customer`"  # so does its own name
    assert refs[2].replacement("{v}") == "{v}"  # a path qualifies nothing


def test_case_sensitive_names_keep_their_case():
    parsed = parse("SELECT * FROM LineOrder", case_sensitive=True)
    assert parsed is not None
    assert parsed.references[0].key == TableKey("name", "LineOrder")


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("SELECT * FROM t TABLESAMPLE (10 PERCENT)", "sample"),
        ("SELECT * FROM t VERSION AS OF 3", "version"),
        ("SELECT * FROM t AS x(a, b)", "column aliases"),
        ("SELECT * FROM db.t", "qualified"),
        ("SELECT * FROM range(10)", "not a plain table name"),
    ],
)
def test_references_that_are_never_replaced(text, why):
    parsed = parse(text)
    assert parsed is not None
    assert why in (parsed.references[0].why_whole or "")


def test_not_one_query():
    assert parse("SELECT 1; SELECT 2") is None
    assert parse("INSERT INTO t VALUES (1)") is None
    assert parse("SELECT FROM WHERE (") is None


def test_substitute_escapes_every_brace_but_the_placeholders():
    text = "SELECT '{x}', '}' FROM t WHERE s = '{{'"
    start = text.index("t WHERE")
    formatted = substitute(text, {(start, start + 1): "{" + placeholder(0) + "}"})
    assert formatted.format(**{placeholder(0): "VIEW"}) == text.replace(" t WHERE", " VIEW WHERE")


@pytest.mark.parametrize(
    "values",
    [
        ["it's", "a\\b", "x\ny", "日本", "\x00z", "{}", "%_", "", "'", "\\"],
        [1, -5, 2**63 - 1, -(2**63)],
        [Decimal("1.50"), Decimal("-0.01"), Decimal("1E+3")],
        [datetime.date(1994, 1, 1), datetime.date(1, 1, 1), datetime.date(9999, 12, 31)],
    ],
)
def test_key_lists_read_back_as_the_same_values(values):
    predicate = parse_sql(render(in_node("f", "k", values)))
    assert isinstance(predicate, In)
    epoch = datetime.date(1970, 1, 1)
    expected = [(v - epoch).days if isinstance(v, datetime.date) else v for v in values]
    assert [literal.value for literal in predicate.literals] == expected


def test_no_keys_is_false():
    assert render(in_node("f", "k", [])) == "FALSE"


def test_key_conditions_put_runs_of_consecutive_keys_in_ranges():
    days = [datetime.date(1994, 1, 1) + datetime.timedelta(days=d) for d in range(365)]
    assert render(key_condition("f", "d", days, rows_by_key=True)) == (
        "`d` BETWEEN CAST('1994-01-01' AS DATE) AND CAST('1994-12-31' AS DATE)"
    )
    text = render(key_condition("f", "k", [1, 2, 3, 7, 9, 10], rows_by_key=False))
    assert text == "`k` BETWEEN 1 AND 3 OR `k` BETWEEN 9 AND 10 OR `k` IN (7)"
    assert render(key_condition("f", "s", ["b", "a"], rows_by_key=False)) == "`s` IN ('a', 'b')"
    # Bloom filters alone answer keys, not ranges: every key is listed.
    text = render(key_condition("f", "k", [1, 2, 3, 7], rows_by_key=False, ranges=False))
    assert text == "`k` IN (1, 2, 3, 7)"


def test_long_scattered_lists_reach_bitmaps_as_one_covering_range():
    keys = list(range(0, 200, 2))
    assert render(key_condition("f", "k", keys, rows_by_key=True)) == "`k` BETWEEN 0 AND 198"
    assert render(key_condition("f", "k", keys, rows_by_key=False)).startswith("`k` IN (0, 2, 4")


def test_runs_inside_a_covering_range_are_left_out_and_one_list_stays_one_leaf():
    keys = [*range(0, 80, 2), 11, 12, 13, 500, 501]
    text = render(key_condition("f", "k", keys, rows_by_key=True))
    assert text == "`k` BETWEEN 500 AND 501 OR `k` BETWEEN 0 AND 78"
    listed = render(key_condition("f", "k", keys, rows_by_key=False, one_list=True))
    assert listed.startswith("`k` IN (0, 2, 4")
    assert "BETWEEN" not in listed
    days = [datetime.date(1994, 1, 1) + datetime.timedelta(days=d) for d in range(31)]
    one_run = render(key_condition("f", "d", days, rows_by_key=False, one_list=True))
    assert one_run.startswith("`d` BETWEEN")


def test_many_runs_on_bit_sliced_bitmaps_are_one_list_and_a_few_stay_ranges():
    # q34: the first three and the 25th-28th days of 36 months, 72 runs
    runs = [range(m * 30 + 1, m * 30 + 4) for m in range(36)]
    runs += [range(m * 30 + 25, m * 30 + 29) for m in range(36)]
    keys = sorted(k for run in runs for k in run)
    listed = render(key_condition("f", "k", keys, rows_by_key=True, runs_list=True))
    assert listed.startswith("`k` IN (1, 2, 3, 25, 26")
    assert "BETWEEN" not in listed
    assert render(key_condition("f", "k", keys, rows_by_key=True)).count("BETWEEN") == 72
    two = [*range(10, 20), *range(40, 50)]  # two years, say: two ranges, each one pass
    text = render(key_condition("f", "k", two, rows_by_key=True, runs_list=True))
    assert text == "`k` BETWEEN 10 AND 19 OR `k` BETWEEN 40 AND 49"


def test_scattered_keys_whose_covering_range_holds_their_runs_stay_that_range():
    # q69: 9,807 scattered customers, some of them consecutive
    keys = sorted({k * 7 // 3 for k in range(3000)})
    text = render(key_condition("f", "k", keys, rows_by_key=True, runs_list=True))
    assert text == f"`k` BETWEEN 0 AND {keys[-1]}"


def test_skipped_files_left_out_in_the_text_keep_braces_and_quotes_literal():
    from skipindex.reading.held import FILE_COLUMN, not_in_files_sql
    from skipindex.sql.text import left_out_sql

    condition = not_in_files_sql(["/t/a{1}'s.parquet"], FILE_COLUMN)
    text = left_out_sql("{skipindex_ref_0}", "`x`, `{y}`", condition)
    formatted = text.format(skipindex_ref_0="view")  # what spark.sql's formatter does
    assert formatted == (
        "(SELECT `x`, `{y}` FROM view WHERE NOT `__skipindex_file` IN "
        "('file:/t/a%7B1%7D\\'s.parquet'))"
    )
