"""Fixtures for the fake LLM tests: runs on the shared live server (`fake`, tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from parity.fakellm.run import Run
from parity.fakellm.server import FakeLLM
from parity.scenario.model import DEFAULT_CATALOG, Tool


@pytest.fixture
def open_run(fake: FakeLLM) -> Callable[..., Run]:
    """`open_run(llm, tools=None)`: a run with a fresh id and the default catalog."""
    counter = iter(range(1_000_000))

    def _open(llm: list[dict[str, Any]], tools: list[Tool] | None = None) -> Run:
        run_id = f"r{next(counter)}"
        return fake.open_run(run_id, llm=llm, tools=tools or [], catalog=DEFAULT_CATALOG)

    return _open
