"""What a new ``cluster`` settles first: the ``by`` columns, and plans a crash left."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pyarrow as pa

from skipindex._types import spark_type_name
from skipindex.column_paths import resolve_path, split_name
from skipindex.errors import UnknownColumnError, UnsupportedTypeError
from skipindex.layout import commit
from skipindex.store.cluster_plan import PENDING, load_plans
from skipindex.store.location import DataFile, TableLocation
from skipindex.store.schema import table_schema
from skipindex.store.vacuum import running_builds

__all__ = ["recover", "resolve_by"]


def resolve_by(
    location: TableLocation, files: Sequence[DataFile], by: Sequence[str]
) -> tuple[str, ...]:
    """The ``by`` columns as the table spells them (matched case-insensitively, as
    Spark does); unknown and nested columns are refused by name."""
    if not by:
        return ()
    partitions = location.partition_names(files)
    schema = table_schema(location, files, None, by)
    spelled = []
    for name in by:
        hit = [p for p in partitions if p.lower() == name.lower()]
        if hit:
            spelled.append(hit[0])
            continue
        found = resolve_path(schema, split_name(name))
        if found is None or len(found[0]) != 1:
            columns = ", ".join([*schema.names, *partitions])
            raise UnknownColumnError(
                f"cannot cluster {location.user_root} by {name!r}: no such top-level column "
                f"(columns: {columns})"
            )
        (column,), field = found
        if pa.types.is_nested(field.type):
            raise UnsupportedTypeError(
                f"cannot cluster by {column!r} of type {spark_type_name(field.type)}: "
                "clustering orders rows by values, and nested values have no order to use"
            )
        spelled.append(column)
    return tuple(spelled)


def recover(location: TableLocation, target_of: Callable[[str | None], TableLocation]) -> list[str]:
    """Roll back plans that stopped before moving anything; finish those that
    stopped while moving files into place. Plans still running are left alone."""
    live = running_builds(location)
    messages = []
    for plan in load_plans(location):
        if plan.state not in PENDING or plan.plan_id in live:
            continue
        target = target_of(plan.destination)
        if plan.state == "committing":
            commit.finish(location, target, plan)
            messages.append(f"finished cluster plan {plan.plan_id}, interrupted while committing")
        else:
            commit.roll_back(location, target, plan, "interrupted before committing")
            messages.append(
                f"rolled back cluster plan {plan.plan_id}, interrupted while {plan.state}: "
                "nothing had been replaced"
            )
    return messages
