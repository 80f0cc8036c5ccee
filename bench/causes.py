"""Why a target is missed: hand-written from cProfile runs of the code named below.

RESULTS.md shows the entry of every missed target. After changes to skipindex,
re-profile, update the entry, then ``python bench/run.py --report`` re-renders
RESULTS.md without measuring again. Profiles: ``cProfile`` on ``si.prune`` (warm)
and on ``build_with(..., InProcessRunner())`` over the benchmark data; fixes
marked "measured" were timed on the same data in isolation, not merged.
"""

from __future__ import annotations

CAUSES: dict[str, str] = {
    "e2e-fast": (
        "Not a skipindex cost. Local Spark needs 170-210 ms to count even one kept 60k-row "
        "file (planning, job and task start-up), which caps the speedup at SF1: with 14 of 100 "
        "files kept the ideal is about 1.6 s / (0.19 s + 14% of the rest) = 4x, and runs give "
        "2.8x-4.2x. Prune is 15-40 ms of it: for shuffled Q4, "
        "`spark.read.parquet(*kept).filter(q).count()` takes 431 ms and `si.read` 438 ms "
        "(7-run medians, 2026-11-22). At SF10 (full mode) the selective queries are 4.6x-5.9x "
        "(Q4, Q8; floors 16-19%, just outside the class). Natural Q9 keeps 1 file and sits at "
        "that one-file floor (124 ms at SF1, 175 ms at SF10), while plain Spark needs only "
        "~270 ms because it skips the other 99 files' row groups by their footer statistics "
        "itself. A 3x margin on a 270 ms query would need Spark's own fixed cost to shrink."
    ),
    "e2e-slow": (
        "What remains is prune time. Since 58848ee, read() reads the folder like plain Spark "
        "when prune keeps every file, so skipindex.read = prune + the same scan; both tables "
        "were measured with that fix. Warm prune with bitmaps costs 45-68 ms on 100 SF1 files "
        "and 127-290 ms on 100 SF10 files, which is 5-12% of the 0.6-4 s scans (on the 19 s "
        "Q9 scan it is 1.5%), so the target sits on the edge and flips with Spark's own "
        "run-to-run noise of about +-10%. For example, a separate 5-run check of SF10 Q5 gave "
        "plain 3157 ms and skipindex.read 3053 ms. cProfile of warm Q6 prunes (2026-11-22; SF1 "
        "and SF10 alike): 80-85% is the bit-sliced row-level pass over all 100 files, which "
        "cannot rule out any file here. At SF10 about a third of that is deserializing Roaring "
        "slices again on every prune (the segment cache holds the serialized bytes) and about "
        "half is RangeEval (`between()` runs `at_most` twice over 12-20 slices per leaf). The "
        "rest: ~7% jsonschema validation of the manifest on every load, ~4% `floor_ceil` "
        "(fractions.Fraction) once per file. Suggested fixes: (1) skip the row-level pass for "
        "files whose min-max range fractions predict many matching rows (it can only keep "
        "them, so the answer stays a superset); (2) cache decoded bitmaps next to the segment "
        "columns; (3) cache validated manifests by (path, size, mtime), since they are "
        "immutable; (4) convert each literal to a code once per leaf, not once per file."
    ),
    "build-light": (
        "Profiled 2026-11-22 (in-process build of 10 SF1 files). The min-max build takes "
        "0.30 s: column read 0.14 s, `pc.min_max` 0.07 s, the rest casts and overhead. Per "
        "60k-row column `pc.min_max` costs 1.3-1.5 ms on strings (cast to binary first), "
        "0.5 ms on decimal128 and 0.02-0.04 ms on ints and dates. For Bloom, `_sbbf.build` (a "
        "bool scatter, then packbits) is about a third, `pc.unique` a fifth and XXH64 in numpy "
        "a sixth. Bloom alone is about 6x its read, because reading three int64 columns takes "
        "only ~3 ms per file. Suggested fixes, each timed on its own: read string/binary "
        "columns with `read_dictionary=` (the 4 string columns of 10 files read in 20 ms "
        "instead of 49 ms; all 11 columns in 111 ms instead of 171 ms). Then take min/max, Bloom "
        "hashes and equality-bitmap codes from the dictionary: 0.16 ms for the four columns "
        "instead of ~5.6 ms. That stays safe even if a dictionary holds unused values, since "
        "the bounds only get wider. Take min/max of decimals on their unscaled int64 view "
        "(0.03 ms instead of 0.5 ms)."
    ),
    "build-all": (
        "Profiled 2026-11-22 (in-process build of 10 SF1 files, 2.0 s). Bit-slice extraction "
        "in `BitSlicedBitmapKind.build` takes 0.56 s (27%): per slice a mask `(codes & 1 << i) "
        "== 0`, a positions gather and `bitmap_of`. The stable `np.argsort` in `rank_values` "
        "takes 0.32 s (16%): range bitmaps sort every numeric column again, and equality "
        "bitmaps sort dictionary ranks. The rest: `bitmap_of` 0.30 s (15%), zstd segment write "
        "0.17 s, column read 0.19 s (9%). Suggested fixes, each timed on 60k values: (1) when "
        "max - min < 65536 (dates, quantity, discount, tax), sort `(keys - min).astype(uint16)`, "
        "which NumPy radix-sorts: 0.6 ms instead of 3.2-4.7 ms; (2) build the slices from "
        "uint32 codes with shifts and `np.flatnonzero`, with no positions gather when there are "
        "no nulls: 4.4 ms instead of 11.2 ms for 18 slices; (3) compute "
        "`split_nulls`/`rank_values` once per (file, column) and share them between the kinds "
        "on that column; (4) read strings as dictionaries (see the min-max + Bloom entry). "
        "Bitmap construction and serialization would still dominate, so 3x the read looks out "
        "of reach from Python. Writing Roaring bitset containers straight from `np.packbits` "
        "would need a Roaring writer; pyroaring has no bulk-from-bitset constructor."
    ),
    "build-spark": (
        "Not skipindex: on an idle machine this measures 1.63x-1.73x (20 files, separate "
        "runs). It misses when other processes compete for the 2 cores (see the load "
        "averages): local[2] needs both cores, local[1] only one. Below 2x because of Spark's "
        "fixed cost per build (job scheduling, the extra schema job `SparkRunner.spark_schema` "
        "runs, the manifest commit), about 0.5 s here."
    ),
    "scale-warm-3-condition bitmaps": (
        "About 40 us of Python per file and leaf, whatever the file size (cProfile at 10k "
        "files, 2026-11-22): per-file `FilePayload`/searcher set-up, `floor_ceil` with "
        "fractions.Fraction once per file, and `=` on a bit-sliced column runs RangeEval "
        "twice. Suggested fixes: convert literals once per leaf, evaluate `=` in one pass, "
        "then vectorise across files: map the literal to every file's code with numpy over "
        "the `min` column and take the needed bitmaps from the flat list<binary> child array "
        "by offsets."
    ),
}
