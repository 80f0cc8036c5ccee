"""The listing si.sql holds for a registered view (sql/held_listing.py), with a
stand-in for Spark's file index: listed again exactly when the index holds a new
map of files, and not held where the index cannot be asked (no Spark here)."""

from __future__ import annotations

from typing import Any

from skipindex.sql.held_listing import HeldListing, same_files
from skipindex.store.listing import DataFile, Listing


class _Map:
    """A JVM map as py4j shows it: ``equals`` is Spark's (identity here)."""

    def equals(self, other: Any) -> bool:
        return other is self


class _Index:
    def __init__(self) -> None:
        self.files: Any = _Map()

    def leafDirToChildrenFiles(self) -> Any:
        if isinstance(self.files, Exception):
            raise self.files
        return self.files


def _listing(*files: tuple[str, int, int]) -> Listing:
    return Listing.of(DataFile(path, size, mtime) for path, size, mtime in files)


def test_listed_again_only_when_sparks_index_listed_again():
    index, taken = _Index(), []

    def relist() -> Any:
        taken.append(len(taken))
        return f"listing {len(taken)}"

    held = HeldListing(index, index.files, "listing 0", relist)  # type: ignore[arg-type]
    assert [held.current(), held.current()] == ["listing 0", "listing 0"]
    assert taken == []
    index.files = _Map()  # REFRESH TABLE: a new map of files
    assert [held.current(), held.current()] == ["listing 1", "listing 1"]
    assert taken == [0]
    index.files = RuntimeError("the JVM is gone")
    assert held.current() is None  # then every prune lists the table itself


def test_same_files_compares_paths_sizes_mtimes_and_other_formats():
    one = _listing(("a.parquet", 10, 1), ("b.parquet", 20, 2))
    assert same_files(one, _listing(("a.parquet", 10, 1), ("b.parquet", 20, 2)))
    assert not same_files(one, _listing(("a.parquet", 10, 1)))
    assert not same_files(one, _listing(("a.parquet", 10, 1), ("b.parquet", 21, 2)))
    assert not same_files(one, _listing(("a.parquet", 10, 1), ("b.parquet", 20, 3)))
    assert not same_files(one, _listing(("a.parquet", 10, 1), ("c.parquet", 20, 2)))
    other = Listing.of([DataFile("a.parquet", 10, 1), DataFile("b.parquet", 20, 2)], ["x.csv"])
    assert not same_files(one, other)
