"""The registry of index kinds. Adding a kind: one module, one line in ``KINDS``."""

from __future__ import annotations

from typing import Any, Protocol

import pyarrow as pa

from skipindex.column_paths import field_at
from skipindex.errors import IndexFormatVersionError, UnknownColumnError
from skipindex.indexes.base import IndexKind, IndexSpec
from skipindex.indexes.bitsliced_bitmap import BitSlicedBitmapKind
from skipindex.indexes.bloom import BloomKind
from skipindex.indexes.element_bitmap import ElementBitmapKind
from skipindex.indexes.element_bloom import ElementBloomKind
from skipindex.indexes.equality_bitmap import EqualityBitmapKind
from skipindex.indexes.minmax import MinMaxKind
from skipindex.indexes.ngram_bloom import NgramBloomKind
from skipindex.indexes.range_bitmap import RangeBitmapKind

__all__ = ["KINDS", "Definition", "IndexKind", "IndexSpec", "kind_for"]


class Definition(Protocol):
    """An index definition as the manifest records it (``store.manifest.IndexDef``)."""

    @property
    def column(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def params(self) -> dict[str, Any]: ...


KINDS: dict[str, type[IndexKind]] = {
    kind.kind: kind
    for kind in (
        MinMaxKind,
        BloomKind,
        EqualityBitmapKind,
        RangeBitmapKind,
        BitSlicedBitmapKind,
        NgramBloomKind,
        ElementBloomKind,
        ElementBitmapKind,
    )
}


def kind_for(definition: Definition, schema: pa.Schema) -> IndexKind:
    """Instantiate the kind of ``definition`` for its column's type in ``schema``."""
    kind = KINDS.get(definition.kind)
    if kind is None:
        raise IndexFormatVersionError(
            f"unknown index kind '{definition.kind}' on column '{definition.column}': "
            "the index was written by a newer skipindex"
        )
    try:
        field = field_at(schema, definition.column)
    except KeyError:
        raise UnknownColumnError(
            f"indexed column '{definition.column}' is not in the table schema"
        ) from None
    return kind(definition.column, field.type, definition.params)
