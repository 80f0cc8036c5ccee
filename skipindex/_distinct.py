"""Sorted distinct values of a numpy array, by a sort and a mask.

``np.unique`` without ``return_inverse`` hashes since numpy 2.3: measured here
(numpy 2.4, one core), 1,000,000 int64 took 2.9 s against 0.06 s sorted, and a
join's 16,384 keys 5 ms against 0.2 ms. Every plain ``np.unique`` goes through
:func:`distinct` instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["distinct"]


def distinct(values: Any) -> np.ndarray:
    """The sorted distinct values of ``values`` (flattened), as ``np.unique`` gives."""
    ordered = np.sort(np.asarray(values).ravel())
    if ordered.size < 2:
        return ordered
    keep = np.empty(ordered.size, dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    if ordered.dtype.kind in "fc":  # NaNs sort last and are one value, as np.unique has them
        keep[1:] &= ~(np.isnan(ordered[1:]) & np.isnan(ordered[:-1]))
    return ordered[keep]
