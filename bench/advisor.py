"""The advisor against the best hand-made configuration of this bench.

Two workloads, each on the table the bench's other sections index by hand:

* SSB flat (section 9): SF1 ``lineorder_flat``, 100 files in the generator's
  order, the 13 queries as SSB writes them. Hand-made: min-max or bit-sliced
  bitmaps on every predicate column, on the natural layout, on a Hilbert
  layout by ``lo_orderdate, s_region, c_region, p_category`` and on rows
  sorted by date (128 files each).
* TPC-H predicates (section 1): SF1 lineitem shuffled into 100 files, the nine
  predicates of bench/queries.py. Hand-made: min-max, Bloom filters, bitmaps,
  and section 6's Hilbert layout with min-max or bitmaps.

Per workload: the files read over all its queries and the index bytes of every
hand-made configuration, then ``si.advise`` (from the queries' text alone), its
plan applied (clustered into a copy if it advises a layout, the indexes built
on a hard-linked copy otherwise) and the files each query then really keeps,
beside the advisor's estimate.

    python bench/advisor.py            # both workloads, bench/ADVISE.md
    python bench/advisor.py --only ssb --plot
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import data
import layout
import queries as tpch
import skipping
import ssb
import ssb_flat
from runners import PoolRunner, ensure_index

import skipindex as si
from skipindex.advise.advise import advise
from skipindex.advise.apply import apply

HERE = Path(__file__).parent


def _files_read(table: Path, where: Mapping[str, str]) -> tuple[dict[str, int], float]:
    """Files each query keeps on ``table`` as indexed, and its index bytes."""
    kept = {name: si.prune(str(table), text, time_zone="UTC").kept for name, text in where.items()}
    return kept, float(si.describe(str(table)).index_bytes)


def _hand_made_ssb(spark: Any) -> dict[str, Path]:
    natural = ssb.lineorder_flat()
    made = {f"natural, {k}": ssb.indexed(k, natural) for k in ("minmax", "bitsliced_bitmap")}
    for name, by, curve in (
        ("clustered", None, "hilbert"),
        ("date-sorted", ["lo_orderdate"], "linear"),
    ):
        _, minmax, bitmaps = ssb_flat._clustered(spark, natural, name, by, curve)
        made[f"{name}, minmax"] = minmax
        made[f"{name}, bitsliced_bitmap"] = bitmaps
    return made


def _hand_made_tpch(spark: Any) -> dict[str, Path]:
    """Section 1's three configurations, and section 6's Hilbert layout (by
    ``l_shipdate, l_partkey, l_quantity``) with min-max and with bitmaps."""
    table, _, indexed = skipping.prepare(1, "shuffled")
    made = {f"shuffled, {config}": path for config, path in indexed.items()}
    folder = table.parent / "hilbert-3"
    if not (folder / "READY").exists():
        print(f"  clustering {table} (hilbert on {', '.join(layout.BY)})", flush=True)
        si.cluster(str(table), str(folder / "lineitem"), by=layout.BY, curve="hilbert",
                   target_file_bytes=_mean_size(table), spark=spark)  # fmt: skip
        (folder / "READY").write_text("done\n")
    for config in ("minmax", "bitmaps"):
        copy = data.index_copy(folder / "lineitem", f"idx-{config}", pattern="*.parquet")
        ensure_index(copy, tpch.specs(config), PoolRunner())
        made[f"hilbert (section 6), {config}"] = copy
    return made


def _mean_size(table: Path) -> int:
    files = data.data_files(table, "*.parquet")
    return sum(f.stat().st_size for f in files) // len(files)


def measure(name: str, table: Path, texts: dict[str, str], where: dict[str, str],
            made: dict[str, Path], spark: Any) -> dict[str, Any]:  # fmt: skip
    print(f"\n== {name}: {table}", flush=True)
    rows = []
    for config, path in made.items():
        kept, size = _files_read(path, where)
        rows.append({"config": config, "files_read": sum(kept.values()), "bytes": size})
    best = min(rows, key=lambda r: (r["files_read"], r["bytes"]))
    started = time.perf_counter()
    advice = advise(str(table), texts)
    advise_s = time.perf_counter() - started
    print(advice, flush=True)
    target = table.parent / "advised"
    if target.exists():
        shutil.rmtree(target)
    if advice.layout is None:
        target = data.index_copy(table, "advised", pattern="*.parquet")
        applied = apply(replace(advice, path=str(target)), spark=spark)
    else:
        applied = apply(advice, dst=str(target), spark=spark)
    actual, size = _files_read(Path(applied.path), where)
    estimates = {e.label: e.planned for e in advice.estimates}
    result = {
        "workload": name,
        "hand_made": rows,
        "best": best,
        "advised": {
            "layout": None if advice.layout is None else list(advice.layout),
            "indexes": [f"{c.kind} on {c.column}" for c in advice.indexes],
            "files_read": sum(actual.values()),
            "estimated": sum(estimates.values()),
            "bytes": size,
            "advise_seconds": advise_s,
            "per_query": {q: [estimates[q], actual[q]] for q in where},
        },
    }
    _print(result)
    return result


def _print(result: dict[str, Any]) -> None:
    advised, best = result["advised"], result["best"]
    print(f"\n{'configuration':<34} {'files read':>10} {'index MB':>9}")
    for row in result["hand_made"]:
        print(f"{row['config']:<34} {row['files_read']:>10} {row['bytes'] / 1e6:>9.2f}")
    print(f"{'advised':<34} {advised['files_read']:>10} {advised['bytes'] / 1e6:>9.2f}")
    ratio = advised["files_read"] / max(1, best["files_read"])
    bytes_ratio = advised["bytes"] / max(1.0, best["bytes"])
    error = advised["estimated"] / max(1, advised["files_read"]) - 1
    print(
        f"advised / best hand-made ({best['config']}): files read {ratio:.2f}x, "
        f"index bytes {bytes_ratio:.2f}x; estimate {advised['estimated']:.0f} vs "
        f"{advised['files_read']} kept ({error:+.0%}); advised in {advised['advise_seconds']:.0f} s"
    )
    print(f"{'query':<16} {'estimate':>9} {'kept':>6}")
    for query, (estimate, kept) in advised["per_query"].items():
        print(f"{query:<16} {estimate:>9.1f} {kept:>6}")


def _markdown(results: list[dict[str, Any]]) -> str:
    lines = [
        "# The advisor against hand-made configurations",
        "",
        __doc__.split("\n\n    python")[0],
        "",
    ]
    for result in results:
        advised, best = result["advised"], result["best"]
        lines += [
            f"## {result['workload']}",
            "",
            "| configuration | files read | index MB |",
            "|---|---:|---:|",
        ]
        lines += [
            f"| {r['config']} | {r['files_read']} | {r['bytes'] / 1e6:.2f} |"
            for r in result["hand_made"]
        ]
        layout = advised["layout"]
        what = "no layout" if layout is None else f"{layout[0]} by {', '.join(layout[1])}"
        lines.append(
            f"| **advised** ({what}; {', '.join(advised['indexes'])}) | "
            f"**{advised['files_read']}** | **{advised['bytes'] / 1e6:.2f}** |"
        )
        ratio = advised["files_read"] / max(1, best["files_read"])
        bytes_ratio = advised["bytes"] / max(1.0, best["bytes"])
        error = advised["estimated"] / max(1, advised["files_read"]) - 1
        lines += [
            "",
            f"Advised / best hand-made ({best['config']}): files read {ratio:.2f}x, index bytes "
            f"{bytes_ratio:.2f}x. Estimated {advised['estimated']:.0f} files read, "
            f"{advised['files_read']} kept once applied ({error:+.0%}). "
            f"Advised in {advised['advise_seconds']:.0f} s.",
            "",
            "| query | estimate | kept |",
            "|---|---:|---:|",
            *(f"| {q} | {e:.1f} | {k} |" for q, (e, k) in advised["per_query"].items()),
            "",
        ]
    return "\n".join(lines)


def _plot(results: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(results), figsize=(6 * len(results), 4), squeeze=False)
    for axis, result in zip(axes[0], results, strict=True):
        rows = [*result["hand_made"], {"config": "advised", **result["advised"]}]
        axis.barh(
            [r["config"] for r in rows],
            [r["files_read"] for r in rows],
            color=["#999"] * (len(rows) - 1) + ["#c33"],
        )
        axis.set_title(f"{result['workload']}: files read over the workload")
        axis.invert_yaxis()
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("ssb", "tpch"))
    parser.add_argument("--plot", action="store_true", help="draw bench/advise.png")
    args = parser.parse_args(argv)
    from skipindex.spark.session import local_session

    spark = local_session(2)
    results = []
    if args.only in (None, "ssb"):
        texts = {q.name: q.sql() for q in ssb.QUERIES}
        where = {q.name: q.where for q in ssb.QUERIES}
        made = _hand_made_ssb(spark)
        results.append(measure("SSB flat", ssb.lineorder_flat(), texts, where, made, spark))
    if args.only in (None, "tpch"):
        where = {q.name: q.sql for q in tpch.QUERIES}
        table = data.lineitem(1, "shuffled", skipping.FILES)
        made = _hand_made_tpch(spark)
        results.append(measure("TPC-H predicates", table, where, where, made, spark))
    out = HERE / "advise.json"  # beside ADVISE.md: bench/results/ holds run.py's sections
    out.write_text(json.dumps(results, indent=2))
    (HERE / "ADVISE.md").write_text(_markdown(results))
    if args.plot:
        _plot(results, HERE / "advise.png")
    print(f"\nresults in {out} and {HERE / 'ADVISE.md'}")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
