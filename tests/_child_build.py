"""A build in a child process, optionally killing itself (SIGKILL) at a chosen
point: ``python tests/_child_build.py ROOT RUNNER CRASH``.

RUNNER is ``inprocess`` or ``spark``; CRASH is ``none``, ``segment:N`` (after the
N-th segment is written), ``rowgroup:N`` (after the N-th row group, one file each,
is appended to a segment not yet closed), ``commit`` (segments written, before the manifest
commit), ``publish`` (temporary manifest written, before it is linked) or
``vacuum`` (committed, before cleanup)."""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import skipindex as si
from skipindex.indexing import build, indexer
from skipindex.store import manifest, segments, vacuum

SPECS = [si.MinMax("id"), si.BitSlicedBitmap("id"), si.Bloom("id")]


def _die(*_: Any, **__: Any) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _arm(crash: str) -> None:
    if crash.startswith("segment:"):
        limit, real, written = int(crash.split(":")[1]), indexer.index_files, []

        def write_then_die(*args: Any, **kwargs: Any) -> Any:
            ref = real(*args, **kwargs)
            written.append(ref)
            if len(written) >= limit:
                _die()
            return ref

        indexer.index_files = write_then_die  # type: ignore[assignment]
    elif crash.startswith("rowgroup:"):  # inside a segment: its footer not yet written
        limit, append, groups = int(crash.split(":")[1]), segments.SegmentWriter.write, []

        def append_then_die(self: segments.SegmentWriter, table: Any) -> None:
            append(self, table)
            groups.append(len(table))
            if len(groups) >= limit:
                _die()

        indexer.ROW_GROUP_BYTES = 1  # one file per row group
        segments.SegmentWriter.write = append_then_die  # type: ignore[method-assign]
    elif crash == "commit":
        build.commit = _die  # type: ignore[assignment]
    elif crash == "publish":
        manifest._publish = _die  # type: ignore[assignment]
    elif crash == "vacuum":
        vacuum.collect = _die  # type: ignore[assignment]


def main() -> None:
    root, runner, crash = sys.argv[1:4]
    _arm(crash)
    if runner == "spark":
        from skipindex.spark.session import local_session

        spark = local_session(2)
        report = si.build_index(root, SPECS, spark=spark)
    else:
        report = build.build_with(root, SPECS, build.InProcessRunner())
    print(f"built version {report.version} after {report.attempts} attempt(s)", flush=True)


if __name__ == "__main__":
    main()
