"""parity-stream/1 over a real loopback socket: catalog, stream, tools/call, 409s,
hangs, delays and what the server records."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
import pytest

from parity.fakellm.server import FakeLLM
from parity.scenario.model import DEFAULT_CATALOG
from tests.support.fakellm import OpenRun, aborted, tool, wait_for

REQUEST: dict[str, Any] = {
    "provider": "mock",
    "model": "mock",
    "messages": [{"role": "user", "content": [{"type": "text", "text": "go"}]}],
    "tools": [{"name": "echo", "description": "d", "parameters": {"type": "object"}}],
}


async def stream(base: str, body: Any = REQUEST) -> tuple[int, list[Any]]:
    async with httpx.AsyncClient() as client:
        response = await client.post(f"{base}/stream", json=body)
    if response.status_code != 200:
        return response.status_code, [response.json()]
    assert response.headers["content-type"].startswith("application/x-ndjson")
    return 200, [json.loads(line) for line in response.text.splitlines()]


async def test_catalog_has_protocol_models_and_scenario_tools(open_run: OpenRun) -> None:
    run = open_run([], tools=[tool("echo", approval="ask")])
    async with httpx.AsyncClient() as client:
        body = (await client.get(f"{run.base_url}/catalog")).json()
    assert body["protocol"] == "parity-stream/1"
    assert body["providers"] == DEFAULT_CATALOG["providers"]
    assert body["tools"] == [
        {
            "name": "echo",
            "description": "Return a deterministic result.",
            "parameters": {"type": "object", "properties": {}},
            "approval": "ask",
        }
    ]
    assert [(r.method, r.path, r.dialect) for r in run.requests] == [
        ("GET", "/catalog", "parity-stream")
    ]


async def test_stream_serves_entries_in_order_and_records_them(open_run: OpenRun) -> None:
    run = open_run(
        [
            {"text": "ab", "usage": {"input": 5, "output": 2}},
            {"tool_calls": [{"id": "call-1", "name": "echo", "arguments": {}}]},
        ]
    )
    seen: list[int] = []
    run.on_request(lambda rec: seen.append(rec.seq))
    status, first = await stream(run.base_url)
    assert status == 200
    assert [c["type"] for c in first] == [
        "block-start", "text-delta", "text-delta", "block-end", "usage", "finish",
    ]  # fmt: skip
    status, second = await stream(run.base_url)
    assert second[-1] == {"type": "finish", "reason": {"kind": "tool-calls"}}
    status, third = await stream(run.base_url)
    assert status == 409
    assert third == [{"error": "script exhausted", "request": REQUEST}]
    assert seen == [0, 1, 2]
    assert [(r.entry, r.status, r.problem) for r in run.requests] == [
        (0, 200, None),
        (1, 200, None),
        (None, 409, "script exhausted"),
    ]
    assert run.requests[0].body == REQUEST
    assert 0 <= run.requests[0].t <= run.requests[1].t <= run.requests[2].t


async def test_malformed_request_is_409_and_consumes_nothing(open_run: OpenRun) -> None:
    run = open_run([{"text": "x"}])
    status, body = await stream(run.base_url, {"no": "messages"})
    assert status == 409
    assert body[0]["error"] == "malformed request: `messages` must be a list"
    async with httpx.AsyncClient() as client:
        raw = await client.post(f"{run.base_url}/stream", content=b"{not json")
    assert raw.status_code == 409
    assert raw.json()["request"] == "{not json"
    status, _ = await stream(run.base_url)
    assert status == 200 and run.requests[-1].entry == 0


async def test_side_entry_by_purpose(open_run: OpenRun) -> None:
    run = open_run([{"match": {"purpose": "title"}, "text": "T", "deltas": 0}, {"text": "x"}])
    _, title = await stream(run.base_url, {**REQUEST, "purpose": "title"})
    assert title[1] == {"type": "text-delta", "index": 0, "text": "T"}
    _, turn = await stream(run.base_url, {**REQUEST, "purpose": "turn"})
    assert turn[1]["text"] == "x"
    assert [(r.side, r.entry) for r in run.requests] == [(True, None), (False, 1)]


async def test_hang_is_held_until_client_disconnects_then_recorded(open_run: OpenRun) -> None:
    run = open_run([{"text": "partial", "deltas": 0, "then": "hang"}])
    async with (
        httpx.AsyncClient() as client,
        client.stream("POST", f"{run.base_url}/stream", json=REQUEST) as response,
    ):
        lines = response.aiter_lines()
        assert json.loads(await anext(lines))["type"] == "block-start"
        assert json.loads(await anext(lines))["text"] == "partial"
        # nothing more arrives while the client waits
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(anext(lines), 0.2)
        assert run.in_flight == 1
        closed_at = run.now()
    await wait_for(aborted(run))
    await wait_for(lambda: run.in_flight == 0)  # the held handler ended with the client
    rec = run.requests[0]
    assert rec.aborted and rec.aborted_at is not None
    assert rec.t < rec.aborted_at and abs(rec.aborted_at - closed_at) < 1.0
    assert rec.problem is None


async def test_hang_without_chunks_still_answers_headers(open_run: OpenRun) -> None:
    run = open_run([{"then": "hang"}])
    async with httpx.AsyncClient() as client:
        request = client.stream("POST", f"{run.base_url}/stream", json=REQUEST)
        response = await asyncio.wait_for(request.__aenter__(), 2)
        assert response.status_code == 200
        await request.__aexit__(None, None, None)
    await wait_for(aborted(run))


async def test_delay_pauses_before_each_chunk(open_run: OpenRun) -> None:
    run = open_run([{"text": "abc", "delay_ms": 40}])
    start = time.monotonic()
    status, chunks = await stream(run.base_url)
    elapsed = time.monotonic() - start
    assert status == 200 and len(chunks) == 6
    assert elapsed >= 6 * 0.04


async def test_tool_call_returns_content_and_is_error(open_run: OpenRun) -> None:
    run = open_run([], tools=[tool("echo"), tool("bad", text="nope", is_error=True)])
    async with httpx.AsyncClient() as client:
        ok = await client.post(
            f"{run.base_url}/tools/call", json={"name": "echo", "callId": "c1", "arguments": {}}
        )
        bad = await client.post(f"{run.base_url}/tools/call", json={"name": "bad", "callId": "c2"})
        unknown = await client.post(f"{run.base_url}/tools/call", json={"name": "zzz"})
    assert ok.json() == {"content": [{"type": "text", "text": "tool result"}], "isError": False}
    assert bad.json() == {"content": [{"type": "text", "text": "nope"}], "isError": True}
    assert unknown.status_code == 409
    assert unknown.json() == {"error": "unknown tool: zzz", "request": {"name": "zzz"}}
    assert [(r.path, r.status, r.problem) for r in run.requests] == [
        ("/tools/call", 200, None),
        ("/tools/call", 200, None),
        ("/tools/call", 409, "unknown tool: zzz"),
    ]


async def test_tool_delay_and_hang(open_run: OpenRun) -> None:
    run = open_run([], tools=[tool("slow", delay_ms=150), tool("stuck", hang=True)])
    async with httpx.AsyncClient() as client:
        start = time.monotonic()
        await client.post(f"{run.base_url}/tools/call", json={"name": "slow"})
        assert time.monotonic() - start >= 0.15
        with pytest.raises(httpx.ReadTimeout):
            await client.post(f"{run.base_url}/tools/call", json={"name": "stuck"}, timeout=0.2)
    await wait_for(aborted(run))
    assert [r.aborted for r in run.requests] == [False, True]


async def test_close_run_ends_in_flight_hangs_and_unknown_runs_404(fake: FakeLLM) -> None:
    run = fake.open_run("gone", llm=[{"text": "p", "then": "hang"}], tools=[], catalog={})
    async with httpx.AsyncClient() as client:
        task = asyncio.create_task(client.post(f"{run.base_url}/stream", json=REQUEST))
        await wait_for(lambda: bool(run.requests))
        fake.close_run("gone")
        with pytest.raises(httpx.RemoteProtocolError):
            await asyncio.wait_for(task, 5)  # the cut stream: the body never completes
        missing = await client.get(f"{run.base_url}/catalog")
    assert missing.status_code == 404
    assert run.requests[0].problem == "run closed" and not run.requests[0].aborted


async def test_unknown_endpoint_is_recorded_as_other(open_run: OpenRun) -> None:
    run = open_run([])
    async with httpx.AsyncClient() as client:
        response = await client.post(f"{run.base_url}/v1/embeddings", json={"input": "x"})
    assert response.status_code == 404
    rec = run.requests[0]
    assert (rec.dialect, rec.path, rec.status, rec.problem) == (
        "other", "/v1/embeddings", 404, "unknown endpoint",
    )  # fmt: skip


async def test_a_session_the_client_never_used_is_a_child_agent(open_run: OpenRun) -> None:
    run = open_run([{"text": "parent"}, {"text": "child", "agent": 1}])
    before = {**REQUEST, "sessionId": "s-child"}
    # No session named by a client yet (`parity fake-llm`): every request is the main one.
    assert run.agent_of(before) == 0
    run.client_session("s-parent")
    _, child = await stream(run.base_url, {**REQUEST, "sessionId": "s-child"})
    _, parent = await stream(run.base_url, {**REQUEST, "sessionId": "s-parent"})
    assert child[1]["text"] == "c" and parent[1]["text"] == "p"
    status, again = await stream(run.base_url, {**REQUEST, "sessionId": "s-other"})
    assert status == 409 and again[0]["error"].startswith(
        "no entry matched: a request of child agent 2"
    )
    assert [(r.agent, r.entry) for r in run.requests] == [(1, 1), (0, 0), (2, None)]
