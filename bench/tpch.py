"""TPC-H's 22 queries through ``si.sql``, against plain Spark at its best.

DuckDB's tpch extension (in the helper venv tests/_tpcds.py makes: the extension
pairs with one DuckDB version) generates the data (``dbgen``) and the 22 queries.
lineitem and orders are cut into 48 files each, in one of two layouts:

* ``dates``: lineitem sorted by ``l_shipdate``, orders by ``o_orderdate`` (the
  order a warehouse loads them in; date filters skip files);
* ``keys``: both sorted by the order key (dbgen's own order: little to skip).

Every other table is one file. Indexes are generic, no query in mind: min-max on
every key and date column; on the two facts, bit-sliced bitmaps on their dates
and keys; on the other tables, equality bitmaps on strings and bit-sliced
bitmaps on numbers and dates. Every table is a view ``si.register`` made (a
DataFrame's, holding its listing and schema), so ``spark.sql(q)`` is plain Spark
at its best and ``si.sql(spark, q)`` the same query pruned, in one local[2]
session, warm, each side's better of at least three runs (more for a short
query: bench/tpcds.py's ``rounds_for``), alternating which goes first.

    ./dev python bench/tpch.py                     # SF1, dates layout
    ./dev python bench/tpch.py --layout keys       # key order
    ./dev python bench/tpch.py --queries q03,q05   # some queries
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from tpcds import QueryRun, _collect_garbage, render, run_query, summary  # noqa: E402

import skipindex as si  # noqa: E402
from skipindex.spark.session import local_session  # noqa: E402
from tests._tpcds import dimension_indexes, exclusive, generate  # noqa: E402

DATA = HERE / "data"
FACTS = {"lineitem": {"dates": "l_shipdate", "keys": "l_orderkey"},
         "orders": {"dates": "o_orderdate", "keys": "o_orderkey"}}  # fmt: skip
TARGETS = {"dates": 0.8, "keys": 1.02}  # total time, si.sql / spark.sql


def tpch(scale: float, files: int, layout: str) -> Path:
    """TPC-H at ``scale``, its facts in ``files`` files laid out by ``layout``
    (made once: a READY marker says it is whole)."""
    folder = DATA / f"tpch-sf{scale:g}-{files}-{layout}".replace(".", "_")
    order = {table: keys[layout] for table, keys in FACTS.items()}
    with exclusive(DATA / ".tpch.lock"):
        return generate(folder, scale, files, order, "tpch")


def indexes(table: Path) -> list[Any]:
    """The generic indexes (see the module's docstring)."""
    import pyarrow.parquet as pq

    schema = pq.read_schema(next(table.glob("*.parquet")))
    fact = table.name in FACTS
    specs: list[Any] = []
    for field in schema:
        name, arrow_type = field.name, field.type
        keyed = name.endswith(("key", "date"))
        if keyed:
            specs.append(si.MinMax(name))
        if fact:
            if keyed:
                specs.append(si.BitSlicedBitmap(name))
        else:
            specs.extend(dimension_indexes(name, arrow_type))
    return specs


def queries(folder: Path, spark: Any) -> dict[str, str]:
    """Query name -> its text in Spark's dialect (DuckDB's where Spark parses it,
    else sqlglot's transpile), decided once and kept as ``qNN.sql``."""
    from tests._tpcds import queries as spark_queries

    return spark_queries(folder, spark)


def write_report(
    results: list[QueryRun], scale: float, files: int, layout: str, save: bool
) -> None:
    """The table and the target, printed (and, for the whole run, kept in bench/)."""
    totals = summary(results)
    title = (
        f"TPC-H SF{scale:g}, lineitem and orders in {files} files by "
        f"{'their dates' if layout == 'dates' else 'order key'} ({len(results)} queries)"
    )
    target = TARGETS[layout]
    text = render(results, totals, title).split("\n| target |")[0].rstrip() + "\n"
    text += (
        f"\nTarget: total time, si.sql / spark.sql <= {target} and no query below 0.95x: "
        f"{totals['total']:.2f}, slowest {totals['worst']:.2f}x "
        f"({'met' if totals['total'] <= target and totals['worst'] >= 0.95 else 'not met'}).\n"
    )
    print(text)
    if save:
        stem = f"tpch-sf{scale:g}-{layout}".replace(".", "_")
        (HERE / f"{stem.upper()}.md").write_text(text)
        (HERE / f"{stem}.json").write_text(
            json.dumps({"totals": totals, "queries": [asdict(r) for r in results]}, indent=1)
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layout", choices=("dates", "keys"), default="dates")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--files", type=int, default=48, help="files per fact table")
    parser.add_argument("--queries", default="", help="q01,q03,... (default: all 22)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per side, at least")
    parser.add_argument("--budget", type=float, default=6.0, help="see bench/tpcds.py")
    parser.add_argument("--render", action="store_true", help="only render the saved run again")
    args = parser.parse_args(argv)
    if args.render:
        stem = f"tpch-sf{args.scale:g}-{args.layout}".replace(".", "_")
        saved = json.loads((HERE / f"{stem}.json").read_text())["queries"]
        runs = [QueryRun(**q) for q in saved]
        write_report(runs, args.scale, args.files, args.layout, save=True)
        return 0
    folder = tpch(args.scale, args.files, args.layout)
    spark = local_session(cores=2, app_name="skipindex-bench-tpch")
    names = sorted(p.name for p in folder.iterdir() if p.is_dir() and p.name != "queries")
    for name in names:
        si.build_index(str(folder / name), indexes(folder / name), spark=spark)
        si.register(spark, name, str(folder / name))
    texts = queries(folder, spark)
    wanted = [q for q in args.queries.split(",") if q] or sorted(texts)
    results = []
    for name in wanted:
        _collect_garbage(spark)
        result = run_query(spark, name, texts[name], args.runs, args.budget, facts=FACTS)
        results.append(result)
        print(result.line(), flush=True)
    write_report(results, args.scale, args.files, args.layout, save=not args.queries)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
