"""``drop_index``: remove some index definitions, or the whole index."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pyarrow as pa

from skipindex.errors import (
    ConflictError,
    IndexCorruptError,
    IndexFormatVersionError,
    InvalidSpecError,
    UnknownColumnError,
)
from skipindex.expressions.calls import is_expression_field
from skipindex.indexes import KINDS
from skipindex.indexing.definitions import expression_key_of
from skipindex.store import vacuum
from skipindex.store.damage import repairable
from skipindex.store.location import CatalogSpec, StorageOptions, TableLocation, TablePath, locate
from skipindex.store.manifest import IndexDef, Manifest, commit, load_latest
from skipindex.store.segments import copy_segments

__all__ = ["drop_index"]

_ATTEMPTS = 5


def drop_index(
    path: TablePath,
    columns: Sequence[str] | None = None,
    kinds: Sequence[str] | None = None,
    *,
    all: bool = False,
    storage_options: StorageOptions | None = None,
    catalog: CatalogSpec | None = None,
) -> list[IndexDef]:
    """Drop the definitions on ``columns`` of ``kinds`` (None: any); returns them.

    Say what to drop: ``columns``, ``kinds``, or ``all=True`` for the whole
    index. Dropping every definition removes ``_skipindex/`` entirely. Data
    files are never touched.
    """
    if columns is None and kinds is None and not all:
        raise InvalidSpecError(
            f"say what to drop from the index of {path}: columns=[...], kinds=[...], "
            "or all=True for the whole index"
        )
    for kind in kinds or ():
        if kind not in KINDS:
            raise InvalidSpecError(f"unknown index kind '{kind}'; kinds are: {', '.join(KINDS)}")
    location = locate(path, storage_options, catalog=catalog)
    with repairable(location.user_root):
        return _drop(location, columns, kinds, all=all)


def _drop(
    location: TableLocation,
    columns: Sequence[str] | None,
    kinds: Sequence[str] | None,
    *,
    all: bool,
) -> list[IndexDef]:
    for _ in range(_ATTEMPTS):
        try:
            current = load_latest(location)
        except IndexFormatVersionError:
            raise
        except IndexCorruptError:
            if not all:
                raise
            _delete_index(location)  # dropping everything needs no definitions
            return []
        if current is None:
            return []
        named = None if columns is None else {_indexed_as(c, current) for c in columns}
        dropped = [
            d
            for d in current.indexes
            if (named is None or d.column in named) and (kinds is None or d.kind in kinds)
        ]
        remaining = tuple(d for d in current.indexes if d not in dropped)
        if not remaining:
            _delete_index(location)
            return dropped
        if not dropped:
            return []
        build_id = vacuum.new_build_id()
        with vacuum.in_flight(location, build_id):
            fields = [d.field for d in remaining]
            segments = copy_segments(location, current, current.segments, fields, f"{build_id}-d")
            try:
                commit(
                    location,
                    replace(
                        current,
                        version=current.version + 1,
                        arrow_schema=_without_expressions(current.arrow_schema, remaining),
                        indexes=remaining,
                        segments=tuple(segments),
                        build={"dropped": len(dropped)},
                    ),
                    build_id,
                )
            except ConflictError:
                vacuum.delete_segments(location, [s.path for s in segments])
                continue
        vacuum.collect(location)
        return dropped
    raise ConflictError(
        f"could not drop indexes of {location.user_root}: too many concurrent builds"
    )


def _indexed_as(column: str, current: Manifest) -> str:
    """The key of the indexed column or expression ``column`` names: a column's
    key, or an expression as its definition wrote it, as its key, or written
    otherwise (``WeekOfYear(d)`` for ``weekofyear(d)``)."""
    keys = {d.column for d in current.indexes}
    if column in keys:
        return column
    for d in current.indexes:
        if d.expression is not None and d.expression == column:
            return d.column
    if any(d.expression is not None for d in current.indexes):
        try:
            key: str | None = expression_key_of(
                column,
                current.arrow_schema,
                current.partition_columns,
                case_sensitive=current.spark_view.case_sensitive,
            )
        except (InvalidSpecError, UnknownColumnError):
            key = None
        if key in keys:
            return str(key)
    shown = ", ".join(sorted(d.subject for d in current.indexes))
    raise UnknownColumnError(
        f"column '{column}' has no index; indexed columns and expressions: {shown}"
    )


def _without_expressions(schema: pa.Schema, remaining: Sequence[IndexDef]) -> pa.Schema:
    """The schema without the fields of expressions no remaining index is on."""
    keys = {d.column for d in remaining}
    kept = [f for f in schema if not is_expression_field(f) or f.name in keys]
    return pa.schema(kept, metadata=schema.metadata)


def _delete_index(location: TableLocation) -> None:
    running = vacuum.running_builds(location)
    if running:  # deleting the folder under it would lose the build's commit
        raise ConflictError(
            f"cannot drop the whole index of {location.user_root}: a build is running "
            f"on it ({', '.join(sorted(running))}); drop it once the build has finished"
        )
    vacuum.delete_index(location)
