"""Benchmark data: TPC-H lineitem split into Parquet files, cached under bench/data/.

Every data set lives in a folder named after what it holds (scale, order, file
count) and is complete once its ``READY`` marker exists; a later run reuses it.

* ``lineitem(scale, order, files)``: ``order="natural"`` keeps tpchgen-cli's row
  order (clustered by ``l_orderkey``) and cuts it into ``files`` contiguous
  files; ``order="shuffled"`` sends each row to a uniformly random file (seeded)
  and shuffles the rows inside each file. Streaming, so SF10 fits in memory.
* ``delta_copy(table)``: the same files appended one by one to a Delta table
  (one add action, so one data file, per source file).
* ``index_copy(table, name)``: a folder of hard links to the table's files, so
  several index configurations can sit next to identical data files.
* ``small_files(count, rows)``: ``count`` small files of ``rows`` rows each.
* ``iceberg_catalog(folder)`` / ``open_catalog(properties)``: a SQLite catalog
  for the Iceberg copies the benches make.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

DATA = Path(__file__).resolve().parent / "data"
SEED = 20240601
ROW_GROUP = 1 << 17
TABLE = "lineitem"


def _ready(folder: Path) -> bool:
    return (folder / "READY").exists()


def _mark_ready(folder: Path, started: float) -> None:
    (folder / "READY").write_text(f"built in {time.perf_counter() - started:.1f} s\n")


def _scale_name(scale: float) -> str:
    return f"sf{scale:g}".replace(".", "_")


def _fresh(folder: Path) -> None:
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)


def tpch_source(scale: float) -> Path:
    """tpchgen-cli's lineitem.parquet at ``scale`` (one file, generator order)."""
    folder = DATA / f"tpch-{_scale_name(scale)}"
    target = folder / "lineitem.parquet"
    if _ready(folder):
        return target
    started = time.perf_counter()
    _fresh(folder)
    tool = shutil.which("tpchgen-cli") or str(Path(sys.executable).with_name("tpchgen-cli"))
    print(f"  generating TPC-H lineitem SF{scale:g} with tpchgen-cli", flush=True)
    subprocess.run(
        [tool, "parquet", "-s", f"{scale:g}", "--tables", "lineitem", "--output-dir", str(folder)],
        check=True,
        capture_output=True,
    )
    _mark_ready(folder, started)
    return target


def _plain_schema(schema: pa.Schema) -> pa.Schema:
    """string_view -> string, no field metadata: what Spark and Delta expect."""
    fields = []
    for field in schema:
        kind = pa.string() if pa.types.is_string_view(field.type) else field.type
        fields.append(pa.field(field.name, kind, field.nullable))
    return pa.schema(fields)


def _batches(source: Path, schema: pa.Schema) -> Iterator[pa.Table]:
    parquet = pq.ParquetFile(source)
    for group in range(parquet.num_row_groups):
        yield parquet.read_row_group(group).cast(schema)


def lineitem(scale: float, order: str, files: int, row_group: int = ROW_GROUP) -> Path:
    """The table folder of lineitem at ``scale`` in ``order``, as ``files`` files
    (row groups of ``row_group`` rows in the natural order)."""
    if order not in ("natural", "shuffled"):
        raise ValueError(f"order must be natural or shuffled, not {order!r}")
    groups = "" if row_group == ROW_GROUP else f"-rg{row_group}"
    folder = DATA / f"{_scale_name(scale)}-{order}-{files}{groups}"
    table = folder / TABLE
    if _ready(folder):
        return table
    source = tpch_source(scale)
    started = time.perf_counter()
    print(f"  writing {files} files of lineitem SF{scale:g} ({order}) to {table}", flush=True)
    _fresh(table)
    schema = _plain_schema(pq.read_schema(source))
    if order == "natural":
        _split_natural(source, schema, table, files, row_group)
    else:
        _split_shuffled(source, schema, table, files)
    _mark_ready(folder, started)
    return table


def _part(table: Path, number: int) -> Path:
    return table / f"part-{number:05d}.parquet"


def _split_natural(
    source: Path, schema: pa.Schema, table: Path, files: int, row_group: int = ROW_GROUP
) -> None:
    """Contiguous files of ``source`` in its own order."""
    total = pq.read_metadata(source).num_rows
    split_contiguous(_batches(source, schema), total, schema, table, files, row_group)


def split_contiguous(
    batches: Iterable[pa.Table],
    total: int,
    schema: pa.Schema,
    table: Path,
    files: int,
    row_group: int = ROW_GROUP,
) -> None:
    """``total`` rows arriving as ``batches``, written in that order as ``files``
    contiguous files ``part-NNNNN.parquet`` of ``table``; rows are buffered so each
    row group holds ``row_group`` rows whatever the batches are (a file's last may
    hold fewer)."""
    per_file = -(-total // files)
    number, written, pending = 0, 0, 0  # pending: rows buffered for the next row group
    buffered: list[pa.Table] = []
    writer = pq.ParquetWriter(_part(table, 0), schema)

    def flush() -> None:
        if buffered:
            writer.write_table(pa.concat_tables(buffered), row_group_size=row_group)
            buffered.clear()

    for batch in batches:
        offset = 0
        while offset < len(batch):
            take = min(per_file - written, row_group - pending, len(batch) - offset)
            buffered.append(batch.slice(offset, take))
            offset += take
            written += take
            pending += take
            if pending == row_group or written == per_file:
                flush()
                pending = 0
            if written == per_file and number + 1 < files:
                writer.close()
                number, written = number + 1, 0
                writer = pq.ParquetWriter(_part(table, number), schema)
    flush()
    writer.close()


def _split_shuffled(source: Path, schema: pa.Schema, table: Path, files: int) -> None:
    """Pass 1: each row to a random bucket file; pass 2: shuffle inside each bucket."""
    rng = np.random.default_rng(SEED)
    with tempfile.TemporaryDirectory(dir=table.parent) as scratch:
        writers = [
            pq.ParquetWriter(Path(scratch) / f"b{i:05d}.parquet", schema) for i in range(files)
        ]
        buffers: list[list[pa.Table]] = [[] for _ in range(files)]
        buffered = np.zeros(files, dtype=np.int64)
        for batch in _batches(source, schema):
            bucket = rng.integers(0, files, len(batch))
            order = np.argsort(bucket, kind="stable")
            bounds = np.searchsorted(bucket[order], np.arange(files + 1))
            ordered = batch.take(pa.array(order))
            for i in range(files):
                piece = ordered.slice(bounds[i], bounds[i + 1] - bounds[i])
                buffers[i].append(piece)
                buffered[i] += len(piece)
                if buffered[i] >= ROW_GROUP:
                    writers[i].write_table(pa.concat_tables(buffers[i]))
                    buffers[i], buffered[i] = [], 0
        for i in range(files):
            if buffers[i]:
                writers[i].write_table(pa.concat_tables(buffers[i]))
            writers[i].close()
        for i in range(files):
            rows = pq.read_table(Path(scratch) / f"b{i:05d}.parquet")
            rows = rows.take(pa.array(rng.permutation(len(rows))))
            pq.write_table(rows, _part(table, i), row_group_size=ROW_GROUP)


def data_files(table: Path, pattern: str = "part-*.parquet") -> list[Path]:
    return sorted(table.glob(pattern))


def index_copy(
    table: Path, name: str, limit: int | None = None, pattern: str = "part-*.parquet"
) -> Path:
    """``<dataset>/<name>``: hard links to ``table``'s data files (the first
    ``limit`` of them, named by ``pattern``), same size and mtime, so another
    index configuration can be built next to the same files."""
    folder = table.parent / name
    files = data_files(table, pattern)[:limit]
    listed = [f.name for f in data_files(folder, pattern)] if folder.exists() else None
    if listed == [f.name for f in files]:
        return folder
    _fresh(folder)
    for file in files:
        os.link(file, folder / file.name)
    return folder


def delta_copy(table: Path) -> Path:
    """The same files appended one by one to a Delta table (one add action each)."""
    from deltalake import write_deltalake

    folder = table.parent / "delta"
    marker = table.parent / "DELTA_READY"
    if marker.exists():
        return folder
    started = time.perf_counter()
    if folder.exists():
        shutil.rmtree(folder)
    files = data_files(table)
    print(f"  appending {len(files)} files to a Delta table at {folder}", flush=True)
    for file in files:
        write_deltalake(str(folder), pq.read_table(file), mode="append")
    marker.write_text(f"built in {time.perf_counter() - started:.1f} s\n")
    return folder


def iceberg_catalog(folder: Path, name: str = "bench") -> dict[str, str]:
    """The properties of a SQL catalog on SQLite in ``folder`` (its warehouse
    under it), as skipindex's ``catalog=`` and :func:`open_catalog` take them."""
    return {
        "name": name,
        "type": "sql",
        "uri": f"sqlite:///{folder}/catalog.db",
        "warehouse": f"file://{folder}/warehouse",
    }


def open_catalog(properties: dict[str, str]) -> Any:
    """pyiceberg's catalog of ``properties`` (its name is one of them)."""
    from pyiceberg.catalog import load_catalog

    options = dict(properties)
    return load_catalog(options.pop("name"), **options)


def small_files(count: int, rows: int = 100) -> Path:
    """``count`` files of ``rows`` lineitem rows each, a random sample of SF1 sorted
    by ``l_shipdate`` (so each file spans a few days: min-max has work to do)."""
    folder = DATA / f"small-{count}x{rows}"
    table = folder / TABLE
    if _ready(folder):
        return table
    started = time.perf_counter()
    print(f"  writing {count} small files of {rows} rows to {table}", flush=True)
    _fresh(table)
    source = pq.read_table(tpch_source(1), columns=SMALL_COLUMNS)
    source = source.cast(_plain_schema(source.schema))
    rng = np.random.default_rng(SEED)
    sample = source.take(pa.array(np.sort(rng.integers(0, len(source), count * rows))))
    sample = sample.sort_by("l_shipdate")
    for number in range(count):
        pq.write_table(sample.slice(number * rows, rows), _part(table, number))
    _mark_ready(folder, started)
    return table


def replicated(table: Path, copies: int) -> Path:
    """``copies`` hard links of every file of ``table`` under new names: as many
    full-size files as a bigger table has, without writing them again."""
    folder = DATA / f"{table.parent.name}-x{copies}"
    target = folder / TABLE
    if _ready(folder):
        return target
    started = time.perf_counter()
    _fresh(target)
    for copy in range(copies):
        for file in data_files(table):
            link = target / f"c{copy:03d}-{file.name}"
            try:
                os.link(file, link)
            except OSError:  # another file system: copy instead
                shutil.copyfile(file, link)
    _mark_ready(folder, started)
    return target


SMALL_COLUMNS = [
    "l_orderkey",
    "l_partkey",
    "l_suppkey",
    "l_quantity",
    "l_discount",
    "l_shipdate",
    "l_shipmode",
]


def column_bytes(table: Path) -> dict[str, int]:
    """Compressed bytes per column over the table's data files (from the footers)."""
    sizes: dict[str, int] = {}
    for file in data_files(table):
        metadata = pq.read_metadata(file)
        for g in range(metadata.num_row_groups):
            group = metadata.row_group(g)
            for c in range(group.num_columns):
                chunk = group.column(c)
                name = chunk.path_in_schema
                sizes[name] = sizes.get(name, 0) + chunk.total_compressed_size
    return sizes
