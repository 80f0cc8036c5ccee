"""Spark Connect plans as messages: plan ids, and splicing one relation into another.

A relation's ``common.plan_id`` is what a client's column references point at
(``df["x"]`` is an ``UnresolvedAttribute`` carrying the id of ``df``'s plan). A
replacement keeps the id of the node it replaces, so the client's references
still resolve, and every id inside it is renumbered past the client's own,
so none of them can resolve to a node of the client's plan by accident.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["plan_ids", "renumbered", "spliced"]

_PLAN_ID = "plan_id"


def _fields(message: Any) -> Iterator[tuple[Any, Any]]:
    """Every set field of ``message`` and every message under it, depth first
    (iterative: client plans can nest thousands of relations deep)."""
    stack = [message]
    while stack:
        current = stack.pop()
        for descriptor, value in current.ListFields():
            yield current, (descriptor, value)
            if descriptor.message_type is None:
                continue
            if descriptor.is_repeated:
                if descriptor.message_type.GetOptions().map_entry:
                    values = value.values() if _map_of_messages(descriptor) else ()
                    stack.extend(values)
                else:
                    stack.extend(value)
            else:
                stack.append(value)


def _map_of_messages(descriptor: Any) -> bool:
    return descriptor.message_type.fields_by_name["value"].message_type is not None


def plan_ids(message: Any) -> set[int]:
    """Every plan id ``message`` holds, on relations and on column references."""
    return {
        int(value)
        for _, (descriptor, value) in _fields(message)
        if descriptor.name == _PLAN_ID and descriptor.message_type is None
    }


def renumbered(message: Any, first: int) -> Any:
    """A copy of ``message`` whose plan ids are renumbered from ``first`` up, each
    id the same new number wherever it appears."""
    copy = type(message)()
    copy.CopyFrom(message)
    mapping: dict[int, int] = {}
    for owner, (descriptor, value) in list(_fields(copy)):
        if descriptor.name == _PLAN_ID and descriptor.message_type is None:
            new = mapping.setdefault(int(value), first + len(mapping))
            setattr(owner, _PLAN_ID, new)
    return copy


def spliced(
    relation: Any, replace: Callable[[Any], Any | None], *, skip: Callable[[Any], bool]
) -> tuple[Any, int]:
    """A copy of ``relation`` where each relation node for which ``replace``
    gives a message is that message (its own children not visited), and the
    number of nodes replaced. Nodes ``skip`` names are kept as they are, with
    everything under them. The walk is iterative."""
    copy = type(relation)()
    copy.CopyFrom(relation)
    replaced = 0
    stack = [copy]
    while stack:
        current = stack.pop()
        if _is_relation(current):
            if skip(current):
                continue
            replacement = replace(current)
            if replacement is not None:
                current.CopyFrom(replacement)
                replaced += 1
                continue
        for descriptor, value in current.ListFields():
            if descriptor.message_type is None:
                continue
            if descriptor.is_repeated:
                if descriptor.message_type.GetOptions().map_entry:
                    if _map_of_messages(descriptor):
                        stack.extend(value.values())
                else:
                    stack.extend(value)
            else:
                stack.append(value)
    return copy, replaced


def _is_relation(message: Any) -> bool:
    return bool(message.DESCRIPTOR.full_name == "spark.connect.Relation")
