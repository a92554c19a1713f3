"""A tiny parity-stream/1 server for the in-process core tests (aiohttp on 127.0.0.1).

Deliberately independent of `parity.fakellm`: these tests pin the client side of the
spec, so the server here does exactly what the spec says and records what it saw,
including whether (and when) the client closed a hanging response.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

DEFAULT_CATALOG: dict[str, Any] = {
    "protocol": "parity-stream/1",
    "providers": [
        {
            "id": "mock",
            "name": "Mock",
            "models": [
                {
                    "id": "mock",
                    "name": "Mock Reasoner",
                    "description": "Mock model with selectable reasoning.",
                    "inputModalities": ["text"],
                    "contextWindow": 1024,
                    "reasoning": {
                        "efforts": [{"id": "low", "name": "Low"}, {"id": "high", "name": "High"}],
                        "defaultEffort": "high",
                    },
                }
            ],
        }
    ],
    "tools": [
        {
            "name": "echo",
            "description": "Return a deterministic result.",
            "parameters": {"type": "object", "properties": {}},
            "approval": "none",
        }
    ],
}


def text_response(text: str, usage: bool = True) -> list[dict[str, Any]]:
    """The chunks of §7.2 `textResponse` (one delta per character)."""
    chunks: list[dict[str, Any]] = [{"type": "block-start", "index": 0, "blockType": "text"}]
    chunks += [{"type": "text-delta", "index": 0, "text": c} for c in text]
    chunks.append({"type": "block-end", "index": 0, "block": {"type": "text", "text": text}})
    if usage:
        chunks.append({"type": "usage", "usage": {"inputTokens": 5, "outputTokens": len(text)}})
    chunks.append({"type": "finish", "reason": {"kind": "stop"}})
    return chunks


def max_tokens_response(text: str) -> list[dict[str, Any]]:
    """§7.2 `maxTokensResponse`: no usage, finish max-tokens."""
    chunks = text_response(text, usage=False)
    chunks[-1] = {"type": "finish", "reason": {"kind": "max-tokens"}}
    return chunks


def error_response(message: str) -> list[dict[str, Any]]:
    """§7.2 `errorResponse`: an unterminated text block, then finish error."""
    return [
        {"type": "block-start", "index": 0, "blockType": "text"},
        {"type": "text-delta", "index": 0, "text": "partial"},
        {
            "type": "finish",
            "reason": {"kind": "error", "failure": {"message": message, "code": "PROVIDER_ERROR"}},
        },
    ]


def tool_call_response(name: str, call_id: str, args: Any, index: int = 0) -> list[dict[str, Any]]:
    """One tool-call block (without a finish)."""
    raw = json.dumps(args)
    return [
        {"type": "block-start", "index": index, "blockType": "tool-call"},
        {
            "type": "tool-call-delta",
            "index": index,
            "id": call_id,
            "name": name,
            "argumentsDelta": raw,
        },
        {
            "type": "block-end",
            "index": index,
            "block": {"type": "tool-call", "id": call_id, "name": name, "arguments": raw},
        },
    ]


def reasoning_tool_call_script() -> list[dict[str, Any]]:
    """§7.2 `reasoningToolCallScript`."""
    return [
        {"type": "block-start", "index": 0, "blockType": "reasoning"},
        {"type": "reasoning-delta", "index": 0, "text": "inspect first"},
        {"type": "block-end", "index": 0, "block": {"type": "reasoning", "text": "inspect first"}},
        *tool_call_response("echo", "call-1", {}, index=1),
        {"type": "usage", "usage": {"inputTokens": 8, "outputTokens": 2, "reasoningTokens": 1}},
        {"type": "finish", "reason": {"kind": "tool-calls"}},
    ]


HANG_AFTER_PARTIAL: dict[str, Any] = {
    "chunks": [
        {"type": "block-start", "index": 0, "blockType": "text"},
        {"type": "text-delta", "index": 0, "text": "partial"},
    ],
    "hang": True,
}


@dataclass
class Recorded:
    """One request the server saw."""

    path: str
    body: Any
    aborted: bool = False
    aborted_at: float | None = None


@dataclass
class ParityServer:
    """Script entries are consumed in order; tools answer from `tools`."""

    script: list[Any] = field(default_factory=list)
    catalog: dict[str, Any] = field(default_factory=lambda: json.loads(json.dumps(DEFAULT_CATALOG)))
    tools: dict[str, Any] = field(default_factory=dict)
    requests: list[Recorded] = field(default_factory=list)
    url: str = ""
    _runner: web.AppRunner | None = None
    hanging: asyncio.Event = field(default_factory=asyncio.Event)

    def streams(self) -> list[Recorded]:
        """The recorded `/stream` requests."""
        return [r for r in self.requests if r.path == "/stream"]

    async def start(self) -> None:
        """Listen on an ephemeral loopback port."""
        app = web.Application()
        app.router.add_get("/run/catalog", self._catalog)
        app.router.add_post("/run/stream", self._stream)
        app.router.add_post("/run/tools/call", self._tool)
        self._runner = web.AppRunner(app, handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}/run"

    async def stop(self) -> None:
        """Close the server."""
        if self._runner is not None:
            await self._runner.cleanup()

    async def _catalog(self, request: web.Request) -> web.StreamResponse:
        self.requests.append(Recorded("/catalog", None))
        return web.json_response(self.catalog)

    async def _stream(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        rec = Recorded("/stream", body)
        self.requests.append(rec)
        if not self.script:
            return web.json_response({"error": "no script entry left", "request": body}, status=409)
        entry = self.script.pop(0)
        if isinstance(entry, dict) and "status" in entry:
            return web.json_response(
                {"error": entry["error"], "request": body}, status=entry["status"]
            )
        chunks = entry["chunks"] if isinstance(entry, dict) else entry
        hang = isinstance(entry, dict) and entry.get("hang", False)
        drop = isinstance(entry, dict) and entry.get("drop", False)
        # `unescaped`: non-ASCII characters raw, as the harness's fake LLM writes them
        # (ensure_ascii=False), each line in 7-byte writes to cut characters apart.
        unescaped = isinstance(entry, dict) and entry.get("unescaped", False)
        resp = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await resp.prepare(request)
        try:
            for chunk in chunks:
                line = (json.dumps(chunk, ensure_ascii=not unescaped) + "\n").encode()
                for at in range(0, len(line), 7 if unescaped else len(line)):
                    await resp.write(line[at : at + (7 if unescaped else len(line))])
            if drop:
                # Cut the connection mid-response, as a crashing server would.
                assert request.transport is not None
                request.transport.abort()
                return resp
            if hang:
                self.hanging.set()
                await _hold_until_disconnect(request)
        except (asyncio.CancelledError, ConnectionResetError):
            rec.aborted, rec.aborted_at = True, time.monotonic()
            raise
        return resp

    async def _tool(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        rec = Recorded("/tools/call", body)
        self.requests.append(rec)
        behaviour = self.tools.get(body.get("name"))
        if behaviour is None:
            return web.json_response({"error": f"unknown tool {body.get('name')}"}, status=409)
        if behaviour == "hang":
            self.hanging.set()
            try:
                await _hold_until_disconnect(request)
            except asyncio.CancelledError:
                rec.aborted, rec.aborted_at = True, time.monotonic()
                raise
        return web.json_response(behaviour)


async def _hold_until_disconnect(request: web.Request) -> None:
    # With handler_cancellation, aiohttp cancels the handler when the peer disconnects.
    while True:
        await asyncio.sleep(3600)
