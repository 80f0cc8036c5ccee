"""sqlglot's parse errors in the SQL terms a user wrote."""

from __future__ import annotations

import re

__all__ = ["plain", "readable"]


_MISSING = re.compile(r"Required keyword: '(\w+)' missing for <class '[\w.]*?(\w+)'>")
_SIDES = {"this": "left-hand side", "expression": "right-hand side"}
_OPERATORS = {"EQ": "=", "NEQ": "!=", "LT": "<", "LTE": "<=", "GT": ">", "GTE": ">=",
              "And": "AND", "Or": "OR", "Not": "NOT", "Like": "LIKE", "Is": "IS"}  # fmt: skip


def readable(detail: str) -> str:
    """sqlglot's 'Required keyword ... missing for <class ...EQ>' in SQL terms."""
    match = _MISSING.search(detail)
    if match is None:
        return detail
    side = _SIDES.get(match.group(1), f"its {match.group(1)}")
    operator = _OPERATORS.get(match.group(2), match.group(2).upper())
    return f"'{operator}' is missing its {side}"


def plain(message: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", message).strip()
