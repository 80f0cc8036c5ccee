"""Column references the way Spark spells and resolves them.

A column is a path: ``("l_partkey",)`` at the top level, ``("s", "t", "f")`` for
a field of nested structs. Its text form joins the parts with dots and
backquotes a part that needs it (```a.b``` is one top-level column named
``a.b``; ``a.b`` is field ``b`` of struct ``a``), as ``col("s.f")`` does in
Spark. Resolution is case-insensitive unless ``spark.sql.caseSensitive``, at
every level of the path.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

__all__ = ["ColumnPath", "column_key", "field_at", "join_path", "resolve_path", "split_name"]

ColumnPath = tuple[str, ...]


def split_name(name: str | Sequence[str]) -> ColumnPath:
    """``"s.f"`` -> ("s", "f"); ``"`a.b`.c"`` -> ("a.b", "c"); a sequence is kept."""
    if not isinstance(name, str):
        return tuple(name)
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    i = 0
    while i < len(name):
        char = name[i]
        if char == "`":
            if quoted and name[i + 1 : i + 2] == "`":  # `` inside quotes is one backquote
                current.append("`")
                i += 2
                continue
            quoted = not quoted
        elif char == "." and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
        i += 1
    parts.append("".join(current))
    if quoted or any(not p for p in parts):
        return (name,)  # not a well-formed path: the whole text names one column
    return tuple(parts)


def column_key(path: Sequence[str]) -> str:
    """How index definitions and evaluation name a column: the path's text form,
    so a top-level column named ``s.f`` (```s.f```) never meets field ``f`` of ``s``."""
    return join_path(path)


def join_path(path: Sequence[str]) -> str:
    """The text form of a path (inverse of :func:`split_name`)."""
    return ".".join(_quote(part) for part in path)


def _quote(part: str) -> str:
    if part and "." not in part and "`" not in part:
        return part
    return "`" + part.replace("`", "``") + "`"


def resolve_path(
    schema: pa.Schema | pa.StructType, path: Sequence[str], *, case_sensitive: bool = False
) -> tuple[ColumnPath, pa.Field] | None:
    """The path as the schema spells it and its field, or None if it is not there.

    Raises ``LookupError`` when a part matches several fields case-insensitively
    (Spark refuses such a column as ambiguous).
    """
    fields: Sequence[pa.Field] = list(schema)
    spelled: list[str] = []
    found: pa.Field | None = None
    for depth, part in enumerate(path):
        if depth and (found is None or not pa.types.is_struct(found.type)):
            return None
        if depth:
            assert found is not None
            fields = [found.type.field(i) for i in range(found.type.num_fields)]
        exact = [f for f in fields if f.name == part]
        folded = [] if case_sensitive else [f for f in fields if f.name.lower() == part.lower()]
        hits = exact or folded
        if len(hits) > 1:
            names = ", ".join(repr(f.name) for f in hits)
            raise LookupError(f"'{join_path(path)}' is ambiguous: it matches {names}")
        if not hits:
            return None
        found = hits[0]
        spelled.append(found.name)
    return (tuple(spelled), found) if found is not None else None


def field_at(schema: pa.Schema, name: str) -> pa.Field:
    """The field a text name denotes (exact spelling); KeyError if absent.

    A top-level column whose name has a dot in it wins over a struct path, so
    indexes defined before nested paths existed keep resolving."""
    if name in schema.names:
        return schema.field(name)
    resolved = resolve_path(schema, split_name(name), case_sensitive=True)
    if resolved is None:
        raise KeyError(name)
    return resolved[1]
