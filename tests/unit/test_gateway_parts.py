"""The gateway's parts that need no server: its policy, plan ids and splicing,
Connect expression messages as predicates, and the account's config key."""

from __future__ import annotations

import datetime as dt

import pytest
from pyspark.sql.connect.proto import base_pb2, expressions_pb2, relations_pb2

from skipindex.errors import InvalidSpecError
from skipindex.expressions.binding import prepare
from skipindex.gateway.plans import plan_ids, renumbered, spliced
from skipindex.gateway.policy import DEFAULT_LISTEN, gateway_policy_from, load_gateway_policy
from skipindex.gateway.rewrite import ACCOUNT_KEY

pytestmark = pytest.mark.unit


def test_policy_file(tmp_path):
    path = tmp_path / "gateway.toml"
    path.write_text(
        'version = 1\n[gateway]\nupstream = "sc://spark:15002"\nquery_log = "q.db"\n'
        '[tables]\nStore_Sales = "lake/ss"\nitem = "/abs/item"\n'
    )
    policy = load_gateway_policy(path)
    assert policy.upstream == "sc://spark:15002"
    assert policy.listen == DEFAULT_LISTEN
    assert policy.tables == {"store_sales": f"{tmp_path}/lake/ss", "item": "/abs/item"}
    assert policy.query_log == f"{tmp_path}/q.db"


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"gateway": {"upstream": "http://x"}}, "gateway.upstream"),
        ({"gateway": {"listen": "nowhere"}}, "gateway.listen"),
        ({"tables": {"t": 3}}, "tables.t"),
        ({"tabels": {}}, "tabels"),
        ({"tables": {"T": "/a", "t": "/b"}}, "named twice"),
        ({"version": 9}, "newer"),
    ],
)
def test_policy_errors_name_the_key(document, message):
    with pytest.raises(InvalidSpecError, match=message):
        gateway_policy_from(document, "g.toml")


def _read(plan_id: int, path: str) -> relations_pb2.Relation:
    relation = relations_pb2.Relation()
    relation.common.plan_id = plan_id
    relation.read.data_source.format = "parquet"
    relation.read.data_source.paths.append(path)
    return relation


def _filtered(
    plan_id: int, child: relations_pb2.Relation, column_plan: int
) -> relations_pb2.Relation:
    relation = relations_pb2.Relation()
    relation.common.plan_id = plan_id
    relation.filter.input.CopyFrom(child)
    attribute = relation.filter.condition.unresolved_attribute
    attribute.unparsed_identifier = "x"
    attribute.plan_id = column_plan
    return relation


def test_renumbered_keeps_references_pointing_at_the_same_node():
    plan = _filtered(7, _read(3, "/t"), column_plan=3)
    assert plan_ids(plan) == {7, 3}
    fresh = renumbered(plan, 100)
    assert plan_ids(fresh) == {100, 101}
    assert fresh.filter.condition.unresolved_attribute.plan_id == fresh.filter.input.common.plan_id
    assert plan.common.plan_id == 7  # the original is left alone


def test_spliced_replaces_nodes_and_leaves_skipped_subtrees():
    join = relations_pb2.Relation()
    join.join.left.CopyFrom(_read(1, "/a"))
    join.join.right.CopyFrom(_read(2, "/b"))
    with_relations = relations_pb2.Relation()
    with_relations.with_relations.root.sql.query = "SELECT * FROM x"
    with_relations.with_relations.references.append(_read(4, "/c"))
    join.join.left.CopyFrom(_filtered(5, join.join.left, 1))
    root = relations_pb2.Relation()
    root.set_op.left_input.CopyFrom(join)
    root.set_op.right_input.CopyFrom(with_relations)

    def replace(node):
        if node.WhichOneof("rel_type") == "read" and node.read.data_source.paths[0] != "/c":
            out = relations_pb2.Relation()
            out.CopyFrom(node)
            out.read.data_source.paths[0] += "-kept"
            return out
        return None

    def skip(node):
        return node.WhichOneof("rel_type") == "with_relations"

    new, count = spliced(root, replace, skip=skip)
    assert count == 2
    assert new.set_op.left_input.join.left.filter.input.read.data_source.paths[0] == "/a-kept"
    assert new.set_op.left_input.join.right.read.data_source.paths[0] == "/b-kept"
    assert new.set_op.right_input == root.set_op.right_input
    assert root.set_op.left_input.join.right.read.data_source.paths[0] == "/b"


def _call(name: str, *args: expressions_pb2.Expression) -> expressions_pb2.Expression:
    expression = expressions_pb2.Expression()
    expression.unresolved_function.function_name = name
    expression.unresolved_function.arguments.extend(args)
    return expression


def _column(name: str) -> expressions_pb2.Expression:
    expression = expressions_pb2.Expression()
    expression.unresolved_attribute.unparsed_identifier = name
    return expression


def _literal(**value: object) -> expressions_pb2.Expression:
    expression = expressions_pb2.Expression()
    ((field, given),) = value.items()
    setattr(expression.literal, field, given)
    return expression


def _decimal(text: str) -> expressions_pb2.Expression:
    expression = expressions_pb2.Expression()
    expression.literal.decimal.value = text
    return expression


def test_expression_messages_mean_what_the_same_sql_means():
    import pyarrow as pa

    schema = pa.schema(
        [
            ("id", pa.int64()),
            ("day", pa.date32()),
            ("ts", pa.timestamp("us", "UTC")),
            ("s", pa.string()),
            ("d", pa.decimal128(10, 2)),
        ]
    )
    day = (dt.date(2024, 1, 12) - dt.date(1970, 1, 1)).days
    micros = int(dt.datetime(2024, 3, 10, 2, tzinfo=dt.UTC).timestamp() * 1_000_000)
    cast = expressions_pb2.Expression()
    cast.cast.expr.CopyFrom(_literal(string="7"))
    cast.cast.type_str = "bigint"
    text = expressions_pb2.Expression()
    text.expression_string.expression = "id BETWEEN 1 AND 5"
    cases = [
        (_call("==", _column("id"), _literal(long=7)), "id = 7"),
        (
            _call(
                "and",
                _call(">=", _column("day"), _literal(date=day)),
                _call("<", _column("ts"), _literal(timestamp=micros)),
            ),
            "day >= DATE '2024-01-12' AND ts < TIMESTAMP '2024-03-10 02:00:00'",
        ),
        (
            _call("not", _call("in", _column("s"), _literal(string="a"), _literal(string="é"))),
            "NOT s IN ('a', 'é')",
        ),
        (_call("<=", _column("d"), _decimal("12.50")), "d <= 12.50"),
        (_call("==", _column("id"), cast), "id = CAST('7' AS BIGINT)"),
        (_call("or", text, _call("isnull", _column("id"))), "id BETWEEN 1 AND 5 OR id IS NULL"),
    ]
    for message, sql in cases:
        assert prepare(message, schema, time_zone="UTC") == prepare(sql, schema, time_zone="UTC"), (
            sql
        )


def test_search_messages_mean_what_the_same_sql_means():
    """What a Spark Connect client sends for ``Column.contains``, ``endswith``,
    ``like``, ``ilike`` and ``array_contains``: the gateway prunes by them as by
    the SQL."""
    import pyarrow as pa

    schema = pa.schema([("s", pa.string()), ("tags", pa.list_(pa.string()))])
    s, tags = _column("s"), _column("tags")
    cases = [
        (_call("contains", s, _literal(string="time")), "contains(s, 'time')"),
        (_call("endswith", s, _literal(string="out")), "endswith(s, 'out')"),
        (_call("like", s, _literal(string="%a_b%")), "s LIKE '%a_b%'"),
        (_call("ilike", s, _literal(string="%Kernel%")), "s ILIKE '%Kernel%'"),
        (_call("not", _call("ilike", s, _literal(string="x%"))), "s NOT ILIKE 'x%'"),
        (
            _call("array_contains", tags, _literal(string="urgent")),
            "array_contains(tags, 'urgent')",
        ),
    ]
    for message, sql in cases:
        bound = prepare(message, schema, time_zone="UTC")
        assert bound == prepare(sql, schema, time_zone="UTC"), sql
        assert not _unsupported(bound), sql


def _unsupported(node: object) -> bool:
    from skipindex.expressions.nodes import Unsupported, children_of

    return isinstance(node, Unsupported) or any(_unsupported(c) for c in children_of(node))


def test_an_unknown_expression_might_match():
    import pyarrow as pa

    from skipindex.expressions.column import parse_column
    from skipindex.expressions.nodes import Unsupported

    udf = _call("==", _column("id"), _literal(long=1))
    udf.unresolved_function.is_user_defined_function = True
    assert isinstance(parse_column(udf), Unsupported)
    assert prepare(udf, pa.schema([("id", pa.int64())])) is not None


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["gateway", "--table", "nopath"], "expected NAME=PATH"),
        (["gateway", "--policy", "/nowhere/g.toml"], "not found"),
        (["gateway"], "upstream"),
    ],
)
def test_the_gateway_command_says_what_is_wrong(argv, message, capsys):
    from skipindex.cli import main

    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_accounts_are_kept_for_the_latest_sessions_only(monkeypatch):
    from skipindex.gateway import rewrite

    monkeypatch.setattr(rewrite, "_ACCOUNTS", 3)
    rewriter = rewrite.Rewriter({}, session_for=lambda *_: None)
    part = {"kind": "read", "table": "/t", "kept": 1, "total": 6}
    for session in ["a", "b", "c", "a", "d"]:
        rewriter._remember(session, 0.01, [part])
    assert rewriter.account_of("b") is None
    assert [s for s in "acd" if rewriter.account_of(s) is not None] == ["a", "c", "d"]
    assert "read /t: kept 1 of 6 files" in rewriter.account("a")


def test_the_account_key_becomes_a_get_with_its_default():
    from skipindex.gateway.proxy import _Forwarder
    from skipindex.gateway.rewrite import Rewriter

    rewriter = Rewriter({}, session_for=lambda *_: None)
    forwarder = _Forwarder(upstream=None, rewriter=rewriter)  # type: ignore[arg-type]
    request = base_pb2.ConfigRequest(session_id="s1")
    request.operation.get.keys.append(ACCOUNT_KEY)
    sent = base_pb2.ConfigRequest.FromString(forwarder._config(request.SerializeToString()))
    assert sent.operation.WhichOneof("op_type") == "get_with_default"
    (pair,) = sent.operation.get_with_default.pairs
    assert pair.key == ACCOUNT_KEY
    assert "no plan rewritten yet" in pair.value
    other = base_pb2.ConfigRequest(session_id="s1")
    other.operation.get.keys.append("spark.sql.session.timeZone")
    assert forwarder._config(other.SerializeToString()) == other.SerializeToString()
