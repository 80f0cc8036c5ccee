"""Section 5: prune latency and memory as the number of files grows.

Tables of many ~100-row files (a sample of SF1 lineitem sorted by l_shipdate),
indexed with min-max, Bloom and bitmaps. Warm: repeated ``prune()`` in this
process. Cold: a fresh Python process timing ``import skipindex`` plus its first
``prune()`` and reading its memory from ``/proc/self/status`` (VmRSS after the
import, VmHWM after the prune). The OS page cache is warm in both.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import data
from measure import Config, Section, Table, Target, floors_of, mb, median, ms, repeat, secs
from queries import BY_NAME, QUERIES
from runners import ReplicaRunner, ensure_index

import skipindex as si

PREDICATES = {
    "min-max": "l_shipdate BETWEEN DATE '1995-06-01' AND DATE '1995-06-03'",
    "Bloom": "l_partkey = 4242",
    "3-condition bitmaps": "l_shipmode = 'AIR' AND l_quantity = 1 AND l_discount = 0.00",
}
COLUMNS = {
    "min-max": {"l_shipdate"},
    "Bloom": {"l_partkey"},
    "3-condition bitmaps": {"l_shipmode", "l_quantity", "l_discount"},
}
# (files, limit): the 3-condition target is at 100k files (full mode only).
WARM_LIMIT = {"min-max": (10000, 0.1), "Bloom": (10000, 0.1), "3-condition bitmaps": (100000, 1.0)}
COLD_LIMIT = 3.0
TARGET_FILES = 10000

COLD = """
import json, sys, time
started = time.perf_counter()
import skipindex as si
imported = time.perf_counter()
def status():
    with open("/proc/self/status") as f:
        return {k: int(v.split()[0]) * 1024 for k, v in (l.split(":", 1) for l in f)
                if k in ("VmRSS", "VmHWM")}
before = status()
result = si.prune(sys.argv[1], sys.argv[2])
done = time.perf_counter()
after = status()
print(json.dumps({"import": imported - started, "prune": done - imported,
                  "rss": before["VmRSS"], "hwm": after["VmHWM"], "kept": result.kept}))
"""


def specs() -> list[Any]:
    return [
        si.MinMax("l_shipdate"),
        si.Bloom("l_partkey", fpp=0.01),
        si.EqualityBitmap("l_shipmode"),
        si.BitSlicedBitmap("l_quantity"),
        si.BitSlicedBitmap("l_discount"),
    ]


def _uncached(table: Path, where: str) -> Any:
    """A warm process, but the segment columns read and decoded again (caches cleared)."""
    try:
        from skipindex.store.cache import batch_cache, segment_cache
    except ImportError:  # a skipindex without the caches
        pass
    else:
        segment_cache.clear()
        batch_cache.clear()  # decoded bitmaps too
    return si.prune(str(table), where)


def cold(table: Path, where: str) -> dict[str, Any]:
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", COLD, str(table), where],
        capture_output=True,
        text=True,
        check=True,
    )
    answer = dict(json.loads(out.stdout.strip().splitlines()[-1]))
    answer["wall"] = time.perf_counter() - started
    return answer


def run(config: Config) -> Section:
    section = Section(
        key="scale",
        title="5. Prune at scale",
        intro=(
            "Tables of N files of 100 rows (an SF1 sample sorted by l_shipdate), indexed with "
            "min-max on l_shipdate, Bloom on l_partkey, an equality bitmap on l_shipmode and "
            "bit-sliced bitmaps on l_quantity and l_discount (built with skipindex's task code "
            "in a 2-process pool). Warm: median of "
            f"{config.runs} `prune()` calls in one process after a warm-up call (repeated calls "
            "reuse skipindex's in-process cache of segment columns; the next column clears it "
            "before each call, so segments are read again). Targets use the first. Cold: median "
            f"of {config.runs} fresh processes, `import skipindex` + first `prune()` (process "
            "wall time in brackets, with interpreter start-up). Memory, from the cold process: "
            "RSS after the import, and peak RSS (VmHWM) after the prune minus that. Index "
            "bytes needed: compressed segment bytes of the indexes on the predicate's columns."
        ),
    )
    rows = []
    plot: dict[str, Any] = {"files": list(config.scale_counts), **{p: [] for p in PREDICATES}}
    warm_at: dict[str, float] = {}
    cold_at: dict[str, float] = {}
    memory: list[tuple[int, str, int, int]] = []
    for count in config.scale_counts:
        table = data.small_files(count)
        started = time.perf_counter()
        if ensure_index(table, specs()):
            print(f"  indexed {count} files in {time.perf_counter() - started:.1f} s")
        description = si.describe(str(table))
        for name, where in PREDICATES.items():
            needed = sum(
                int(d["bytes"]) for d in description.indexes if d["column"] in COLUMNS[name]
            )
            result = si.prune(str(table), where)
            warm = median(repeat(partial(si.prune, str(table), where), config.runs))
            uncached = median(repeat(partial(_uncached, table, where), config.runs))
            colds = [cold(table, where) for _ in range(config.runs)]
            cold_s = median([c["import"] + c["prune"] for c in colds])
            wall = median([c["wall"] for c in colds])
            growth = int(median([max(c["hwm"] - c["rss"], 0) for c in colds]))
            rss = int(median([c["rss"] for c in colds]))
            rows.append(
                [
                    f"{count:,}",
                    name,
                    f"{result.kept:,}",
                    mb(needed),
                    ms(warm),
                    ms(uncached),
                    f"{secs(cold_s)} s ({secs(wall)} s)",
                    mb(rss),
                    mb(growth),
                ]
            )
            plot[name].append(warm)
            memory.append((count, name, needed, growth))
            if count == WARM_LIMIT[name][0]:
                warm_at[name] = warm
            if count == TARGET_FILES:
                cold_at[name] = cold_s
    section.tables.append(
        Table(
            "prune latency and memory by number of files",
            [
                "files",
                "predicate",
                "kept",
                "index bytes needed",
                "warm ms",
                "warm ms, segment cache cleared",
                "cold s (process)",
                "RSS after import",
                "peak RSS growth",
            ],
            rows,
            notes=[f"predicates: {', '.join(f'{k}: `{v}`' for k, v in PREDICATES.items())}"],
        )
    )
    section.plot = plot
    for name in PREDICATES:
        files, limit = WARM_LIMIT[name]
        value = warm_at.get(name)
        section.targets.append(
            Target(
                f"scale-warm-{name}",
                f"warm prune over {files // 1000}k files <= {ms(limit)} ms ({name})",
                f"{ms(value)} ms" if value is not None else "not measured",
                None if value is None else value <= limit,
            )
        )
    worst = max(cold_at.values()) if cold_at else None
    section.targets.append(
        Target(
            "scale-cold",
            "cold prune (fresh process: import + first prune) over 10k files <= 3 s",
            f"{secs(worst)} s (slowest predicate)" if worst is not None else "not measured",
            None if worst is None else worst <= COLD_LIMIT,
        )
    )
    section.targets.append(_memory_target(memory))
    _large_files(config, section)
    _correlated(config, section)
    if config.million_files:
        _million_files(config, section)
    return section


MILLION = {
    "min-max": PREDICATES["min-max"],
    "min-max + equality bitmap": f"{PREDICATES['min-max']} AND l_shipmode = 'AIR'",
}
MILLION_LIMIT = 5.0
MILLION_MEMORY = 2 * 1024**3


def _million_specs() -> list[Any]:
    return [
        si.MinMax("l_shipdate"),
        si.EqualityBitmap("l_shipmode"),
        si.BitSlicedBitmap("l_quantity"),
        si.BitSlicedBitmap("l_discount"),
    ]


def _million_files(config: Config, section: Section) -> None:
    """1,000,000 files: the 100k small files, each linked 10 times. Its index is
    the 100k table's rows copied per link (``ReplicaRunner``): the same segments
    a build would write, without indexing a million files again."""
    base = data.small_files(100000)
    ensure_index(base, specs())
    table = data.replicated(base, 10)
    started = time.perf_counter()
    if ensure_index(table, _million_specs(), ReplicaRunner(base)):
        print(f"  indexed 1M files (replicated) in {time.perf_counter() - started:.1f} s")
    rows = []
    slowest, peak = 0.0, 0
    for name, where in MILLION.items():
        result = si.prune(str(table), where)
        warm = median(repeat(partial(si.prune, str(table), where), config.runs))
        first = cold(table, where)
        slowest, peak = max(slowest, warm), max(peak, int(first["hwm"]))
        rows.append(
            [
                name,
                f"{result.kept:,} / {result.total:,}",
                secs(warm),
                f"{secs(first['import'] + first['prune'])} s",
                mb(int(first["hwm"])),
            ]
        )
    section.tables.append(
        Table(
            "1,000,000 files (the 100k files each linked 10 times), min-max on l_shipdate and "
            "an equality bitmap on l_shipmode",
            ["predicate", "kept", "warm s", "cold s (import + first prune)", "peak RSS (cold)"],
            rows,
            notes=[f"{k}: `{v}`" for k, v in MILLION.items()],
        )
    )
    section.targets.append(
        Target(
            "scale-million",
            "warm prune over 1M files (min-max + one bitmap kind) <= 5 s, memory < 2 GB",
            f"{secs(slowest)} s (slowest predicate), peak RSS {mb(peak)}",
            slowest <= MILLION_LIMIT and peak < MILLION_MEMORY,
        )
    )


LARGE = {
    "3-condition bitmaps": PREDICATES["3-condition bitmaps"],
    **{query.name: query.sql for query in QUERIES},
}
LARGE_LIMIT = 0.05
ROW_LEVELS = ("auto", "always", "estimate")


def _large_files(config: Config, section: Section) -> None:
    """1,000 files of 60k rows: the SF1 shuffled files, each linked 10 times. Per
    predicate: the floor (files holding a match, by DuckDB), and what each
    row_level mode keeps and how long a warm prune takes, the modes measured
    in turn so that load on the machine falls on all of them alike."""
    from queries import specs as query_specs

    table = data.replicated(data.lineitem(1, "shuffled", 100), 10)
    started = time.perf_counter()
    if ensure_index(table, query_specs("bitmaps")):
        print(f"  indexed 1,000 large files in {time.perf_counter() - started:.1f} s")
    floors = floors_of(table, list(LARGE.values()))
    rows = []
    measured: dict[tuple[str, str], float] = {}
    for (name, where), floor in zip(LARGE.items(), floors, strict=True):
        prunes = {m: partial(si.prune, str(table), where, row_level=m) for m in ROW_LEVELS}
        kept = {m: prune().kept for m, prune in prunes.items()}
        times = {m: [] for m in ROW_LEVELS}
        for _ in range(config.runs):
            for mode, prune in prunes.items():
                times[mode].extend(repeat(prune, 1, warmup=0))
        cells = []
        for mode in ROW_LEVELS:
            measured[name, mode] = median(times[mode])
            cells += [f"{kept[mode]:,}", ms(measured[name, mode])]
        rows.append([name, f"{floor:,}", *cells])
    section.tables.append(
        Table(
            "warm prune, 1,000 files of 60k rows (SF1 shuffled, each file linked 10 times), "
            "bitmaps configuration: files kept and ms per row_level (auto, the default, is "
            "exact; estimate, opt-in, was the default before: it keeps files whose value "
            "ranges predict many matches unexamined)",
            ["predicate", "floor", *(f"{m} {what}" for m in ROW_LEVELS for what in ("kept", "ms"))],
            rows,
            notes=[f"{k}: `{v}`" for k, v in LARGE.items()],
        )
    )
    value = measured["3-condition bitmaps", "auto"]
    exact = all(row[2] == row[1] for row in rows if BY_NAME.get(row[0], QUERIES[0]).conjunctive)
    q6 = measured["Q6 TPC-H Q6", "auto"] / measured["Q6 TPC-H Q6", "estimate"]
    section.tables[-1].notes.append(
        f"Q6 exact (auto) / estimate: {q6:.1f}x; auto keeps the floor on every conjunctive "
        f"query: {'yes' if exact else 'NO'}"
    )
    section.targets.append(
        Target(
            "scale-large-3-condition",
            "warm prune of a 3-condition bitmap predicate over 1,000 files of 60k rows <= 50 ms",
            f"{ms(value)} ms (Q4 {ms(measured['Q4 range+eq', 'auto'])} ms, "
            f"Q5 {ms(measured['Q5 five eq', 'auto'])} ms, "
            f"Q6 {ms(measured['Q6 TPC-H Q6', 'auto'])} ms)",
            value <= LARGE_LIMIT,
        )
    )
    section.targets.append(
        Target(
            "scale-large-exact",
            "the default prune keeps exactly the floor on every conjunctive TPC-H query, "
            "Q6 within tens of ms",
            f"Q6 {ms(measured['Q6 TPC-H Q6', 'auto'])} ms "
            f"({ms(measured['Q6 TPC-H Q6', 'always'])} ms with always)",
            exact and measured["Q6 TPC-H Q6", "auto"] <= LARGE_LIMIT,
        )
    )


# TPC-H's generator ties these columns: l_linestatus is 'O' exactly when
# l_shipdate is after 1995-06-17, l_returnflag is 'N' exactly when l_receiptdate
# is; price grows with quantity. As if independent, each pair predicts many rows
# in every file.
CORRELATED = {
    "the issue's": "l_extendedprice > 104000 AND l_linestatus = 'F'",
    "status by date": "l_shipdate < DATE '1995-01-01' AND l_linestatus = 'O'",
    "flag by date": "l_receiptdate < DATE '1995-06-01' AND l_returnflag = 'N'",
    "price by quantity": "l_extendedprice > 90000 AND l_quantity < 20",
}


def _correlated(config: Config, section: Section) -> None:
    """Conditions that are not independent, SF1 shuffled in 100 files: the
    floor, and what each row_level mode keeps."""
    base = data.lineitem(1, "shuffled", 100)
    table = data.index_copy(base, "correlated")
    columns = ("l_extendedprice", "l_shipdate", "l_receiptdate", "l_quantity")
    specs = [si.BitSlicedBitmap(c) for c in columns]
    specs += [si.EqualityBitmap(c) for c in ("l_linestatus", "l_returnflag")]
    ensure_index(table, specs)
    floors = floors_of(table, list(CORRELATED.values()))
    rows = []
    for (name, where), floor in zip(CORRELATED.items(), floors, strict=True):
        cells = []
        for mode in ROW_LEVELS:
            prune = partial(si.prune, str(table), where, row_level=mode)
            cells += [f"{prune().kept:,}", ms(median(repeat(prune, config.runs)))]
        rows.append([name, f"{floor:,}", *cells])
    section.tables.append(
        Table(
            "correlated conditions, SF1 shuffled in 100 files (bit-sliced on the numeric "
            "columns, equality on the flags): files kept and warm ms per row_level",
            ["predicate", "floor", *(f"{m} {what}" for m in ROW_LEVELS for what in ("kept", "ms"))],
            rows,
            notes=[f"{k}: `{v}`" for k, v in CORRELATED.items()],
        )
    )
    section.targets.append(
        Target(
            "scale-correlated-exact",
            "the default prune keeps exactly the floor where conditions are correlated",
            ", ".join(f"{row[0]} {row[2]} (floor {row[1]})" for row in rows),
            all(row[2] == row[1] for row in rows),
        )
    )


def _memory_target(memory: list[tuple[int, str, int, int]]) -> Target:
    """Within each table size, does peak memory order the predicates the way the
    index bytes they need do?"""
    ordered = True
    for count in sorted({m[0] for m in memory}):
        at = sorted((m for m in memory if m[0] == count), key=lambda m: m[2])
        growths = [m[3] for m in at]
        ordered &= all(b >= a * 0.9 for a, b in itertools.pairwise(growths))
    largest = max(memory, key=lambda m: (m[0], m[2]))
    return Target(
        "scale-memory",
        "memory grows with the index bytes a predicate needs",
        f"at {largest[0]:,} files the {largest[1]} predicate needs {mb(largest[2])} of index "
        f"and peaks {mb(largest[3])} above the post-import RSS",
        ordered,
    )
