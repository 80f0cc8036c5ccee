"""Predicates: parse (SQL text or PySpark Column), normalise NOT, bind to a schema.

``prepare(where, schema)`` does all three and is what :func:`skipindex.prune` uses.
Nothing here imports pyspark: a Column is read through the JVM objects it holds.
"""

from __future__ import annotations

from skipindex.expressions.binding import bind, prepare
from skipindex.expressions.column import parse_column
from skipindex.expressions.rewrite import rewrite_not, simplify
from skipindex.expressions.sql import parse_sql

__all__ = ["bind", "parse_column", "parse_sql", "prepare", "rewrite_not", "simplify"]
