"""Which conditions of a SELECT filter which of its sources.

Dropping a source's rows that fail condition ``c`` leaves the query's answer
unchanged where ``c`` *absorbs* them: every row built from such a source row
fails ``c`` where ``c`` is checked, and no other row appears instead. Over the
FROM clause's joins, left to right:

* WHERE absorbs for a source that no outer join has made null-supplying
  (removing its rows there could make a preserved row unmatched, padded with
  NULLs, and a condition such as ``x IS NULL`` would then hold);
* an inner (or cross, or comma) join's ON absorbs for the joined source and for
  every source on its left that is not null-supplying so far;
* LEFT [OUTER] JOIN's ON absorbs for the joined (right) source only: rows
  failing it never match, and the left row comes out the same either way;
  afterwards that source is null-supplying;
* RIGHT JOIN's ON absorbs for the left sources not null-supplying so far;
  afterwards every left source is null-supplying;
* FULL JOIN absorbs for none, and makes every source null-supplying;
* [LEFT] SEMI JOIN's ON absorbs for the joined source and the left ones as an
  inner join does; [LEFT] ANTI JOIN's for the joined source only (a row that
  cannot match never decides which rows are kept). Neither side of these is
  visible after the join.

A LEFT JOIN whose joined source a WHERE conjunct *rejects NULLs* of (a
comparison, IN, BETWEEN, LIKE or IS NOT NULL over a plain column of it: false
or NULL on the rows padded with NULLs for it) is an inner join, as Spark's own
optimizer makes it (``EliminateOuterJoin``): the padded rows never survive.

``inner`` says that every join is an inner, cross or comma join: then every
condition of WHERE and ON holds on every row the sources make together, which
is what carrying a condition across ``a.x = b.y`` needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

__all__ = ["JoinShape", "join_shape"]


@dataclass
class JoinShape:
    """The sources of one SELECT (their aliases, FROM first) and where each
    condition absorbs."""

    sources: list[str] = field(default_factory=list)
    where: set[str] = field(default_factory=set)  # WHERE absorbs for these
    on: list[tuple[exp.Expr, set[str]]] = field(default_factory=list)
    inner: bool = True
    understood: bool = True  # False: a join this module does not model


def join_shape(select: exp.Select) -> JoinShape:
    """The join structure of ``select``'s FROM clause (qualified: every source
    has an alias)."""
    shape = JoinShape()
    from_ = select.args.get("from_")
    if from_ is None:
        shape.understood = False
        return shape
    first = _alias(from_.this)
    if first is None:
        shape.understood = False
        return shape
    shape.sources.append(first)
    visible = [first]
    nullable: set[str] = set()
    rejected = _null_rejected(select)
    for join in select.args.get("joins") or []:
        right = _alias(join.this)
        side = (join.args.get("side") or "").upper()
        kind = (join.args.get("kind") or "").upper()
        if side == "LEFT" and kind in ("", "OUTER") and right in rejected:
            side, kind = "", "INNER"  # the WHERE drops every row padded for it
        if right is None or join.args.get("method") or join.args.get("using"):
            shape.understood = False
            return shape
        shape.sources.append(right)
        preserved_left = {s for s in visible if s not in nullable}
        if kind in ("SEMI", "ANTI") and side in ("", "LEFT"):
            absorbs = {right} | (preserved_left if kind == "SEMI" else set())
            shape.inner = False
        elif kind in ("", "INNER", "CROSS") and side == "":
            absorbs = preserved_left | {right}
            visible.append(right)
        elif kind in ("", "OUTER") and side == "LEFT":
            absorbs = {right}
            visible.append(right)
            nullable.add(right)
            shape.inner = False
        elif kind in ("", "OUTER") and side == "RIGHT":
            absorbs = preserved_left
            nullable.update(visible)
            visible.append(right)
            shape.inner = False
        elif kind in ("", "OUTER") and side == "FULL":
            absorbs = set()
            visible.append(right)
            nullable.update(visible)
            shape.inner = False
        else:  # ASOF, POSITIONAL, LATERAL...: not modelled
            shape.understood = False
            return shape
        on = join.args.get("on")
        if on is not None:
            shape.on.append((on, absorbs))
    if select.args.get("laterals"):
        shape.inner = False  # generators add rows; conditions still filter the base rows
    shape.where = {s for s in visible if s not in nullable}
    return shape


_REJECTING = (
    exp.EQ,
    exp.NEQ,
    exp.GT,
    exp.GTE,
    exp.LT,
    exp.LTE,
    exp.In,
    exp.Between,
    exp.Like,
    exp.ILike,
)


def _null_rejected(select: exp.Select) -> set[str]:
    """The sources some WHERE conjunct is never TRUE for when all their columns
    are NULL: a comparison, IN, BETWEEN or LIKE with one of their plain columns
    as an operand, or ``col IS NOT NULL``."""
    where = select.args.get("where")
    if where is None:
        return set()
    found = set()
    parts = where.this.flatten() if isinstance(where.this, exp.And) else [where.this]
    for part in parts:
        conjunct = part.unnest() if isinstance(part, exp.Paren) else part
        if isinstance(conjunct, exp.Not) and isinstance(conjunct.this, exp.Is):
            operand = conjunct.this.this  # col IS NOT NULL
            if isinstance(conjunct.this.expression, exp.Null) and isinstance(operand, exp.Column):
                found.add(operand.table)
            continue
        if not isinstance(conjunct, _REJECTING):
            continue
        operands = [conjunct.this, conjunct.args.get("expression")]
        if isinstance(conjunct, exp.Between):
            operands = [conjunct.this]  # NULL low or high bound may still be TRUE: not these
        found.update(o.table for o in operands if isinstance(o, exp.Column) and o.table)
    return found


def _alias(node: exp.Expr) -> str | None:
    """The alias a FROM item answers to (qualified trees alias every item), if it
    is one plain source: a table or a derived table, not a nested join."""
    if isinstance(node, exp.Table) and node.args.get("joins"):
        return None
    if isinstance(node, exp.Table | exp.Subquery) and node.alias:
        return node.alias
    return None
