"""How many files of a side a join's keys are expected to skip, before any is read.

Reading a side's keys costs in proportion to its matching rows (700,000 of
them: 0.1-0.3 s in the driver, as much as a Spark key query), and they pay
only where some file of the other side holds none of them. Both sides' files'
min-max and the rows the key side's bitmaps count say, before a key is read,
where the keys can lie: each kept file of the key side holds its matching
rows' keys within its ``[min, max]``. Spread evenly there (at least
``1 / repeats`` of a key per matching row, at most one per integer of the
range), they give each file of the pruned side an expected number of keys
within its own ``[min, max]``, ``e``, and the file holds none with probability
``exp(-e)``; the sum over its files is the files the keys are expected to skip.

The estimate is only as good as its two evenness assumptions, so the caller
makes it only where both sides' files are clustered by the key (each spans a
small part of it): there a file's range is what decides whether keys fall in
it. On a side whose every file spans the whole key range, rows may still keep
their keys together (an order's lines shipped in the months after it), which
no range can show. Keys that clump within a key-side file skip more than the
estimate; it never decides what is kept, only whether keys are looked for.
"""

from __future__ import annotations

import numpy as np

from skipindex.sql.file_ranges import FileBounds

__all__ = ["expected_keys", "likely_skips"]


def expected_keys(
    keys: FileBounds, matching: np.ndarray, pruned: FileBounds, repeats: float
) -> np.ndarray:
    """Per file of ``pruned``, the keys expected within its range: each file of
    ``keys`` spreads ``matching`` rows' keys (each key on up to ``repeats`` rows)
    evenly over its ``[min, max]``. A ``pruned`` file of only NULLs expects none."""
    lows = keys.lows[keys.holding].astype(np.float64)
    ends = keys.highs[keys.holding].astype(np.float64) + 1.0  # integers: [min, max + 1)
    widths = ends - lows
    count = np.minimum(np.asarray(matching, np.float64)[keys.holding] / repeats, widths)
    density = count / widths
    # The keys' density is a step function: +density at each low, -density at each
    # end; its integral up to each step is a running sum, linear between steps.
    steps = np.concatenate([lows, ends])
    changes = np.concatenate([density, -density])
    order = np.argsort(steps, kind="stable")
    steps, changes = steps[order], changes[order]
    level = np.cumsum(changes)
    integral = np.concatenate([[0.0], np.cumsum(level[:-1] * np.diff(steps))])

    def up_to(points: np.ndarray) -> np.ndarray:
        if not len(steps):
            return np.zeros(len(points))
        return np.asarray(np.interp(points, steps, integral, left=0.0, right=integral[-1]))

    within = up_to(pruned.highs.astype(np.float64) + 1.0) - up_to(pruned.lows.astype(np.float64))
    return np.where(pruned.holding, np.maximum(within, 0.0), 0.0)


def likely_skips(expected: np.ndarray) -> float:
    """The files expected to hold none of the keys, each file expecting ``expected``."""
    return float(np.exp(-np.asarray(expected, np.float64)).sum())
