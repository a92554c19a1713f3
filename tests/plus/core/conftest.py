"""Fixtures for the core's tests: a live parity-stream server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from core_support import ParityServer


@pytest.fixture
async def server() -> AsyncIterator[ParityServer]:
    """A started in-test parity-stream server; stopped after the test."""
    srv = ParityServer()
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop()
