"""One way to walk a tree: an iterative post-order fold.

Every walk over a predicate (rendering, NOT push-down, simplification, binding,
file-level evaluation, column collection) and every parser's walk over its
input tree (sqlglot's, the JVM's Column nodes) is a small *visitor* handed to
:func:`fold`: ``visit(node, results_of_children) -> result``. The fold keeps an
explicit stack and a stack of values, so a predicate nested 1,000 levels deep,
or an AND of 10,000 conditions, never touches Python's recursion limit.

The one walk that is not a fold is the row-level evaluation in
:mod:`skipindex.pruning.evaluate`: it narrows the candidate files on the way *down* an
AND (and stops as soon as none is left), which a post-order fold cannot express.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import Enum
from typing import TypeVar

__all__ = ["Shape", "boolean_tree", "fold"]

N = TypeVar("N")
T = TypeVar("T")


def fold(
    root: N,
    children: Callable[[N], Sequence[N]],
    visit: Callable[[N, list[T]], T],
) -> T:
    """``visit(node, [results of its children])`` for every node, children first."""
    values: list[T] = []
    stack: list[tuple[N, Sequence[N] | None]] = [(root, None)]
    while stack:
        node, expanded = stack.pop()
        if expanded is None:
            kids = children(node)
            if kids:
                stack.append((node, kids))
                stack.extend((kid, None) for kid in reversed(kids))
                continue
            values.append(visit(node, []))
            continue
        count = len(expanded)
        results = values[len(values) - count :]
        del values[len(values) - count :]
        values.append(visit(node, results))
    return values[0]


class Shape(Enum):
    """What a parser's input node is, as far as boolean structure goes."""

    AND = "and"
    OR = "or"
    NOT = "not"
    LEAF = "leaf"


def boolean_tree(
    root: N,
    shape: Callable[[N], tuple[Shape, Sequence[N]]],
    leaf: Callable[[N], T],
    combine: Callable[[Shape, list[T]], T],
) -> T:
    """The walk both parsers share: ``shape`` says whether a node is an AND or OR
    (with its flattened operands), a NOT (with its operand) or a leaf; leaves
    become ``leaf(node)`` and the rest ``combine(shape, operand results)``."""
    shapes: dict[int, Shape] = {}

    def children(node: N) -> Sequence[N]:
        kind, operands = shape(node)
        shapes[id(node)] = kind
        return operands if kind is not Shape.LEAF else ()

    def visit(node: N, results: list[T]) -> T:
        kind = shapes.pop(id(node))
        return leaf(node) if kind is Shape.LEAF else combine(kind, results)

    return fold(root, children, visit)
