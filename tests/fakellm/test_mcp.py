"""The stdio MCP bridge, spawned for real and driven by the official `mcp` client.

It must list the run's fixture tools from the catalog and forward each call to the
fake, which records it (dialect `mcp`) and applies delays and hangs itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from parity.fakellm.mcp_stdio import mcp_server_entry
from parity.fakellm.run import Run
from tests.support.fakellm import OpenRun, aborted, tool, wait_for


@asynccontextmanager
async def session(run: Run) -> AsyncIterator[ClientSession]:
    entry = mcp_server_entry(run.base_url)
    params = StdioServerParameters(command=entry["command"], args=entry["args"])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        yield client


def test_entry_is_an_acp_stdio_mcp_server(open_run: OpenRun) -> None:
    entry = mcp_server_entry("http://127.0.0.1:1/runs/r1")
    assert entry["name"] == "parity" and entry["env"] == []
    assert entry["args"] == [
        "-m", "parity.fakellm.mcp_stdio", "--base", "http://127.0.0.1:1/runs/r1",
    ]  # fmt: skip
    assert entry["command"].startswith("/")


async def test_lists_and_calls_fixture_tools(open_run: OpenRun) -> None:
    run = open_run(
        [],
        tools=[
            tool("echo"),
            tool("fail", text="it broke", is_error=True),
        ],
    )
    async with session(run) as client:
        listed = await client.list_tools()
        ok = await client.call_tool("echo", {"x": 1})
        bad = await client.call_tool("fail", {})
        refused = await client.call_tool("nope", {})
    assert [(t.name, t.description, t.input_schema) for t in listed.tools] == [
        ("echo", "Return a deterministic result.", {"type": "object", "properties": {}}),
        ("fail", "Return a deterministic result.", {"type": "object", "properties": {}}),
    ]
    assert isinstance(ok, types.CallToolResult) and isinstance(bad, types.CallToolResult)
    assert [c.model_dump(exclude_none=True) for c in ok.content] == [
        {"type": "text", "text": "tool result"}
    ]
    assert not ok.is_error and bad.is_error
    assert isinstance(refused, types.CallToolResult) and refused.is_error
    assert [c.model_dump(exclude_none=True) for c in refused.content] == [
        {"type": "text", "text": "parity fake refused the call: unknown tool: nope"}
    ]
    calls = [r for r in run.requests if r.path == "/tools/call"]
    assert [(r.dialect, r.body["name"], r.body["arguments"]) for r in calls] == [
        ("mcp", "echo", {"x": 1}),
        ("mcp", "fail", {}),
        ("mcp", "nope", {}),
    ]
    # The bridge's own listing is harness plumbing, not the agent's traffic: unrecorded.
    assert [r.path for r in run.requests if r.path == "/catalog"] == []


async def test_cancelled_hanging_tool_is_recorded_as_aborted(open_run: OpenRun) -> None:
    run = open_run([], tools=[tool("stuck", hang=True)])
    async with session(run) as client:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(client.call_tool("stuck", {}), 0.5)
        # the bridge drops its HTTP request when the call is cancelled, session still open
        await wait_for(aborted(run))
    assert run.requests[-1].body["name"] == "stuck"
