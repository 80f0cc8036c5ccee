"""Run the skipindex benchmarks and write bench/RESULTS.md and bench/results.png.

    python bench/run.py --quick                      # < 10 min on 2 cores, data included
    python bench/run.py --full                       # SF10 Spark timings; takes long
    python bench/run.py --quick --only skipping,size # some sections

Sections: skipping (1), e2e (2), build (3), size (4), scale (5). Data and
indexes are cached under bench/data/ and reused. Each section's results are kept
in bench/data/results/, so a run with --only re-renders the report with the
other sections' latest results (each says its own mode and date).
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
RESULTS = data.DATA / "results"
ALIASES = {"sizes": "size", "build_cost": "build", "spark": "e2e", "prune": "scale"}


def _section_module(key: str) -> Any:
    import build_cost
    import e2e
    import scale
    import sizes
    import skipping

    return {"skipping": skipping, "e2e": e2e, "build": build_cost, "size": sizes, "scale": scale}[
        key
    ]


def _lineitem(args: tuple[float, str]) -> str:
    table = data.lineitem(args[0], args[1], 100)
    if args[0] == 1:
        data.delta_copy(table)
    return str(table)


def prepare(config: Config, keys: list[str]) -> float:
    """Generate the data sets the sections need, two at a time."""
    scales = set()
    if {"skipping", "size", "build"} & set(keys):
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
    (RESULTS / f"{section.key}.json").write_text(json.dumps(dataclasses.asdict(section)))


def load(key: str) -> Section | None:
    path = RESULTS / f"{key}.json"
    if not path.exists():
        return None
    raw = json.loads(path.read_text())
    raw["tables"] = [Table(**t) for t in raw["tables"]]
    for target in raw["targets"]:  # results saved by older versions of this script
        target.pop("cause", None)
        target.setdefault("key", "")
    raw["targets"] = [Target(**t) for t in raw["targets"]]
    return Section(**raw)


def report_only() -> int:
    """Re-render RESULTS.md and results.png from bench/data/results (e.g. after
    editing causes.py), keeping the header of the run that wrote the report."""
    sections = {k: s for k in ORDER if (s := load(k)) is not None}
    header = RESULTS / "header.json"
    if not sections or not header.exists():
        print("no saved results: run the benchmarks first", file=sys.stderr)
        return 1
    saved = json.loads(header.read_text())
    (HERE / "RESULTS.md").write_text(
        render(sections, saved["env"], saved["command"], "results.png")
    )
    plot(sections, HERE / "results.png")
    print(f"re-rendered {HERE / 'RESULTS.md'} and {HERE / 'results.png'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="SF1, small timings (default)")
    mode.add_argument("--full", action="store_true", help="SF10 Spark timings, 100k files")
    parser.add_argument("--only", default="", help=f"comma-separated: {','.join(ORDER)}")
    parser.add_argument(
        "--report", action="store_true", help="only re-render from the saved results"
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
        return report_only()
    started = time.perf_counter()
    cached = (data.DATA / "tpch-sf1" / "READY").exists()
    preparing = prepare(config, keys)
    env = machine()
    # Spark last: its JVM must not run while the other sections measure.
    for key in sorted(keys, key=["skipping", "size", "build", "scale", "e2e"].index):
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
    sections = {k: s for k in ORDER if (s := load(k)) is not None}
    (RESULTS / "header.json").write_text(json.dumps({"env": env, "command": command.strip()}))
    (HERE / "RESULTS.md").write_text(render(sections, env, command.strip(), "results.png"))
    plot(sections, HERE / "results.png")
    print(
        f"wrote {HERE / 'RESULTS.md'} and {HERE / 'results.png'} "
        f"in {time.perf_counter() - started:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
