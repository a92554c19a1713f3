"""The scripted fake LLM: parity-stream/1, OpenAI chat/responses, Anthropic messages, Gemini,
and fixture tools (directly and through an MCP server). See docs/fakellm.md.

The exports are loaded on first use (PEP 562): `python -m parity.fakellm.mcp_stdio`,
started once per agent session, imports this package too, and must not pay for the
HTTP server's imports (nor trip runpy's "found in sys.modules" warning).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from parity.fakellm.mcp_stdio import mcp_server_entry
    from parity.fakellm.server import FakeLLM, Run
    from parity.fakellm.thread import FakeLLMThread

_HOMES = {
    "FakeLLM": "parity.fakellm.server",
    "Run": "parity.fakellm.server",
    "FakeLLMThread": "parity.fakellm.thread",
    "mcp_server_entry": "parity.fakellm.mcp_stdio",
}

__all__ = ["FakeLLM", "FakeLLMThread", "Run", "mcp_server_entry"]


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
