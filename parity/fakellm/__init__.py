"""The scripted fake LLM: parity-stream/1 (docs/parity-stream.md), OpenAI chat/responses,
Anthropic messages, Gemini, and fixture tools (directly and through an MCP server). See
docs/fakellm.md.

The public surface below loads on first use (`parity.lazy`): `python -m
parity.fakellm.mcp_stdio`, started once per agent session, imports this package too, and
must not pay for the HTTP server's imports (nor trip runpy's "found in sys.modules"
warning).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from parity.lazy import surface

if TYPE_CHECKING:
    from parity.fakellm.mcp_stdio import mcp_server_entry
    from parity.fakellm.run import Run
    from parity.fakellm.server import FakeLLM
    from parity.fakellm.thread import FakeLLMThread

__all__ = [
    "FakeLLM",
    "FakeLLMThread",
    "Run",
    "mcp_server_entry",
]

__getattr__ = surface(
    __name__,
    {
        "FakeLLM": "parity.fakellm.server",
        "Run": "parity.fakellm.run",
        "FakeLLMThread": "parity.fakellm.thread",
        "mcp_server_entry": "parity.fakellm.mcp_stdio",
    },
)
