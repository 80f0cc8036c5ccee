"""N-gram Bloom filter per file: which byte n-grams the file's strings hold.

For substring predicates no range answers: ``x LIKE '%timeout%'``,
``contains(x, 'Android')``, ``endswith(url, '/checkout')``, ``x = 'a long
message'``. Every value that holds a literal run of the pattern holds each of
the run's n-grams, so a file whose filter lacks one of them holds no match.

The grams are of the values' UTF-8 bytes, not their characters: a substring's
bytes are a substring of the value's bytes whatever the script, so no gram is
cut wrongly at a multi-byte character, and the extraction is a few numpy passes
over the Arrow buffers. A gram of ``n`` (1-8) bytes is packed little-endian
into a 64-bit integer, hashed with XXH64 as a Parquet INT64 would be, and set
in a split-block Bloom filter (Parquet's SBBF layout, as the ``bloom`` kind's)
sized from the file's distinct grams and ``fpp`` in whole 32-byte blocks (not
rounded up to a power of two as Parquet's own filters are: up to half smaller).
A literal run shorter than ``n`` bytes says nothing; a pattern without a longer
one is not answered.

Payload per file: ``filter`` (the SBBF bitset). A file without a non-null
value gets an empty one-block filter: nothing matches.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from skipindex._distinct import distinct
from skipindex._types import Domain
from skipindex.errors import InvalidSpecError
from skipindex.expressions.nodes import BoundComparison, BoundLeaf, BoundMatch, Op
from skipindex.indexes import _sbbf
from skipindex.indexes._column_work import ColumnWork
from skipindex.indexes._xxh64 import hash_u64
from skipindex.indexes.base import FileBatch, FileLevelKind, IndexSpec
from skipindex.indexes.bloom import check_filter_params, filter_verdicts

__all__ = ["NgramBloom", "NgramBloomKind", "byte_grams"]

# Grams extracted per step of a file's values: bounds the build's working memory
# (about 24 bytes a gram) whatever the file's size.
_GRAMS_PER_STEP = 1 << 22
# Grams (of at most 3 bytes) from which a table of every possible gram beats sorting.
_TABLE_FROM = 1 << 16


@dataclass(frozen=True)
class NgramBloom(IndexSpec):
    """A Bloom filter of each file's byte n-grams, answering ``LIKE '%text%'``,
    ``contains``, ``endswith``, ``instr(x, 'text') > 0`` and ``=`` on strings.

    ``n``: the gram length in bytes (1-8; 3 suits words and URLs); ``fpp``: the
    target false-positive rate per gram (a needle of k grams passes a file that
    lacks it at roughly ``fpp ** k``); ``max_bytes`` caps one file's filter.
    """

    kind: ClassVar[str] = "ngram_bloom"
    n: int = 3
    fpp: float = 0.01
    max_bytes: int = 1 << 20

    def __post_init__(self) -> None:
        super().__post_init__()
        n = self.n
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 8:
            raise InvalidSpecError(
                f"NgramBloom index on '{self.subject}': n must be an int from 1 to 8 "
                f"(bytes per gram), got {n!r}; 3 is a good default"
            )
        check_filter_params(self, self.fpp, self.max_bytes)


class NgramBloomKind(FileLevelKind):
    spec = NgramBloom
    values_only = True  # the grams of the distinct values are the grams of the rows
    domains = frozenset({Domain.STRING})

    options: NgramBloom

    def payload_type(self) -> pa.StructType:
        return pa.struct([("filter", pa.binary())])

    def build(self, values: pa.Array, work: ColumnWork | None = None) -> dict[str, Any]:
        distinct = work.sorted_distinct() if work is not None else None
        if distinct is None:
            distinct = pc.unique(values.drop_null())
        hashes = hash_u64(byte_grams(distinct, self.options.n))
        size = _sbbf.tight_bytes(len(hashes), self.options.fpp, self.options.max_bytes)
        return {"filter": _sbbf.build(hashes, size)}

    def answers(self, leaf: BoundLeaf) -> bool:
        return leaf.column.name == self.column and bool(self._needles(leaf))

    def might_match(self, leaf: BoundLeaf, files: FileBatch) -> np.ndarray:
        needles = self._needles(leaf) if leaf.column.name == self.column else []
        if not needles:
            return np.ones(len(files), dtype=bool)
        index = f"ngram_bloom index on '{self.column}'"
        if isinstance(leaf, BoundMatch) and leaf.case_insensitive:
            grams = _case_variants(needles, self.options.n)
            unused = np.zeros(0, dtype=np.uint64)  # the probe holds the grams' spellings
            return filter_verdicts(files, index, unused, _any_of_each(grams))
        hashes = hash_u64(byte_grams(pa.array(needles, pa.large_binary()), self.options.n))
        return filter_verdicts(files, index, hashes, _sbbf.might_contain_all)

    def _needles(self, leaf: BoundLeaf) -> list[bytes]:
        """The texts every matching value holds, as UTF-8, of at least ``n`` bytes
        (for ILIKE: up to the case of their ASCII letters)."""
        if isinstance(leaf, BoundMatch) and not leaf.negated:
            pattern = leaf.pattern
            texts = list(pattern.folded_needles if leaf.case_insensitive else pattern.needles)
        elif isinstance(leaf, BoundComparison) and leaf.op is Op.EQ:
            texts = [leaf.value] if isinstance(leaf.value, str) else []
        else:
            return []
        encoded = [text.encode() for text in texts]
        return [needle for needle in encoded if len(needle) >= self.options.n]


# Case variants asked per gram at most: a gram of more ASCII letters is left out
# (one condition fewer to hold: never a file lost).
_MAX_VARIANTS = 64


def _case_variants(needles: list[bytes], n: int) -> list[np.ndarray]:
    """Per ``n``-byte gram of the needles, the hashes of its spellings in either
    case of its ASCII letters: a value holding the needle up to case holds one
    spelling of every gram."""
    grams = {needle[at : at + n] for needle in needles for at in range(len(needle) - n + 1)}
    out = []
    for gram in sorted(grams):
        choices = [sorted({bytes([b]), bytes([b]).upper(), bytes([b]).lower()}) for b in gram]
        if np.prod([len(c) for c in choices]) > _MAX_VARIANTS:
            continue
        spellings = [b"".join(parts) for parts in itertools.product(*choices)]
        out.append(hash_u64(byte_grams(pa.array(spellings, pa.large_binary()), n)))
    return out


def _any_of_each(groups: list[np.ndarray]) -> Callable[[_sbbf.Filters, np.ndarray], np.ndarray]:
    """A probe: per filter, whether it may hold one hash of every group."""

    def probe(filters: _sbbf.Filters, _: np.ndarray) -> np.ndarray:
        found = np.asarray(filters.num_blocks > 0, dtype=bool)
        for hashes in groups:
            found &= _sbbf.might_contain(filters, hashes)
        return found

    return probe


def byte_grams(values: pa.Array, n: int) -> np.ndarray:
    """The distinct ``n``-byte grams (``n`` <= 8) of the non-null strings or
    binaries in ``values``, each packed little-endian into a uint64.

    Every position of the values' bytes is packed at once from shifted views of
    the buffer (no gather), and the positions whose gram would run past the end
    of its value (into the next one) are masked out."""
    values = values.drop_null().cast(pa.large_binary())
    if len(values) == 0:
        return np.zeros(0, dtype=np.uint64)
    _, offsets_buffer, data_buffer = values.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=np.int64)[
        values.offset : values.offset + len(values) + 1
    ]
    first, last = int(offsets[0]), int(offsets[-1])
    if data_buffer is None or last - first < n:
        return np.zeros(0, dtype=np.uint64)
    data = np.frombuffer(data_buffer, dtype=np.uint8)[first:last]
    valid = np.ones(len(data) - n + 1, dtype=bool)
    ends = offsets[1:] - first
    for back in range(1, n):  # a gram starting this close to its value's end crosses it
        at = ends - back
        valid[at[(at >= 0) & (at < len(valid))]] = False
    # Grams of at most 3 bytes are marked in a table of every possible gram (16 MiB at
    # most): one scatter, where sorting a file's millions of grams costs most of the build.
    table = n <= 3 and len(valid) > _TABLE_FROM
    seen = np.zeros(1 << (8 * n), dtype=bool) if table else None
    width: type[np.unsignedinteger[Any]] = np.uint32 if n <= 4 else np.uint64
    found: list[np.ndarray] = []
    for start in range(0, len(valid), _GRAMS_PER_STEP):
        stop = min(start + _GRAMS_PER_STEP, len(valid))
        packed: np.ndarray = data[start:stop].astype(width)
        for k in range(1, n):  # byte k of every gram at once: the buffer shifted by k
            packed |= np.left_shift(data[start + k : stop + k].astype(width), width(8 * k))
        kept = packed[valid[start:stop]]
        if seen is not None:
            seen[kept] = True
        else:
            found.append(distinct(kept))
    if seen is not None:
        return np.flatnonzero(seen).astype(np.uint64)
    return distinct(np.concatenate(found)).astype(np.uint64)
