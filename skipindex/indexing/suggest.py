"""``suggest_indexes(path)``: sensible indexes from the schema and a sample of the data.

Used by ``build_index`` when a table has no index and no definitions are given
(``skipindex build <table>``), so a first build never commits an empty index.
The rules, per top-level column (no Spark; a few row groups are read):

* min-max on every orderable column: a few bytes per file, answers ranges;
* an equality bitmap where the sample holds at most ``LOW_CARDINALITY``
  distinct values: exact for ``=`` and ``IN``, combined row by row;
* a Bloom filter on high-cardinality integer and string columns (at least
  half the sampled values distinct): min-max ranges of such keys overlap in
  every file, a Bloom filter still rules files out for ``=`` and ``IN``;
* nothing on booleans beyond min-max, nor on binary, nested or floating-point
  columns beyond what min-max gives (floats are rarely compared for equality).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from skipindex._types import Domain, domain_of
from skipindex.indexes.base import IndexSpec
from skipindex.indexes.bloom import Bloom
from skipindex.indexes.equality_bitmap import EqualityBitmap
from skipindex.indexes.minmax import MinMax
from skipindex.spark.view import open_file, without_views
from skipindex.store.location import (
    CatalogSpec,
    DataFile,
    StorageOptions,
    TableLocation,
    TablePath,
    locate,
)
from skipindex.store.schema import table_schema

__all__ = ["Suggestion", "suggest_indexes"]

LOW_CARDINALITY = 64
SAMPLE_FILES = 4
_ORDERABLE = frozenset(Domain) - {Domain.BINARY}
_KEYLIKE = frozenset({Domain.INT, Domain.STRING, Domain.DECIMAL})


@dataclass(frozen=True)
class Suggestion:
    """An index :func:`suggest_indexes` chose, and why."""

    spec: IndexSpec
    reason: str

    def __str__(self) -> str:
        return f"{self.spec.kind} on {self.spec.column}: {self.reason}"


def suggest_indexes(
    path: TablePath,
    *,
    sample_files: int = SAMPLE_FILES,
    storage_options: StorageOptions | None = None,
    catalog: CatalogSpec | None = None,
) -> list[Suggestion]:
    """Indexes worth building on ``path``, each with the reason it was chosen."""
    location = locate(path, storage_options, catalog=catalog)
    listing = location.list_data_files()
    return suggest_for(location, listing, sample_files=sample_files)


def suggest_for(
    location: TableLocation, listing: Sequence[DataFile], *, sample_files: int = SAMPLE_FILES
) -> list[Suggestion]:
    schema = table_schema(location, listing, None, [])
    hidden = {p.lower() for p in location.partition_names(listing)}
    fields = [f for f in schema if f.name.lower() not in hidden and domain_of(f.type)]
    sample = _sample(location, listing, fields, sample_files)
    out: list[Suggestion] = []
    for f in fields:
        domain = domain_of(f.type)
        if domain in _ORDERABLE:
            out.append(Suggestion(MinMax(f.name), "orderable: per-file ranges for <, >, BETWEEN"))
        values = sample.get(f.name)
        if values is None or len(values) == 0 or domain in (Domain.BOOLEAN, Domain.BINARY):
            continue
        distinct = int(pc.count_distinct(values, mode="only_valid").as_py())
        seen = f"{distinct:,} distinct in {len(values):,} sampled rows"
        if distinct <= LOW_CARDINALITY and len(values) > distinct:
            out.append(
                Suggestion(EqualityBitmap(f.name), f"low cardinality ({seen}): exact = / IN")
            )
        elif domain in _KEYLIKE and distinct * 2 >= len(values) - values.null_count:
            out.append(Suggestion(Bloom(f.name), f"high cardinality ({seen}): = / IN on keys"))
    return out


def _sample(
    location: TableLocation,
    listing: Sequence[DataFile],
    fields: Sequence[pa.Field],
    files: int,
) -> dict[str, pa.Array]:
    """The first row group of up to ``files`` files spread over the table (counting
    distinct values needs no Spark semantics: the raw values will do)."""
    step = max(1, len(listing) // files)
    chunks: dict[str, list[pa.Array]] = {f.name: [] for f in fields}
    for data_file in list(listing)[::step][:files]:
        try:
            parquet = open_file(location.fs_path(data_file.path), filesystem=location.fs)
            if parquet.metadata.num_row_groups == 0:
                continue
            present = {n.lower(): n for n in parquet.schema_arrow.names}
            names = [present[f.name.lower()] for f in fields if f.name.lower() in present]
            group = without_views(parquet.read_row_group(0, columns=names))
        except (pa.ArrowException, OSError):
            continue  # unreadable: the build reports it
        for f in fields:
            if f.name.lower() in present:
                array = group.column(present[f.name.lower()]).combine_chunks()
                if pa.types.is_dictionary(array.type):
                    array = array.dictionary_decode()
                with suppress(pa.ArrowException):  # a file typed otherwise: left out
                    chunks[f.name].append(array.cast(f.type))
    return {name: pa.concat_arrays(parts) for name, parts in chunks.items() if parts}
