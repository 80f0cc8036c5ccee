"""The query Spark runs: the user's text, with pruned references' names replaced.

Only the spans of table names change; every other character is the user's,
so Spark parses and resolves the rest of the query exactly as it would have.
The replacements are placeholders for ``spark.sql``'s formatter, which makes
each DataFrame a temporary view of a fresh name for the duration of the call
(classic) or sends it with the query (Spark Connect): no name the user has is
ever shadowed, and nothing is left behind.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["escape", "left_out_sql", "placeholder", "run_sql", "substitute"]

# Passed on every formatted call, so that the formatter always runs (it runs only
# when given keyword arguments) and doubled braces always mean one brace.
_ALWAYS = "skipindex_unused"


def placeholder(number: int) -> str:
    return f"skipindex_ref_{number}"


def escape(text: str) -> str:
    """``text`` for the formatter: braces doubled."""
    return text.replace("{", "{{").replace("}", "}}")


def left_out_sql(relation: str, columns: str, condition: str) -> str:
    """A subquery of ``relation`` (a formatter-ready placeholder) selecting
    ``columns`` of the rows meeting ``condition`` (both SQL, escaped here)."""
    return f"(SELECT {escape(columns)} FROM {relation} WHERE {escape(condition)})"  # noqa: S608 -- columns quoted, paths as literals by sqlglot


def substitute(text: str, spans: Mapping[tuple[int, int], str]) -> str:
    """``text`` escaped for the formatter, with each ``(start, end)`` span
    replaced by its (already formatter-ready) replacement."""
    out, at = [], 0
    for (start, end), replacement in sorted(spans.items()):
        out.append(escape(text[at:start]))
        out.append(replacement)
        at = end
    out.append(escape(text[at:]))
    return "".join(out)


def run_sql(spark: Any, formatted: str, frames: Mapping[str, Any]) -> Any:
    """``spark.sql`` over formatter-ready text, each ``{name}`` the DataFrame ``frames[name]``."""
    return spark.sql(formatted, **{_ALWAYS: 0, **frames})
