"""Index damage names its way out: every public verb runs inside :func:`repairable`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from skipindex.errors import IndexCorruptError, IndexFormatVersionError

__all__ = ["repair_hint", "repairable"]


def repair_hint(user_root: str) -> str:
    return (
        f"repair it with `skipindex repair {user_root}` (Python: si.repair(path)), which falls "
        "back to the last readable version and re-indexes what was lost"
    )


@contextmanager
def repairable(user_root: str) -> Iterator[None]:
    """Re-raise index damage with the repair command appended (once)."""
    try:
        yield
    except IndexFormatVersionError:
        raise  # not damage: a newer skipindex wrote it, upgrading is the way out
    except IndexCorruptError as exc:
        if "skipindex repair" in str(exc):
            raise
        raise IndexCorruptError(f"{exc}; {repair_hint(user_root)}") from exc
