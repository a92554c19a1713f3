"""Streamable-HTTP MCP fixture tools, driven by the official `mcp` client over loopback."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from parity.fakellm.mcp_http import McpHttp
from parity.fakellm.server import FakeLLM
from tests.support.fakellm import aborted, tool, wait_for


@pytest.fixture
async def mcp_http(fake: FakeLLM) -> AsyncIterator[McpHttp]:
    server = McpHttp(fake.url)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@asynccontextmanager
async def session(url: str) -> AsyncIterator[ClientSession]:
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        yield client


async def test_each_run_gets_its_own_tools(fake: FakeLLM, mcp_http: McpHttp) -> None:
    one = fake.open_run("one", llm=[], tools=[tool("echo")], catalog={})
    two = fake.open_run("two", llm=[], tools=[tool("other", text="2", is_error=True)], catalog={})
    entry = mcp_http.entry("one")
    assert entry == {
        "type": "http",
        "name": "parity",
        "url": f"{mcp_http.url}/runs/one/mcp",
        "headers": [],
    }
    async with session(entry["url"]) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["echo"]
        result = await client.call_tool("echo", {"a": 1})
    async with session(mcp_http.entry("two")["url"]) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["other"]
        failed = await client.call_tool("other", {})
    assert isinstance(result, types.CallToolResult) and not result.is_error
    assert [c.model_dump(exclude_none=True) for c in result.content] == [
        {"type": "text", "text": "tool result"}
    ]
    assert isinstance(failed, types.CallToolResult) and failed.is_error
    calls = [
        (r.dialect, r.body["name"]) for r in one.requests + two.requests if r.path == "/tools/call"
    ]
    assert calls == [("mcp", "echo"), ("mcp", "other")]


async def test_fake_starts_one_mcp_http_server_on_demand(fake: FakeLLM) -> None:
    run = fake.open_run("d", llm=[], tools=[tool("echo")], catalog={})
    first, second = await fake.mcp_http_entry("d"), await fake.mcp_http_entry("other")
    assert first["url"].rsplit("/runs/", 1)[0] == second["url"].rsplit("/runs/", 1)[0]
    async with session(first["url"]) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["echo"]
    # The bridge's own listing is harness plumbing: served, not recorded.
    assert [r.path for r in run.requests if r.path == "/catalog"] == []


async def test_cancelled_call_is_recorded_as_aborted(fake: FakeLLM, mcp_http: McpHttp) -> None:
    run = fake.open_run("h", llm=[], tools=[tool("stuck", hang=True)], catalog={})
    async with session(mcp_http.entry("h")["url"]) as client:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(client.call_tool("stuck", {}), 0.5)
        await wait_for(aborted(run))
    assert run.in_flight == 0
