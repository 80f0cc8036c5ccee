"""Section 4: index size per kind and column, against the column's own Parquet bytes.

Index bytes: ``si.describe(path).indexes[i]["bytes"]`` (compressed bytes of that
index's column in the segments). Column bytes: the sum of the column's
compressed chunk sizes in the data files' footers. Two index folders per layout
(hard links to the same files): the "bitmaps" configuration of section 1, and
one with the kinds that configuration does not have (range bitmaps on the
numeric/date columns, equality bitmaps on the low-cardinality decimals, Bloom on
the strings), so every kind is measured on the columns it suits.
"""

from __future__ import annotations

from typing import Any

import data
from measure import Config, Section, Table, mb
from queries import BLOOM, NUMERIC, STRINGS, specs
from runners import ensure_index
from skipping import FILES, LAYOUTS

import skipindex as si

KINDS = ["minmax", "bloom", "equality_bitmap", "bitsliced_bitmap", "range_bitmap"]
HEADERS = ["min-max", "Bloom", "equality bitmap", "bit-sliced bitmap", "range bitmap"]
LOW_CARDINALITY = ["l_quantity", "l_discount", "l_tax"]


def extra_specs() -> list[Any]:
    return (
        [si.RangeBitmap(c) for c in NUMERIC]
        + [si.EqualityBitmap(c) for c in LOW_CARDINALITY]
        + [si.Bloom(c, fpp=0.01) for c in STRINGS]
    )


def _cell(index_bytes: int | None, column_bytes: int) -> str:
    if index_bytes is None:
        return ""
    return f"{mb(index_bytes)} ({100 * index_bytes / column_bytes:.1f}%)"


def measure_layout(scale: float, order: str) -> tuple[Table, dict[str, Any]]:
    table = data.lineitem(scale, order, FILES)
    sizes: dict[tuple[str, str], int] = {}
    for name, wanted in (("idx-bitmaps", specs("bitmaps")), ("idx-sizes", extra_specs())):
        folder = data.index_copy(table, name)
        ensure_index(folder, wanted)
        for index in si.describe(str(folder)).indexes:
            sizes[index["column"], index["kind"]] = int(index["bytes"])
    columns = data.column_bytes(table)
    rows = []
    totals = dict.fromkeys(KINDS, 0)
    for column in NUMERIC + STRINGS:
        own = columns[column]
        cells = []
        for kind in KINDS:
            value = sizes.get((column, kind))
            cells.append(_cell(value, own))
            totals[kind] += value or 0
        rows.append([column, mb(own), *cells])
    rows.append(
        [
            "all 11 columns",
            mb(sum(columns[c] for c in NUMERIC + STRINGS)),
            *(mb(totals[k]) for k in KINDS),
        ]
    )
    title = (
        f"SF{scale:g}, {order} rows, {FILES} files (whole table: "
        f"{mb(sum(columns.values()))} of Parquet)"
    )
    notes = [
        f"Bloom (fpp 0.01) on {', '.join(BLOOM + STRINGS)}; equality bitmaps on "
        f"{', '.join(STRINGS + LOW_CARDINALITY)}; bit-sliced and range bitmaps (64 bins) "
        f"on {', '.join(NUMERIC)}."
    ]
    plot = {"kinds": HEADERS, "bytes": [totals[k] for k in KINDS]}
    return Table(title, ["column", "column Parquet bytes", *HEADERS], rows, notes), plot


def run(config: Config) -> Section:
    section = Section(
        key="size",
        title="4. Index size",
        intro=(
            "Bytes of each index (compressed, in the `_skipindex/segments` files) and its "
            "share of the indexed column's own compressed Parquet bytes. Bitmap sizes depend "
            "on the layout: the natural order is clustered by l_orderkey (and so by dates)."
        ),
    )
    for order in LAYOUTS:
        table, plot = measure_layout(config.skipping_scale, order)
        section.tables.append(table)
        section.plot[order] = plot
    return section
