"""TPC-DS data and queries from DuckDB's tpcds extension, for the TPC-DS test and
bench/tpcds.py.

The extension (PyPI ``duckdb-extension-tpcds``) pairs with one DuckDB version,
which is not the project's: it lives in a venv of its own, ``.venv-tpcds/`` at
the repository's root, made on first use. A child process there generates the
data (``dsdgen``) and writes each table as Parquet under ``<folder>/<table>/``:
the fact tables sorted by their date key (the order a warehouse loads them in)
and cut into ``fact_files`` files of equal row counts, each dimension one file;
and the 99 queries (``tpcds_queries()``) under ``<folder>/queries``, handed out
in Spark's dialect by :func:`queries`.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = ROOT / ".venv-tpcds"
DUCKDB = "1.5.5"  # duckdb-extension-tpcds exists for this DuckDB, not for the project's

# Fact tables and the date key each is loaded in the order of.
FACTS = {
    "store_sales": "ss_sold_date_sk",
    "store_returns": "sr_returned_date_sk",
    "catalog_sales": "cs_sold_date_sk",
    "catalog_returns": "cr_returned_date_sk",
    "web_sales": "ws_sold_date_sk",
    "web_returns": "wr_returned_date_sk",
    "inventory": "inv_date_sk",
}

# argv: scale, folder, files per fact table, {fact table: the key it is sorted by},
# the benchmark ("tpcds" or "tpch": its extension, generator and queries).
_GENERATE = r"""
import importlib, json, sys
from pathlib import Path
import duckdb
scale, folder, parts = float(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
facts, benchmark = json.loads(sys.argv[4]), sys.argv[5]
package = importlib.import_module(f"duckdb_extension_{benchmark}")
extension = next(Path(package.__file__).parent.rglob(f"{benchmark}.duckdb_extension"))
con = duckdb.connect()
con.execute(f"LOAD '{extension}'")
con.execute(f"CALL {'dsdgen' if benchmark == 'tpcds' else 'dbgen'}(sf={scale})")
for (table,) in con.execute("SHOW TABLES").fetchall():
    out = folder / table
    out.mkdir(parents=True)
    key = facts.get(table)
    if key is None:
        con.execute(f"COPY {table} TO '{out}/part-00000.parquet' (FORMAT parquet)")
        continue
    con.execute(
        f"CREATE TEMP TABLE ordered AS SELECT *, ntile({parts}) OVER (ORDER BY {key} NULLS LAST, "
        f"rowid) - 1 AS __part FROM {table} ORDER BY {key} NULLS LAST, rowid"
    )
    for part in range(parts):
        con.execute(
            f"COPY (SELECT * EXCLUDE (__part) FROM ordered WHERE __part = {part}) "
            f"TO '{out}/part-{part:05d}.parquet' (FORMAT parquet)"
        )
    con.execute("DROP TABLE ordered")
queries = folder / "queries"
queries.mkdir()
for number, text in con.execute(f"SELECT query_nr, query FROM {benchmark}_queries()").fetchall():
    (queries / f"q{number:02d}.duckdb.sql").write_text(text)
"""


@contextlib.contextmanager
def exclusive(lock: Path) -> Iterator[None]:
    """Held by one process at a time (test workers making the same thing wait
    for the first instead of making it again beside it)."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def env_python() -> Path:
    """The helper venv's interpreter, made (with DuckDB and its tpcds and tpch
    extensions: bench/tpch.py generates TPC-H there) if new."""
    python = ENV / "bin" / "python"
    marker = ENV / f".installed-duckdb-{DUCKDB}-tpch"
    with exclusive(ROOT / ".venv-tpcds.lock"):
        if not marker.exists():
            _make_env(python, marker)
    return python


def _make_env(python: Path, marker: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", str(ENV)], check=True)
    packages = [
        f"duckdb=={DUCKDB}",
        f"duckdb-extension-tpcds=={DUCKDB}",
        f"duckdb-extension-tpch=={DUCKDB}",
    ]
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", *packages],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    marker.write_text("")


def tpcds(folder: Path, scale: float, fact_files: int) -> Path:
    """TPC-DS at ``scale`` in ``folder`` (made once: a READY marker says it is
    whole), the queries in Spark's dialect under ``folder/queries``."""
    return generate(folder, scale, fact_files, FACTS, "tpcds")


def generate(
    folder: Path, scale: float, fact_files: int, order: dict[str, str], benchmark: str
) -> Path:
    """``benchmark`` ("tpcds", "tpch") at ``scale`` in ``folder``, each table of
    ``order`` sorted by its key and cut into ``fact_files`` files, every other
    table one file, and the queries as DuckDB writes them (made once: a READY
    marker says the folder is whole)."""
    if (folder / "READY").exists():
        return folder
    started = time.perf_counter()
    if folder.exists():
        import shutil

        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    arguments = [str(scale), str(folder), str(fact_files), json.dumps(order), benchmark]
    subprocess.run(
        [str(env_python()), "-c", _GENERATE, *arguments],
        check=True,
        env={**os.environ, "PYTHONPATH": ""},
    )
    (folder / "READY").write_text(f"built in {time.perf_counter() - started:.1f} s\n")
    return folder
    started = time.perf_counter()
    if folder.exists():
        import shutil

        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    subprocess.run(
        [
            str(env_python()),
            "-c",
            _GENERATE,
            str(scale),
            str(folder),
            str(fact_files),
            json.dumps(FACTS),
        ],
        check=True,
        env={**os.environ, "PYTHONPATH": ""},
    )
    (folder / "READY").write_text(f"built in {time.perf_counter() - started:.1f} s\n")
    return folder


def queries(folder: Path, spark: object) -> dict[str, str]:
    """Query name (``q01``..``q99``) -> its text in Spark's dialect: DuckDB's text
    where Spark's own parser takes it, else sqlglot's transpile (8 of the 99:
    DuckDB-only casts and functions). Decided once, kept as ``qNN.sql``."""
    out = {}
    for source in sorted((folder / "queries").glob("q[0-9][0-9].duckdb.sql")):
        target = source.with_name(source.name.replace(".duckdb.sql", ".sql"))
        if not target.exists():
            target.write_text(_spark_text(spark, source.read_text()))
        out[target.name.removesuffix(".sql")] = target.read_text()
    return out


def _spark_text(spark: object, text: str) -> str:
    import sqlglot

    text = text.strip().rstrip(";")
    try:
        spark._jsparkSession.sessionState().sqlParser().parsePlan(text)  # type: ignore[attr-defined]
        return text
    except Exception:  # Spark's ParseException, through py4j
        return str(sqlglot.transpile(text, read="duckdb", write="spark")[0])


def register(spark: object, folder: Path, *, indexed: bool = True) -> list[str]:
    """Every table of ``folder`` as a view of that name: ``si.register`` where
    ``indexed`` (so si.sql prunes it), else a plain view of the Parquet folder."""
    import skipindex as si

    names = sorted(p.name for p in folder.iterdir() if p.is_dir() and p.name != "queries")
    for name in names:
        if indexed:
            si.register(spark, name, str(folder / name))
        else:
            path = str(folder / name).replace("`", "``")
            spark.sql(  # type: ignore[attr-defined]
                f"CREATE OR REPLACE TEMPORARY VIEW {name} AS SELECT * FROM parquet.`{path}`"
            )
    return names


# Key columns: surrogate keys, and the order and ticket numbers returns join sales on.
KEY_SUFFIXES = ("_sk", "_order_number", "_ticket_number")


def tpcds_indexes(table: Path) -> list[object]:
    """The generic indexes bench/tpcds.py builds: min-max on every key (each ``_sk``
    column, and a fact's order or ticket number, which joins sales to returns);
    bit-sliced bitmaps on a fact's date, item and customer keys and its order or ticket
    number (whose keys skip files row by row where min-max cannot: web and store
    numbers do not follow the date); on a dimension,
    equality bitmaps on strings and bit-sliced bitmaps on numbers and dates."""
    import pyarrow.parquet as pq

    import skipindex as si

    schema = pq.read_schema(next(table.glob("*.parquet")))
    fact = table.name in FACTS
    specs: list[object] = []
    for field in schema:
        name, arrow_type = field.name, field.type
        if name.endswith(KEY_SUFFIXES):
            specs.append(si.MinMax(name))
        if fact:
            if name.endswith(("_date_sk", "_item_sk", "_customer_sk", *KEY_SUFFIXES[1:])):
                specs.append(si.BitSlicedBitmap(name))
        else:
            specs.extend(dimension_indexes(name, arrow_type))
    return specs


def dimension_indexes(name: str, arrow_type: object) -> list[object]:
    """A dimension column's generic index: an equality bitmap on a string, a
    bit-sliced bitmap on a number or date, none on others."""
    import pyarrow.types as pat

    import skipindex as si

    if pat.is_string(arrow_type) or pat.is_large_string(arrow_type):
        return [si.EqualityBitmap(name)]
    if pat.is_integer(arrow_type) or pat.is_decimal(arrow_type) or pat.is_date(arrow_type):
        return [si.BitSlicedBitmap(name)]
    return []
