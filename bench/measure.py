"""Shared measurement helpers: alternating medians, section results, the machine."""

from __future__ import annotations

import datetime
import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RUNS = 5


@dataclass(frozen=True)
class Config:
    """What one mode (``--quick`` / ``--full``) measures."""

    mode: str
    runs: int = RUNS
    skipping_scale: float = 1
    e2e_scale: float = 1
    e2e_queries: tuple[str, ...] | None = None  # None: every query
    build_files: int = 20  # files of the SF1 natural layout the build-cost section indexes
    spark_build_files: int = 20
    scale_counts: tuple[int, ...] = (1000, 10000)
    million_files: bool = False  # the 1M-file prune (its data and index take minutes)
    # Build against a Spark scan on the issue's own layout (scale, files); None: on
    # the spark_build_files of SF1 only.
    issue_build: tuple[float, int] | None = None
    # (order, files) layouts the end-to-end section runs beyond both orders in 100 files
    e2e_extra_layouts: tuple[tuple[str, int], ...] = ()


QUICK = Config(
    mode="quick",
    e2e_queries=("Q4 range+eq", "Q6 TPC-H Q6", "Q8 not", "Q9 key range"),
    build_files=10,
)
FULL = Config(
    mode="full",
    e2e_scale=10,
    build_files=100,
    spark_build_files=100,
    scale_counts=(1000, 10000, 100000),
    million_files=True,
    issue_build=(10, 1000),
    e2e_extra_layouts=(("natural", 1000),),  # the issue's own table
)


@dataclass
class Table:
    title: str
    headers: list[str]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)


@dataclass
class Target:
    key: str  # names the profiled cause in causes.py, shown when the target is missed
    goal: str
    measured: str
    met: bool | None  # None: not measured in this mode


@dataclass
class Section:
    key: str
    title: str
    intro: str
    tables: list[Table] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    plot: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    mode: str = ""
    date: str = ""
    load: str = ""  # load average when the section ended: other processes compete for cores


def timed(action: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    value = action()
    return time.perf_counter() - started, value


def alternating(
    first: Callable[[], Any], second: Callable[[], Any], runs: int = RUNS, warmup: int = 1
) -> tuple[list[float], list[float], Any, Any]:
    """Run both sides ``runs`` times, alternating which goes first; seconds per side
    plus each side's last return value. ``warmup`` rounds are run and discarded."""
    (a_times, b_times), (a_value, b_value) = rotating([first, second], runs, warmup)
    return a_times, b_times, a_value, b_value


def rotating(
    actions: list[Callable[[], Any]], runs: int = RUNS, warmup: int = 1, settle: float = 0.0
) -> tuple[list[list[float]], list[Any]]:
    """Each action ``runs`` times, rotating which goes first; seconds per action
    and each one's last return value. ``warmup`` rounds are run and discarded;
    ``settle`` seconds pass (untimed) before each action."""
    times: list[list[float]] = [[] for _ in actions]
    values: list[Any] = [None] * len(actions)
    for round_ in range(warmup + runs):
        shift = round_ % len(actions)
        for at in [*range(shift, len(actions)), *range(shift)]:
            time.sleep(settle)
            seconds, values[at] = timed(actions[at])
            if round_ >= warmup:
                times[at].append(seconds)
    return times, values


def median(values: list[float]) -> float:
    return statistics.median(values)


def repeat(action: Callable[[], Any], runs: int = RUNS, warmup: int = 1) -> list[float]:
    times = []
    for round_ in range(warmup + runs):
        seconds, _ = timed(action)
        if round_ >= warmup:
            times.append(seconds)
    return times


def floors_of(files: Path | Sequence[str], wheres: Sequence[str]) -> list[int]:
    """Per predicate, how many files hold a row for which it is TRUE: the floor
    for file skipping, by DuckDB over the real rows. ``files``: a folder (its
    ``*.parquet``) or a list of file paths."""
    import duckdb

    if isinstance(files, Path):
        source = f"'{files}/*.parquet'"
    else:
        source = "[" + ", ".join(f"'{p}'" for p in files) + "]"
    flags = ", ".join(f"bool_or(coalesce({w}, false))::int AS p{i}" for i, w in enumerate(wheres))
    per_file = f"SELECT filename, {flags} FROM read_parquet({source}, filename=true)"
    sums = ", ".join(f"sum(p{i})" for i in range(len(wheres)))
    query = f"SELECT {sums} FROM ({per_file} GROUP BY filename)"
    found = duckdb.connect().execute(query).fetchone()
    assert found is not None
    return [int(n) for n in found]


def ms(seconds: float) -> str:
    value = seconds * 1000
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}" if value >= 1 else f"{value:.2f}"


def secs(seconds: float) -> str:
    return f"{seconds:.2f}" if seconds < 10 else f"{seconds:.1f}"


def ratio(value: float) -> str:
    return f"{value:.2f}x"


def mb(count: float) -> str:
    return f"{count / 1e6:.2f} MB" if count < 1e9 else f"{count / 1e9:.2f} GB"


def machine() -> dict[str, str]:
    """The machine and the versions every number here depends on."""
    import duckdb
    import psutil
    import pyarrow

    def version(module: str) -> str:
        try:
            return str(__import__(module).__version__)
        except Exception:
            return "not installed"

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            names = [line.split(":", 1)[1].strip() for line in info if "model name" in line]
            cpu = names[0] if names else cpu
    except OSError:
        pass
    try:
        java = subprocess.run(
            ["java", "-version"], capture_output=True, text=True, check=False
        ).stderr.splitlines()[0]
    except (OSError, IndexError):
        java = "unknown"
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{cpu}, {os.cpu_count()} cores, "
        f"{psutil.virtual_memory().total / 2**30:.0f} GiB RAM, {platform.system()} "
        f"{platform.release()}",
        "python": platform.python_version(),
        "pyspark": version("pyspark"),
        "pyarrow": pyarrow.__version__,
        "duckdb": duckdb.__version__,
        "deltalake": version("deltalake"),
        "skipindex": version("skipindex"),
        "java": java,
        "load average at start (1/5/15 min)": " / ".join(f"{x:.2f}" for x in os.getloadavg()),
    }
