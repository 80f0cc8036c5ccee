"""``column_spread``: the median file's share of a column's range, kept per index
version (si.sql asks it for every join column), and measured again once the
index is rebuilt."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import skipindex as si
from skipindex.indexing.build import InProcessRunner, build_with
from skipindex.pruning.spread import column_spread
from skipindex.store.location import locate


def _write(folder: Path, clustered: bool) -> None:
    for f in range(4):
        values = range(f * 100, f * 100 + 100) if clustered else range(f, 400, 4)
        pq.write_table(pa.table({"x": pa.array(values, pa.int64())}), folder / f"{f}.parquet")


def test_a_rebuilt_index_is_measured_again(tmp_path: Path) -> None:
    _write(tmp_path, clustered=True)
    build_with(str(tmp_path), [si.MinMax("x")], InProcessRunner())
    sorted_spread = column_spread(locate(str(tmp_path)), "X")  # names match as Spark's do
    assert sorted_spread is not None
    assert sorted_spread < 0.3
    assert column_spread(locate(str(tmp_path)), "x") == sorted_spread
    _write(tmp_path, clustered=False)  # the same files, every value range in each
    si.drop_index(str(tmp_path), all=True)
    build_with(str(tmp_path), [si.MinMax("x")], InProcessRunner())
    spread = column_spread(locate(str(tmp_path)), "x")
    assert spread is not None
    assert spread > 0.9
    assert column_spread(locate(str(tmp_path)), "y") is None  # no min-max on it
