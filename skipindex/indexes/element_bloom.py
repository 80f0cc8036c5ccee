"""Bloom filter of an array column's elements, per file.

The ``bloom`` kind's filter (Parquet's SBBF, each value hashed as Parquet would
hash it), over every non-NULL element of the file's arrays: a file whose filter
holds none of a condition's values has no array containing one. Answers
``array_contains(a, v)``, ``arrays_overlap(a, array(v, w...))`` and
``exists(a, x -> x = v)``.

Payload per file: ``filter``. A file without an element gets an empty filter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa

from skipindex._types import Domain, physical_type
from skipindex.expressions.nodes import BoundHasElement, BoundLeaf
from skipindex.indexes import _sbbf
from skipindex.indexes._column_work import ColumnWork
from skipindex.indexes._elements import element_domain, elements_of
from skipindex.indexes.base import FileBatch, FileLevelKind
from skipindex.indexes.bloom import Bloom, BloomKind, ValueCodec, filter_verdicts

__all__ = ["ElementBloom", "ElementBloomKind"]


@dataclass(frozen=True)
class ElementBloom(Bloom):
    """A split-block Bloom filter of each file's array elements (``fpp``,
    ``max_bytes`` as for :class:`~skipindex.indexes.bloom.Bloom`)."""

    kind: ClassVar[str] = "element_bloom"


class ElementBloomKind(FileLevelKind):
    spec = ElementBloom

    options: ElementBloom

    def __init__(self, column: str, arrow_type: pa.DataType, params: dict[str, Any]) -> None:
        super().__init__(column, arrow_type, params)
        self._codec = ValueCodec(physical_type(arrow_type.value_type))

    def indexed_domain(self, column: str, arrow_type: pa.DataType) -> Domain:
        return element_domain(self.kind, column, arrow_type)

    def payload_type(self) -> pa.StructType:
        return pa.struct([("filter", pa.binary())])

    def build(self, values: pa.Array, work: ColumnWork | None = None) -> dict[str, Any]:
        elements, _ = elements_of(values)
        hashes = self._codec.hash_array(elements)
        size = _sbbf.num_bytes(len(hashes), self.options.fpp, self.options.max_bytes)
        return {"filter": _sbbf.build(hashes, size)}

    def answers(self, leaf: BoundLeaf) -> bool:
        return (
            isinstance(leaf, BoundHasElement)
            and leaf.column.name == self.column
            and not leaf.negated
            and len(leaf.values) <= BloomKind.max_in_values
        )

    def might_match(self, leaf: BoundLeaf, files: FileBatch) -> np.ndarray:
        if not self.answers(leaf):
            return np.ones(len(files), dtype=bool)
        assert isinstance(leaf, BoundHasElement)
        hashes = self._codec.hash_literals(leaf.values)
        index = f"element_bloom index on '{self.column}'"
        return filter_verdicts(files, index, hashes, _sbbf.might_contain)
