"""A query run again is parsed and derived once.

Dashboards and reports run the same text again and again, and the static half
is pure: :func:`~skipindex.sql.derive.parse` in the text and the session's case
rule, :func:`~skipindex.sql.derive.derive` in those and the schemas ``resolve``
found. Both are kept for the last few hundred queries (about 10 and 20 ms of a
TPC-DS query's planning). Nothing after derive changes a ``Derivation`` (a run
copies the condition lists it adds to), and derive qualifies a copy of the
parsed tree, so what is kept is never changed by using it. A schema changed
since (a view registered again over other columns) is another key.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TypeVar

from skipindex.sql.derive import Catalog, Derivation, Parsed, derive, parse

__all__ = ["derived", "parsed"]

_KEPT = 256  # queries: each a sqlglot tree or two, tens of KB

_K = TypeVar("_K")
_V = TypeVar("_V")

_lock = threading.Lock()  # the gateway plans on many threads
_parsed: OrderedDict[tuple[str, bool], Parsed | None] = OrderedDict()
_derived: OrderedDict[tuple[str, bool, tuple[object, ...]], Derivation] = OrderedDict()


def parsed(text: str, case_sensitive: bool) -> Parsed | None:
    """:func:`~skipindex.sql.derive.parse`, kept."""
    key = (text, case_sensitive)
    with _lock:
        if key in _parsed:
            _parsed.move_to_end(key)
            return _parsed[key]
    return _remember(_parsed, key, parse(text, case_sensitive))


def derived(query: Parsed, catalog: Catalog) -> Derivation:
    """:func:`~skipindex.sql.derive.derive`, kept per text, case rule and schemas."""
    key = (query.text, query.case_sensitive, _signature(catalog))
    with _lock:
        if key in _derived:
            _derived.move_to_end(key)
            return _derived[key]
    return _remember(_derived, key, derive(query, catalog))


def _signature(catalog: Catalog) -> tuple[object, ...]:
    return tuple((key, tuple(columns.items())) for key, columns in catalog.items())


def _remember(kept: OrderedDict[_K, _V], key: _K, value: _V) -> _V:
    with _lock:
        kept[key] = value
        while len(kept) > _KEPT:
            kept.popitem(last=False)
    return value
