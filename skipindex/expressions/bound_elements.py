"""Array conditions bound to their column: an element equals one of some values.

``array_contains(a, v)``, ``arrays_overlap(a, array(v, w))`` and ``exists(a, x
-> x = v)`` are TRUE exactly where an element of ``a`` equals a value. The
values are cast to the element type as an equality would cast them, but only
where the literal is written in the element's own kind (a string for strings,
a number for numbers, a date for dates): Spark widens both sides of an array
function by rules of its own (or refuses), and a literal of another kind might
mean something else there, so it might match.
"""

from __future__ import annotations

from skipindex._types import Domain, domain_of
from skipindex.expressions.bound_leaves import member_values
from skipindex.expressions.coercion import MightMatchError, coerce
from skipindex.expressions.nodes import (
    AlwaysFalse,
    AnyPredicate,
    BoundColumn,
    BoundComparison,
    BoundHasElement,
    BoundIn,
    HasElement,
    LiteralKind,
    Unsupported,
)

__all__ = ["ELEMENT_DOMAINS", "element_leaf"]

# Element domains an array condition is answered on, with the literal kinds each takes.
ELEMENT_DOMAINS = {
    Domain.STRING: {LiteralKind.STRING},
    Domain.INT: {LiteralKind.INT},
    Domain.DECIMAL: {LiteralKind.INT, LiteralKind.DECIMAL},
    Domain.DATE: {LiteralKind.DATE},
}


def element_leaf(leaf: HasElement, column: BoundColumn) -> AnyPredicate:
    """``leaf`` on the resolved array ``column``."""
    arrays = column.type
    if not (hasattr(arrays, "value_type") and str(arrays).startswith(("list", "large_list"))):
        return Unsupported(str(leaf), f"column '{column.name}' is not an array")
    domain = domain_of(arrays.value_type)
    kinds = ELEMENT_DOMAINS.get(domain) if domain is not None else None
    if domain is None or kinds is None:
        return Unsupported(str(leaf), f"arrays of {arrays.value_type} are not answered")
    if any(lit.kind not in kinds for lit in leaf.literals):
        return Unsupported(str(leaf), "a value of another type than the array's elements")
    element = BoundColumn(column.name, arrays.value_type)
    try:
        targets = [coerce(element, domain, lit) for lit in leaf.literals]
    except MightMatchError as reason:
        return Unsupported(str(leaf), str(reason))
    found = member_values(element, domain, targets, negated=False)
    if isinstance(found, AlwaysFalse):  # no element can equal any of them
        return found
    if isinstance(found, BoundComparison):
        return BoundHasElement(column, (found.value,), leaf.negated)
    if isinstance(found, BoundIn):
        return BoundHasElement(column, found.values, leaf.negated)
    return Unsupported(str(leaf), "not answered")
