"""rewrite_not (negation normal form) and simplify."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skipindex.expressions import rewrite_not, simplify
from skipindex.expressions.nodes import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BoundColumn,
    BoundComparison,
    BoundIn,
    BoundIsNull,
    Comparison,
    In,
    IsNull,
    Literal,
    LiteralKind,
    Not,
    Op,
    Or,
    Predicate,
    Unsupported,
)
from tests._support import examples

ONE = Literal(LiteralKind.INT, 1)
TWO = Literal(LiteralKind.INT, 2)
A1 = Comparison("a", Op.EQ, ONE)
B2 = Comparison("b", Op.LT, TWO)
U = Unsupported("lower(s) = 'x'", "function")


def has_not(pred: Predicate) -> bool:
    stack = [pred]
    while stack:
        node = stack.pop()
        if isinstance(node, Not):
            return True
        if isinstance(node, (And, Or)):
            stack.extend(node.children)
    return False


# --------------------------------------------------------------------------- rewrite_not


@pytest.mark.parametrize(
    ("op", "negated"),
    [
        (Op.EQ, Op.NE),
        (Op.NE, Op.EQ),
        (Op.LT, Op.GE),
        (Op.GE, Op.LT),
        (Op.LE, Op.GT),
        (Op.GT, Op.LE),
    ],
)
def test_not_flips_comparison_operators(op, negated):
    assert rewrite_not(Not(Comparison("a", op, ONE))) == Comparison("a", negated, ONE)


def test_not_flips_leaf_flags():
    assert rewrite_not(Not(In("a", (ONE, TWO)))) == In("a", (ONE, TWO), negated=True)
    assert rewrite_not(Not(In("a", (ONE,), negated=True))) == In("a", (ONE,))
    assert rewrite_not(Not(IsNull("a"))) == IsNull("a", negated=True)
    assert rewrite_not(Not(IsNull("a", negated=True))) == IsNull("a")
    assert rewrite_not(Not(U)) == Unsupported(U.sql, U.reason, negated=True)
    assert rewrite_not(Not(Unsupported("x", "y", negated=True))) == Unsupported("x", "y")


def test_constants_under_not():
    assert rewrite_not(Not(AlwaysTrue())) == AlwaysFalse()  # unbound TRUE is exact
    assert rewrite_not(Not(AlwaysFalse())) == AlwaysTrue()  # might-match: safe for NULL too


def test_de_morgan_and_double_negation():
    assert rewrite_not(Not(And((A1, B2)))) == Or(
        (Comparison("a", Op.NE, ONE), Comparison("b", Op.GE, TWO))
    )
    assert rewrite_not(Not(Or((A1, B2)))) == And(
        (Comparison("a", Op.NE, ONE), Comparison("b", Op.GE, TWO))
    )
    assert rewrite_not(Not(Not(A1))) == A1
    assert rewrite_not(Not(Not(Not(A1)))) == Comparison("a", Op.NE, ONE)


def test_never_null_forms_keep_null_rows_when_negated():
    # a <=> 1 as parsed: NOT of it must keep NULL rows
    null_safe = And((A1, IsNull("a", negated=True)))
    assert rewrite_not(Not(null_safe)) == Or((Comparison("a", Op.NE, ONE), IsNull("a")))


def test_flattens_nested_and_or():
    nested = And((A1, And((B2, And((U,)))), Or((A1, Or((B2,))))))
    assert rewrite_not(nested) == And((A1, B2, U, Or((A1, B2))))
    # De Morgan can create nesting that must be flattened too
    assert rewrite_not(Or((A1, Not(And((B2, A1)))))) == Or(
        (A1, Comparison("b", Op.GE, TWO), Comparison("a", Op.NE, ONE))
    )


def test_deep_not_chain_and_deep_alternation_are_iterative():
    pred: Predicate = A1
    for _ in range(100_001):
        pred = Not(pred)
    assert rewrite_not(pred) == Comparison("a", Op.NE, ONE)

    deep: Predicate = A1
    for i in range(5_000):
        deep = Not(And((Comparison(f"c{i}", Op.LT, ONE), deep)) if i % 2 else Or((B2, deep)))
    out = rewrite_not(deep)
    assert not has_not(out)


def test_wide_trees():
    wide = Not(And(tuple(Comparison(f"c{i}", Op.EQ, ONE) for i in range(100_000))))
    out = rewrite_not(wide)
    assert isinstance(out, Or)
    assert len(out.children) == 100_000
    assert all(c.op is Op.NE for c in out.children)  # type: ignore[union-attr]


# --------------------------------------------------------------------------- simplify

COL = BoundColumn("a", pa.int32())
BA = BoundComparison(COL, Op.EQ, 1)
BB = BoundComparison(BoundColumn("b", pa.int32()), Op.GT, 2)
NOT_NULL = BoundIsNull(COL, negated=True)


@pytest.mark.parametrize(
    ("pred", "expected"),
    [
        (And((BA, AlwaysTrue())), BA),
        (And((BA, AlwaysFalse(), BB)), AlwaysFalse()),
        (And(()), AlwaysTrue()),
        (And((AlwaysTrue(), AlwaysTrue())), AlwaysTrue()),
        (Or((BA, AlwaysFalse())), BA),
        (Or((BA, AlwaysTrue(), BB)), AlwaysTrue()),
        (Or(()), AlwaysFalse()),
        (Or((AlwaysFalse(),)), AlwaysFalse()),
        (And((BA,)), BA),
        (And((BA, And((BB, And((U,)))))), And((BA, BB, U))),
        (Or((Or((BA, BB)), Or((U,)))), Or((BA, BB, U))),
        (And((Or((AlwaysFalse(), BA)), Or((BB, AlwaysTrue())))), BA),
        (Or((And((AlwaysTrue(),)), BA)), AlwaysTrue()),
        (And((U, BA)), And((U, BA))),  # Unsupported stays for explain()
        (Or((U, BA)), Or((U, BA))),
    ],
)
def test_simplify_rules(pred, expected):
    assert simplify(pred) == expected


def test_simplify_drops_not_null_implied_by_a_bound_sibling():
    assert simplify(And((BA, NOT_NULL))) == BA
    in_list = BoundIn(COL, (1, 2))
    assert simplify(And((NOT_NULL, in_list))) == in_list
    # other columns, IS NULL and OR are left alone
    assert simplify(And((BB, NOT_NULL))) == And((BB, NOT_NULL))
    assert simplify(Or((BA, NOT_NULL))) == Or((BA, NOT_NULL))
    assert simplify(And((BA, BoundIsNull(COL)))) == And((BA, BoundIsNull(COL)))


def test_simplify_keeps_not_null_in_unbound_trees():
    # `a <=> 1` must keep its IS NOT NULL while a NOT may still sit above it
    both = And((A1, IsNull("a", negated=True)))
    assert simplify(Not(both)) == Not(both)
    assert rewrite_not(Not(simplify(both))) == Or((Comparison("a", Op.NE, ONE), IsNull("a")))


def test_simplify_is_iterative():
    deep: Predicate = BA  # type: ignore[assignment]
    for i in range(5_000):
        deep = And((deep, AlwaysTrue())) if i % 2 else Or((deep, AlwaysFalse()))
    assert simplify(deep) == BA
    wide = And(tuple([AlwaysTrue()] * 50_000 + [BA]))
    assert simplify(wide) == BA


# --------------------------------------------------------------------------- property

# Three-valued logic over rows of small ints (None is NULL). An Unsupported leaf is
# modelled as an opaque boolean column "u": its `negated` flag means NOT u.
COLUMNS = ("a", "b", "u")


def eval3(pred: Predicate, row: dict[str, object]) -> bool | None:
    if isinstance(pred, AlwaysTrue):
        return True
    if isinstance(pred, AlwaysFalse):
        return False
    if isinstance(pred, Unsupported):
        value = row["u"]
        return None if value is None else bool(value) != pred.negated
    if isinstance(pred, IsNull):
        return (row[pred.column] is None) != pred.negated
    if isinstance(pred, Comparison):
        left, right = row[pred.column], pred.literal.value
        if left is None or right is None:
            return None
        return {
            Op.EQ: left == right,
            Op.NE: left != right,
            Op.LT: left < right,  # type: ignore[operator]
            Op.LE: left <= right,
            Op.GT: left > right,
            Op.GE: left >= right,  # type: ignore[operator]
        }[pred.op]
    if isinstance(pred, In):
        value = row[pred.column]
        if value is None:
            return None
        values = [lit.value for lit in pred.literals]
        found = value in values
        result = True if found else (None if None in values else False)
        return None if result is None else result != pred.negated
    if isinstance(pred, Not):
        inner = eval3(pred.child, row)
        return None if inner is None else not inner
    results = [eval3(c, row) for c in pred.children]  # type: ignore[union-attr]
    if isinstance(pred, And):
        return False if False in results else (None if None in results else True)
    return True if True in results else (None if None in results else False)


literals = st.one_of(st.integers(-1, 3), st.none()).map(
    lambda v: Literal(LiteralKind.NULL, None) if v is None else Literal(LiteralKind.INT, v)
)
leaves = st.one_of(
    st.builds(Comparison, st.sampled_from(("a", "b")), st.sampled_from(list(Op)), literals),
    st.builds(
        In, st.sampled_from(("a", "b")), st.lists(literals, max_size=3).map(tuple), st.booleans()
    ),
    st.builds(IsNull, st.sampled_from(("a", "b")), st.booleans()),
    st.builds(Unsupported, st.just("u"), st.just("opaque"), st.booleans()),
    st.just(AlwaysTrue()),
    st.just(AlwaysFalse()),
)
predicates = st.recursive(
    leaves,
    lambda kids: st.one_of(
        st.builds(Not, kids),
        st.lists(kids, min_size=0, max_size=3).map(lambda c: And(tuple(c))),
        st.lists(kids, min_size=0, max_size=3).map(lambda c: Or(tuple(c))),
    ),
    max_leaves=12,
)
rows = st.fixed_dictionaries(
    {
        "a": st.one_of(st.none(), st.integers(-1, 3)),
        "b": st.one_of(st.none(), st.integers(-1, 3)),
        "u": st.one_of(st.none(), st.booleans()),
    }
)


@settings(max_examples=examples(400))
@given(predicates, st.lists(rows, min_size=1, max_size=8))
def test_rewrite_not_and_simplify_preserve_three_valued_logic(pred, sample):
    nnf = rewrite_not(pred)
    assert not has_not(nnf)
    folded = simplify(nnf)
    for row in sample:
        expected = eval3(pred, row)
        assert eval3(nnf, row) == expected
        assert eval3(folded, row) == expected  # type: ignore[arg-type]
        assert eval3(rewrite_not(Not(pred)), row) == (None if expected is None else not expected)
