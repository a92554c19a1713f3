"""An MCP stdio server that never answers cannot hold `session/new`: the request fails
after `mcp_startup_timeout` seconds naming the server, `$/cancel_request` ends it at
once with -32800, and either way the server process is gone when the answer comes.
Against the real acp-plus and a real hanging server process."""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from plus_agent import World, WorldFactory, processes_with, raw_agent, wait_for

from acp_plus.wire.rpc import REQUEST_CANCELLED, Connection, RequestContext

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

# Never reads its stdin, never writes: the MCP initialize request waits forever.
HANGING_SERVER = "import time\nwhile True:\n    time.sleep(60)\n"


def _hanging(tmp_path: Path) -> tuple[dict[str, Any], str]:
    """An `mcpServers` entry for a server that never answers, and its process marker."""
    marker = f"hang-{uuid.uuid4().hex[:12]}"
    script = tmp_path / f"{marker}.py"
    script.write_text(HANGING_SERVER, encoding="utf-8")
    entry = {"name": "stuck", "command": sys.executable, "args": [str(script)], "env": []}
    return entry, marker


async def _still_serves(agent: Any, w: World) -> None:
    new = await agent.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
    assert "sessionId" in new["result"]


async def test_a_server_that_never_answers_fails_session_new_after_the_timeout(
    world: WorldFactory, tmp_path: Path
) -> None:
    w = world(extra_config="mcp_startup_timeout = 1.5\n")
    entry, marker = _hanging(tmp_path)
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        started = time.monotonic()
        response = await agent.call(
            "session/new", {"cwd": str(w.workdir), "mcpServers": [entry]}, timeout=30
        )
        elapsed = time.monotonic() - started
        assert response["error"]["code"] == -32603
        assert response["error"]["data"]["details"] == (
            "MCP server stuck failed to start: no answer within 1.5 s (mcp_startup_timeout)"
        )
        # 1.5 s, the SDK import on first use, then the SDK's 2 s grace before its kill.
        assert 1.5 <= elapsed < 15
        assert not processes_with(marker)
        await _still_serves(agent, w)


async def test_cancel_request_ends_a_hanging_session_new_and_its_server(
    world: WorldFactory, tmp_path: Path
) -> None:
    w = world()  # the default timeout, 30 s: only the cancel can end it in time
    entry, marker = _hanging(tmp_path)
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        request = await agent.request("session/new", {"cwd": str(w.workdir), "mcpServers": [entry]})
        await wait_for(lambda: bool(processes_with(marker)), timeout=30)
        cancelled_at = time.monotonic()
        await agent.send(
            {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": request}}
        )
        response, _ = await agent.until_response(request, timeout=15)
        elapsed = time.monotonic() - cancelled_at
        assert response == {
            "jsonrpc": "2.0",
            "id": request,
            "error": {"code": -32800, "message": "Request cancelled"},
        }
        # The answer waits for the server's end (the SDK gives it 2 s after its stdin
        # closes), so it is prompt and true: the process is already gone.
        print(f"$/cancel_request -> -32800 with the MCP server gone: {elapsed:.2f} s")
        assert elapsed < 8
        assert not processes_with(marker)
        await _still_serves(agent, w)


async def test_cancel_request_ends_a_hanging_session_resume_and_frees_the_session(
    world: WorldFactory, tmp_path: Path
) -> None:
    w = world()
    entry, marker = _hanging(tmp_path)
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        new = await agent.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
        session_id = new["result"]["sessionId"]
        await agent.call("session/close", {"sessionId": session_id})
        params = {"sessionId": session_id, "cwd": str(w.workdir), "mcpServers": [entry]}
        request = await agent.request("session/resume", params)
        await wait_for(lambda: bool(processes_with(marker)), timeout=30)
        await agent.send(
            {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": request}}
        )
        response, _ = await agent.until_response(request, timeout=15)
        assert response["error"] == {"code": -32800, "message": "Request cancelled"}
        assert not processes_with(marker)
        # Rolled back: not live, its log lock released, so it resumes again.
        again = await agent.call("session/resume", {**params, "mcpServers": []})
        assert "result" in again, again


async def test_a_cancel_for_a_finished_or_unknown_request_changes_nothing(
    world: WorldFactory,
) -> None:
    w = world()
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        new = await agent.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
        for target in (new["id"], 99999, "nope", None):
            await agent.send(
                {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": target}}
            )
        # Still one answer per request, and the session made before is live.
        listed = await agent.call("session/list", {})
        assert "result" in listed
        closed = await agent.call("session/close", {"sessionId": new["result"]["sessionId"]})
        assert closed["result"] == {}


@pytest.mark.parametrize(
    ("value", "problem"),
    [("0", "must be > 0"), ("-1", "must be > 0"), ('"30"', "expected number, got str")],
)
async def test_the_timeout_is_validated(world: WorldFactory, value: str, problem: str) -> None:
    w = world(extra_config=f"mcp_startup_timeout = {value}\n")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, *w.argv(), "--dump-config", stderr=asyncio.subprocess.PIPE
    )
    _, err = await proc.communicate()
    assert proc.returncode == 2
    assert f"mcp_startup_timeout: {problem}".encode() in err


# -- the rpc layer's part, in memory: what a cancelled request waits for -------------------


class _Sink:
    """Collects frames and notes each answer in `events`, so order can be checked."""

    def __init__(self, events: list[str]) -> None:
        self.frames: list[dict[str, Any]] = []
        self.events = events

    def write(self, data: bytes) -> None:
        frame = json.loads(data)
        self.frames.append(frame)
        self.events.append(f"answer {frame.get('id')}")

    async def drain(self) -> None:
        return None


async def test_the_cancel_answer_waits_for_the_rollback_and_a_finished_answer_stands() -> None:
    events: list[str] = []
    started = asyncio.Event()

    async def handler(method: str, params: Any, ctx: RequestContext) -> Any:
        if method == "session/list":  # not cancellable: runs to completion
            await asyncio.sleep(0.05)
            return {"sessions": []}
        if params == "quick":
            return {"sessionId": "s-quick"}
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            await asyncio.sleep(0.1)  # the rollback: stopping MCP servers takes a while
            events.append("rolled back")
            raise
        return {"sessionId": "never"}

    async def ignore(method: str, params: Any) -> None:
        return None

    reader = asyncio.StreamReader()
    sink = _Sink(events)
    conn = Connection(reader, sink, handler, ignore)
    serving = asyncio.create_task(conn.serve())

    def feed(message: dict[str, Any]) -> None:
        reader.feed_data(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")

    def cancel(request_id: Any) -> None:
        feed({"method": "$/cancel_request", "params": {"requestId": request_id}})

    feed({"id": 1, "method": "session/new", "params": "slow"})
    await started.wait()
    cancel(1)
    feed({"id": 2, "method": "session/list"})
    cancel(2)
    feed({"id": 3, "method": "session/new", "params": "quick"})
    await asyncio.sleep(0.3)
    cancel(3)  # too late: it has answered
    reader.feed_eof()
    await serving
    await conn.finish(timeout=1)
    by_id = {frame["id"]: frame for frame in sink.frames}
    assert by_id[1]["error"] == {"code": REQUEST_CANCELLED, "message": "Request cancelled"}
    # The rollback finished before the -32800 went out.
    assert events.index("rolled back") < events.index("answer 1")
    assert by_id[2]["result"] == {"sessions": []}
    assert by_id[3]["result"] == {"sessionId": "s-quick"}
    assert len(sink.frames) == 3
