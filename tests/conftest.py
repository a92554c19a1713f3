"""Fixtures shared by the harness's tests: a live fake LLM, and a throwaway project.

Helpers that are not fixtures live in `tests/support/` and are imported as
`tests.support.<module>` (the repository root is on `pythonpath`, pyproject.toml).
"""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from parity.fakellm.server import FakeLLM
from tests.support import schedule
from tests.support.project import GHOST, TEXT_SCENARIO, Project, mini_target


@pytest.fixture
async def fake() -> AsyncIterator[FakeLLM]:
    """A started fake LLM server on 127.0.0.1 (a free port); stopped after the test."""
    server = FakeLLM()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """A project with targets mini and mini-b (same agent) and ghost (never available),
    and one scenario `demo/text`."""
    proj = Project(tmp_path / "proj")
    proj.write("parity.toml", mini_target("mini") + mini_target("mini-b") + GHOST)
    proj.write("scenarios/demo/text.yaml", TEXT_SCENARIO)
    return proj


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Slow first (`tests.support.schedule.rank`); a stable sort, so the order within a
    rank is the collection order."""
    items.sort(key=lambda item: schedule.rank(item.nodeid))


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection built (3,100 items, their marks, every test module) lives to the
    end of the session: frozen, it is left out of the cyclic collector's passes, which
    walked it again and again (in-process tests of checks/, view/, scenario/ and
    plus/core/tools/: 1.52 -> 0.65 s of CPU in the collector; docs/performance.md)."""
    gc.freeze()


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under `--dist loadgroup` (make test): xdist's scope scheduling, with the groups of
    `tests.support.schedule.scope`."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped]

    root = Path(str(config.rootpath))
    grouped = schedule.grouped_modules(root, (root / "tests").rglob("test_*.py"))

    class Grouped(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return schedule.scope(nodeid, grouped)

    return Grouped(config, log)
