"""A build in a child process, optionally killing itself (SIGKILL) at a chosen
point: ``python tests/_child_build.py ROOT RUNNER CRASH``.

RUNNER is ``inprocess`` or ``spark``; CRASH is ``none``, ``segment:N`` (after the
N-th segment is written), ``commit`` (segments written, before the manifest
commit), ``publish`` (temporary manifest written, before it is linked) or
``vacuum`` (committed, before cleanup)."""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import skipindex as si
from skipindex import build, indexer
from skipindex.store import manifest, vacuum

SPECS = [si.MinMax("id"), si.BitSlicedBitmap("id"), si.Bloom("id")]


def _die(*_: Any, **__: Any) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _arm(crash: str) -> None:
    if crash.startswith("segment:"):
        limit, real, written = int(crash.split(":")[1]), indexer.write_segment, []

        def write_then_die(*args: Any, **kwargs: Any) -> Any:
            ref = real(*args, **kwargs)
            written.append(ref)
            if len(written) >= limit:
                _die()
            return ref

        indexer.write_segment = write_then_die  # type: ignore[assignment]
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
        from skipindex._spark import local_session

        spark = local_session(2)
        report = si.build_index(root, SPECS, spark=spark)
    else:
        report = build.build_with(root, SPECS, build.InProcessRunner())
    print(f"built version {report.version} after {report.attempts} attempt(s)", flush=True)


if __name__ == "__main__":
    main()
