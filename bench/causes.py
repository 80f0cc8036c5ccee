"""Why a target is missed: the profile of the code as of the date below.

Written by hand from cProfile runs (see each entry); RESULTS.md shows an entry
when the target it names is missed. Re-profile and update after changes to
skipindex, then ``python bench/run.py --report`` re-renders without re-measuring.
"""

from __future__ import annotations

CAUSES: dict[str, str] = {
    "build-light": (
        "profiled 2026-11-22 (cProfile, in-process build of 10 SF1 files): the Bloom step is "
        "vectorised XXH64 + a numpy scatter into the blocks, about 5 ms per column-file, but "
        "pyarrow's column read is only ~3 ms per file, so any per-value work is several times "
        "the read. Min-max alone is 1.6x. Reaching 1.5x together would need hashing inside the "
        "Parquet reader (the dictionary pages already hold the distinct values)."
    ),
    "build-all": (
        "profiled 2026-11-22: building one Roaring bitmap per bit slice / distinct value "
        "dominates (bitsliced_bitmap.build: a numpy mask per slice, then BitMap construction and "
        "portable serialization, ~45% of the build; bitmap_of ~10%); the read is a small share. "
        "Fix not done: emit Roaring containers straight from np.packbits of each slice (bitmap "
        "containers are raw 8 KiB bitsets), skipping the positions arrays; an earlier fix "
        "(cast each column once, not once per kind) is in."
    ),
    "e2e-fast": (
        "only natural Q9 misses (2.38x): plain Spark already skips 99 files' row groups by "
        "footer statistics and takes 241 ms, so the fixed costs of prune + planning dominate; "
        "every skippable SF10 query on unclustered data is 3.1x-5.3x."
    ),
    "e2e-slow": (
        "profiled 2026-11-22: prune with bitmaps costs 130-250 ms on 100 SF10 files (reading "
        "the bitmap columns of every file even when no file can be skipped), plus Spark "
        "planning 100 explicit paths. Fixed since this run: read() reads the folder itself when "
        "prune keeps every file; still open: read bitmap row groups only for files alive after "
        "the file-level pass (segments written with small row groups)."
    ),
}
