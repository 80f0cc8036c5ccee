"""TPC-DS: the fact files an exact index on *every* fact column would keep.

bench/tpcds.py indexes generically (bit-sliced bitmaps on the facts' date, item
and customer keys and order numbers; min-max on the other keys). This adds
bit-sliced bitmaps on every other integer and decimal column of each fact table
(every key: store, promotion, household, time, ship mode...; every quantity and
price), in a copy of the data, and counts per query the fact files si.sql keeps.
Every bitmap is exact and prune ANDs them row by row, so a file is kept only if
one of its rows passes every condition on its reference and every join's keys:
on this layout (facts sorted by date, 40 files) that is what any pruner which
reasons one reference at a time can reach. No timing: it only plans.

    ./dev python bench/tpcds_floor.py    # writes bench/TPCDS-sf1-floor.md
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import pyarrow.parquet as pq  # noqa: E402
import pyarrow.types as pat  # noqa: E402
from tpcds import DATA, _fact_files, data_folder, prepare  # noqa: E402

import skipindex as si  # noqa: E402
from skipindex.spark.session import local_session  # noqa: E402
from tests._tpcds import FACTS, tpcds_indexes  # noqa: E402


def every_column(table: Path) -> list[Any]:
    """The generic indexes, and on a fact table bit-sliced bitmaps on every integer
    and decimal column that has none."""
    specs: list[Any] = tpcds_indexes(table)
    if table.name not in FACTS:
        return specs
    bitmapped = {s.column for s in specs if isinstance(s, si.BitSlicedBitmap)}
    for field in pq.read_schema(next(table.glob("*.parquet"))):
        numeric = pat.is_integer(field.type) or pat.is_decimal(field.type)
        if numeric and field.name not in bitmapped:
            specs.append(si.BitSlicedBitmap(field.name))
    return specs


def copy_without_indexes(source: Path, target: Path) -> Path:
    """A copy of the data whose indexes this bench may change (the main bench's stay),
    made beside ``target`` and renamed when whole: the READY marker it copies may
    come early, so a copy cut short must never be found at ``target``."""
    if not target.exists():
        staging = target.with_name(f"{target.name}.copying")
        shutil.rmtree(staging, ignore_errors=True)
        shutil.copytree(source, staging, ignore=shutil.ignore_patterns("_skipindex"))
        staging.rename(target)
    return target


def main() -> int:
    spark = local_session(cores=2, app_name="skipindex-bench-tpcds-floor")
    _, generic = prepare(spark, 1.0, 40)
    generic_counts = {name: _fact_files(si.sql_plan(spark, text)) for name, text in generic.items()}
    folder = copy_without_indexes(data_folder(1.0, 40), DATA / "tpcds-sf1-40-every-column")
    _, texts = prepare(spark, 1.0, 40, folder, every_column)
    lines = [
        "## TPC-DS SF1, facts in 40 files: fact files kept, generic indexes and every column",
        "",
        "| query | of | kept, generic | kept, every fact column |",
        "|---|---|---|---|",
    ]
    totals = [0, 0, 0]
    for name in sorted(texts):
        listed, _, kept = _fact_files(si.sql_plan(spark, texts[name]))
        generic_kept = generic_counts[name][2]
        totals = [totals[0] + listed, totals[1] + generic_kept, totals[2] + kept]
        lines.append(f"| {name} | {listed} | {generic_kept} | {kept} |")
        print(lines[-1], flush=True)
    listed, generic_kept, kept = totals
    lines += [
        "",
        f"Totals: {listed:,} fact files referenced; the generic indexes keep {generic_kept:,} "
        f"({generic_kept / listed:.1%}), bitmaps on every fact column {kept:,} "
        f"({kept / listed:.1%}).",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    (HERE / "TPCDS-sf1-floor.md").write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
