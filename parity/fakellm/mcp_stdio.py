"""Fixture tools for non-DSH agents: a stdio MCP server forwarding to the fake.

`python -m parity.fakellm.mcp_stdio --base <run base url>` lists the run's tools from
`{base}/catalog` and forwards every call to `{base}/tools/call`, so recording, delays
and hangs stay in the fake server. When the agent cancels a call (MCP
`notifications/cancelled`) or exits, the forwarded HTTP request is dropped and the
server records it as aborted. The `mcp` SDK is imported only by `main`, so importing
this module (for `mcp_server_entry`) stays cheap.

A scenario's `mcp_resources` (served in the catalog as `mcpResources`) makes the stdio
bridge a resource server too (`parity.fakellm.mcp_resources`); without it the bridge
declares no resources capability, as a tools-only server does.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the SDK is heavy: imported when a server is built, not with this module
    import httpx
    from mcp.server.lowlevel import Server

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


def fixture_server(
    http: httpx.AsyncClient,
    base_of: Callable[[Any], str],
    resources: Mapping[str, Any] | None = None,
) -> Server[Any]:
    """An MCP server (official SDK, low-level API) listing and calling a run's tools.

    `base_of(ctx)` gives the run's base URL for a request context; every call is
    forwarded to `{base}/tools/call` through `http`, which must send `VIA_HEADER`.
    With `resources` (a scenario's `mcp_resources`) it also serves those resources and
    templates, and so declares the resources capability.
    """
    import mcp_types as types
    from mcp.server.lowlevel import Server

    numbers = itertools.count(1)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        catalog = (await http.get(f"{base_of(ctx)}/catalog")).json()
        tools = [types.Tool.model_validate(_tool_json(t)) for t in catalog.get("tools", [])]
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        call_id = f"mcp-{ctx.request_id if ctx.request_id is not None else next(numbers)}"
        body = {"name": params.name, "callId": call_id, "arguments": params.arguments or {}}
        response = await http.post(f"{base_of(ctx)}/tools/call", json=body)
        try:
            answer: Any = response.json()
        except ValueError:  # e.g. the run was closed: a plain-text 404
            answer = response.text
        return types.CallToolResult.model_validate(_result_json(response.status_code, answer))

    handlers: dict[str, Any] = {}
    if resources is not None:
        from parity.fakellm.mcp_resources import resource_handlers

        handlers = resource_handlers(resources)
    return Server(SERVER_NAME, on_list_tools=list_tools, on_call_tool=call_tool, **handlers)


async def serve(base: str) -> None:
    """Serve MCP on stdin/stdout until the client closes it."""
    import httpx
    from mcp.server.stdio import stdio_server

    async with httpx.AsyncClient(timeout=None, headers={VIA_HEADER: "mcp"}) as http:
        # The capabilities are fixed at `initialize`: whether this run serves resources is
        # read from its catalog before the server answers anything.
        catalog = (await http.get(f"{base}/catalog")).json()
        server = fixture_server(http, lambda _ctx: base, catalog.get("mcpResources"))
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
