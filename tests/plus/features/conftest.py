"""The increment tests run acp-plus in its shipped `plus` profile (docs/acp-plus.md).

The shared `world` fixture defaults to the `native` profile, because most of tests/plus
checks the baseline wire; here it defaults to `plus`, and a test that needs the native
profile still says `world(profile="native")`.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from plus_agent import WorldFactory, make_world

from parity.fakellm.thread import FakeLLMThread


@pytest.fixture
def world(fake_thread: FakeLLMThread, tmp_path: Path) -> WorldFactory:
    """`make_world` with `profile="plus"` unless a test asks otherwise."""
    return functools.partial(make_world(fake_thread, tmp_path), profile="plus")
