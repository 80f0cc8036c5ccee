"""Section 14: the Spark Connect gateway, against a direct connection.

A Spark Connect server (pyspark's plugin, local[2], its own JVM) holds the
TPC-DS SF1 tables of bench/tpcds.py (made and indexed there: run it first) as
catalog tables (``--sf10``: SF10). Three clients run the same queries with ``spark.sql`` and
collect the rows: one connected straight to the server, one through a gateway
with no tables in its policy (every call forwarded, nothing rewritten: the
overhead), one through a gateway whose policy names every table (the plans
rewritten to read the kept files). Per query: each side's better of two runs
(alternating which goes first), the ratios to direct, and the fact files the
pruning gateway kept, from its account.

    ./dev python bench/gateway.py --plot          # SF1, 20 queries: bench/GATEWAY-sf1.md
    ./dev python bench/gateway.py --min-mb 0      # SF1, every indexed query rewritten
    ./dev python bench/gateway.py --sf10          # SF10, 8 queries of a few seconds
    ./dev python bench/gateway.py --queries q03,q42
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from skipindex.gateway import ACCOUNT_JSON_KEY  # noqa: E402
from tests._support import free_port  # noqa: E402
from tests._tpcds import FACTS  # noqa: E402

DATA = {1: HERE / "data" / "tpcds-sf1-40", 10: HERE / "data" / "tpcds-sf10-400"}
QUERIES = {
    1: "q03,q07,q12,q15,q19,q20,q26,q27,q33,q37,q42,q43,q52,q55,q56,q60,q71,q82,q96,q98",
    10: "q10,q33,q35,q56,q60,q69,q71,q77",  # the SF10 set's queries of a few seconds
}
_SERVER = """
import sys, time
from pyspark.sql import SparkSession
SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false") \\
    .config("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin") \\
    .config("spark.connect.grpc.binding.port", sys.argv[1]) \\
    .config("spark.driver.memory", "4g").config("spark.sql.shuffle.partitions", "4") \\
    .config("spark.sql.session.timeZone", "UTC").getOrCreate()
print("ready", flush=True)
while True:
    time.sleep(3600)
"""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sf10", action="store_true", help="SF10 (bench/tpcds.py --sf10 first)")
    parser.add_argument("--queries", default="", help="q03,q42,... (TPC-DS names)")
    parser.add_argument(
        "--min-mb", type=float, default=None, help="the pruning gateway's floor (default 256)"
    )
    parser.add_argument("--runs", type=int, default=2, help="timed runs per side")
    parser.add_argument("--plot", action="store_true", help="draw bench/gateway.png")
    args = parser.parse_args(argv)
    scale = 10 if args.sf10 else 1
    data, names = DATA[scale], (args.queries or QUERIES[scale]).split(",")
    if not (data / "READY").exists():
        print("run bench/tpcds.py first: it makes and indexes the data", file=sys.stderr)
        return 2
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_GATEWAY")}
    server = subprocess.Popen(
        [sys.executable, "-c", _SERVER, str(port)], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        assert server.stdout.readline().strip() == "ready", "the Connect server did not start"
        rows = _run(port, data, names, args.runs, args.min_mb)
    finally:
        server.terminate()
        server.wait(timeout=60)
    floor = "default" if args.min_mb is None else f"{args.min_mb:g} MB"
    text = _render(rows, f"TPC-DS SF{scale}, the pruning gateway's floor {floor}")
    print(text)
    if not args.queries:
        suffix = f"sf{scale}" + ("" if args.min_mb is None else f"-floor{args.min_mb:g}")
        (HERE / f"GATEWAY-{suffix}.md").write_text(text)
        (HERE / f"gateway-{suffix}.json").write_text(json.dumps(rows, indent=1))
        if args.plot:
            _plot(rows, HERE / f"gateway-{suffix}.png")
    return 0


def _run(
    port: int, data: Path, names: list[str], runs: int, min_mb: float | None
) -> list[dict[str, Any]]:
    from pyspark.sql.connect.session import SparkSession

    upstream = f"sc://localhost:{port}"
    tables = {p.name: str(p) for p in data.iterdir() if p.is_dir() and p.name != "queries"}
    texts = {n: (data / "queries" / f"{n}.sql").read_text() for n in names}
    # Each gateway in a process of its own, as it is deployed (`skipindex gateway`).
    floor = [] if min_mb is None else ["--min-table-mb", str(min_mb)]
    plain = _gateway(upstream, [])
    pruning = _gateway(upstream, [f"--table={n}={p}" for n, p in tables.items()] + floor)
    sessions = {
        "direct": SparkSession.builder.remote(upstream).create(),
        "pass-through": SparkSession.builder.remote(plain[1]).create(),
        "pruning": SparkSession.builder.remote(pruning[1]).create(),
    }
    for name, folder in tables.items():
        sessions["direct"].sql(f"CREATE TABLE {name} USING parquet LOCATION '{folder}'").collect()
    out = []
    try:
        for name in names:
            before = sessions["pruning"].conf.get(ACCOUNT_JSON_KEY)
            best: dict[str, float] = {}
            for round_ in range(runs):
                order = list(sessions.items())
                for side, session in order if round_ % 2 == 0 else order[::-1]:
                    started = time.perf_counter()
                    session.sql(texts[name]).toArrow()
                    seconds = time.perf_counter() - started
                    best[side] = min(best.get(side, seconds), seconds)
            account = sessions["pruning"].conf.get(ACCOUNT_JSON_KEY)  # as any client asks
            rewritten = json.loads(account) if account != before else None
            kept, total = _fact_files(rewritten, tables)
            row = {"query": name, **best, "fact files kept": kept, "fact files": total}
            out.append(row)
            print(
                f"{name}: direct {best['direct']:.2f} s, pass-through "
                f"{best['pass-through'] / best['direct']:.2f}x, pruning "
                f"{best['pruning'] / best['direct']:.2f}x, facts {kept}/{total}",
                flush=True,
            )
    finally:
        for session in sessions.values():  # before the gateways they talk through go
            session.stop()
        for process, _ in (plain, pruning):
            process.terminate()
            process.wait(timeout=60)
    return out


def _gateway(upstream: str, extra: list[str]) -> tuple[subprocess.Popen[str], str]:
    """A ``skipindex gateway`` process on a free loopback port, and its address."""
    listen = f"127.0.0.1:{free_port()}"
    command = [sys.executable, "-m", "skipindex.cli", "gateway", "--upstream", upstream]
    process = subprocess.Popen(
        [*command, "--listen", listen, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    assert "clients connect to" in line, f"the gateway did not start: {line!r}"
    return process, line.rsplit(" ", 1)[1].strip()


def _fact_files(account: dict[str, Any] | None, tables: dict[str, str]) -> tuple[int, int]:
    """(read, listed) fact files in the pruning gateway's last plan: a reference
    not replaced reads all its files; no account: the query was sent as written
    (reported as 0 of 0)."""
    facts = {tables[f] for f in FACTS}
    if account is None:
        return 0, 0
    read = listed = 0
    for part in account["parts"]:
        for reference in part.get("references", []):
            if reference["table"] not in facts:
                continue
            total = reference["total"]
            if total is None:
                total = len(list(Path(reference["table"]).glob("*.parquet")))
            listed += total
            read += reference["kept"] if reference["replaced"] else total
    return read, listed


def _render(rows: list[dict[str, Any]], title: str) -> str:
    direct = sum(r["direct"] for r in rows)
    through = sum(r["pass-through"] for r in rows)
    pruning = sum(r["pruning"] for r in rows)
    lines = [
        f"## The Spark Connect gateway: {title} ({len(rows)} queries, better of two)",
        "",
        "| query | direct (s) | pass-through (s) | ratio | pruning gateway (s) | ratio "
        "| fact files kept |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['query']} | {r['direct']:.2f} | {r['pass-through']:.2f} | "
        f"{r['pass-through'] / r['direct']:.2f} | {r['pruning']:.2f} | "
        f"{r['pruning'] / r['direct']:.2f} | {_kept_text(r)} |"
        for r in rows
    ]
    lines += [
        "",
        f"Totals: direct {direct:.1f} s; through a gateway that rewrites nothing "
        f"{through:.1f} s (**{through / direct:.3f}x**, target <= 1.05x); through the "
        f"pruning gateway {pruning:.1f} s ({pruning / direct:.2f}x).",
    ]
    return "\n".join(lines) + "\n"


def _kept_text(row: dict[str, Any]) -> str:
    if not row["fact files"]:
        return "sent as written"
    return f"{row['fact files kept']} of {row['fact files']}"


def _plot(rows: list[dict[str, Any]], target: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r["query"] for r in rows]
    figure, axis = plt.subplots(figsize=(10, 4))
    width = 0.4
    for shift, side in ((-width / 2, "pass-through"), (width / 2, "pruning")):
        axis.bar(
            [i + shift for i in range(len(rows))],
            [r[side] / r["direct"] for r in rows],
            width,
            label=side,
        )
    axis.axhline(1.0, color="black", linewidth=0.8)
    axis.axhline(1.05, color="tab:red", linewidth=0.8, linestyle="--")
    axis.set_xticks(range(len(rows)), names, rotation=90)
    axis.set_ylabel("time / direct connection's")
    axis.legend()
    figure.tight_layout()
    figure.savefig(target, dpi=120)


if __name__ == "__main__":
    sys.exit(main())
