"""Fixtures shared by the harness's tests: a live fake LLM, and a throwaway project.

Helpers that are not fixtures live in `tests/support/` and are imported as
`tests.support.<module>` (the repository root is on `pythonpath`, pyproject.toml).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from parity.fakellm.server import FakeLLM
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
