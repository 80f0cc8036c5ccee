"""Section 3: index build cost against just reading the indexed columns.

In-process (skipindex's task code in this process, ``InProcessRunner``) build of
each kind vs ``pq.read_table(f, columns=...)`` over the same files, alternating;
then the all-kinds build with Spark ``local[1]`` vs ``local[2]``, each session in
its own worker process (this file run with ``--worker``) so both stay warm and
the runs can alternate.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import data
import pyarrow.parquet as pq
from measure import Config, Section, Table, Target, mb, median, ratio, rotating, secs
from queries import BLOOM, NUMERIC, STRINGS
from report import markdown_table

import skipindex as si
from skipindex.indexing.build import InProcessRunner, build_with

SPARK_WARMUP = 2  # rounds: JIT, Python workers
# The kinds the performance issue measured (its 134.9 s build): all but range bitmaps.
ISSUE_SET = "min-max + Bloom + bit-sliced + equality"
SETTLE = 3.0  # seconds between Spark builds


def kinds() -> dict[str, list[Any]]:
    minmax = [si.MinMax(c) for c in NUMERIC + STRINGS]
    bloom = [si.Bloom(c, fpp=0.01) for c in BLOOM]
    equality = [si.EqualityBitmap(c) for c in STRINGS]
    bitsliced = [si.BitSlicedBitmap(c) for c in NUMERIC]
    ranged = [si.RangeBitmap(c) for c in NUMERIC]
    return {
        "min-max (11 columns)": minmax,
        "Bloom (3 key columns)": bloom,
        "min-max + Bloom": minmax + bloom,
        "equality bitmap (4 string columns)": equality,
        "bit-sliced bitmap (7 numeric/date columns)": bitsliced,
        "range bitmap (7 numeric/date columns)": ranged,
        ISSUE_SET: minmax + bloom + bitsliced + equality,
        "all kinds together": minmax + bloom + equality + bitsliced + ranged,
    }


def build_table(files: int) -> Path:
    """The first ``files`` files of the SF1 natural layout, as their own table."""
    source = data.lineitem(1, "natural", 100)
    return data.index_copy(source, f"build-{files}", limit=files)


def _build_once(table: Path, specs: list[Any], runner: Any) -> float:
    si.drop_index(str(table), all=True)
    return float(build_with(str(table), specs, runner).seconds)


def _read_once(table: Path, columns: list[str]) -> float:
    started = time.perf_counter()
    for file in data.data_files(table):
        pq.read_table(file, columns=columns)
    return time.perf_counter() - started


def in_process(config: Config) -> tuple[Table, dict[str, Any], list[Target]]:
    table = build_table(config.build_files)
    rows = []
    plot: dict[str, list[Any]] = {"kinds": [], "ratio": []}
    ratios: dict[str, float] = {}
    for name, specs in kinds().items():
        columns = sorted({s.column for s in specs})
        build_times: list[float] = []
        read_times: list[float] = []
        for round_ in range(1 + config.runs):  # round 0 warms up
            pair = [
                (build_times, lambda s=specs: _build_once(table, s, InProcessRunner())),
                (read_times, lambda c=columns: _read_once(table, c)),
            ]
            for times, action in pair if round_ % 2 else reversed(pair):
                seconds = action()
                if round_:
                    times.append(seconds)
        description = si.describe(str(table))
        total_rows = sum(pq.read_metadata(f).num_rows for f in data.data_files(table))
        ratios[name] = median(build_times) / median(read_times)
        rows.append(
            [
                name,
                str(len(columns)),
                secs(median(read_times)),
                secs(median(build_times)),
                ratio(ratios[name]),
                mb(description.index_bytes),
            ]
        )
        plot["kinds"].append(name.split(" (")[0])
        plot["ratio"].append(ratios[name])
    headers = ["kind", "columns", "pyarrow read s", "build s", "build / read", "index size"]
    title = (
        f"in-process build vs pyarrow read, {config.build_files} files of SF1 natural "
        f"({total_rows:,} rows)"
    )
    targets = [
        Target(
            "build-light",
            "min-max + Bloom build <= 1.5x reading the indexed columns",
            ratio(ratios["min-max + Bloom"]),
            ratios["min-max + Bloom"] <= 1.5,
        ),
        Target(
            "build-all",
            "all-kinds build <= 3x reading the indexed columns",
            ratio(ratios["all kinds together"]),
            ratios["all kinds together"] <= 3.0,
        ),
    ]
    return Table(title, headers, rows), plot, targets


class _Worker:
    """A Python process holding one local[n] SparkSession; builds on request."""

    def __init__(self, cores: int, table: Path) -> None:
        self.cores = cores
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--worker", str(cores), str(table)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )

    def ready(self) -> None:
        self._answer()

    def build(self, kinds_name: str = "all kinds together") -> float:
        return self._ask(f"build {kinds_name}")

    def scan(self, kinds_name: str) -> float:
        """Spark reading the columns ``kinds_name`` indexes, to the noop sink."""
        return self._ask(f"scan {kinds_name}")

    def _ask(self, command: str) -> float:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        return float(self._answer()["seconds"])

    def _answer(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith("{"):
                return dict(json.loads(line))
        raise RuntimeError(f"Spark worker local[{self.cores}] exited early")

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=120)


def spark_scaling(config: Config) -> tuple[Table, list[Target]]:
    source = data.lineitem(1, "natural", 100)
    workers = [
        _Worker(cores, data.index_copy(source, f"spark-{cores}", limit=config.spark_build_files))
        for cores in (1, 2)
    ]
    try:
        for worker in workers:
            worker.ready()
        times: dict[int, list[float]] = {1: [], 2: []}
        for round_ in range(SPARK_WARMUP + config.runs):
            for worker in workers if round_ % 2 else reversed(workers):
                time.sleep(SETTLE)  # let the other JVM's JIT and GC threads go quiet
                seconds = worker.build()
                if round_ >= SPARK_WARMUP:
                    times[worker.cores].append(seconds)
        against_scan = _against_spark_scan(workers[1], config.runs)
    finally:
        for worker in workers:
            worker.close()
    speedup = median(times[1]) / median(times[2])
    spark_table = data.index_copy(source, "spark-2", limit=config.spark_build_files)
    columns = sorted({s.column for s in kinds()["all kinds together"]})
    read = median([_read_once(spark_table, columns) for _ in range(config.runs)])
    table = Table(
        f"all-kinds build with Spark (`si.build_index`), {config.spark_build_files} files of "
        f"SF1 natural",
        ["session", "build s (median)", "runs"],
        [
            [f"local[{c}]", secs(median(times[c])), ", ".join(secs(t) for t in times[c])]
            for c in (1, 2)
        ]
        + [
            ["local[1] / local[2]", ratio(speedup), ""],
            ["pyarrow read of the 11 columns", secs(read), "median, after the builds"],
            ["local[2] build / read", ratio(median(times[2]) / read), ""],
        ],
    )
    table.rows += [
        [f"local[2] {name}: build / Spark scan", ratio(value), detail]
        for name, (value, detail) in against_scan.items()
    ]
    targets = [
        Target(
            "build-spark",
            "Spark local[2] >= 1.6x faster than local[1] (all kinds)",
            ratio(speedup),
            speedup >= 1.6,
        )
    ]
    if config.issue_build is None:  # else the issue's layout sets these targets
        targets += against_scan_targets(against_scan, "")
    return table, targets


def against_scan_targets(measured: dict[str, tuple[float, str]], where: str) -> list[Target]:
    """The issue's build targets: each kind set's Spark build / Spark scan."""
    targets = []
    for key, name, limit in (
        ("build-spark-light", "min-max + Bloom", 1.5),
        ("build-spark-issue", ISSUE_SET, 3.0),
        ("build-spark-all", "all kinds together", 3.0),
    ):
        value = measured[name][0]
        goal = f"{name} build with Spark <= {limit:g}x Spark scanning the indexed columns{where}"
        targets.append(Target(key, goal, ratio(value), value <= limit))
    return targets


def _against_spark_scan(worker: _Worker, runs: int) -> dict[str, tuple[float, str]]:
    """Per kind set: Spark build / Spark ``select(cols)`` to noop. The kind sets
    index the same 11 columns, so one scan baseline is measured between every
    build, in rotating order, and pooled."""
    names = ("min-max + Bloom", ISSUE_SET, "all kinds together")
    builds_then_scans = [lambda n=n: worker.build(n) for n in names]
    builds_then_scans += [lambda n=n: worker.scan(n) for n in names]
    times, _ = rotating(builds_then_scans, runs, settle=SETTLE / 3)
    builds = dict(zip(names, times[: len(names)], strict=True))
    scans = [t for side in times[len(names) :] for t in side]
    scan = median(scans)
    return {
        name: (
            median(builds[name]) / scan,
            f"build {secs(median(builds[name]))} s, scan {secs(scan)} s",
        )
        for name in names
    }


def run(config: Config) -> Section:
    section = Section(
        key="build",
        title="3. Build cost",
        intro=(
            "Build time per index kind (skipindex's task code run in this process, one core "
            "for the Python work; drop, then `build_with(path, specs, InProcessRunner())`, "
            "the BuildReport's seconds) against the time pyarrow takes to read just the "
            "indexed columns of the same files (`pq.read_table(f, columns=...)` per file). "
            f"Medians of {config.runs} alternating runs after a warm-up round."
        ),
    )
    table, plot, targets = in_process(config)
    section.tables.append(table)
    section.plot = plot
    section.targets += targets
    spark_table, spark_targets = spark_scaling(config)
    section.tables.append(spark_table)
    section.targets += spark_targets
    if config.issue_build is not None:
        scale, files = config.issue_build
        measured = against_scan_at(scale, files, config.runs)
        section.tables.append(_against_scan_table(scale, files, measured))
        section.targets += against_scan_targets(measured, f" (SF{scale:g}, {files} files)")
    return section


def _worker(cores: int, table: str) -> None:
    from skipindex.spark.session import local_session

    spark = local_session(cores, app_name=f"bench-build-local{cores}")
    spark.sparkContext.setLogLevel("ERROR")
    print(json.dumps({"ready": cores}), flush=True)
    for line in sys.stdin:
        verb, _, name = line.strip().partition(" ")
        specs = kinds()[name]
        if verb == "build":
            si.drop_index(table, all=True)
            seconds = si.build_index(table, specs, spark=spark).seconds
        else:  # scan: what Spark pays to read the columns the build reads
            columns = sorted({s.column for s in specs})
            started = time.perf_counter()
            frame = spark.read.parquet(table).select(*columns)
            frame.write.format("noop").mode("overwrite").save()
            seconds = time.perf_counter() - started
        print(json.dumps({"seconds": seconds}), flush=True)
    spark.stop()


def against_scan_at(scale: float, files: int, runs: int) -> dict[str, tuple[float, str]]:
    """Spark build / Spark scan per kind set on one layout of lineitem, local[2]:
    the issue's SF10 in 1,000 files in full mode (``--against-scan SCALE FILES
    RUNS`` measures it alone, about 8 minutes once the data exists)."""
    table = data.index_copy(data.lineitem(scale, "natural", files), f"scan-{files}")
    worker = _Worker(2, table)
    try:
        worker.ready()
        return _against_spark_scan(worker, runs)
    finally:
        worker.close()


def _against_scan_table(scale: float, files: int, measured: dict[str, tuple[float, str]]) -> Table:
    return Table(
        f"build with Spark against Spark scanning the indexed columns (`select(cols)` to the "
        f"noop sink), SF{scale:g} natural in {files} files, local[2]",
        ["kinds", "build / Spark scan", "medians"],
        [[name, ratio(value), detail] for name, (value, detail) in measured.items()],
    )


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        _worker(int(sys.argv[2]), sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "--against-scan":
        scale, files = float(sys.argv[2]), int(sys.argv[3])
        measured = against_scan_at(scale, files, int(sys.argv[4]))
        print("\n".join(markdown_table(_against_scan_table(scale, files, measured))))
