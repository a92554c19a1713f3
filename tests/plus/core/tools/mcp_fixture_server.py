"""A tiny MCP server written with the official SDK, for the core's MCP client tests.

Run as a script: `python mcp_fixture_server.py` serves stdio; with `http PORT` it serves
streamable HTTP on 127.0.0.1:PORT.
"""

from __future__ import annotations

import asyncio
import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

# Instructions ending in whitespace JavaScript's trimEnd cuts and Python's rstrip keeps
# (U+FEFF), and one resource: the connection's resource side is tested against these.
server = MCPServer("fixture", instructions="Fixture tools.\n\ufeff \n")


@server.resource("mem://note", name="note", mime_type="text/plain")
def note() -> str:
    """A short note."""
    return "hello"


@server.tool()
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@server.tool()
def where() -> str:
    """Report the working directory and FIXTURE_ENV."""
    return f"{os.getcwd()}|{os.environ.get('FIXTURE_ENV', '')}"


@server.tool()
async def sleepy() -> str:
    """Never return on its own."""
    await asyncio.sleep(3600)
    return "woke"


@server.tool()
def fail() -> str:
    """Always fail (a reported tool error, not a crash)."""
    raise ToolError("boom")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
