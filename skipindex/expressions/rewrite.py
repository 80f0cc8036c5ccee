"""Negation normal form and constant folding, both folds (:mod:`.visitors`).

:func:`rewrite_not` runs on *unbound* trees, before binding. That order is the
point: after binding, :class:`AlwaysTrue` means "might match" and negating it
would claim "matches nothing". Before binding the constants are exact, and the
leaves still carry their SQL operators, so NOT can be pushed all the way down:

* ``NOT (a < 5)`` -> ``a >= 5`` (both are NULL for a NULL ``a``: three-valued
  logic is preserved because every leaf is NULL exactly when its column is);
* ``NOT (a IN (...))`` -> ``a NOT IN (...)``, ``NOT (a IS NULL)`` -> ``a IS NOT NULL``;
* De Morgan over AND/OR; ``NOT NOT x`` -> ``x``;
* ``NOT Unsupported`` -> Unsupported with ``negated`` flipped (still "might match");
* ``NOT TRUE`` -> FALSE (exact: in an unbound tree AlwaysTrue only comes from a
  literal TRUE);
* ``NOT FALSE`` -> TRUE. An unbound AlwaysFalse means "never TRUE": it comes
  from FALSE, but also from NULL, and ``NOT NULL`` is NULL, never TRUE. Turning
  it into AlwaysTrue ("might match") is therefore always safe, exact for FALSE
  and merely imprecise for the rare literal NULL.

Conditions that are never NULL (``a <=> 5``, ``a IS TRUE``, ``isnan(a)``) are
built by the parsers as ``leaf AND a IS NOT NULL``, so their negation keeps the
NULL rows (``a != 5 OR a IS NULL``). The parsers' leaf builders
(:mod:`skipindex.expressions.leaves`) follow that convention.
"""

from __future__ import annotations

from dataclasses import replace
from typing import cast

from skipindex.expressions.nodes import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    AnyPredicate,
    BoundComparison,
    BoundHasElement,
    BoundIn,
    BoundIsNull,
    BoundMatch,
    Comparison,
    HasElement,
    In,
    IsNull,
    Like,
    Match,
    Not,
    Or,
    Predicate,
    Unsupported,
    children_of,
)
from skipindex.expressions.visitors import fold

__all__ = ["assemble", "join", "negate_leaf", "rewrite_not", "simplify"]


def rewrite_not(pred: Predicate) -> Predicate:
    """``pred`` in negation normal form: no :class:`Not` left, nested And/Or flattened.

    One fold computes, for every node, both its NNF and its negation's NNF:
    a NOT swaps the pair, AND and OR swap places in the negation (De Morgan).
    """

    def visit(node: AnyPredicate, parts: list[_Pair]) -> _Pair:
        if isinstance(node, Not):
            positive, negative = parts[0]
            return negative, positive
        if isinstance(node, And | Or):
            dual: type[And] | type[Or] = Or if isinstance(node, And) else And
            return (
                assemble(type(node), [p for p, _ in parts]),
                assemble(dual, [n for _, n in parts]),
            )
        return node, negate_leaf(node)

    return cast(Predicate, fold(cast(AnyPredicate, pred), children_of, visit)[0])


_Pair = tuple["AnyPredicate", "AnyPredicate"]


def negate_leaf(leaf: AnyPredicate) -> AnyPredicate:
    if isinstance(leaf, Comparison):
        return Comparison(leaf.column, leaf.op.negate(), leaf.literal)
    if isinstance(leaf, In):
        return In(leaf.column, leaf.literals, not leaf.negated)
    if isinstance(leaf, IsNull):
        return IsNull(leaf.column, not leaf.negated)
    if isinstance(leaf, Like):
        return Like(leaf.column, leaf.text, leaf.prefix, not leaf.negated)
    if isinstance(leaf, Match | BoundMatch | HasElement | BoundHasElement):
        return replace(leaf, negated=not leaf.negated)
    if isinstance(leaf, Unsupported):
        return Unsupported(leaf.sql, leaf.reason, not leaf.negated)
    if isinstance(leaf, AlwaysTrue):
        return AlwaysFalse()
    if isinstance(leaf, AlwaysFalse):
        return AlwaysTrue()  # safe either way: see the module docstring
    # Bound leaves (never under NOT in practice: bound trees carry no Not) negate too.
    if isinstance(leaf, BoundComparison):
        return BoundComparison(leaf.column, leaf.op.negate(), leaf.value)
    if isinstance(leaf, BoundIn):
        return BoundIn(leaf.column, leaf.values, not leaf.negated)
    if isinstance(leaf, BoundIsNull):
        return BoundIsNull(leaf.column, not leaf.negated)
    raise TypeError(f"not a predicate node: {leaf!r}")


def assemble(cls: type[And] | type[Or], children: list[AnyPredicate]) -> AnyPredicate:
    """Join finished children with ``cls``, splicing same-kind children."""
    spliced: list[AnyPredicate] = []
    for child in children:
        spliced.extend(child.children if isinstance(child, cls) else (child,))
    return join(cls, spliced)


def join(cls: type[And] | type[Or], children: list[AnyPredicate]) -> And | Or:
    """``cls(children)`` for bound or unbound children."""
    return cls(cast(tuple[Predicate, ...], tuple(children)))


def simplify(pred: AnyPredicate) -> AnyPredicate:
    """Fold constants and flatten, bottom-up; works on bound and unbound trees.

    And: AlwaysTrue children drop, an AlwaysFalse child wins, empty -> AlwaysTrue.
    Or: AlwaysFalse children drop, an AlwaysTrue child wins, empty -> AlwaysFalse.
    One child -> that child. In a bound And, ``c IS NOT NULL`` is dropped when a
    sibling comparison or IN on ``c`` already rejects NULLs (``a <=> 5`` ends as
    ``a = 5``). Unsupported leaves stay, so ``explain()`` can show them.
    """

    def visit(node: AnyPredicate, parts: list[AnyPredicate]) -> AnyPredicate:
        if isinstance(node, And | Or):
            return _fold(type(node), parts)
        if isinstance(node, Not):
            return Not(cast(Predicate, parts[0]))
        return node

    return fold(pred, children_of, visit)


def _fold(cls: type[And] | type[Or], children: list[AnyPredicate]) -> AnyPredicate:
    absorbing = AlwaysFalse if cls is And else AlwaysTrue
    neutral = AlwaysTrue if cls is And else AlwaysFalse
    kept: list[AnyPredicate] = []
    for child in children:
        if isinstance(child, absorbing):
            return absorbing()
        if isinstance(child, neutral):
            continue
        kept.extend(child.children if isinstance(child, cls) else (child,))
    if cls is And:
        kept = _drop_implied_not_null(kept)
    if not kept:
        return neutral()
    return kept[0] if len(kept) == 1 else join(cls, kept)


def _drop_implied_not_null(children: list[AnyPredicate]) -> list[AnyPredicate]:
    # Only bound leaves: in an unbound tree the pair may still sit under a NOT,
    # where `a = 5 AND a IS NOT NULL` and `a = 5` negate differently.
    constrained = {c.column.name for c in children if isinstance(c, (BoundComparison, BoundIn))}
    if not constrained:
        return children
    return [
        c
        for c in children
        if not (isinstance(c, BoundIsNull) and c.negated and c.column.name in constrained)
    ]
