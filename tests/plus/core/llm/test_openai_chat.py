"""The OpenAI-compatible provider through the real `openai` SDK against a loopback
chat-completions SSE endpoint (DeepSeek-style `reasoning_content`, tool calls, usage)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web

from acp_plus.core.llm.base import ModelRequest
from acp_plus.core.llm.openai_chat import OpenAIChatConfig, OpenAIChatProvider, _body_message
from acp_plus.core.step import StepAccumulator


def _chunk(
    delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any
) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "deepseek-v4-flash",
        "choices": choices,
        **extra,
    }


REASONING_TOOL_STREAM = [
    _chunk({"role": "assistant", "reasoning_content": "inspect "}),
    _chunk({"reasoning_content": "first"}),
    _chunk(
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call-1",
                    "type": "function",
                    "function": {"name": "echo", "arguments": ""},
                }
            ]
        }
    ),
    _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"a":'}}]}),
    _chunk({"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]}),
    _chunk({}, finish="tool_calls"),
    _chunk(
        None,
        usage={
            "prompt_tokens": 10,
            "completion_tokens": 4,
            "total_tokens": 14,
            "prompt_cache_hit_tokens": 2,
            "completion_tokens_details": {"reasoning_tokens": 2},
        },
    ),
]

TEXT_STREAM = [
    _chunk({"role": "assistant", "content": "hel"}),
    _chunk({"content": "lo"}),
    _chunk({}, finish="length"),
    _chunk(None, usage={"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}),
]


@dataclass
class ChatServer:
    streams: list[list[dict[str, Any]] | int | tuple[int, str]] = field(default_factory=list)
    """A stream's chunks; a status (answered with an OpenAI error JSON); or a status and
    the raw body text it is answered with."""
    bodies: list[dict[str, Any]] = field(default_factory=list)
    auth: list[str] = field(default_factory=list)
    hang: bool = False
    aborted: asyncio.Event = field(default_factory=asyncio.Event)
    hanging: asyncio.Event = field(default_factory=asyncio.Event)
    url: str = ""

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.bodies.append(await request.json())
        self.auth.append(request.headers.get("Authorization", ""))
        entry = self.streams.pop(0)
        if isinstance(entry, tuple):
            return web.Response(status=entry[0], text=entry[1], content_type="text/html")
        if isinstance(entry, int):
            return web.json_response(
                {"error": {"message": "Authentication Fails", "type": "authentication_error"}},
                status=entry,
            )
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        try:
            for chunk in entry:
                await resp.write(f"data: {json.dumps(chunk)}\n\n".encode())
            if self.hang:
                self.hanging.set()
                await asyncio.sleep(3600)
            await resp.write(b"data: [DONE]\n\n")
        except asyncio.CancelledError:
            self.aborted.set()
            raise
        return resp


@pytest.fixture
async def chat() -> AsyncIterator[ChatServer]:
    srv = ChatServer()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", srv.handle)
    runner = web.AppRunner(app, handler_cancellation=True)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    srv.url = f"http://127.0.0.1:{port}/v1"
    try:
        yield srv
    finally:
        await runner.cleanup()


def _provider(chat: ChatServer, env: dict[str, str] | None = None) -> OpenAIChatProvider:
    config = OpenAIChatConfig(base_url=chat.url, max_retries=0, timeout=10)
    return OpenAIChatProvider(
        config, environ={"DEEPSEEK_API_KEY": "sk-test"} if env is None else env
    )


REQ = ModelRequest(
    provider="deepseek",
    model="deepseek-v4-flash",
    messages=[{"role": "user", "content": [{"type": "text", "text": "go"}]}],
    tools=[
        {"name": "echo", "description": "d", "parameters": {"type": "object", "properties": {}}}
    ],
    reasoning_effort="high",
    system="be brief",
)


async def _collect(provider: OpenAIChatProvider, req: ModelRequest = REQ) -> list[dict[str, Any]]:
    try:
        return [c async for c in provider.stream(req)]
    finally:
        await provider.aclose()


async def test_reasoning_and_tool_call_stream(chat: ChatServer) -> None:
    chat.streams.append(REASONING_TOOL_STREAM)
    chunks = await _collect(_provider(chat))
    assert chunks == [
        {"type": "block-start", "index": 0, "blockType": "reasoning"},
        {"type": "reasoning-delta", "index": 0, "text": "inspect "},
        {"type": "reasoning-delta", "index": 0, "text": "first"},
        {"type": "block-end", "index": 0, "block": {"type": "reasoning", "text": "inspect first"}},
        {"type": "block-start", "index": 1, "blockType": "tool-call"},
        {
            "type": "tool-call-delta",
            "index": 1,
            "id": "call-1",
            "argumentsDelta": "",
            "name": "echo",
        },
        {"type": "tool-call-delta", "index": 1, "id": "call-1", "argumentsDelta": '{"a":'},
        {"type": "tool-call-delta", "index": 1, "id": "call-1", "argumentsDelta": "1}"},
        {
            "type": "block-end",
            "index": 1,
            "block": {"type": "tool-call", "id": "call-1", "name": "echo", "arguments": '{"a":1}'},
        },
        {
            "type": "usage",
            "usage": {
                "inputTokens": 8,
                "outputTokens": 4,
                "cacheReadTokens": 2,
                "reasoningTokens": 2,
            },
        },
        {"type": "finish", "reason": {"kind": "tool-calls"}},
    ]
    body = chat.bodies[0]
    assert body["model"] == "deepseek-v4-flash"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["reasoning_effort"] == "high"
    assert body["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "go"},
    ]
    assert body["tools"][0]["function"]["name"] == "echo"
    assert chat.auth == ["Bearer sk-test"]
    # The loop's commit rule applied to these chunks gives the expected message.
    step = StepAccumulator()
    for c in chunks:
        step.feed(c)
    assert [b["type"] for b in step.committed_blocks()] == ["reasoning", "tool-call"]


async def test_text_and_length_finish(chat: ChatServer) -> None:
    chat.streams.append(TEXT_STREAM)
    chunks = await _collect(_provider(chat))
    assert [c["type"] for c in chunks] == [
        "block-start",
        "text-delta",
        "text-delta",
        "block-end",
        "usage",
        "finish",
    ]
    assert chunks[3]["block"] == {"type": "text", "text": "hello"}
    assert chunks[-1]["reason"] == {"kind": "max-tokens"}


async def test_missing_key_fails_the_prompt_naming_the_variable(chat: ChatServer) -> None:
    chunks = await _collect(_provider(chat, env={}))
    assert chunks == [
        {
            "type": "finish",
            "reason": {
                "kind": "error",
                "failure": {
                    "message": "DEEPSEEK_API_KEY is not set "
                    "(the DeepSeek provider reads its API key from it)",
                    "code": "MISSING_CREDENTIAL",
                },
            },
        }
    ]
    assert chat.bodies == []


async def test_http_error_becomes_finish_error_with_the_providers_message(
    chat: ChatServer, caplog: pytest.LogCaptureFixture
) -> None:
    chat.streams.append(401)
    with caplog.at_level(logging.WARNING, "acp_plus.core.llm.openai_chat"):
        chunks = await _collect(_provider(chat))
    assert len(chunks) == 1
    failure = chunks[0]["reason"]["failure"]
    assert chunks[0]["reason"]["kind"] == "error"
    assert failure["code"] == "AUTH"
    # The provider's own sentence as its error body carries it (`error.message`), as the
    # parity-stream route passes a failure's message on (§3.4), not the SDK's
    # "Error code: 401 - {...}" wrapping; the status class travels in the code, and the
    # route and status in the log.
    assert failure["message"] == "Authentication Fails"
    assert "provider deepseek (openai-chat): HTTP 401: Authentication Fails" in caplog.text
    assert len(chat.bodies) == 1


@pytest.mark.parametrize(
    ("status", "code"),
    [(400, "BAD_REQUEST"), (409, "BAD_REQUEST"), (429, "RATE_LIMIT"), (503, "SERVER")],
)
async def test_http_status_with_a_message_is_that_message(
    chat: ChatServer, status: int, code: str
) -> None:
    chat.streams.append(status)
    chunks = await _collect(_provider(chat))
    assert chunks == [
        {
            "type": "finish",
            "reason": {
                "kind": "error",
                "failure": {"message": "Authentication Fails", "code": code},
            },
        }
    ]
    # retries = 0 (as the harness's plus-openai sets it): the status is not asked again.
    assert len(chat.bodies) == 1


async def test_http_status_without_a_message_is_described(chat: ChatServer) -> None:
    chat.streams.append((502, "  <html>Bad Gateway</html>\n"))
    chunks = await _collect(_provider(chat))
    failure = chunks[0]["reason"]["failure"]
    assert failure == {
        "message": "provider deepseek (openai-chat): HTTP 502: <html>Bad Gateway</html>",
        "code": "SERVER",
    }
    chat.streams.append((500, ""))
    chunks = await _collect(_provider(chat))
    message = chunks[0]["reason"]["failure"]["message"]
    assert message == "provider deepseek (openai-chat): HTTP 500: Internal Server Error"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"message": "too many", "type": "rate_limit", "param": None, "code": "X"}, "too many"),
        ({"error": {"message": "nested"}}, "nested"),
        ({"message": ""}, ""),
        ({"message": 3}, None),
        ({"error": "a string"}, None),
        ("raw text", None),
        (None, None),
    ],
)
def test_body_message(body: object, message: str | None) -> None:
    assert _body_message(body) == message


async def test_cancellation_closes_the_response(chat: ChatServer) -> None:
    chat.hang = True
    chat.streams.append(TEXT_STREAM[:2])
    provider = _provider(chat)
    seen: list[dict[str, Any]] = []

    async def consume() -> None:
        async for c in provider.stream(REQ):
            seen.append(c)

    task = asyncio.create_task(consume())
    await asyncio.wait_for(chat.hanging.wait(), 5)
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(chat.aborted.wait(), 3)
    await provider.aclose()
    assert [c["type"] for c in seen] == ["block-start", "text-delta", "text-delta"]
