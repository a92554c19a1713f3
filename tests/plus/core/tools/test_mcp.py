"""MCP tools through the official client: a real stdio server process and a real
streamable-HTTP server on 127.0.0.1, both written with the official SDK."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from plus_agent import REPO
from plus_stream_server import ParityServer, text_response, tool_call_response

from acp_plus.core.agent import Agent, Route
from acp_plus.core.approvals import ApprovalChain
from acp_plus.core.llm.base import Router
from acp_plus.core.llm.parity_stream import ParityStreamProvider
from acp_plus.core.store import SessionStore
from acp_plus.core.tools.base import ToolContext, ToolRegistry, cancelled_text
from acp_plus.core.tools.mcp import (
    HttpServer,
    McpConnection,
    McpStartError,
    StdioServer,
    check_instructions,
    start_servers,
)

FIXTURE = Path(__file__).with_name("mcp_fixture_server.py")


def _stdio(cwd: Path, name: str = "fx", command: str = sys.executable) -> StdioServer:
    return StdioServer(
        name, name, command, (str(FIXTURE),), (("FIXTURE_ENV", "from-spec"),), str(cwd)
    )


@pytest.fixture
async def stdio_conn(tmp_path: Path) -> AsyncIterator[McpConnection]:
    conn = McpConnection(_stdio(tmp_path))
    await conn.start()
    try:
        yield conn
    finally:
        await conn.aclose()


def _ctx(tmp_path: Path) -> ToolContext:
    return ToolContext("s", tmp_path, "c1", 1)


async def test_stdio_tools_are_namespaced_and_callable(
    stdio_conn: McpConnection, tmp_path: Path
) -> None:
    tools = {t.name: t for t in stdio_conn.tools()}
    assert set(tools) == {"mcp__fx__add", "mcp__fx__where", "mcp__fx__sleepy", "mcp__fx__fail"}
    add = tools["mcp__fx__add"]
    assert add.parameters["properties"].keys() == {"a", "b"}
    assert add.description == "Add two integers."
    result = await add.run({"a": 2, "b": 3}, _ctx(tmp_path))
    assert result.content == [{"type": "text", "text": "5"}]
    assert not result.is_error
    where = await tools["mcp__fx__where"].run({}, _ctx(tmp_path))
    # The server runs in the session cwd with the configured environment.
    assert where.content[0]["text"] == f"{tmp_path.resolve()}|from-spec"
    failed = await tools["mcp__fx__fail"].run({}, _ctx(tmp_path))
    assert failed.is_error and "boom" in failed.content[0]["text"]


async def test_a_connection_reads_the_servers_resources_and_instructions(
    tmp_path: Path,
) -> None:
    conn = McpConnection(_stdio(tmp_path))
    await conn.start()
    try:
        assert conn.has_resources
        assert conn.instructions == "Fixture tools."  # JavaScript's trimEnd: U+FEFF too
        listed = await conn.resources("resources", None)
        assert [(r["uri"], r["name"]) for r in listed["resources"]] == [("mem://note", "note")]
        templates = await conn.resources("resourceTemplates", None)
        assert templates["resourceTemplates"] == []
        read = await conn.read_resource("mem://note")
        assert read["contents"] == [
            {"uri": "mem://note", "mimeType": "text/plain", "text": "hello"}
        ]
    finally:
        await conn.aclose()
    with pytest.raises(McpStartError, match=r"^mcp-client\(fx\): server is disconnected$"):
        await conn.resources("resources", None)


def test_a_servers_section_over_natives_cap_fails_its_start() -> None:
    # `### MCP server: big\n\n` is 21 bytes: 32,747 more make native's 32,768 exactly.
    check_instructions("big", "x" * 32747)
    check_instructions("big", "")
    with pytest.raises(McpStartError) as caught:
        check_instructions("big", "x" * 32746 + "\u00e9")  # one character, two bytes
    assert str(caught.value) == (
        "mcp-client(big): server instructions exceed maxInstructionBytes (32768)"
    )


async def test_cancelling_a_hanging_mcp_call_is_prompt(
    stdio_conn: McpConnection, tmp_path: Path
) -> None:
    sleepy = next(t for t in stdio_conn.tools() if t.name.endswith("sleepy"))
    task = asyncio.create_task(sleepy.run({}, _ctx(tmp_path)))
    await asyncio.sleep(0.3)
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < 1.0
    # What the loop commits for it: native's text for an MCP call cancelled while it
    # runs (seen live with `fixture_tools: mcp`: its request rejects with a plain object).
    assert cancelled_text(sleepy) == "Error: [object Object]"
    # The session still serves calls afterwards.
    add = next(t for t in stdio_conn.tools() if t.name.endswith("add"))
    assert (await add.run({"a": 1, "b": 1}, _ctx(tmp_path))).content[0]["text"] == "2"


async def test_a_server_that_cannot_start_fails_with_its_name(tmp_path: Path) -> None:
    good = _stdio(tmp_path, "good")
    bad = StdioServer("bad", "bad server", "/bin/false", (), (), str(tmp_path))
    with pytest.raises(McpStartError, match="MCP server bad server failed to start"):
        await start_servers([good, bad])


async def test_agent_turn_calls_an_mcp_tool(
    stdio_conn: McpConnection, server: ParityServer, tmp_path: Path
) -> None:
    provider = ParityStreamProvider(server.url)
    router = Router([provider])
    registry = ToolRegistry(stdio_conn.tools())
    seen: list[dict[str, Any]] = []
    log = SessionStore(tmp_path / "home").create(str(tmp_path))
    agent = Agent(log, router, registry, ApprovalChain(), tmp_path, seen.append)
    server.script += [
        [
            *tool_call_response("mcp__fx__add", "call-1", {"a": 20, "b": 22}),
            {"type": "finish", "reason": {"kind": "tool-calls"}},
        ],
        text_response("42"),
    ]
    try:
        assert await agent.run_turn([{"type": "text", "text": "add"}], Route("mock", "mock")) == {
            "kind": "completed"
        }
    finally:
        await router.aclose()
    result = next(e for e in seen if e["type"] == "tool/result")
    assert result["content"] == [{"type": "text", "text": "42"}]
    assert "mcp__fx__add" in [t["name"] for t in server.streams()[0].body["tools"]]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def http_server() -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, str(FIXTURE), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError("fixture MCP HTTP server did not listen")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait()


async def test_streamable_http_server(http_server: str, tmp_path: Path) -> None:
    conn = McpConnection(HttpServer("web", "web", http_server, (("X-Test", "1"),)))
    await conn.start()
    try:
        add = next(t for t in conn.tools() if t.name == "mcp__web__add")
        result = await add.run({"a": 4, "b": 5}, _ctx(tmp_path))
    finally:
        await conn.aclose()
    assert result.content == [{"type": "text", "text": "9"}]


GAP_PROBE = """
import asyncio, sys, time
from acp_plus.core.tools.mcp import StdioServer
from acp_plus.core.tools.mcp import McpConnection

async def main():
    assert "mcp" not in sys.modules
    gaps = []
    async def tick():
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now
    ticker = asyncio.create_task(tick())
    conn = McpConnection(StdioServer("fx", "fx", sys.executable, (sys.argv[1],), (), "."))
    await conn.start()
    await conn.aclose()
    ticker.cancel()
    print(max(gaps))

asyncio.run(main())
"""


def test_first_start_imports_the_sdk_off_the_event_loop() -> None:
    """The SDK import takes seconds of CPU; other sessions must keep being served."""
    out = subprocess.run(
        [sys.executable, "-c", GAP_PROBE, str(FIXTURE)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert float(out.stdout.strip()) < 0.5
