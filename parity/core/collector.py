"""Pausing Python's cyclic garbage collector while the checks after a run work.

The checks of a big run (normalization, the snapshot YAML written and read back, the
conformance check, the diff) build millions of small dicts, lists and YAML nodes, none
of them in a cycle: reference counting frees them all. Yet each allocation counts
towards the collector's next pass, and its full passes walk every object alive, the
transcript's hundreds of thousands of parsed frames among them, again and again: for a
flood of 200,000 updates that made reading its snapshot back four times slower
(`bench/bench_flood.py`, docs/performance.md). Pausing the collector for the checks'
span changes no result; what cyclic garbage they leave is collected once it runs again.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_depth = 0
"""How many `paused` blocks are open, in any thread: the collector resumes when the last
ends, and only if it was running when the first began."""
_was_enabled = False


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """The cyclic collector off for the block (nested and threaded blocks included)."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
