"""How much memory and how many threads a prune may use: every such knob in one place.

A prune reads a table's index payloads a *unit* of segments at a time, keeps
what fits in the process's cache, and evaluates what does not a smaller group
at a time (:mod:`skipindex.pruning.streamed`). Each knob bounds one cost:

* ``working_bytes``: the payloads one group holds, and the decoded bitmaps it
  may make beyond the cache while it is evaluated (memory per thread);
* ``unit_bytes``: the segment file bytes a unit spans (a refresh that adds
  segments leaves the other units' cache entries good; a unit is also what a
  thread evaluates at once);
* ``threads`` and ``threaded_files``: units are evaluated on this many threads
  (0 or 1: in turn) once a table has this many files; below, a thread's start
  costs more than the work it shares.

The defaults come from the environment (``SKIPINDEX_PRUNE_BYTES``,
``SKIPINDEX_UNIT_BYTES``, ``SKIPINDEX_PRUNE_THREADS``), read once; a call sets
its own with ``prune(..., options=PruneOptions(threads=1))``, and a block (for
the prunes ``read`` and ``sql`` run) with ``with using(PruneOptions(...)):``.
The caches' size is the process's, not a call's: ``SKIPINDEX_CACHE_BYTES``
(:mod:`skipindex.store.cache`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, fields

from skipindex.errors import InvalidOptionError

__all__ = ["PruneOptions", "active", "from_environment", "using"]

_MiB = 2**20


@dataclass(frozen=True)
class PruneOptions:
    """Memory and threads of a prune (see the module's notes for each cost)."""

    working_bytes: int = 64 * _MiB
    unit_bytes: int = 16 * _MiB
    threads: int = os.cpu_count() or 1
    threaded_files: int = 1 << 17

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if type(value) is not int or value < 0:
                raise InvalidOptionError(
                    f"PruneOptions.{field.name} must be an integer of at least 0, not {value!r}"
                )


_ENVIRONMENT = {
    "working_bytes": "SKIPINDEX_PRUNE_BYTES",
    "unit_bytes": "SKIPINDEX_UNIT_BYTES",
    "threads": "SKIPINDEX_PRUNE_THREADS",
}


def from_environment(environ: dict[str, str] | None = None) -> PruneOptions:
    """The defaults, with what the environment sets; a value that is not a
    number names its variable."""
    environ = dict(os.environ if environ is None else environ)
    given: dict[str, int] = {}
    for name, variable in _ENVIRONMENT.items():
        text = environ.get(variable, "").strip()
        if not text:
            continue
        try:
            given[name] = int(text)
        except ValueError:
            raise InvalidOptionError(f"{variable}={text!r} is not an integer") from None
    try:
        return PruneOptions(**given)
    except InvalidOptionError as exc:
        variables = ", ".join(f"{_ENVIRONMENT[n]}={v}" for n, v in given.items())
        raise InvalidOptionError(f"{exc} (from {variables})") from None


DEFAULT = from_environment()

_active: ContextVar[PruneOptions | None] = ContextVar("skipindex_prune_options", default=None)


def active() -> PruneOptions:
    """The options of the prunes under way (the environment's outside :func:`using`)."""
    return _active.get() or DEFAULT


@contextmanager
def using(options: PruneOptions | None) -> Iterator[PruneOptions]:
    """In the block, prunes use ``options`` (None: those already active)."""
    chosen = options or active()
    token = _active.set(chosen)
    try:
        yield chosen
    finally:
        _active.reset(token)
