"""The parity-stream/1 client against a live loopback server."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from plus_stream_server import (
    HANG_AFTER_PARTIAL,
    ParityServer,
    text_response,
    tool_call_response,
)

from acp_plus.core.llm.base import ModelRequest, ProviderError, Router
from acp_plus.core.llm.parity_stream import (
    ParityStreamProvider,
    ToolCallFailed,
    parse_catalog,
    wire_body,
)


def _request(**kw: Any) -> ModelRequest:
    base: dict[str, Any] = {
        "provider": "mock",
        "model": "mock",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "go"}]}],
    }
    base.update(kw)
    return ModelRequest(**base)


async def _collect(provider: Any, req: ModelRequest) -> list[dict[str, Any]]:
    return [chunk async for chunk in provider.stream(req)]


async def test_catalog_and_fixture_tools(server: ParityServer) -> None:
    provider = ParityStreamProvider(server.url)
    try:
        catalog = await provider.catalog()
        assert catalog[0]["id"] == "mock"
        assert catalog[0]["models"][0]["contextWindow"] == 1024
        tools = await provider.fixture_tools()
        assert [t["name"] for t in tools] == ["echo"]
        assert tools[0]["approval"] == "none"
        await provider.catalog()
        assert len([r for r in server.requests if r.path == "/catalog"]) == 1
    finally:
        await provider.aclose()


async def test_foreign_protocol_is_refused_with_a_clear_message(server: ParityServer) -> None:
    server.catalog["protocol"] = "parity-stream/2"
    provider = ParityStreamProvider(server.url)
    try:
        with pytest.raises(ProviderError, match=r"'parity-stream/2'.*only 'parity-stream/1'"):
            await provider.catalog()
    finally:
        await provider.aclose()


def test_catalog_defaults_model_name_and_tool_fields() -> None:
    providers, tools = parse_catalog(
        {
            "protocol": "parity-stream/1",
            "providers": [{"id": "p", "models": [{"id": "m"}]}],
            "tools": [{"name": "t", "approval": "ask"}],
        }
    )
    assert providers == [{"id": "p", "name": "p", "models": [{"id": "m", "name": "m"}]}]
    assert tools == [
        {
            "name": "t",
            "description": "",
            "parameters": {"type": "object", "properties": {}},
            "approval": "ask",
        }
    ]


async def test_stream_sends_the_canonical_request_and_yields_chunks(server: ParityServer) -> None:
    server.script.append(text_response("hi"))
    provider = ParityStreamProvider(server.url)
    try:
        chunks = await _collect(provider, _request(reasoning_effort="high"))
    finally:
        await provider.aclose()
    assert chunks == text_response("hi")
    body = server.streams()[0].body
    assert body == {
        "provider": "mock",
        "model": "mock",
        "reasoningEffort": "high",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "go"}]}],
    }  # no `tools` key for an empty list, as native's requests


async def test_line_separators_inside_a_json_string_do_not_split_the_line(
    server: ParityServer,
) -> None:
    """NDJSON lines end at "\\n" only: U+0085, U+2028, U+2029 and \\x1c-\\x1e travel
    unescaped inside JSON strings (the harness's fake LLM writes them so), and a reader
    splitting where `str.splitlines` does failed the turn with "malformed stream line"
    where native runs the call (explore, seed 43)."""
    args = {"text": "a\x85b\u2028c\u2029d\x1ce\x1df\x1eg\x0bh\x0ci \U000f9e15 \U000241fb"}
    call = tool_call_response("echo", "call-1", args)
    raw = json.dumps(args, ensure_ascii=False)  # the arguments as the fake LLM streams them
    call[1]["argumentsDelta"] = call[2]["block"]["arguments"] = raw
    chunks = [*call, {"type": "finish", "reason": {"kind": "stop"}}]
    server.script.append({"chunks": chunks, "unescaped": True})
    provider = ParityStreamProvider(server.url)
    try:
        got = await _collect(provider, _request())
    finally:
        await provider.aclose()
    assert got == chunks


async def test_non_200_is_a_parity_protocol_failure_and_is_not_retried(
    server: ParityServer,
) -> None:
    server.script.append({"status": 409, "error": "no entry matched"})
    provider = ParityStreamProvider(server.url)
    try:
        chunks = await _collect(provider, _request())
    finally:
        await provider.aclose()
    assert chunks == [
        {
            "type": "finish",
            "reason": {
                "kind": "error",
                "failure": {
                    "message": "no entry matched",
                    "code": "PARITY_PROTOCOL",
                },
            },
        }
    ]
    assert len(server.streams()) == 1


async def test_stream_without_finish_is_a_failure(server: ParityServer) -> None:
    server.script.append([{"type": "block-start", "index": 0, "blockType": "text"}])
    provider = ParityStreamProvider(server.url)
    try:
        chunks = await _collect(provider, _request())
    finally:
        await provider.aclose()
    assert chunks[-1]["reason"]["failure"]["code"] == "PARITY_PROTOCOL"


async def test_cancelling_the_consumer_closes_the_response(server: ParityServer) -> None:
    server.script.append(HANG_AFTER_PARTIAL)
    router = Router([ParityStreamProvider(server.url)])
    seen: list[dict[str, Any]] = []

    async def consume() -> None:
        async for chunk in router.stream(_request()):
            seen.append(chunk)

    task = asyncio.create_task(consume())
    await asyncio.wait_for(server.hanging.wait(), 5)
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(100):
        if server.streams()[0].aborted:
            break
        await asyncio.sleep(0.01)
    await router.aclose()
    assert [c["type"] for c in seen] == ["block-start", "text-delta"]
    assert server.streams()[0].aborted


async def test_unknown_route_fails_with_no_adapter(server: ParityServer) -> None:
    router = Router([ParityStreamProvider(server.url)])
    try:
        chunks = [c async for c in router.stream(_request(provider="other"))]
    finally:
        await router.aclose()
    assert chunks[0]["reason"]["failure"]["code"] == "NO_ADAPTER"
    assert server.streams() == []


async def test_tools_call_round_trip_and_409(server: ParityServer) -> None:
    server.tools["echo"] = {"content": [{"type": "text", "text": "tool result"}], "isError": False}
    provider = ParityStreamProvider(server.url)
    try:
        content, is_error = await provider.call_tool("echo", "call-1", {"a": 1})
        assert content == [{"type": "text", "text": "tool result"}]
        assert not is_error
        with pytest.raises(ToolCallFailed, match="unknown tool nope"):
            await provider.call_tool("nope", "call-2", {})
    finally:
        await provider.aclose()
    assert server.requests[0].body == {"name": "echo", "callId": "call-1", "arguments": {"a": 1}}


async def test_a_connection_cut_mid_stream_is_a_transport_failure(server: ParityServer) -> None:
    server.script.append({**HANG_AFTER_PARTIAL, "hang": False, "drop": True})
    provider = ParityStreamProvider(server.url)
    try:
        chunks = await _collect(provider, _request())
    finally:
        await provider.aclose()
    assert chunks[-1]["type"] == "finish"
    assert chunks[-1]["reason"]["kind"] == "error"
    assert chunks[-1]["reason"]["failure"]["code"] == "TRANSPORT"


def test_an_image_goes_to_the_fake_without_its_bytes() -> None:
    """As native's plugin sends it (tools/read-image compares the two model views); a
    stored prompt image keeps its digest."""
    image = {"type": "image", "mimeType": "image/png", "data": "iVBOR"}
    stored = {"type": "image", "mimeType": "image/png", "digest": "ab"}
    text = {"type": "text", "text": "t"}
    messages: list[dict[str, Any]] = [
        {"role": "tool", "toolCallId": "c", "isError": False, "content": [text, image]},
        {"role": "user", "content": [stored]},
    ]
    body = wire_body(ModelRequest(provider="p", model="m", messages=messages))
    assert [m["content"] for m in body["messages"]] == [
        [text, {"type": "image", "mimeType": "image/png"}],
        [stored],
    ]
    assert messages[0]["content"][1] is image  # the history itself is left alone
