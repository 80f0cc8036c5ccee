"""Why a target is missed: the profile of the code as of the date below.

Written by hand from cProfile runs (see each entry); RESULTS.md shows an entry
when the target it names is missed. Re-profile and update after changes to
skipindex, then ``python bench/run.py --report`` re-renders without re-measuring.
"""

from __future__ import annotations

CAUSES: dict[str, str] = {}
