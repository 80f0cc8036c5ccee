"""Run sqlglot's recursive parser on inputs nested thousands of levels deep."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TypeVar

from skipindex.errors import InvalidPredicateError

__all__ = ["on_deep_stack", "shorten"]


_T = TypeVar("_T")
_DEEP_STACK_BYTES = 512 * 1024 * 1024  # virtual: pages are only touched as deep as needed
# About 100 bytes of C stack per Python frame was measured for sqlglot's parser, so a
# million frames (tens of thousands of nesting levels) stays well inside the stack above.
_DEEP_RECURSION_LIMIT = 1_000_000
_deep_lock = threading.Lock()


def on_deep_stack(fn: Callable[[str], _T], arg: str) -> _T:
    """Run ``fn(arg)``; if it recurses too deep, run it again on a thread with a big stack.

    The recursion limit is process-wide, so it is raised only while that thread
    runs (under a lock) and restored afterwards.
    """
    try:
        return fn(arg)
    except RecursionError:
        pass
    outcome: list[_T] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            outcome.append(fn(arg))
        except BaseException as exc:  # handed to the caller's thread
            failure.append(exc)

    with _deep_lock:
        old_limit = sys.getrecursionlimit()
        old_size = threading.stack_size(_DEEP_STACK_BYTES)
        try:
            sys.setrecursionlimit(max(old_limit, _DEEP_RECURSION_LIMIT))
            thread = threading.Thread(target=target, name="skipindex-deep-parse", daemon=True)
            thread.start()
            thread.join()
        finally:
            threading.stack_size(old_size)
            sys.setrecursionlimit(old_limit)
    if failure:
        if isinstance(failure[0], RecursionError):
            raise InvalidPredicateError(
                f"predicate {shorten(arg)} is nested too deeply to parse"
            ) from None
        raise failure[0]
    return outcome[0]


def shorten(text: str, limit: int = 200) -> str:
    """A predicate's text for an error message, cut at ``limit`` characters."""
    return repr(text if len(text) <= limit else text[:limit] + "...")
