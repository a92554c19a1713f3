"""The scripted fake LLM: parity-stream/1 (docs/parity-stream.md), OpenAI chat/responses,
Anthropic messages, Gemini, and fixture tools (directly and through an MCP server). See
docs/fakellm.md; `dialects` is the registry of the wires.

Nothing is imported here: `python -m parity.fakellm.mcp_stdio`, started once per agent
session, imports this package too, and must not pay for the HTTP server's imports (nor
trip runpy's "found in sys.modules" warning).
"""
