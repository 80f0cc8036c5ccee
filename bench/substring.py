"""Substring and array skipping on a log-like table: needles and haystacks, against the floor,
Delta's and Iceberg's own planning, and plain Spark.

The table is bench/logs.py's (200 files, about 1.1 GB: messages, URLs, user agents
from a real vocabulary, a few needles planted in a handful of rows). skipindex
indexes the three text columns with n-gram Bloom filters (``ngram_bloom``, n = 3),
the tags with an element Bloom filter and the time with min-max, as a Spark job,
timed against a Spark scan of the same columns in the same session.

Per predicate: the files holding a matching row (the floor, DuckDB over the real
rows), the files skipindex keeps, the files Delta keeps (deltalake's planner over a
Delta log of the same files, read from its physical plan) and the files Iceberg
keeps (pyiceberg's planning of a table that adds the same files; it has no
substring predicate, so such a condition is a full scan). Then, for the needles,
``si.read(...).count()`` against ``spark.read.parquet(...)``'s held DataFrame
``.where(...).count()``, alternating, best of three each.

    ./dev python bench/substring.py            # bench/SUBSTRING.md, bench/substring.json
    ./dev python bench/substring.py --plot     # and bench/substring.png
    ./dev python bench/substring.py --rebuild  # build the index again (its time is measured)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import logs  # noqa: E402
from measure import floors_of  # noqa: E402

import skipindex as si  # noqa: E402

DATA = HERE / "data" / "logs-200"
SPECS = [si.NgramBloom("message"), si.NgramBloom("url"), si.NgramBloom("user_agent"),
         si.ElementBloom("tags"), si.MinMax("ts")]  # fmt: skip
TEXT = ["message", "url", "user_agent"]
# (name, kind, predicate): written so that Spark, DuckDB and DataFusion read it alike
PREDICATES = [
    ("oom", "needle", "message LIKE '%OutOfMemoryError%'"),
    ("panic", "needle", "contains(message, 'kernel panic')"),
    ("deadlock", "needle", "message LIKE '%deadlock detected%'"),
    ("one user", "needle", "message LIKE '%user u0424242 %'"),
    ("checkout", "needle", "contains(url, '/checkout/confirm/')"),
    ("switch", "needle", "user_agent LIKE '%Nintendo Switch%'"),
    ("expired", "needle", "message LIKE '%certificate has expired%'"),
    ("pprof", "needle", "url LIKE '%/admin/debug/%'"),
    ("oom + time", "needle",
     "message LIKE '%OutOfMemoryError%' AND ts >= TIMESTAMP '2026-11-02 00:00:00'"),
    ("either", "needle",
     "contains(message, 'kernel panic') OR contains(url, '/admin/debug/')"),
    ("timeout", "haystack", "message LIKE '%timed out%'"),
    ("api", "haystack", "contains(url, '/api/')"),
    ("android", "haystack", "user_agent LIKE '%Android 14%'"),
    ("exception", "haystack", "message LIKE '%IllegalStateException%'"),
    ("common word", "haystack", "message LIKE '%return%'"),
    ("rarer word", "haystack", "message LIKE '%multiprocessing%'"),
    ("shop host", "haystack", "url LIKE 'https://shop.%'"),
    ("slow gets", "haystack", "message LIKE 'GET /api/v1/%/% 200 8__ms'"),
    ("edge 126", "haystack", "contains(user_agent, 'Edg/126')"),
    ("user and word", "haystack", "message LIKE 'user u1% %'"),
    ("no such tag", "needle", "array_contains(tags, 'zyzzyva')"),
    ("common tag", "haystack", "array_contains(tags, 'return')"),
]  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plot", action="store_true", help="draw bench/substring.png")
    parser.add_argument("--rebuild", action="store_true", help="build the index again")
    args = parser.parse_args(argv)
    from skipindex.spark.session import local_session

    table = logs.generate(DATA)
    spark = local_session(2)
    spark.sparkContext.setLogLevel("ERROR")
    build = _build(spark, table, args.rebuild)
    described = si.describe(str(table))
    index_bytes = sum(int(d["bytes"]) for d in described.indexes if d["kind"] == "ngram_bloom")
    data_bytes = sum(f.stat().st_size for f in table.glob("*.parquet"))
    wheres = [p for _, _, p in PREDICATES]
    floors = floors_of(table, wheres)
    delta, iceberg = _delta_kept(table, wheres), _iceberg_kept(table, wheres)
    rows = []
    for (name, kind, where), floor, by_delta, by_iceberg in zip(
        PREDICATES, floors, delta, iceberg, strict=True
    ):
        result = si.prune(str(table), where, time_zone="UTC")
        rows.append({"name": name, "kind": kind, "where": where, "floor": floor,
                     "skipindex": result.kept, "delta": by_delta, "iceberg": by_iceberg,
                     "files": result.total})  # fmt: skip
    for row in rows:
        if row["kind"] == "needle":
            row["si_read_s"], row["spark_s"] = _read_times(spark, table, row["where"])
    spark.stop()
    report = {"build": build, "index_bytes": index_bytes, "data_bytes": data_bytes, "rows": rows}
    (HERE / "substring.json").write_text(json.dumps(report, indent=1) + "\n")
    text = render(report)
    (HERE / "SUBSTRING.md").write_text(text)
    print(text)
    if args.plot:
        plot(report, HERE / "substring.png")
    return 0


def _build(spark: Any, table: Path, rebuild: bool) -> dict[str, float]:
    """The index built (timed) unless it exists, and a Spark scan of the text columns."""
    saved = table / "_bench_build.json"
    if rebuild or not saved.exists() or si.describe(str(table)).version is None:
        if si.describe(str(table)).version is not None:
            si.drop_index(str(table))
        started = time.perf_counter()
        si.build_index(str(table), SPECS, spark=spark)
        built = time.perf_counter() - started
        saved.write_text(json.dumps({"build_s": built}))
    scans = []
    for _ in range(2):
        frame = spark.read.parquet(str(table))
        started = time.perf_counter()
        sums = [f"sum(length({c}))" for c in TEXT]
        frame.selectExpr(*sums, "sum(size(tags))", "max(ts)").collect()
        scans.append(time.perf_counter() - started)
    return {"build_s": json.loads(saved.read_text())["build_s"], "scan_s": min(scans)}


def _delta_kept(table: Path, wheres: list[str]) -> list[int]:
    """Per predicate, the files deltalake's planner keeps over a Delta log of the same
    files (hard links in a folder of its own: a log in the table's folder would make it
    a Delta table for Spark and skipindex too)."""
    from deltalake import DeltaTable, QueryBuilder, convert_to_deltalake

    folder = table.parent / "logs-200-delta"
    if not (folder / "_delta_log").exists():
        folder.mkdir(exist_ok=True)
        for path in table.glob("*.parquet"):
            target = folder / path.name
            if not target.exists():
                os.link(path, target)
        convert_to_deltalake(str(folder))
    builder = QueryBuilder().register("t", DeltaTable(str(folder)))
    kept = []
    for where in wheres:
        plan = _plan_text(builder.execute(f"EXPLAIN SELECT count(*) FROM t WHERE {where}"))
        kept.append(len(set(re.findall(r"(part-\d+\.parquet)", plan))))
    return kept


def _plan_text(result: Any) -> str:
    import pyarrow as pa

    return "\n".join(str(v) for v in pa.table(result.read_all()).column("plan").to_pylist())


def _iceberg_kept(table: Path, wheres: list[str]) -> list[int]:
    """Per predicate, the files pyiceberg plans for a table of the same files. It has no
    substring predicate: a LIKE with a prefix is its StartsWith, anything else a scan."""
    from pyiceberg.catalog import load_catalog
    from pyiceberg.expressions import AlwaysTrue, StartsWith

    folder = table.parent / "logs-200-iceberg"
    folder.mkdir(exist_ok=True)
    catalog = load_catalog("bench", type="sql", uri=f"sqlite:///{folder}/catalog.db",
                           warehouse=f"file://{folder}")  # fmt: skip
    if ("logs",) not in catalog.list_namespaces():
        import pyarrow.parquet as pq

        catalog.create_namespace("logs")
        files = sorted(table.glob("*.parquet"))
        created = catalog.create_table("logs.events", schema=pq.read_schema(files[0]))
        created.add_files([str(f) for f in files])
    events = catalog.load_table("logs.events")
    kept = []
    for where in wheres:
        prefix = re.fullmatch(r"(\w+) LIKE '([^%_']+)%'", where)
        expression = StartsWith(prefix[1], prefix[2]) if prefix else AlwaysTrue()
        kept.append(len(list(events.scan(row_filter=expression).plan_files())))
    return kept


def _read_times(spark: Any, table: Path, where: str) -> tuple[float, float]:
    """Best of three ``si.read(...).count()`` and held ``spark.read`` ``.where().count()``,
    alternating."""
    held = spark.read.parquet(str(table))
    held.where(where).count()  # warm both: the first query compiles what both use
    si.read(spark, str(table), where).count()
    ours, theirs = [], []
    for _ in range(3):
        ours.append(_seconds(lambda: si.read(spark, str(table), where).count()))
        theirs.append(_seconds(lambda: held.where(where).count()))
    return min(ours), min(theirs)


def _seconds(action: Callable[[], Any]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def render(report: dict[str, Any]) -> str:
    rows, build = report["rows"], report["build"]
    files = rows[0]["files"]
    lines = [
        "## Substring skipping: a log-like table (200 files, n-gram Bloom filters)",
        "",
        "Made by `./dev python bench/substring.py`; see its docstring for the method.",
        "",
        "| predicate | kind | floor | skipindex | Delta | Iceberg | si.read (s) | spark.read (s) "
        "| speedup |",
        "|---|---|---|---|---|---|---|---|---|",
    ]  # fmt: skip
    for row in rows:
        timing = ["", "", ""]
        if "si_read_s" in row:
            speed = row["spark_s"] / row["si_read_s"]
            timing = [f"{row['si_read_s']:.2f}", f"{row['spark_s']:.2f}", f"{speed:.1f}x"]
        lines.append(
            f"| {row['name']}: `{row['where']}` | {row['kind']} | {row['floor']} | "
            f"{row['skipindex']} | {row['delta']} | {row['iceberg']} | {' | '.join(timing)} |"
        )
    needles = [r for r in rows if r["kind"] == "needle"]
    worst = max(r["skipindex"] / max(r["floor"], 1) for r in needles)
    over = max(r["skipindex"] - r["floor"] for r in needles)
    share = report["index_bytes"] / report["data_bytes"]
    ratio = build["build_s"] / build["scan_s"]
    lines += [
        "",
        f"Files: {files}; data {report['data_bytes'] / 2**30:.2f} GiB; n-gram index "
        f"{report['index_bytes'] / 2**20:.1f} MiB ({share:.2%} of the data). Build "
        f"{build['build_s']:.0f} s against a Spark scan of the text columns "
        f"{build['scan_s']:.1f} s ({ratio:.1f}x).",
        "",
        f"Targets: needles' files at most 1.1x the floor: {worst:.2f}x at worst "
        f"(at most {over} file(s) over) ({'met' if worst <= 1.1 else 'not met'}); index at "
        f"most 3 % of the data: {share:.2%} ({'met' if share <= 0.03 else 'not met'}); "
        f"build at most 3x a scan: {ratio:.1f}x ({'met' if ratio <= 3 else 'not met'}).",
        "",
    ]
    return "\n".join(lines)


def plot(report: dict[str, Any], target: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = report["rows"]
    names = [r["name"] for r in rows]
    fig, ax = plt.subplots(figsize=(12, 4.5))
    width = 0.2
    for at, (key, label) in enumerate(
        [("floor", "floor"), ("skipindex", "skipindex"), ("delta", "Delta"), ("iceberg", "Iceberg")]
    ):
        ax.bar([i + (at - 1.5) * width for i in range(len(rows))], [r[key] for r in rows], width,
               label=label)  # fmt: skip
    ax.set_xticks(range(len(rows)), names, rotation=60, ha="right")
    ax.set_ylabel("files read (of 200)")
    ax.set_title("Substring predicates on a log-like table: files each planner keeps")
    ax.legend()
    fig.tight_layout()
    fig.savefig(target, dpi=110)


if __name__ == "__main__":
    raise SystemExit(main())
