"""Planning at lake scale: prune latency and memory from 10^4 to 10^6 files.

Tables of many 100-row files (bench/data.py's sample of SF1 lineitem sorted by
l_shipdate; the million-file table is the 100,000 files each hard-linked ten
times under new names, its index the 100,000 files' rows copied per link, as
bench/scale.py makes them). Per table and predicate:

* ``prune()`` warm: ``si.prune(path, where)`` in a process that pruned before;
  it lists the table every time (a stat per file), as it must to see new files;
* ``Table`` warm: ``si.Table(path).prune(where)``, the listing held between
  prunes as a Spark DataFrame holds its own (refresh() lists again);
* cold: a fresh process, ``import skipindex`` + ``si.prune``, and its peak RSS;
  again with ``SKIPINDEX_CACHE_BYTES`` at 256 MiB, where payloads that do not
  fit are read and evaluated 64 MiB at a time (pruning/streamed.py).

``--refresh`` also links the million files into a scratch table with a copy of
their index, adds 10,000 new files and builds the index again (in process, no
Spark): the driver's part (listing, diff, commit) apart from indexing the new files.

Medians; the machine is shared and noisy, so the figures move by tens of percent.
``--iceberg`` also plans the 10^4 and 10^5 tables' files as pyiceberg does for
an Iceberg table that registers them (bench/iceberg_planning.py). ``--delta``
also prunes the million files as a Delta table, listed by its log instead of a
stat per file (bench/delta_log.py); ``--only-delta`` measures that alone and
keeps the other figures of the last run. Not measured here yet: 10^7 files
(synthesised index).

    ./dev python bench/lake_scale.py            # bench/LAKE_SCALE.md, bench/lake_scale.json
    ./dev python bench/lake_scale.py --plot     # and bench/lake_scale.png
    ./dev python bench/lake_scale.py --refresh  # and a refresh of 10,000 new files
    ./dev python bench/lake_scale.py --iceberg  # and pyiceberg's planning, same files
    ./dev python bench/lake_scale.py --delta    # and the million files as a Delta table
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import data  # noqa: E402
import delta_log  # noqa: E402
import iceberg_planning  # noqa: E402
import scale  # noqa: E402
from measure import mb, median, ms, secs  # noqa: E402
from runners import ReplicaRunner, ensure_index  # noqa: E402

import skipindex as si  # noqa: E402

SELECTIVE = "l_shipdate BETWEEN DATE '1995-06-01' AND DATE '1995-06-03'"
PREDICATES = {
    "min-max": SELECTIVE,
    "min-max + equality bitmap": f"{SELECTIVE} AND l_shipmode = 'AIR'",
    "Bloom": "l_partkey = 4242",
    "3-condition bitmaps": "l_shipmode = 'AIR' AND l_quantity = 1 AND l_discount = 0.00",
}
# The million-file table has no Bloom filter (scale._million_specs).
MILLION_PREDICATES = ("min-max", "min-max + equality bitmap", "3-condition bitmaps")
# A measurement whose first run takes longer than this is repeated once, not five times.
SLOW = 5.0

SMALL_CACHE = 256 * 1024 * 1024

COLD = """
import json, sys, time
started = time.perf_counter()
import skipindex as si
result = si.prune(sys.argv[1], sys.argv[2])
done = time.perf_counter()
with open("/proc/self/status") as f:
    hwm = next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmHWM"))
print(json.dumps({"seconds": done - started, "hwm": hwm, "kept": result.kept}))
"""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plot", action="store_true", help="draw bench/lake_scale.png")
    parser.add_argument("--runs", type=int, default=5, help="warm prunes per measurement")
    parser.add_argument("--refresh", action="store_true", help="time a refresh at 1M files")
    parser.add_argument(
        "--iceberg", action="store_true", help="and pyiceberg's planning of the same files"
    )
    parser.add_argument("--delta", action="store_true", help="and the 1M files as a Delta table")
    parser.add_argument(
        "--only-delta", action="store_true", help="the Delta table alone; keep the rest"
    )
    args = parser.parse_args(argv)
    if args.only_delta:
        report = json.loads((HERE / "lake_scale.json").read_text())
        report["delta"] = _delta(_tables()[-1][1], args.runs)
        return _write(report, args.plot)
    rows = []
    tables = _tables()
    iceberg_of = {
        count: iceberg_planning.iceberg_table(table)
        for count, table in tables
        if args.iceberg and count <= 100_000
    }
    for count, table in tables:
        names = MILLION_PREDICATES if count >= 1_000_000 else tuple(PREDICATES)
        started = time.perf_counter()
        held = si.Table(str(table))
        opened = time.perf_counter() - started
        for name in names:
            where = PREDICATES[name]
            result = held.prune(where)
            plain = si.prune(str(table), where)
            assert plain.files == result.files, f"{name}: a held table answered otherwise"
            row = {
                "files": count,
                "predicate": name,
                "kept": result.kept,
                "open_s": opened,
                "table_warm_s": median(_times(partial(held.prune, where), args.runs)),
                "prune_warm_s": median(_times(partial(si.prune, str(table), where), 3)),
            }
            for key, env in (("cold", {}), ("small", {"SKIPINDEX_CACHE_BYTES": str(SMALL_CACHE)})):
                colds = [_cold(table, where, env)]
                if colds[0]["seconds"] <= SLOW:
                    colds += [_cold(table, where, env) for _ in range(2)]
                row[f"{key}_s"] = median([c["seconds"] for c in colds])
                row[f"{key}_hwm"] = int(median([c["hwm"] for c in colds]))
            if args.iceberg and count <= 100_000:
                row["iceberg"] = iceberg_planning.plan(iceberg_of[count], name, args.runs)
            rows.append(row)
            print(_line(row), flush=True)
    report: dict[str, Any] = {"rows": rows}
    if args.refresh:
        report["refresh"] = _refresh(tables[-1][1], tables[-2][1])
    if args.delta:
        report["delta"] = _delta(tables[-1][1], args.runs)
    return _write(report, args.plot)


def _write(report: dict[str, Any], draw: bool) -> int:
    (HERE / "lake_scale.json").write_text(json.dumps(report, indent=1) + "\n")
    text = render(report)
    (HERE / "LAKE_SCALE.md").write_text(text)
    print(text)
    if draw:
        plot(report, HERE / "lake_scale.png")
    return 0


def _delta(million: Path, runs: int) -> list[dict[str, Any]]:
    """The million files as a Delta table: listed by its log (checkpointed)."""
    table = delta_log.delta_copy(million)
    out = []
    for name in ("min-max", "min-max + equality bitmap"):
        where = PREDICATES[name]
        started = time.perf_counter()
        held = si.Table(str(table))  # reads the log: the listing a folder stats for
        opened = time.perf_counter() - started
        result = held.prune(where)
        plain = si.prune(str(million), where)
        assert [Path(f).name for f in result.files] == [Path(f).name for f in plain.files], name
        colds = [_cold(table, where, {}) for _ in range(3)]
        row = {
            "files": len(held),
            "predicate": name,
            "kept": result.kept,
            "open_s": opened,
            "table_warm_s": median(_times(partial(held.prune, where), runs)),
            "prune_warm_s": median(_times(partial(si.prune, str(table), where), 3)),
            "cold_s": median([c["seconds"] for c in colds]),
            "cold_hwm": int(median([c["hwm"] for c in colds])),
        }
        print(f"Delta: {row}", flush=True)
        out.append(row)
    return out


def _tables() -> list[tuple[int, Path]]:
    out = []
    for count in (10_000, 100_000):
        table = data.small_files(count)
        ensure_index(table, scale.specs())
        out.append((count, table))
    million = data.replicated(out[-1][1], 10)
    ensure_index(million, scale._million_specs(), ReplicaRunner(out[-1][1]))
    out.append((1_000_000, million))
    return out


def _refresh(million: Path, base: Path, new_files: int = 10_000) -> dict[str, float]:
    """Index ``new_files`` files added to a copy of the million-file table."""
    import shutil

    from skipindex.indexing.build import InProcessRunner, build_with

    target = data.DATA / "lake-refresh" / "lineitem"
    shutil.rmtree(target.parent, ignore_errors=True)
    target.mkdir(parents=True)
    for name in os.listdir(million):
        if not name.startswith("_"):
            os.link(million / name, target / name)
    shutil.copytree(million / "_skipindex", target / "_skipindex")
    for name in sorted(n for n in os.listdir(base) if not n.startswith("_"))[:new_files]:
        os.link(base / name, target / f"new-{name}")
    runner = InProcessRunner()
    index_files, spent = runner.run, [0.0]

    def timed_run(*args: Any) -> Any:
        started = time.perf_counter()
        try:
            return index_files(*args)
        finally:
            spent[0] += time.perf_counter() - started

    runner.run = timed_run  # type: ignore[method-assign]
    started = time.perf_counter()
    build_with(str(target), scale._million_specs(), runner)
    total = time.perf_counter() - started
    shutil.rmtree(target.parent, ignore_errors=True)
    print(f"refresh: {secs(total)} s, indexing the new files {secs(spent[0])} s", flush=True)
    return {"files": 1_000_000, "new": new_files, "total_s": total, "indexing_s": spent[0]}


def _times(action: Callable[[], Any], runs: int) -> list[float]:
    started = time.perf_counter()
    action()  # warm-up
    if time.perf_counter() - started > SLOW:
        runs = 1
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return times


def _cold(table: Path, where: str, env: dict[str, str]) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", COLD, str(table), where],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **env},
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _line(row: dict[str, Any]) -> str:
    return (
        f"{row['files']:>9,} {row['predicate']:<28} kept {row['kept']:>9,}  "
        f"Table {ms(row['table_warm_s'])} ms  prune() {ms(row['prune_warm_s'])} ms  "
        f"cold {secs(row['cold_s'])} s  peak {mb(row['cold_hwm'])}  "
        f"(256 MiB cache: {secs(row['small_s'])} s, {mb(row['small_hwm'])})"
    )


def render(report: dict[str, Any]) -> str:
    lines = [
        "# Planning at lake scale",
        "",
        "`./dev python bench/lake_scale.py` (see its docstring for what each column is).",
        "",
        "| files | predicate | kept | Table warm ms | prune() warm ms (lists) | "
        "Table open s (lists) | cold s (import + prune) | peak RSS (cold) | "
        "cold s, 256 MiB cache | peak RSS, 256 MiB cache |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines.extend(
        f"| {row['files']:,} | {row['predicate']} | {row['kept']:,} | "
        f"{ms(row['table_warm_s'])} | {ms(row['prune_warm_s'])} | {secs(row['open_s'])} | "
        f"{secs(row['cold_s'])} | {mb(row['cold_hwm'])} | {secs(row['small_s'])} | "
        f"{mb(row['small_hwm'])} |"
        for row in report["rows"]
    )
    lines += ["", *(f"- {name}: `{where}`" for name, where in PREDICATES.items()), ""]
    peers = [row for row in report["rows"] if "iceberg" in row]
    if peers:
        lines += [
            "Iceberg-style planning of the same files by pyiceberg (`--iceberg`; "
            "bench/iceberg_planning.py): `plan_files()` over an Iceberg table that "
            "registers them, pruning by the manifests' column metrics.",
            "",
            "| files | predicate | kept: skipindex | kept: pyiceberg | warm ms: Table | "
            "warm ms: pyiceberg | cold s: skipindex | cold s: pyiceberg | "
            "peak RSS: skipindex | peak RSS: pyiceberg |",
            "|---|---|---|---|---|---|---|---|---|---|",
            *(
                f"| {row['files']:,} | {row['predicate']} | {row['kept']:,} | "
                f"{row['iceberg']['kept']:,} | {ms(row['table_warm_s'])} | "
                f"{ms(row['iceberg']['warm_s'])} | {secs(row['cold_s'])} | "
                f"{secs(row['iceberg']['cold_s'])} | {mb(row['cold_hwm'])} | "
                f"{mb(row['iceberg']['cold_hwm'])} |"
                for row in peers
            ),
            "",
        ]
    delta = report.get("delta")
    if delta:
        lines += [
            "The million files as a Delta table (`--delta`; bench/delta_log.py): listed by its "
            "log (one commit, checkpointed) instead of a stat per file. `prune()` warm reads "
            "the log's folder only: the listing is kept per log version.",
            "",
            "| files | predicate | kept | Table warm ms | prune() warm ms | "
            "Table open s (reads the log) | cold s (import + prune) | peak RSS (cold) |",
            "|---|---|---|---|---|---|---|---|",
            *(
                f"| {row['files']:,} | {row['predicate']} | {row['kept']:,} | "
                f"{ms(row['table_warm_s'])} | {ms(row['prune_warm_s'])} | "
                f"{secs(row['open_s'])} | {secs(row['cold_s'])} | {mb(row['cold_hwm'])} |"
                for row in delta
            ),
            "",
        ]
    refresh = report.get("refresh")
    if refresh:
        lines += [
            f"Refresh: {refresh['new']:,} new files added to the {refresh['files']:,}-file "
            f"table, indexed in process: {secs(refresh['total_s'])} s in all, of which "
            f"{secs(refresh['indexing_s'])} s indexing the new files and "
            f"{secs(refresh['total_s'] - refresh['indexing_s'])} s the rest (listing a million "
            "files, the diff against the index, writing the new segment, the commit).",
            "",
        ]
    return "\n".join(lines)


def plot(report: dict[str, Any], target: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.8))
    for name in PREDICATES:
        rows = [r for r in report["rows"] if r["predicate"] == name]
        if not rows:
            continue
        files = [r["files"] for r in rows]
        ax.plot(files, [r["table_warm_s"] * 1000 for r in rows], "o-", label=f"Table: {name}")
        ax.plot(files, [r["prune_warm_s"] * 1000 for r in rows], "x--", label=f"prune(): {name}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("files in the table")
    ax.set_ylabel("warm prune, ms")
    ax.set_title("Prune latency by table size: listing held (Table) or listed per call")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(target, dpi=110)


if __name__ == "__main__":
    raise SystemExit(main())
