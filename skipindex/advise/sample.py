"""Small tables that stand for the real one, written where the advisor can index them.

* :func:`file_sample`: some of the table's own files, unchanged (links to them
  in a scratch folder, with their paths below the root): indexes built there
  are what the table's indexes would hold for those files, so the share of
  them a query keeps estimates the share of the table it keeps.
* :func:`laid_out`: some of the files ``cluster`` would write, whole: the
  boundaries fitted on a row sample (:func:`row_sample`) as ``cluster`` fits
  them (:mod:`skipindex.layout.keys`), every row of the table given its output
  file, and the rows of every k-th output file kept. So a layout is judged on
  files as full as the real ones, before any file of the table is rewritten.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from skipindex.errors import InvalidSpecError
from skipindex.layout.keys import PATH, fit
from skipindex.spark.view import without_views
from skipindex.store.location import DataFile, TableLocation

__all__ = ["SampleTable", "distinct_share", "file_sample", "laid_out", "row_sample"]


@dataclass(frozen=True)
class SampleTable:
    """A scratch table standing for ``files`` files of the real table."""

    path: str
    files: int  # data files in the sample
    stands_for: int  # files of the real table it stands for
    rows_per_file: float  # mean rows per sampled file
    layout: str  # "as is", "linear by a", "hilbert by a, b"


def _chosen(count: int, wanted: int, seed: int) -> np.ndarray[Any, Any]:
    """``wanted`` of ``count`` positions, spread over the listing (every k-th,
    from a random start): a table laid out in time keeps every period."""
    if wanted >= count:
        return np.arange(count)
    start = np.random.default_rng(seed).integers(0, count)
    return np.sort((start + (np.arange(wanted) * count) // wanted) % count)


def file_sample(
    location: TableLocation, files: Sequence[DataFile], folder: str, max_files: int, seed: int
) -> SampleTable:
    """Up to ``max_files`` of the table's ``files``, linked into ``folder``."""
    if location.fs.type_name != "local":
        raise InvalidSpecError(
            f"{location.user_root}: the advisor samples tables on a local file system only"
        )
    picked = [files[i] for i in _chosen(len(files), max_files, seed)]
    for data in picked:
        target = os.path.join(folder, data.path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.symlink(f"{location.root}/{data.path}", target)
    mean = float(np.mean([_rows(location, f) for f in picked])) if picked else 0.0
    return SampleTable(folder, len(picked), len(files), mean, "as is")


def _rows(location: TableLocation, data: DataFile) -> int:
    with location.fs.open_input_file(f"{location.root}/{data.path}") as handle:
        return int(pq.read_metadata(handle).num_rows)


def row_sample(
    location: TableLocation,
    files: Sequence[DataFile],
    columns: Sequence[str],
    rows: int,
    max_files: int,
    seed: int,
) -> pa.Table:
    """About ``rows`` rows of ``columns`` from up to ``max_files`` of ``files``."""
    picked = _chosen(len(files), max_files, seed)
    held = sum(_rows(location, files[number]) for number in picked)  # footers of these only
    share = min(1.0, rows / max(1, held))
    generator = np.random.default_rng(seed)
    parts = []
    for number in picked:
        with location.fs.open_input_file(f"{location.root}/{files[number].path}") as handle:
            table = without_views(pq.read_table(handle, columns=list(columns)))
        keep = generator.random(table.num_rows) < share
        table = table.filter(pa.array(keep))
        parts.append(table)
    return pa.concat_tables(parts, promote_options="permissive")


def laid_out(
    location: TableLocation,
    files: Sequence[DataFile],
    fitted_on: pa.Table,
    folder: str,
    columns: Sequence[str],
    by: Sequence[str],
    curve: str,
    outputs: int,
    max_files: int,
    seed: int,
) -> SampleTable:
    """Some of the ``outputs`` files that clustering the table by ``by`` on
    ``curve`` would write, each whole (``columns`` only): boundaries and splits
    fitted on the row sample ``fitted_on`` as ``cluster`` fits them, then every
    row of the table placed, and the rows of every k-th output file kept."""
    marked = fitted_on.append_column(PATH, pa.array(["sample.parquet"] * fitted_on.num_rows))
    model = fit(marked, by, curve, {"sample.parquet": 0}, [outputs], [0] * outputs)
    wanted = _chosen(outputs, max_files, seed)
    parts, places = [], []
    for number, data in enumerate(files):
        with location.fs.open_input_file(f"{location.root}/{data.path}") as handle:
            table = without_views(pq.read_table(handle, columns=list(columns)))
        keys = model.keys([table.column(c) for c in by], table.num_rows)
        output = model.outputs(np.zeros(table.num_rows, dtype=np.int64), keys, seed=number)
        mine = np.isin(output, wanted)
        parts.append(table.filter(pa.array(mine)))
        places.append(output[mine])
    rows = pa.concat_tables(parts, promote_options="permissive")
    place = np.concatenate(places) if places else np.empty(0, np.int64)
    os.makedirs(folder, exist_ok=True)
    order = np.argsort(place, kind="stable")
    rows, place = rows.take(pa.array(order)), place[order]
    cuts = np.flatnonzero(np.diff(place)) + 1
    starts = np.concatenate([[0], cuts]).astype(np.int64)
    ends = np.concatenate([cuts, [len(place)]]).astype(np.int64)
    for number, (start, end) in enumerate(zip(starts, ends, strict=True)):
        piece = rows.slice(int(start), int(end - start))
        pq.write_table(piece, os.path.join(folder, f"part-{number:05d}.parquet"))
    written = len(starts) if rows.num_rows else 0
    mean = rows.num_rows / written if written else 0.0
    # Output files no row went to are files the cluster does not write either.
    return SampleTable(
        folder, written, outputs, mean, f"{curve} by {', '.join(by)} into {outputs} files"
    )


def distinct_share(sample: pa.Table, column: str) -> float:
    """Distinct values per row in the sample (1.0: a key)."""
    values = sample.column(column)
    return len(pc.unique(values)) / max(1, len(values))
