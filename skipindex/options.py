"""``--index KIND:COLUMN[:param=value,...]`` (or ``:expr=EXPRESSION``): an index
spec as the command line writes it."""

from __future__ import annotations

import json
from typing import Any

from skipindex.errors import InvalidSpecError
from skipindex.indexes import KINDS
from skipindex.indexes.base import IndexSpec

__all__ = ["parse_index_option"]


def parse_index_option(text: str) -> IndexSpec:
    """``KIND:COLUMN[:param=value,...]``, e.g. ``bloom:l_partkey:fpp=0.01``; or an
    expression index, ``KIND[:param=value,...]:expr=EXPRESSION``, the expression
    being everything after the first ``:expr=`` (colons and commas included),
    e.g. ``bloom:fpp=0.01:expr=lower(email)``."""
    head, marker, expression = text.partition(":expr=")
    if marker:
        kind, _, params_text = head.partition(":")
        column = ""
    else:
        kind, _, rest = text.partition(":")
        column, _, params_text = rest.partition(":")
    if kind not in KINDS or not (column or expression):
        raise InvalidSpecError(
            f"bad --index {text!r}: expected KIND:COLUMN[:param=value,...] or "
            f"KIND[:param=value,...]:expr=EXPRESSION with KIND one of {', '.join(KINDS)}"
        )
    params: dict[str, Any] = {}
    for item in filter(None, params_text.split(",")):
        name, sep, value = item.partition("=")
        if not sep:
            raise InvalidSpecError(f"bad parameter {item!r} in --index {text!r}: use name=value")
        params[name] = json.loads(value) if value[:1].isdigit() or value[:1] in "-." else value
    try:
        if marker:
            return KINDS[kind].spec(expr=expression, **params)
        return KINDS[kind].spec(column, **params)
    except (TypeError, InvalidSpecError) as exc:
        raise InvalidSpecError(f"bad parameters in --index {text!r}: {exc}") from exc
