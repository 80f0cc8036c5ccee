"""Moving conditions on a scope's output into the scope: through projections,
GROUP BY, set operations and the references of a CTE.

A condition pushed into a derived table, a CTE or a set operation's branch is
written over the scope's *output* columns (qualified by :data:`OUT`). It moves
in only where filtering the scope's output is the same as filtering its rows
before they are projected: a SELECT without aggregates, windows, LIMIT/OFFSET,
HAVING or QUALIFY, and only through output columns that are plain columns of
its sources (never through an expression, whose type or value may differ). An
aggregating SELECT (plain GROUP BY, no ROLLUP, CUBE or GROUPING SETS, whose
subtotal rows hold NULL keys) takes a condition on grouping columns only:
keeping the rows whose key meets it before grouping keeps exactly the groups
whose key meets it after, aggregates unchanged (HAVING filters whole groups
too, so it commutes). A
set operation (UNION [ALL], INTERSECT, EXCEPT, filtering commutes with all of
them) passes it to each branch by position, only where every branch's column
at that position is a column of an indexed-or-known table of one and the same
type (a branch of another type would be widened first, and a comparison in the
wider type can hold where one in the narrower type does not).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import cast

from sqlglot import exp
from sqlglot.optimizer.scope import Scope

from skipindex.sql.conjuncts import Condition, replace_columns
from skipindex.sql.references import REF

__all__ = [
    "OUT",
    "combine_references",
    "into_branch",
    "into_grouped",
    "into_select",
    "output_form",
    "pushable",
    "pushable_grouped",
    "relaxed",
    "trace_column",
]

OUT = "__skipindex_out__"  # the qualifier of a scope's own output columns


def pushable(select: exp.Select) -> bool:
    """Whether filtering ``select``'s output equals filtering its rows first."""
    if any(select.args.get(k) for k in ("group", "having", "qualify", "limit", "offset")):
        return False
    distinct = select.args.get("distinct")
    if distinct is not None and distinct.args.get("on"):
        return False
    for projection in select.expressions:
        if projection.find(exp.AggFunc, exp.Window, exp.Anonymous) is not None:
            return False
    return not any(isinstance(n, exp.Window) for n in select.walk())


def pushable_grouped(select: exp.Select) -> bool:
    """Whether ``select`` aggregates by plain GROUP BY keys and nothing stops a
    condition on them from moving before the grouping (see the module doc)."""
    group = select.args.get("group")
    if group is None or any(group.args.get(k) for k in ("rollup", "cube", "grouping_sets")):
        return False
    if any(select.args.get(k) for k in ("qualify", "limit", "offset")):
        return False
    distinct = select.args.get("distinct")
    if distinct is not None and distinct.args.get("on"):
        return False
    return not any(isinstance(n, exp.Window) for n in select.walk())


def into_grouped(
    scope: Scope, condition: Condition, types: Mapping[int, Mapping[str, str]]
) -> Condition | None:
    """``condition`` (over ``scope``'s output) over the sources of aggregating
    SELECT ``scope``, through output columns that are grouping keys of a table's
    column (or of a derived table's, carried unchanged from tables), not a float
    (Spark groups -0.0 with 0.0 and shows 0.0: a condition telling them apart
    would keep other rows before than after)."""
    select = cast(exp.Select, scope.expression)
    keys = _grouping_keys(select)
    outputs = _outputs(select)

    def grouping_key(column: exp.Column) -> bool:
        source = outputs.get(column.name) if column.table == OUT else None
        if not isinstance(source, exp.Column) or (source.table, source.name) not in keys:
            return False
        behind = _table_columns(scope.sources.get(source.table), source.name)
        spark_types = [types.get(number, {}).get(name) for number, name in behind or []]
        return bool(spark_types) and all(
            t is not None and t not in ("float", "double") for t in spark_types
        )

    return into_select(scope, condition, grouping_key)


def _table_columns(source: exp.Table | Scope | None, name: str) -> list[tuple[int, str]] | None:
    """The table columns behind column ``name`` of a SELECT's source: the table's
    own, or those a derived table or CTE carries unchanged to its output (a
    ``d_year`` grouped over a UNION of three channels' rows)."""
    if isinstance(source, exp.Table):
        return [(int(source.meta[REF]), name)] if REF in source.meta else None
    if isinstance(source, Scope):
        return trace_column(source, name, lambda _: True)
    return None


def _grouping_keys(select: exp.Select) -> set[tuple[str, str]]:
    """(table, column) of each GROUP BY key that is a plain column."""
    group = select.args.get("group")
    return {
        (key.table, key.name)
        for key in (group.expressions if group else [])
        if isinstance(key, exp.Column) and isinstance(key.this, exp.Identifier)
    }


def output_form(condition: Condition, alias: str) -> Condition:
    """``condition`` over source ``alias``'s columns, as a condition on that
    source's output (columns qualified by :data:`OUT`)."""
    node = replace_columns(
        condition.node, lambda c: exp.column(c.this.copy(), table=OUT) if c.table == alias else None
    )
    assert node is not None  # the condition names only ``alias``
    return condition.moved(node)


def into_select(
    scope: Scope, condition: Condition, allowed: Callable[[exp.Column], bool] = lambda _: True
) -> Condition | None:
    """``condition`` (over ``scope``'s output) over the sources of SELECT
    ``scope``, through output columns that are plain source columns (and
    ``allowed``), relaxed where some are not (see :func:`relaxed`); None where
    nothing of it moves."""
    outputs = _outputs(cast(exp.Select, scope.expression))

    def swap(column: exp.Column) -> exp.Expr | None:
        if column.table != OUT or not allowed(column):
            return None
        source = outputs.get(column.name)
        if not isinstance(source, exp.Column) or not isinstance(source.this, exp.Identifier):
            return None
        if not source.table or source.args.get("db") or source.table not in scope.sources:
            return None
        return source

    node = relaxed(condition.node, swap)
    return None if node is None else condition.moved(node, "pushed")


def relaxed(node: exp.Expr, swap: Callable[[exp.Column], exp.Expr | None]) -> exp.Expr | None:
    """``node`` with its columns swapped (:func:`replace_columns`), or, where some
    cannot be, a weaker condition that can: an AND without the conjuncts that
    cannot move, an OR of its disjuncts so weakened (none where one of them
    weakens to nothing). Every row that meets ``node`` meets it, so pushing it
    keeps every row the query needs: a CTE's six references, a year and a
    channel each, push ``(dyear = 2001 AND sale_type = 's') OR ...``, whose
    ``sale_type`` is a literal inside, as ``dyear = 2001 OR dyear = 2002``."""
    whole = replace_columns(node, swap)
    if whole is not None:
        return whole
    inner = node.unnest() if isinstance(node, exp.Paren) else node
    if isinstance(inner, exp.And):
        kept = [m for part in inner.flatten() if (m := relaxed(part, swap)) is not None]
        return exp.and_(*kept) if kept else None
    if isinstance(inner, exp.Or):
        moved = [relaxed(part, swap) for part in inner.flatten()]
        if any(m is None for m in moved):
            return None
        return exp.or_(*(exp.paren(m) for m in moved if m is not None))
    return None


def _outputs(select: exp.Expr) -> dict[str, exp.Expr | None]:
    """Output name -> the expression behind it (None where two outputs share a name)."""
    out: dict[str, exp.Expr | None] = {}
    for projection in select.expressions:
        name = projection.alias_or_name
        inner = projection.this if isinstance(projection, exp.Alias) else projection
        out[name] = None if name in out else inner
    return out


def into_branch(
    scope: Scope, branch: Scope, condition: Condition, types: Mapping[int, Mapping[str, str]]
) -> Condition | None:
    """``condition`` over set operation ``scope``'s output, over ``branch``'s
    output (columns matched by position), or None (see the module's rules)."""
    names = cast(exp.Query, scope.expression).named_selects
    branch_names = cast(exp.Query, branch.expression).named_selects

    def swap(column: exp.Column) -> exp.Expr | None:
        if column.table != OUT or names.count(column.name) != 1:
            return None
        at = names.index(column.name)
        if at >= len(branch_names) or _type_at(scope, at, types) is None:
            return None
        return exp.column(exp.to_identifier(branch_names[at]), table=OUT)

    node = relaxed(condition.node, swap)
    return None if node is None else condition.moved(node, "pushed")


def _type_at(scope: Scope, at: int, types: Mapping[int, Mapping[str, str]]) -> str | None:
    """The one type every branch of set operation ``scope`` has at position ``at``
    (each a plain column of a table whose columns are known), else None."""
    found: set[str | None] = set()
    stack = [scope]
    while stack:
        current = stack.pop()
        if current.set_operation_scopes:
            if current.expression.args.get("limit") or current.expression.args.get("offset"):
                return None
            stack.extend(current.set_operation_scopes)
            continue
        found.add(_column_type(current, at, types))
    return found.pop() if len(found) == 1 else None


def _column_type(scope: Scope, at: int, types: Mapping[int, Mapping[str, str]]) -> str | None:
    select = scope.expression
    if not isinstance(select, exp.Select) or at >= len(select.expressions):
        return None
    projection = select.expressions[at]
    column = projection.this if isinstance(projection, exp.Alias) else projection
    if not isinstance(column, exp.Column) or not isinstance(column.this, exp.Identifier):
        return None
    source = scope.sources.get(column.table)
    if not isinstance(source, exp.Table) or REF not in source.meta:
        return None
    return types.get(source.meta[REF], {}).get(column.name)


def combine_references(pushes: list[list[Condition] | None]) -> list[Condition] | None:
    """What holds on every row a CTE yields to any of its references: the OR of
    what each reference pushes (nothing, if one of them pushes nothing)."""
    if not pushes or any(not p for p in pushes):
        return None
    if len(pushes) == 1:
        return pushes[0]
    branches = [exp.and_(*(c.node for c in push)) for push in pushes if push]
    distinct = list({b.sql(dialect="spark"): b for b in branches}.values())  # 6 references, 2 years
    if len(distinct) == 1:
        return [Condition(distinct[0], "pushed", f"the same from all {len(pushes)} references")]
    node = exp.or_(*(exp.paren(b) for b in distinct))
    note = f"the OR over its {len(pushes)} references"
    return [Condition(cast(exp.Expr, node), "pushed", note)]


def trace_column(
    scope: Scope, name: str, single_use: Callable[[Scope], bool]
) -> list[tuple[int, str]] | None:
    """The table columns behind output column ``name`` of derived scope ``scope``,
    as (reference number, column): every row the scope yields carries one of
    their values there, unchanged (the paths :func:`into_select`,
    :func:`into_grouped` and :func:`into_branch` move conditions along; a CTE
    only where it is referenced once, since its tables serve every reference).
    None where any path is not such a column."""
    if not single_use(scope):
        return None
    query = cast(exp.Query, scope.expression)
    if scope.set_operation_scopes:
        if query.args.get("limit") or query.args.get("offset"):
            return None
        names = query.named_selects
        if names.count(name) != 1:
            return None
        at = names.index(name)
        out: list[tuple[int, str]] = []
        for branch in scope.set_operation_scopes:
            branch_names = cast(exp.Query, branch.expression).named_selects
            found = (
                trace_column(branch, branch_names[at], single_use)
                if at < len(branch_names)
                else None
            )
            if found is None:
                return None
            out.extend(found)
        return out
    if not isinstance(query, exp.Select):
        return None
    source = _outputs(query).get(name)
    if not isinstance(source, exp.Column) or not isinstance(source.this, exp.Identifier):
        return None
    if not pushable(query) and (
        not pushable_grouped(query) or (source.table, source.name) not in _grouping_keys(query)
    ):
        return None
    inner = scope.sources.get(source.table)
    if isinstance(inner, exp.Table) and REF in inner.meta:
        return [(int(inner.meta[REF]), source.name)]
    if isinstance(inner, Scope):
        return trace_column(inner, source.name, single_use)
    return None
