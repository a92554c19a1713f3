"""The scripted fake LLM: parity-stream/1, OpenAI chat/responses, Anthropic messages,
and fixture tools (directly and through an MCP server). See docs/fakellm.md."""

from parity.fakellm.mcp_stdio import mcp_server_entry
from parity.fakellm.server import FakeLLM, Run
from parity.fakellm.thread import FakeLLMThread

__all__ = ["FakeLLM", "FakeLLMThread", "Run", "mcp_server_entry"]
