"""Fixture tools for non-DSH agents: a stdio MCP server forwarding to the fake.

`python -m parity.fakellm.mcp_stdio --base <run base url>` lists the run's tools from
`{base}/catalog` and forwards every call to `{base}/tools/call`, so recording, delays
and hangs stay in the fake server. When the agent cancels a call (MCP
`notifications/cancelled`) or exits, the forwarded HTTP request is dropped and the
server records it as aborted. The `mcp` SDK is imported only by `main`, so importing
this module (for `mcp_server_entry`) stays cheap.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Sequence
from typing import Any

SERVER_NAME = "parity"

VIA_HEADER = "X-Parity-Via"
"""Sent with every forwarded call so the fake records it with dialect `mcp`."""


def mcp_server_entry(run_base: str) -> dict[str, Any]:
    """The ACP `McpServer` (stdio) object that starts this bridge for one run.

    The driver appends it to `session/new.mcpServers` for targets that get fixture
    tools through MCP.
    """
    return {
        "name": SERVER_NAME,
        "command": sys.executable,
        "args": ["-m", "parity.fakellm.mcp_stdio", "--base", run_base],
        "env": [],
    }


def _tool_json(tool: dict[str, Any]) -> dict[str, Any]:
    """A catalog tool entry as an MCP `Tool` in wire form."""
    return {
        "name": tool["name"],
        "description": tool.get("description", ""),
        "inputSchema": tool.get("parameters") or {"type": "object", "properties": {}},
    }


def _result_json(status: int, body: Any) -> dict[str, Any]:
    """The fake's `/tools/call` answer as an MCP `CallToolResult` in wire form."""
    if status == 200 and isinstance(body, dict):
        return {"content": body.get("content", []), "isError": bool(body.get("isError"))}
    why = body.get("error") if isinstance(body, dict) else body
    return {
        "content": [{"type": "text", "text": f"parity fake refused the call: {why}"}],
        "isError": True,
    }


async def serve(base: str) -> None:
    """Serve MCP on stdin/stdout until the client closes it."""
    import httpx
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    numbers = itertools.count(1)
    async with httpx.AsyncClient(base_url=base, timeout=None, headers={VIA_HEADER: "mcp"}) as http:

        async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
            catalog = (await http.get("/catalog")).json()
            tools = [types.Tool.model_validate(_tool_json(t)) for t in catalog.get("tools", [])]
            return types.ListToolsResult(tools=tools)

        async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
            call_id = f"mcp-{ctx.request_id if ctx.request_id is not None else next(numbers)}"
            body = {"name": params.name, "callId": call_id, "arguments": params.arguments or {}}
            response = await http.post("/tools/call", json=body)
            return types.CallToolResult.model_validate(
                _result_json(response.status_code, response.json())
            )

        server: Server[Any] = Server(SERVER_NAME, on_list_tools=list_tools, on_call_tool=call_tool)
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of `python -m parity.fakellm.mcp_stdio`."""
    parser = argparse.ArgumentParser(prog="python -m parity.fakellm.mcp_stdio")
    parser.add_argument("--base", required=True, help="the run's base URL on the fake LLM")
    args = parser.parse_args(argv)
    import anyio

    anyio.run(serve, args.base.rstrip("/"))


if __name__ == "__main__":
    main()
