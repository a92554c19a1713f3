"""Fixtures shared by every acp-plus test, and the import path of their helper modules.

The helpers (`plus_agent`: the real process; `plus_stream_server`: an in-test
parity-stream server) live here, at the top of tests/plus, and are imported by name. The
directories are not packages, so this directory is put on sys.path explicitly: pytest's
default import mode would add it for this conftest anyway, `--import-mode=importlib` would not.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from plus_agent import WorldFactory, make_world  # noqa: E402
from plus_stream_server import ParityServer  # noqa: E402

from parity.fakellm.thread import FakeLLMThread  # noqa: E402


@pytest.fixture(scope="session")
def fake_thread() -> Iterator[FakeLLMThread]:
    """One fake LLM server (in its own thread) for the whole session; each test opens its
    own run. For tests that spawn the real acp-plus process."""
    server = FakeLLMThread()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def world(fake_thread: FakeLLMThread, tmp_path: Path) -> WorldFactory:
    """Make a `World`: `world(llm=[...], tools=[...], extra_config="...")`."""
    return make_world(fake_thread, tmp_path)


@pytest.fixture
async def server() -> AsyncIterator[ParityServer]:
    """A started in-test parity-stream server; stopped after the test."""
    srv = ParityServer()
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop()
