"""Predicates: parse (SQL text or PySpark Column), normalise NOT, bind to a schema.

``prepare(where, schema)`` does all three and is what :func:`skipindex.prune` uses.

The names below load lazily: ``skipindex._types`` imports ``expressions.nodes``,
and binding imports ``_types``, so an eager import here would be circular. It
also keeps pyspark (needed only for Columns) and sqlglot off the import path of
code that only wants the node classes.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skipindex.expressions.binding import bind, prepare
    from skipindex.expressions.column import parse_column
    from skipindex.expressions.rewrite import rewrite_not, simplify
    from skipindex.expressions.sql import parse_sql

__all__ = ["bind", "parse_column", "parse_sql", "prepare", "rewrite_not", "simplify"]

_HOMES = {
    "bind": "binding",
    "prepare": "binding",
    "parse_column": "column",
    "parse_sql": "sql",
    "rewrite_not": "rewrite",
    "simplify": "rewrite",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
