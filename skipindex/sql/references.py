"""The table references of a query: what each names and where it sits in the text.

A query is parsed once with sqlglot (Spark's dialect, as predicates are). Each
table in a FROM or JOIN is a :class:`Reference`: the table it names (a
``TableKey``: an unqualified name, which may be a view :func:`register` made,
``parquet.`/path``` or ``delta.`/path```, or anything else) and the span of
the name in the query text, so that the query Spark runs is the user's own
text with only that name replaced. Parsing never decides what the query
means: Spark still parses and runs the text.

:func:`layout_dependent` names what makes a query's answer depend on how rows
are spread over files (``rand(1)``, ``monotonically_increasing_id()``,
``input_file_name()``, ``_metadata``): such a query is run as written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, cast

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from skipindex.expressions.sql_literals import SparkSQL

__all__ = [
    "REF",
    "Reference",
    "TableKey",
    "dialect",
    "find_references",
    "layout_dependent",
    "parse_query",
]

# The meta key that ties a Table node to its Reference number (qualify keeps meta).
REF = "skipindex_ref"

KeyKind = Literal["name", "parquet", "delta", "other"]


@dataclass(frozen=True)
class TableKey:
    """What a reference names: ``name`` (an unqualified table or view name,
    normalised as the session compares names), ``parquet``/``delta`` (a path),
    or ``other`` (a qualified name, never indexed here)."""

    kind: KeyKind
    name: str

    def __str__(self) -> str:
        return self.name if self.kind in ("name", "other") else f"{self.kind}.`{self.name}`"


@dataclass(frozen=True)
class Reference:
    """One table in a FROM or JOIN of the query."""

    number: int
    key: TableKey
    written: str  # the name as the text spells it
    start: int  # span of the name in the text, end exclusive
    end: int
    alias: str | None  # the alias the text gives it, if any
    line: int
    why_whole: str | None = None  # why it is never replaced (read as written)

    def replacement(self, placeholder: str) -> str:
        """Text for the name's span: a view of the kept files that answers to
        the same qualifier (``t`` in ``t.x`` for an unaliased ``t``)."""
        if self.alias is not None or self.key.kind in ("parquet", "delta"):
            return placeholder  # columns qualify by the alias; a path is no qualifier
        return f"{placeholder} AS {self.written}"


def dialect(case_sensitive: bool) -> SparkSQL:
    """Spark's dialect, comparing identifiers as the session does."""
    return SparkSQL(
        normalization_strategy="case_sensitive" if case_sensitive else "case_insensitive"
    )


def parse_query(text: str, case_sensitive: bool = False) -> exp.Query | None:
    """The one query statement of ``text``, or None (another statement, several,
    or text sqlglot cannot parse: Spark gets it as written)."""
    try:
        statements = [s for s in sqlglot.parse(text, read=dialect(case_sensitive)) if s]
    except (ParseError, TokenError, RecursionError):
        return None
    if len(statements) != 1 or not isinstance(statements[0], exp.Query):
        return None
    return statements[0]


def find_references(tree: exp.Expr, text: str, case_sensitive: bool) -> list[Reference]:
    """Every table node of the query, numbered in text order (CTE names included:
    which of them name a CTE is for scopes to say), each tagged in its meta."""
    found = []
    for number, table in enumerate(sorted(tree.find_all(exp.Table), key=lambda t: _start(t) or 0)):
        table.meta[REF] = number
        found.append(_reference(number, table, text, case_sensitive))
    return found


def _start(table: exp.Table) -> int | None:
    parts = [p for p in (table.args.get("catalog"), table.args.get("db"), table.this) if p]
    if not parts or not all(isinstance(p, exp.Identifier) for p in parts):
        return None
    starts = [p.meta.get("start") for p in parts]
    return None if None in starts else min(starts)


# Table arguments that change what rows a reference yields (sampling, time travel,
# pivots, hints, options): such a reference is read as written.
_PLAIN_ARGS = {"this", "db", "catalog", "alias"}


def _reference(number: int, table: exp.Table, text: str, case_sensitive: bool) -> Reference:
    name = table.this
    start, end = _start(table), name.meta.get("end") if isinstance(name, exp.Identifier) else None
    alias_node = table.args.get("alias")
    alias = alias_node.name if alias_node is not None and alias_node.name else None
    line = int(name.meta.get("line", 0)) if isinstance(name, exp.Identifier) else 0
    if start is None or end is None or not isinstance(name, exp.Identifier):
        key = TableKey("other", table.sql(dialect=SparkSQL))
        return Reference(number, key, key.name, 0, 0, alias, line, "not a plain table name")
    written = text[start : end + 1]
    key = _key(table, case_sensitive)
    why = None
    extra = sorted(k for k, v in table.args.items() if v and k not in _PLAIN_ARGS)
    if extra:
        why = f"{', '.join(extra)} on the reference"
    elif alias_node is not None and alias_node.args.get("columns"):
        why = "column aliases on the reference"
    elif key.kind == "other":
        why = "a qualified name (only registered views and parquet./delta. paths are indexed)"
    return Reference(number, key, written, start, end + 1, alias, line, why)


def _key(table: exp.Table, case_sensitive: bool) -> TableKey:
    db, catalog = table.args.get("db"), table.args.get("catalog")
    if db is None and catalog is None:
        name = table.name
        return TableKey("name", name if case_sensitive else name.lower())
    if catalog is None and db is not None and db.name.lower() in ("parquet", "delta"):
        return TableKey(cast(KeyKind, db.name.lower()), table.name)
    return TableKey("other", table.sql(dialect=SparkSQL))


# Functions whose values depend on where a row sits (its file, partition or
# position), not on the row: pruning files would change them.
_LAYOUT_FUNCTIONS = frozenset(
    {
        "monotonically_increasing_id",
        "spark_partition_id",
        "input_file_name",
        "input_file_block_start",
        "input_file_block_length",
        "rand",
        "randn",
        "random",
        "uuid",
        "shuffle",
        "uniform",
        "randstr",
        "reflect",
        "java_method",
        "try_reflect",
    }
)
_LAYOUT_CLASSES = tuple(
    getattr(exp, name)
    for name in ("Rand", "Randn", "Uuid", "Shuffle", "Uniform", "Randstr")
    if hasattr(exp, name)
)


def layout_dependent(tree: exp.Expr) -> str | None:
    """Why the answer of ``tree`` may depend on how rows are spread over files, or None."""
    for node in tree.walk():
        if isinstance(node, _LAYOUT_CLASSES):
            return f"{node.sql(dialect=SparkSQL)} depends on where rows sit in files"
        if isinstance(node, exp.Anonymous) and node.name.lower() in _LAYOUT_FUNCTIONS:
            return f"{node.name}() depends on where rows sit in files"
        if isinstance(node, exp.Column) and any(
            part.name.lower() == "_metadata" for part in node.parts
        ):
            return "_metadata describes files"
    return None
