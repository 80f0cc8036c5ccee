"""About what reading only the row groups (and pages) holding candidate rows
takes of each kept file: for all kept files at once, from their footers.

One numpy pass over every candidate row and every column chunk of the kept
files: a Python loop over files and chunks cost 50-75 ms at 1,000 kept files,
on every read, only to find that no file was worth it. The model is
:func:`~skipindex.reading.pages.chunk_bytes`: a chunk's pages taken as equal runs of
its row group's rows.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from skipindex._distinct import distinct
from skipindex.reading.footers import COMPRESSED, DICTIONARY, UNCOMPRESSED, VALUES, FooterLayout
from skipindex.reading.pages import chunk_bytes, chunk_pages

__all__ = ["Costs", "costs", "where_bytes"]


@dataclass(frozen=True)
class Costs:
    """Per file priced, in the order given."""

    groups: list[tuple[int, ...]]  # the row groups holding candidate rows
    group_rows: np.ndarray  # rows in those row groups
    read_bytes: np.ndarray  # about the compressed bytes read of them
    file_bytes: np.ndarray  # compressed bytes of the whole file
    where_bytes: np.ndarray  # compressed bytes of the predicate's columns, whole file


def costs(
    layouts: Sequence[FooterLayout], rows: Sequence[np.ndarray], where: Collection[str]
) -> Costs:
    """What reading ``rows`` (each file's sorted candidate row numbers) takes of
    each file; ``where``: the predicate's top-level columns, lower case."""
    files = len(layouts)
    num_rows = np.array([layout.num_rows for layout in layouts], dtype=np.int64)
    per_file = np.array([len(layout.group_rows) for layout in layouts], dtype=np.int64)
    group_rows = _concat([layout.group_rows for layout in layouts])
    group_file = np.repeat(np.arange(files), per_file)
    group_start = np.cumsum(group_rows) - group_rows  # rows of all files end to end
    file_start = np.cumsum(num_rows) - num_rows
    counts = np.array([len(r) for r in rows], dtype=np.int64)
    local = _concat(list(rows))
    row_file = np.repeat(np.arange(files), counts)
    inside = local < num_rows[row_file]  # (a file's rows are all < its num_rows)
    flat = (local + file_start[row_file])[inside]
    group_of = np.searchsorted(group_start, flat, side="right") - 1
    in_group = flat - group_start[group_of]
    hit = np.bincount(group_of, minlength=len(group_rows)) > 0

    chunks = np.concatenate([layout.chunks for layout in layouts]) if files else np.zeros((0, 4))
    columns = np.repeat(np.array([len(layout.columns) for layout in layouts]), per_file)
    chunk_group = np.repeat(np.arange(len(group_rows)), columns)
    pages = chunk_pages(chunks[:, UNCOMPRESSED], chunks[:, VALUES])
    share = np.zeros(len(chunks))
    for count in distinct(pages[hit[chunk_group]]).tolist():
        page_of = in_group * count // np.maximum(group_rows[group_of], 1)
        pages_hit = _pages_hit(group_of, page_of, len(group_rows))
        chosen = pages == count
        share[chosen] = pages_hit[chunk_group[chosen]] / count
    read = chunk_bytes(chunks[:, COMPRESSED], chunks[:, DICTIONARY], share)
    chunk_file = group_file[chunk_group]
    compressed = chunks[:, COMPRESSED].astype(np.float64)
    in_where = _concat([_in(layout, where) for layout in layouts])
    hit_groups = np.flatnonzero(hit)
    local_groups = hit_groups - (np.cumsum(per_file) - per_file)[group_file[hit_groups]]
    bounds = np.searchsorted(group_file[hit_groups], np.arange(files + 1))
    return Costs(
        groups=[tuple(local_groups[a:b].tolist()) for a, b in itertools.pairwise(bounds)],
        group_rows=np.bincount(group_file, weights=group_rows * hit, minlength=files),
        read_bytes=np.bincount(chunk_file, weights=read, minlength=files),
        file_bytes=np.bincount(chunk_file, weights=compressed, minlength=files),
        where_bytes=np.bincount(chunk_file, weights=compressed * in_where, minlength=files),
    )


def where_bytes(layouts: Sequence[FooterLayout], where: Collection[str]) -> float:
    """The compressed bytes of the ``where`` columns over all ``layouts``: what
    no candidate row is needed to know (an upper bound of what any read by row
    groups can save, before the candidate rows are gathered and priced)."""
    return float(
        sum(np.dot(layout.chunks[:, COMPRESSED], _in(layout, where)) for layout in layouts)
    )


def _pages_hit(group_of: np.ndarray, page_of: np.ndarray, groups: int) -> np.ndarray:
    """Per row group, how many distinct pages its rows fall in (rows sorted)."""
    new = np.ones(len(group_of), dtype=bool)
    new[1:] = (group_of[1:] != group_of[:-1]) | (page_of[1:] != page_of[:-1])
    return np.bincount(group_of[new], minlength=groups)


def _in(layout: FooterLayout, where: Collection[str]) -> np.ndarray:
    """Per chunk of the file: whether its column is one of ``where`` (worked out
    once per file version and set of columns: half of a warm plan at 1,000 files)."""
    key = ("where_chunks", frozenset(where))
    found: np.ndarray | None = layout.memo.get(key)
    if found is None:
        mask = np.array([name in where for name in layout.columns], dtype=np.int64)
        found = layout.memo[key] = np.tile(mask, len(layout.group_rows))
    return found


def _concat(arrays: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(arrays).astype(np.int64) if arrays else np.zeros(0, dtype=np.int64)
