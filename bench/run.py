"""Run the skipindex benchmarks and write bench/RESULTS.md and bench/results.png.

    python bench/run.py --quick                      # < 10 min on 2 cores, data included
    python bench/run.py --full                       # SF10 Spark timings; takes long
    python bench/run.py --quick --only skipping,size # some sections
    python bench/run.py --report                     # re-render from saved results

Sections: skipping (1), e2e (2), build (3), size (4), scale (5), layout (6),
rowgroups (7), readgroups (8), ssb (9), iceberg (10), sql (11). Data and
indexes are cached under bench/data/ and reused. Each section's results are kept
in bench/results/ (committed, so they outlive the data and a fresh clone), and a
run with --only re-renders the report with the other sections' latest results
(each says its own mode and date); the latest --full results are shown after
the quick ones.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import data
from measure import FULL, QUICK, Config, Section, Table, Target, machine
from report import ORDER, plot, render

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
MODES = ("quick", "full")
ALIASES = {
    "sizes": "size",
    "build_cost": "build",
    "spark": "e2e",
    "prune": "scale",
    "row_groups": "rowgroups",
    "read_groups": "readgroups",
}


def _section_module(key: str) -> Any:
    import build_cost
    import e2e
    import iceberg_stats
    import layout
    import read_groups
    import row_groups
    import scale
    import sizes
    import skipping
    import sql_star
    import ssb_flat

    modules = {"skipping": skipping, "e2e": e2e, "build": build_cost, "size": sizes}
    modules |= {"scale": scale, "layout": layout, "rowgroups": row_groups}
    modules |= {"readgroups": read_groups, "ssb": ssb_flat, "iceberg": iceberg_stats}
    modules["sql"] = sql_star
    modules["maintain"] = __import__("maintain")  # section 12
    return modules[key]


def _lineitem(args: tuple[float, str]) -> str:
    table = data.lineitem(args[0], args[1], 100)
    if args[0] == 1:
        data.delta_copy(table)
    return str(table)


def prepare(config: Config, keys: list[str]) -> float:
    """Generate the data sets the sections need, two at a time."""
    scales = set()
    if {"skipping", "size", "build", "rowgroups"} & set(keys):
        scales.add(config.skipping_scale)
    if "e2e" in keys:
        scales.add(config.e2e_scale)
    if not scales:
        return 0.0
    started = time.perf_counter()
    for scale in sorted(scales):
        data.tpch_source(scale)
    jobs = [(scale, order) for scale in sorted(scales) for order in ("shuffled", "natural")]
    with ProcessPoolExecutor(2) as pool:
        list(pool.map(_lineitem, jobs))
    seconds = time.perf_counter() - started
    print(f"data ready in {seconds:.0f} s", flush=True)
    return seconds


def save(section: Section) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    folder = RESULTS / section.mode
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{section.key}.json").write_text(json.dumps(dataclasses.asdict(section)))


def _migrate() -> None:
    """Results saved flat by earlier versions of this script go under their mode."""
    for path in RESULTS.glob("*.json"):
        raw = json.loads(path.read_text())
        mode = raw.get("mode") or ("full" if "--full" in raw.get("command", "") else "quick")
        if mode in MODES:
            (RESULTS / mode).mkdir(exist_ok=True)
            path.replace(RESULTS / mode / path.name)


def load(key: str, mode: str) -> Section | None:
    path = RESULTS / mode / f"{key}.json"
    if not path.exists():
        return None
    raw = json.loads(path.read_text())
    raw["tables"] = [Table(**t) for t in raw["tables"]]
    for target in raw["targets"]:  # results saved by older versions of this script
        target.pop("cause", None)
        target.setdefault("key", "")
    raw["targets"] = [Target(**t) for t in raw["targets"]]
    return Section(**raw)


def saved_sections() -> list[Section]:
    """The latest result of every section, quick mode first, then full mode."""
    _migrate()
    return [s for mode in MODES for k in ORDER if (s := load(k, mode)) is not None]


def saved_runs() -> dict[str, dict[str, Any]]:
    """Per mode, the command, machine and timing of the latest run."""
    _migrate()
    paths = {mode: RESULTS / mode / "header.json" for mode in MODES}
    return {mode: json.loads(p.read_text()) for mode, p in paths.items() if p.exists()}


def write_report() -> int:
    """RESULTS.md and results.png from bench/results."""
    sections = saved_sections()
    if not sections:
        print("no saved results: run the benchmarks first", file=sys.stderr)
        return 1
    (HERE / "RESULTS.md").write_text(render(sections, saved_runs(), "results.png"))
    plot(sections, HERE / "results.png")
    print(f"wrote {HERE / 'RESULTS.md'} and {HERE / 'results.png'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="SF1, small timings (default)")
    mode.add_argument("--full", action="store_true", help="SF10 Spark timings, 100k files")
    parser.add_argument("--only", default="", help=f"comma-separated: {','.join(ORDER)}")
    parser.add_argument(
        "--report",
        action="store_true",
        help="only write RESULTS.md and results.png from the saved results",
    )
    args = parser.parse_args(argv)
    config = FULL if args.full else QUICK
    keys = ORDER
    if args.only:
        keys = [ALIASES.get(k.strip(), k.strip()) for k in args.only.split(",") if k.strip()]
        unknown = [k for k in keys if k not in ORDER]
        if unknown:
            parser.error(f"unknown section(s) {unknown}; sections are {', '.join(ORDER)}")
    command = "python bench/run.py " + " ".join(sys.argv[1:] if argv is None else argv)
    if args.report:
        return write_report()
    started = time.perf_counter()
    cached = (data.DATA / "tpch-sf1" / "READY").exists()
    env = machine()
    preparing = prepare(config, keys)
    # Spark last: its JVM must not run while the other sections measure.
    for key in sorted(
        keys,
        key=[
            "skipping",
            "size",
            "build",
            "scale",
            "rowgroups",
            "e2e",
            "readgroups",
            "layout",
            "ssb",
            "iceberg",
            "sql",
            "maintain",
        ].index,
    ):
        print(f"== {key} ({config.mode})", flush=True)
        begun = time.perf_counter()
        section = _section_module(key).run(config)
        section.seconds = time.perf_counter() - begun
        section.mode = config.mode
        section.date = env["date"]
        section.load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
        save(section)
        print(f"   done in {section.seconds:.0f} s", flush=True)
    env["this run"] = (
        f"{time.perf_counter() - started:.0f} s in all, of which {preparing:.0f} s preparing "
        f"TPC-H data ({'cached from an earlier run' if cached else 'generated from scratch'}); "
        f"sections: {', '.join(keys)}"
    )
    header = {"env": env, "command": command.strip()}
    (RESULTS / config.mode).mkdir(parents=True, exist_ok=True)
    (RESULTS / config.mode / "header.json").write_text(json.dumps(header))
    return write_report()


if __name__ == "__main__":
    sys.exit(main())
