"""parse_sql: SQL text (Spark dialect) -> unbound predicate tree."""

from __future__ import annotations

import math
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlglot import exp

from skipindex.errors import InvalidPredicateError, SkipIndexError
from skipindex.expressions import parse_sql
from skipindex.expressions.casts import round_float32
from skipindex.expressions.nodes import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    Call,
    Comparison,
    In,
    IsNull,
    Like,
    Literal,
    LiteralKind,
    Not,
    Op,
    Or,
    Predicate,
    Unsupported,
)
from skipindex.expressions.sql_literals import plain_integer, sql_literal

K = LiteralKind


def days(day: date) -> int:
    return (day - date(1970, 1, 1)).days


def micros(moment: datetime) -> int:
    return (moment - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)


def lit(kind: LiteralKind, value: object) -> Literal:
    return Literal(kind, value)  # type: ignore[arg-type]


def eq(column: str, literal: Literal) -> Comparison:
    return Comparison(column, Op.EQ, literal)


def literal_of(sql: str) -> Literal:
    """The literal of `a = <sql>`."""
    pred = parse_sql(f"a = {sql}")
    assert isinstance(pred, Comparison), pred
    return pred.literal


# --------------------------------------------------------------------------- comparisons


@pytest.mark.parametrize(
    ("sql", "op"),
    [
        ("a = 5", Op.EQ),
        ("a == 5", Op.EQ),
        ("a != 5", Op.NE),
        ("a <> 5", Op.NE),
        ("a < 5", Op.LT),
        ("a <= 5", Op.LE),
        ("a > 5", Op.GT),
        ("a >= 5", Op.GE),
    ],
)
def test_comparison_operators(sql, op):
    assert parse_sql(sql) == Comparison("a", op, lit(K.INT, 5))


@pytest.mark.parametrize(
    ("sql", "op"),
    [
        ("5 = a", Op.EQ),
        ("5 != a", Op.NE),
        ("5 < a", Op.GT),
        ("5 <= a", Op.GE),
        ("5 > a", Op.LT),
        ("5 >= a", Op.LE),
    ],
)
def test_literal_on_the_left_is_mirrored(sql, op):
    assert parse_sql(sql) == Comparison("a", op, lit(K.INT, 5))


def test_column_names_backticks_qualifiers_and_case():
    assert parse_sql("`a b` = 1") == eq("a b", lit(K.INT, 1))
    assert parse_sql("`we``ird` = 1") == eq("we`ird", lit(K.INT, 1))
    # `a.b` is field b of struct a (Spark's reading; no table aliases in a pruning
    # predicate): the whole path is kept, binding decides what it resolves to.
    assert parse_sql("t.col = 1") == eq(("t", "col"), lit(K.INT, 1))
    assert parse_sql("db.t.col = 1") == eq(("db", "t", "col"), lit(K.INT, 1))
    assert parse_sql("a.b.c.d.e = 1") == eq(("a", "b", "c", "d", "e"), lit(K.INT, 1))
    assert parse_sql("MixedCase = 1") == eq("MixedCase", lit(K.INT, 1))


def test_bare_column_is_a_boolean_test():
    assert parse_sql("flag") == eq("flag", lit(K.BOOLEAN, True))
    assert parse_sql("NOT flag") == Not(eq("flag", lit(K.BOOLEAN, True)))


def test_constants():
    assert parse_sql("TRUE") == AlwaysTrue()
    assert parse_sql("FALSE") == AlwaysFalse()
    assert parse_sql("NULL") == AlwaysFalse()
    assert parse_sql("(TRUE)") == AlwaysTrue()


# --------------------------------------------------------------------------- literals


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("5", lit(K.INT, 5)),
        ("-5", lit(K.INT, -5)),
        ("+5", lit(K.INT, 5)),
        ("- -5", lit(K.INT, 5)),
        ("-(5)", lit(K.INT, -5)),
        ("9223372036854775807", lit(K.INT, 2**63 - 1)),
        ("-9223372036854775808", lit(K.INT, -(2**63))),
        ("9223372036854775808", lit(K.DECIMAL, Decimal(2**63))),
        ("99999999999999999999", lit(K.DECIMAL, Decimal("99999999999999999999"))),
        ("2.50", lit(K.DECIMAL, Decimal("2.50"))),
        ("-2.5", lit(K.DECIMAL, Decimal("-2.5"))),
        (".5", lit(K.DECIMAL, Decimal("0.5"))),
        ("0.1", lit(K.DECIMAL, Decimal("0.1"))),
        ("1e-1", lit(K.FLOAT, 0.1)),
        ("1E3", lit(K.FLOAT, 1000.0)),
        ("1e-400", lit(K.FLOAT, 0.0)),
        ("1.5D", lit(K.FLOAT, 1.5)),
        ("1d", lit(K.FLOAT, 1.0)),
        ("10L", lit(K.INT, 10)),
        ("1Y", lit(K.INT, 1)),
        ("7S", lit(K.INT, 7)),
        ("1.0BD", lit(K.DECIMAL, Decimal("1.0"))),
        ("'x'", lit(K.STRING, "x")),
        ("''", lit(K.STRING, "")),
        ("'it''s'", lit(K.STRING, "it's")),
        ("'it\\'s'", lit(K.STRING, "it's")),
        ("'a\\nb'", lit(K.STRING, "a\nb")),
        ("'a' 'b'", lit(K.STRING, "ab")),
        ('"dq"', lit(K.STRING, "dq")),
        ("'日本'", lit(K.STRING, "日本")),
        ("TRUE", lit(K.BOOLEAN, True)),
        ("false", lit(K.BOOLEAN, False)),
        ("NULL", lit(K.NULL, None)),
        ("DATE '2020-01-01'", lit(K.DATE, days(date(2020, 1, 1)))),
        ("DATE '2020-1-2'", lit(K.DATE, days(date(2020, 1, 2)))),
        ("date('2020-03-04')", lit(K.DATE, days(date(2020, 3, 4)))),
        ("X'0A0B'", lit(K.BINARY, b"\x0a\x0b")),
        ("X'123'", lit(K.BINARY, b"\x01\x23")),
        ("X''", lit(K.BINARY, b"")),
        ("CAST('Infinity' AS DOUBLE)", lit(K.FLOAT, math.inf)),
        ("CAST('-inf' AS DOUBLE)", lit(K.FLOAT, -math.inf)),
        ("float('inf')", lit(K.FLOAT, math.inf)),
        ("CAST('1.5' AS DOUBLE)", lit(K.FLOAT, 1.5)),
        ("CAST(2 AS DOUBLE)", lit(K.FLOAT, 2.0)),
        ("CAST(' 12 ' AS INT)", lit(K.INT, 12)),
        ("CAST(2.9 AS INT)", lit(K.INT, 2)),
        ("CAST(-2.9 AS BIGINT)", lit(K.INT, -2)),
        ("CAST('2.555' AS DECIMAL(5, 2))", lit(K.DECIMAL, Decimal("2.56"))),
        ("CAST(-2.555 AS DECIMAL(5, 2))", lit(K.DECIMAL, Decimal("-2.56"))),
        ("CAST(7 AS DECIMAL(5, 2))", lit(K.DECIMAL, Decimal("7.00"))),
        ("decimal('2.5')", lit(K.DECIMAL, Decimal("3"))),  # Spark's default DECIMAL(10, 0)
        ("CAST('yes' AS BOOLEAN)", lit(K.BOOLEAN, True)),
        ("CAST('ab' AS BINARY)", lit(K.BINARY, b"ab")),
        ("CAST(NULL AS INT)", lit(K.NULL, None)),
        ("try_cast('x' AS DOUBLE)", lit(K.NULL, None)),
        ("1999 + 2", lit(K.INT, 2001)),  # TPC-DS writes years so
        ("(1200 + 11) - 3", lit(K.INT, 1208)),
        ("-2 * 3", lit(K.INT, -6)),
        ("2147483647 + 1", None),  # INT + INT overflows: Spark's ANSI mode raises
        ("2147483648 + 1", lit(K.INT, 2147483649)),  # a BIGINT already
        ("2.5 * 800", lit(K.DECIMAL, Decimal("2000.0"))),
        ("0.1 + 0.2", lit(K.DECIMAL, Decimal("0.3"))),  # exact, as Spark's decimals
        ("1e0 + 1", lit(K.FLOAT, 2.0)),
        ("DATE '2020-01-01' + 1", None),  # not arithmetic on numbers: left to Spark
    ],
)
def test_literal_kinds_and_values(sql, expected):
    if expected is None:  # not folded: the condition is not a comparison to a literal
        assert not isinstance(parse_sql(f"a = {sql}"), Comparison)
        return
    got = literal_of(sql)
    assert got.kind is expected.kind
    assert got.value == expected.value
    assert type(got.value) is type(expected.value)


def test_decimal_literals_keep_their_exact_text():
    value = literal_of("2.50").value
    assert isinstance(value, Decimal)
    assert str(value) == "2.50"
    assert literal_of("0.1").value != 0.1  # an exact decimal, not the double


@pytest.mark.parametrize("sql", ["CAST('nan' AS DOUBLE)", "double('NaN')", "CAST('NaN' AS FLOAT)"])
def test_nan_literals(sql):
    got = literal_of(sql)
    assert got.kind is K.FLOAT
    assert isinstance(got.value, float)
    assert math.isnan(got.value)


def test_float_suffix_and_cast_round_to_float32():
    from fractions import Fraction

    assert literal_of("0.1F").value == round_float32(Fraction(1, 10)) == 0.10000000149011612
    assert literal_of("CAST('0.1' AS FLOAT)").value == 0.10000000149011612
    assert literal_of("CAST(16777217 AS FLOAT)").value == 16777216.0
    assert literal_of("CAST(1e39 AS FLOAT)").value == math.inf


def test_timestamp_literals_are_utc_micros():
    got = literal_of("TIMESTAMP '2020-01-01 12:34:56.123456'")
    assert got == lit(K.TIMESTAMP, micros(datetime(2020, 1, 1, 12, 34, 56, 123456, tzinfo=UTC)))
    assert literal_of("TIMESTAMP '2020-01-01T12:00:00+02:00'").value == micros(
        datetime(2020, 1, 1, 10, tzinfo=UTC)
    )
    assert literal_of("TIMESTAMP '2020-01-01 12:00:00 UTC+2'").value == micros(
        datetime(2020, 1, 1, 10, tzinfo=UTC)
    )
    assert literal_of("TIMESTAMP '2020-07-01 12:00:00 Europe/Paris'").value == micros(
        datetime(2020, 7, 1, 10, tzinfo=UTC)
    )
    assert literal_of("TIMESTAMP '2020-01-01'").value == micros(datetime(2020, 1, 1, tzinfo=UTC))
    # nanoseconds are truncated to microseconds, as Spark does
    assert literal_of("TIMESTAMP '2020-01-01 00:00:00.1234567'").value == micros(
        datetime(2020, 1, 1, 0, 0, 0, 123456, tzinfo=UTC)
    )
    # TIMESTAMP_NTZ ignores a zone suffix
    ntz = literal_of("TIMESTAMP_NTZ '2020-01-01 00:00:00+02:00'")
    assert ntz == lit(K.TIMESTAMP_NTZ, micros(datetime(2020, 1, 1, tzinfo=UTC)))


@pytest.mark.parametrize(
    "sql",
    [
        "DATE 'x'",
        "DATE '2020-13-01'",
        "DATE '2020-02-30'",
        "TIMESTAMP '2020-01-01 25:00:00'",
        "TIMESTAMP 'soon'",
        "CAST('x' AS DOUBLE)",
        "CAST('2.5' AS INT)",
        "CAST(1000 AS TINYINT)",
        "CAST(123.45 AS DECIMAL(3, 1))",
        "CAST('maybe' AS BOOLEAN)",
        "1e400",
        "-1e400",
        "1" * 39,
        "1." + "1" * 38,
    ],
)
def test_literals_spark_rejects_are_errors(sql):
    with pytest.raises(InvalidPredicateError):
        parse_sql(f"a = {sql}")


def test_time_only_timestamp_is_not_guessed():
    # Spark puts a bare time on the current date: not a constant, so might-match
    assert isinstance(parse_sql("a = TIMESTAMP '12:00:00'"), Unsupported)


# --------------------------------------------------------------------------- predicates


def test_null_safe_equal_carries_not_null():
    five = lit(K.INT, 5)
    both = And((eq("a", five), IsNull("a", negated=True)))
    assert parse_sql("a <=> 5") == both
    assert parse_sql("5 <=> a") == both
    assert parse_sql("a IS NOT DISTINCT FROM 5") == both
    assert parse_sql("a IS DISTINCT FROM 5") == Not(both)
    assert parse_sql("a <=> NULL") == IsNull("a")
    assert parse_sql("a IS DISTINCT FROM NULL") == Not(IsNull("a"))


def test_between():
    one, five = lit(K.INT, 1), lit(K.INT, 5)
    forward = And((Comparison("a", Op.GE, one), Comparison("a", Op.LE, five)))
    assert parse_sql("a BETWEEN 1 AND 5") == forward
    assert parse_sql("a NOT BETWEEN 1 AND 5") == Not(forward)
    backward = And((Comparison("a", Op.GE, five), Comparison("a", Op.LE, one)))
    assert parse_sql("a BETWEEN SYMMETRIC 1 AND 5") == Or((forward, backward))


def test_in_lists():
    items = (lit(K.INT, 1), lit(K.DECIMAL, Decimal("2.5")), lit(K.NULL, None))
    assert parse_sql("a IN (1, 2.5, NULL)") == In("a", items)
    assert parse_sql("a NOT IN (1, 2.5, NULL)") == In("a", items, negated=True)
    assert parse_sql("NOT a IN (1, 2.5, NULL)") == In("a", items, negated=True)
    assert parse_sql("a IN ('x')") == In("a", (lit(K.STRING, "x"),))


def test_is_null_and_friends():
    assert parse_sql("a IS NULL") == IsNull("a")
    assert parse_sql("a IS NOT NULL") == IsNull("a", negated=True)
    assert parse_sql("NOT (a IS NULL)") == IsNull("a", negated=True)
    assert parse_sql("isnull(a)") == IsNull("a")
    assert parse_sql("isnotnull(a)") == IsNull("a", negated=True)
    nan = parse_sql("isnan(x)")
    assert isinstance(nan, And)
    first, second = nan.children
    assert isinstance(first, Comparison)
    assert math.isnan(first.literal.value)  # type: ignore[arg-type]
    assert second == IsNull("x", negated=True)


def test_is_true_and_false_are_never_null():
    true, false = lit(K.BOOLEAN, True), lit(K.BOOLEAN, False)
    assert parse_sql("b IS TRUE") == And((eq("b", true), IsNull("b", negated=True)))
    assert parse_sql("b IS FALSE") == And((eq("b", false), IsNull("b", negated=True)))
    assert parse_sql("b IS NOT TRUE") == Not(And((eq("b", true), IsNull("b", negated=True))))


def test_and_or_chains_flatten_through_parentheses():
    pred = parse_sql("a = 1 AND (b = 2 AND c = 3) AND ((d = 4))")
    assert isinstance(pred, And)
    assert [c.column for c in pred.children] == ["a", "b", "c", "d"]  # type: ignore[union-attr]
    mixed = parse_sql("a = 1 OR b = 2 AND c = 3 OR d = 4")
    assert isinstance(mixed, Or)
    assert len(mixed.children) == 3
    assert isinstance(mixed.children[1], And)


def test_not_is_kept_for_rewrite_not():
    assert parse_sql("NOT a = 5") == Not(eq("a", lit(K.INT, 5)))
    assert parse_sql("NOT NOT a = 5") == Not(Not(eq("a", lit(K.INT, 5))))


# --------------------------------------------------------------------------- unsupported


@pytest.mark.parametrize(
    ("sql", "reason_part"),
    [
        ("s LIKE 'a\\\\b'", "escape character"),  # Spark rejects `\b`: it says why
        ("s RLIKE '[ab].*'", "regular expression"),
        ("a = b", "two columns"),
        ("1 = 1", "two literals"),
        ("a IN (SELECT b FROM t)", "subquery"),
        ("a IN (1, b)", "literals"),
        ("EXISTS (SELECT 1)", "EXISTS"),
        ("CASE WHEN a > 1 THEN TRUE ELSE FALSE END", "CASE"),
        ("startswith(s, lower(s))", "string literal"),
        ("a = current_date()", "expression"),
        ("a BETWEEN b AND 5", "BETWEEN"),
    ],
)
def test_unsupported_conditions_are_kept_not_raised(sql, reason_part):
    pred = parse_sql(sql)
    assert isinstance(pred, Unsupported), pred
    assert reason_part.lower() in pred.reason.lower()
    assert pred.sql  # the condition's own SQL, for explain()
    assert not pred.negated


@pytest.mark.parametrize(
    ("sql", "name", "columns"),
    [
        ("lower(s) = 'x'", "", ["s"]),
        ("a + 1 > 5", "+", ["a"]),
        ("5 < 1 + a", "+", ["a"]),
        ("CAST(a AS INT) = 1", "cast", ["a"]),
        ("m['k'] = 1", "", ["m"]),
        ("year(d) = 1994", "year", ["d"]),
        ("EXTRACT(MONTH FROM d) = 1", "month", ["d"]),
        ("weekofyear(d) IN (5, 6)", "weekofyear", ["d"]),
        ("year(d) BETWEEN 1992 AND 1997", "year", ["d"]),
        ("left(s, 3) = 'abc'", "substring", ["s"]),
        ("date_trunc('MONTH', ts) = TIMESTAMP '2020-01-01 00:00:00'", "date_trunc", ["ts"]),
        ("concat(a, s.f) = 'x'", "", ["a", ("s", "f")]),
        ("lower(s) IS NULL", "", ["s"]),
    ],
)
def test_expressions_of_columns_are_calls_binding_decides(sql, name, columns):
    found = [
        leaf
        for leaf in (parse_sql(sql), *getattr(parse_sql(sql), "children", ()))
        if isinstance(getattr(leaf, "column", None), Call)
    ]
    assert found, parse_sql(sql)
    call = found[0].column
    assert call.name == name
    assert sorted(map(str, call.columns())) == sorted(map(str, columns))


@pytest.mark.parametrize(
    "sql", ["a = rand()", "a + rand() > 1", "a = current_date()", "sum(a) > 1", "a > (SELECT 1)"]
)
def test_expressions_that_are_not_a_function_of_the_row_are_not_calls(sql):
    pred = parse_sql(sql)
    assert isinstance(pred, Unsupported), pred


def test_only_the_unsupported_sibling_is_unsupported():
    pred = parse_sql("a = 1 AND s RLIKE '[xy]' AND (b > 2 OR s RLIKE '(q|r).*')")
    assert isinstance(pred, And)
    first, second, third = pred.children
    assert first == eq("a", lit(K.INT, 1))
    assert isinstance(second, Unsupported)
    assert isinstance(third, Or)
    assert third.children[0] == Comparison("b", Op.GT, lit(K.INT, 2))
    assert isinstance(third.children[1], Unsupported)


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("sql", "message_part"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("a = ", "cannot parse"),
        ("a = 1 AND", "cannot parse"),
        ("a >", "cannot parse"),
        ("(a = 1", "cannot parse"),
        ("a = 1 b = 2", "cannot parse"),
        ("SELECT 1", "not a boolean expression"),
        ("(SELECT 1)", "not a boolean expression"),
        ("DROP TABLE x", "not a boolean expression"),
        ("a b", "not a boolean expression"),
        ("a = 1; b = 2", "2 statements"),
        (";", "no statements"),
        ("5", "not a boolean expression"),
        ("'abc'", "not a boolean expression"),
        ("a + 1", "not a boolean expression"),
        ("-a", "not a boolean expression"),
        ("a = 1 AND 5", "not a boolean expression"),
        ("NOT 'x'", "not a boolean expression"),
        ("*", "not a boolean expression"),
        ("a = ?", "parameter"),
        ("a IN ()", "at least one value"),
        ("a = :x", "parameter"),
    ],
)
def test_malformed_predicates_raise(sql, message_part):
    with pytest.raises(InvalidPredicateError) as info:
        parse_sql(sql)
    assert message_part in str(info.value)
    assert isinstance(info.value, SkipIndexError)
    assert isinstance(info.value, ValueError)


def test_syntax_error_message_quotes_input_and_sqlglot():
    with pytest.raises(InvalidPredicateError) as info:
        parse_sql("l_quantity > AND x")
    message = str(info.value)
    assert "'l_quantity > AND x'" in message
    assert "line 1" in message
    assert "\x1b[" not in message  # sqlglot's terminal colours are stripped


def test_non_string_input():
    with pytest.raises(InvalidPredicateError, match="got int"):
        parse_sql(5)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- depth


def _depth(pred: Predicate) -> int:
    deepest, stack = 0, [(pred, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(node, (And, Or)):
            stack.extend((c, depth + 1) for c in node.children)
        elif isinstance(node, Not):
            stack.append((node.child, depth + 1))
    return deepest


def test_ten_thousand_term_and_chain_is_one_flat_node():
    pred = parse_sql(" AND ".join(f"c{i} = {i}" for i in range(10_000)))
    assert isinstance(pred, And)
    assert len(pred.children) == 10_000
    assert pred.children[9_999] == eq("c9999", lit(K.INT, 9_999))


def test_wide_or_and_in_lists():
    pred = parse_sql(" OR ".join(f"c = {i}" for i in range(5_000)))
    assert isinstance(pred, Or)
    assert len(pred.children) == 5_000
    big_in = parse_sql("c IN (" + ", ".join(str(i) for i in range(20_000)) + ")")
    assert isinstance(big_in, In)
    assert len(big_in.literals) == 20_000


@pytest.mark.parametrize("levels", [1_000, 5_000])
def test_deep_parentheses(levels):
    limit = sys.getrecursionlimit()
    pred = parse_sql("(" * levels + "a = 1" + ")" * levels)
    assert pred == eq("a", lit(K.INT, 1))
    assert sys.getrecursionlimit() == limit  # restored after the deep-stack helper


def test_thousand_nots():
    pred = parse_sql("NOT " * 1_001 + "a = 1")
    count = 0
    while isinstance(pred, Not):
        pred, count = pred.child, count + 1
    assert count == 1_001
    assert pred == eq("a", lit(K.INT, 1))


def test_alternating_and_or_thousand_deep():
    sql = "a = 0"
    for i in range(1_000):
        sql = f"(b{i} = {i} {'AND' if i % 2 else 'OR'} {sql})"
    pred = parse_sql(sql)
    assert _depth(pred) == 1_001


def test_deep_unsupported_subexpression():
    pred = parse_sql("a + " + "(" * 1_500 + "1" + ")" * 1_500 + " > 5 AND b = 1")
    assert isinstance(pred, And)
    assert isinstance(pred.children[0], Unsupported)
    assert pred.children[1] == eq("b", lit(K.INT, 1))


def test_many_negations_of_a_literal():
    assert literal_of("- " * 2_000 + "5").value == 5


def test_parse_sql_does_not_import_pyspark():
    code = (
        "import sys, pyarrow as pa\n"
        "from skipindex.expressions import prepare\n"
        "prepare(\"a = 1 AND s = 'x'\", pa.schema([('a', pa.int32()), ('s', pa.string())]))\n"
        "assert 'pyspark' not in sys.modules, 'pyspark imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_not_like_keeps_its_not():
    # sqlglot folds the NOT into Like(negate=True); losing it would invert the answer.
    assert parse_sql("s NOT LIKE 'a%'") == Not(Like("s", "a", prefix=True))
    assert parse_sql("s LIKE 'a\\_b'") == Like("s", "a_b", prefix=False)
    assert parse_sql("s LIKE 'a%%'") == Like("s", "a", prefix=True)
    assert isinstance(parse_sql("s NOT ILIKE 'a%'"), Not)


def test_parse_errors_speak_sql_not_sqlglot():
    with pytest.raises(InvalidPredicateError) as raised:
        parse_sql("a =")
    message = str(raised.value)
    assert "'=' is missing its right-hand side" in message
    assert "sqlglot" not in message
    assert "<class" not in message


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.integers(0, 10**20), st.integers(-(10**20), -1)), st.booleans())
def test_a_listed_integer_reads_as_its_literal_does(number, padded):
    """An IN list's plain integers skip the Decimal path (plain_integer): the same
    literal as sql_literal makes, and beyond INT's digits or signed, sql_literal's."""
    node = exp.Literal(this=("00" if padded else "") + str(abs(number)), is_string=False)
    node = node if number >= 0 else exp.Neg(this=node)
    fast = plain_integer(node)
    assert fast is None or fast == sql_literal(node)
    if 0 <= number < 10**16:  # every key a join lists (a BIGINT's 19 digits go the long way)
        assert fast is not None
