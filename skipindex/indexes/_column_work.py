"""One file's column as the kinds indexing it need it, each step done at most once.

The indexer makes one :class:`ColumnWork` per file and column and passes it to
every kind on that column: a range bitmap and a bit-sliced bitmap on one column
split it into null and non-null rows once, and a Bloom filter built after a
bitmap kind sorted the column takes its distinct values from that sort instead
of hashing every row into a set again.
"""

from __future__ import annotations

from functools import cached_property

import pyarrow as pa

from skipindex._types import Domain
from skipindex.indexes._bitmap_build import Encoded, Ranked, rank_values, split_nulls

__all__ = ["ColumnWork"]


class ColumnWork:
    """Lazily computed views of ``values`` (physical form) shared by its kinds."""

    def __init__(self, values: pa.Array, domain: Domain) -> None:
        self.values = values
        self.domain = domain

    @cached_property
    def encoded(self) -> Encoded:
        return split_nulls(self.values, self.domain)

    @cached_property
    def ranked(self) -> Ranked:
        return rank_values(self.encoded)

    def sorted_distinct(self) -> pa.Array | None:
        """The distinct non-null values if a kind has already sorted the column,
        else None (sorting only for them costs more than hashing into a set)."""
        ranked = self.__dict__.get("ranked")
        return None if ranked is None else ranked.distinct
