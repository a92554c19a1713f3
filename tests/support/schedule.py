"""How `make test` spreads the suite over its xdist workers (`--dist loadgroup`).

Two rules, applied by `tests/conftest.py`:

- **Groups** (`scope`). Items that share something costly run on one worker, one after
  another: the tests of a module that defines a module- or class-scoped fixture (a
  `parity run` of a whole throwaway project, a built wheel; under plain `--dist load`
  each worker that got one of them computed the fixture again), and the items of one
  scenario file (its target items and parity items share the scenario's runs through a
  file lock: spread over two workers, a parity item waited, idle, for the other
  worker's live native run). xdist's own `xdist_group` marks do not group with pytest
  9.2 (pytest-xdist 3.8 renames a node id pytest no longer reads), so the conftest
  hands xdist a scheduler whose scopes are these.
- **Slow first** (`rank`). The tests that run the harness or agents in subprocesses
  start before the in-process unit tests, so the last items to finish are short ones
  and neither worker idles at the end waiting for the other's long test. xdist hands
  out the bigger groups first, then single items in this order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

SLOW_FIRST = (
    "tests/suite/",
    "tests/explore/",
    "tests/cli/",
    "tests/report/",
    "tests/capture/",
    "scenarios/",
    "tests/targets/",
    "tests/view/",
    "tests/driver/",
)
"""Node id prefixes, slowest kind first (measured: docs/performance.md); others after."""

SHARED_FIXTURE = re.compile(r"@pytest\.fixture\([^)]*scope=\"(?:module|class)\"")


def rank(nodeid: str) -> int:
    """The item's place in `SLOW_FIRST` (its length for any other item)."""
    for place, prefix in enumerate(SLOW_FIRST):
        if nodeid.startswith(prefix):
            return place
    return len(SLOW_FIRST)


def grouped_modules(root: Path, files: Iterable[Path]) -> frozenset[str]:
    """The test modules among `files` (paths relative to `root`, as in node ids) that
    define a module- or class-scoped fixture."""
    return frozenset(
        path.relative_to(root).as_posix()
        for path in files
        if SHARED_FIXTURE.search(path.read_text(encoding="utf-8"))
    )


def scope(nodeid: str, grouped: frozenset[str]) -> str:
    """The unit xdist schedules the item in: its scenario file, its module when the
    module is in `grouped`, else the item alone (its node id)."""
    path = nodeid.partition("::")[0]
    if path.startswith("scenarios/") and path.endswith(".yaml"):
        return path
    if path in grouped:
        return path
    return nodeid
