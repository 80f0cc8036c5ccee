"""The parsers' leaf builders, shared by the SQL and the PySpark Column parsers.

Both parsers reduce their input to operands (a column, a literal, or something
else) and call these, so that both follow the same conventions: a condition
that is never NULL (``a <=> 5``, ``isnan(a)``) is built as ``leaf AND a IS NOT
NULL`` so that its negation keeps NULL rows; anything that is not a plain
column against literals is :class:`~skipindex.expressions.nodes.Unsupported`
with the reason. ``shown`` renders the SQL text of the whole condition, only
when it has to become Unsupported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

from skipindex.expressions.nodes import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    AnyPredicate,
    Call,
    Comparison,
    HasElement,
    In,
    IsNull,
    Like,
    Literal,
    LiteralKind,
    Match,
    Not,
    Op,
    Or,
    Predicate,
    Term,
    Unsupported,
    children_of,
)
from skipindex.expressions.patterns import (
    PatternError,
    ascii_lower,
    contains_pattern,
    ends_with_pattern,
    parse_like,
)
from skipindex.expressions.regex_needles import implied_pattern
from skipindex.expressions.rewrite import assemble, negate_leaf, rewrite_not
from skipindex.expressions.visitors import Shape, fold

__all__ = [
    "Operand",
    "compare",
    "connect",
    "contains",
    "ends_with",
    "finds_regex",
    "has_element",
    "is_nan",
    "is_term",
    "like",
    "member",
    "null_safe_equal",
    "starts_with",
    "truth_test",
]


# A column (or an expression of columns: Call), a literal, or something else.
Operand = Term | Literal | None


def is_term(operand: Operand) -> bool:
    """Whether an operand is what a leaf may be about: a column or a Call."""
    return isinstance(operand, str | tuple | Call)


def compare(op: Op, left: Operand, right: Operand, shown: Callable[[], str]) -> Predicate:
    """``left op right``: a Comparison when one side is a column and the other a literal."""
    if is_term(left) and isinstance(right, Literal):
        return Comparison(cast(Term, left), op, right)
    if isinstance(left, Literal) and is_term(right):
        return Comparison(cast(Term, right), op.mirror(), left)
    return Unsupported(shown(), _why_not_column_vs_literal(left, right))


def null_safe_equal(
    left: Operand, right: Operand, shown: Callable[[], str], *, negated: bool = False
) -> Predicate:
    """``a <=> v`` (``IS NOT DISTINCT FROM``); ``negated`` for ``IS DISTINCT FROM``.

    It is never NULL, so its negation keeps NULL rows: it is built as
    ``a = v AND a IS NOT NULL``, which rewrite_not turns into ``a != v OR a IS NULL``.
    """
    if isinstance(left, Literal) and is_term(right):
        left, right = right, left
    if not (is_term(left) and isinstance(right, Literal)):
        return Unsupported(shown(), _why_not_column_vs_literal(left, right))
    left = cast(Term, left)
    if right.kind is LiteralKind.NULL:
        equal: Predicate = IsNull(left)
    else:
        equal = And((Comparison(left, Op.EQ, right), IsNull(left, negated=True)))
    return Not(equal) if negated else equal


def member(column: Operand, items: Sequence[Operand], shown: Callable[[], str]) -> Predicate:
    """``column IN (items)``."""
    literals = [item for item in items if isinstance(item, Literal)]
    if not is_term(column) or len(literals) != len(items):
        return Unsupported(shown(), "IN needs a column and a list of literals")
    return In(cast(Term, column), tuple(literals))


def is_nan(column: Term) -> Predicate:
    """``isnan(x)`` is FALSE, not NULL, for a NULL x: built like ``<=>``."""
    nan = Literal(LiteralKind.FLOAT, float("nan"))
    return And((Comparison(column, Op.EQ, nan), IsNull(column, negated=True)))


def _why_not_column_vs_literal(left: Operand, right: Operand) -> str:
    if is_term(left) and is_term(right):
        return "compares two columns (or expressions of columns)"
    if isinstance(left, Literal) and isinstance(right, Literal):
        return "compares two literals"
    return "one side is an expression, not a plain column or literal"


def connect(shape: Shape, parts: list[Predicate]) -> Predicate:
    """A parser's AND / OR (spliced one level: operands are flat already) or NOT."""
    if shape is Shape.NOT:
        return Not(parts[0])
    cls: type[And] | type[Or] = And if shape is Shape.AND else Or
    return cast(Predicate, assemble(cls, cast(list[AnyPredicate], parts)))


def like(
    column: Operand,
    pattern: Operand,
    shown: Callable[[], str],
    escape: str = "\\",
    case_insensitive: bool = False,
) -> Predicate:
    """``column LIKE pattern [ESCAPE escape]`` (Spark's default escape: a
    backslash): a wildcard-free text, optionally followed by ``%``, is a
    :class:`Like` leaf (an equality or a range); any other pattern a
    :class:`Match` leaf; a pattern Spark rejects might match (Spark says why).
    ``case_insensitive``: ``ILIKE``, which Spark runs as ``lower(column) LIKE
    lower(pattern)``: always a :class:`Match`, its pattern's ASCII letters
    lowered (a letter as the escape would be lowered too: might match)."""
    if not is_term(column):
        return Unsupported(shown(), "LIKE needs a column")
    if not isinstance(pattern, Literal) or pattern.kind is not LiteralKind.STRING:
        return Unsupported(shown(), "LIKE needs a string literal pattern")
    text = str(pattern.value)
    if case_insensitive:
        if escape.isalpha() or not escape.isascii():
            return Unsupported(shown(), "ILIKE with a letter as its escape")
        text = ascii_lower(text)
    try:
        parsed = parse_like(text, escape)
    except PatternError as exc:
        return Unsupported(shown(), str(exc))
    subject = cast(Term, column)
    if case_insensitive:
        return Match(subject, parsed, case_insensitive=True)
    if parsed.literal:
        return Like(subject, parsed.prefix, prefix=False)
    if parsed.prefix_only:
        return Like(subject, parsed.prefix, prefix=True)
    return Match(subject, parsed)


def lowered_like(
    call: Operand, column: Operand, pattern: Operand, shown: Callable[[], str]
) -> Predicate:
    """``lower(column) LIKE pattern``: what an index on the expression
    ``lower(column)`` answers, and ``column ILIKE pattern``, which holds wherever
    it does (a pattern's capitals only make it match more) and which indexes on
    the column itself answer."""
    return connect(
        Shape.AND,
        [like(call, pattern, shown), like(column, pattern, shown, case_insensitive=True)],
    )


def starts_with(column: Operand, prefix: Operand, shown: Callable[[], str]) -> Predicate:
    """``startswith(column, 'abc')``: the same leaf as ``column LIKE 'abc%'``."""
    text = _needle("startswith", column, prefix, shown)
    return text if not isinstance(text, str) else Like(cast(Term, column), text, prefix=True)


def contains(column: Operand, needle: Operand, shown: Callable[[], str]) -> Predicate:
    """``contains(column, 'abc')``: ``column LIKE '%abc%'`` (as ``instr(column,
    'abc') > 0`` and ``locate('abc', column) > 0`` are)."""
    text = _needle("contains", column, needle, shown)
    return text if not isinstance(text, str) else Match(cast(Term, column), contains_pattern(text))


def ends_with(column: Operand, suffix: Operand, shown: Callable[[], str]) -> Predicate:
    """``endswith(column, 'abc')``: ``column LIKE '%abc'``."""
    text = _needle("endswith", column, suffix, shown)
    return text if not isinstance(text, str) else Match(cast(Term, column), ends_with_pattern(text))


def finds_regex(column: Operand, regex: Operand, shown: Callable[[], str]) -> Predicate:
    """``column RLIKE 'regex'`` (``regexp_like``, ``rlike``): wherever it holds, so
    does the LIKE pattern of the literal text the regex must find
    (:func:`~skipindex.expressions.regex_needles.implied_pattern`). The two as an
    AND with the condition itself, which no index answers: the pattern skips
    files, and NOT of the whole keeps every file (the pattern's NOT would drop
    values the regex misses and the pattern does not)."""
    text = _needle("RLIKE", column, regex, shown)
    if not isinstance(text, str):
        return text
    implied = implied_pattern(text)
    itself = Unsupported(shown(), "a regular expression: only the text it needs is answered")
    if implied is None:
        return itself
    return connect(Shape.AND, [Match(cast(Term, column), implied), itself])


def has_element(column: Operand, items: Sequence[Operand], shown: Callable[[], str]) -> Predicate:
    """``array_contains(column, v)``, ``arrays_overlap(column, array(v, w...))``,
    ``exists(column, x -> x = v)``: an element equals one of the literals. A NULL
    literal equals nothing (it makes the result NULL, never TRUE)."""
    if not is_term(column):
        return Unsupported(shown(), "an array function needs an array column")
    if not all(isinstance(item, Literal) for item in items):
        return Unsupported(shown(), "an array function needs literal values")
    literals = tuple(
        cast(Literal, i) for i in items if cast(Literal, i).kind is not LiteralKind.NULL
    )
    return HasElement(cast(Term, column), literals) if literals else AlwaysFalse()


def _needle(
    name: str, column: Operand, needle: Operand, shown: Callable[[], str]
) -> str | Predicate:
    """The literal text of a string function's second argument, or why it might match."""
    if not is_term(column):
        return Unsupported(shown(), f"{name} needs a column")
    if not isinstance(needle, Literal) or needle.kind is not LiteralKind.STRING:
        return Unsupported(shown(), f"{name} needs a string literal")
    return str(needle.value)


_TRUTH_LIMIT = 64  # nodes: the three-valued expansion grows with depth


def truth_test(pred: Predicate, value: bool | None, negated: bool, shown: str) -> Predicate:
    """``pred IS [NOT] TRUE|FALSE|NULL`` (``value`` None for NULL) under three-valued
    logic, as a predicate that is itself never NULL, so NOT may be pushed through it.

    ``(a > 0 AND b > 1) IS NULL`` is true when no conjunct is FALSE and one is
    UNKNOWN: ``(a > 0 OR a IS NULL) AND (b > 1 OR b IS NULL) AND (a IS NULL OR b IS NULL)``.
    """
    normal: AnyPredicate = rewrite_not(pred)
    if fold(normal, children_of, lambda _, parts: 1 + sum(parts)) > _TRUTH_LIMIT:
        return Unsupported(shown, "the expression under IS is too large to expand")
    try:
        true, false, unknown = fold(normal, children_of, _truth)
    except _UndecidableError as why:
        return Unsupported(shown, str(why))
    wanted = {True: true, False: false, None: unknown}
    if not negated:
        return wanted[value]
    others = [t for v, t in wanted.items() if v is not value]
    return Or((others[0], others[1]))


class _UndecidableError(Exception):
    pass


_Truth = tuple[Predicate, Predicate, Predicate]


def _truth(pred: AnyPredicate, parts: list[_Truth]) -> _Truth:
    """(is TRUE, is FALSE, is UNKNOWN) of an NNF node, each never NULL."""
    if isinstance(pred, And | Or):
        trues, falses, unknowns = (tuple(p[k] for p in parts) for k in range(3))
        if isinstance(pred, And):  # UNKNOWN: no FALSE and some UNKNOWN
            open_ = tuple(Or((t, u)) for t, u in zip(trues, unknowns, strict=True))
            return And(trues), Or(falses), And((*open_, Or(unknowns)))
        open_ = tuple(Or((f, u)) for f, u in zip(falses, unknowns, strict=True))
        return Or(trues), And(falses), And((*open_, Or(unknowns)))
    if isinstance(pred, AlwaysTrue):
        return AlwaysTrue(), AlwaysFalse(), AlwaysFalse()
    if isinstance(pred, IsNull):
        return pred, IsNull(pred.column, not pred.negated), AlwaysFalse()
    if isinstance(pred, In) and any(lit.kind is LiteralKind.NULL for lit in pred.literals):
        raise _UndecidableError("IN with a NULL in its list")
    if isinstance(pred, Comparison) and pred.literal.kind is LiteralKind.NULL:
        return AlwaysFalse(), AlwaysFalse(), AlwaysTrue()
    if isinstance(pred, Comparison | In | Like | Match):  # NULL exactly when the column is
        present = IsNull(pred.column, negated=True)
        negation = cast(Predicate, negate_leaf(pred))
        return And((pred, present)), And((negation, present)), IsNull(pred.column)
    raise _UndecidableError(f"{pred} may be FALSE or NULL")  # AlwaysFalse, Unsupported
