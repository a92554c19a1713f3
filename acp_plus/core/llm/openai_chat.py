"""An OpenAI-compatible chat-completions provider (DeepSeek by default), via the `openai` SDK.

The request side converts the canonical parity-stream request to chat messages; the
response side (`ChatChunkMapper`, pure) turns streamed chat chunks into StreamChunks:
one block per text run, reasoning run (DeepSeek `reasoning_content`) and tool call,
each with block-start / deltas / block-end, then `usage`, then `finish`. Failures are
reported as `finish{error}`: an HTTP status error names the route, the status and the
provider's message (`provider mock (openai-chat): HTTP 409: script exhausted`), an error
event inside the stream passes on the provider's message verbatim; a missing API key
fails the prompt (naming the variable), never startup.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import importlib
import logging
import os
import sys
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from acp_plus.core.llm.base import (
    ModelInfo,
    ModelRequest,
    ProviderInfo,
    StallGuard,
    StreamStalled,
    error_finish,
    provider_failure,
)

DEEPSEEK_MODELS: tuple[ModelInfo, ...] = (
    {
        "id": "deepseek-v4-flash",
        "name": "DeepSeek V4 Flash",
        "inputModalities": ["text"],
        "contextWindow": 1_048_576,
        "reasoning": {
            "efforts": [{"id": "high", "name": "High"}, {"id": "max", "name": "Max"}],
            "defaultEffort": "high",
        },
    },
    {
        "id": "deepseek-v4-pro",
        "name": "DeepSeek V4 Pro",
        "inputModalities": ["text"],
        "contextWindow": 1_048_576,
        "reasoning": {
            "efforts": [{"id": "high", "name": "High"}, {"id": "max", "name": "Max"}],
            "defaultEffort": "high",
        },
    },
)

log = logging.getLogger(__name__)

ReadAttachment = Callable[[str], bytes]
"""The bytes of a stored image by digest (`AttachmentStore.read`); raises when unavailable."""

IMAGE_UNAVAILABLE_TEXT = "[image unavailable: the attachment is missing or corrupt]"

API = "openai-chat"

_FINISH_KINDS = {"stop": "stop", "tool_calls": "tool-calls", "length": "max-tokens"}


@dataclass(frozen=True)
class OpenAIChatConfig:
    """One OpenAI-compatible route. The default is DeepSeek's official API."""

    id: str = "deepseek"
    name: str = "DeepSeek"
    base_url: str = "https://api.deepseek.com"
    api_key_env: str = "DEEPSEEK_API_KEY"
    models: tuple[ModelInfo, ...] = DEEPSEEK_MODELS
    max_retries: int = 2
    """Config `retries`: the SDK's retries (connection errors, timeouts, 408, 409, 429, 5xx)."""
    timeout: float | None = 600.0
    """Config `request_timeout`: the SDK's per-attempt timeout (connect, send, each read)."""
    stream_idle_timeout: float | None = 600.0
    """Longest wait for the next streamed chunk; None disables the limit."""
    max_tokens: int | None = None
    """Sent as `max_tokens` when set; None leaves the limit to the provider."""


# -- request side (pure) -------------------------------------------------------------------


def _text_of(blocks: list[dict[str, Any]], kind: str) -> str:
    return "".join(str(b.get("text", "")) for b in blocks if b.get("type") == kind)


def _user_content(blocks: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    if all(b.get("type") == "text" for b in blocks):
        return _text_of(blocks, "text")
    parts: list[dict[str, Any]] = []
    for b in blocks:
        if b.get("type") == "text":
            parts.append({"type": "text", "text": b.get("text", "")})
        elif b.get("type") == "image" and b.get("data"):
            url = f"data:{b.get('mimeType', 'image/png')};base64,{b['data']}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
        elif b.get("type") == "image":
            # No bytes could be found for this reference: say so rather than drop it.
            parts.append({"type": "text", "text": IMAGE_UNAVAILABLE_TEXT})
    return parts


def inline_images(messages: list[dict[str, Any]], read: ReadAttachment) -> list[dict[str, Any]]:
    """`messages` with each stored image reference (`digest`) given its base64 `data`.

    The session log keeps digests only; chat completions needs the bytes inline (as a
    data URL). A reference `read` cannot serve stays without data and is sent as
    `IMAGE_UNAVAILABLE_TEXT`: one damaged attachment must not break every later turn.
    Blocking (reads files): run it in a worker thread.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        content = message.get("content")
        if not isinstance(content, list):
            out.append(message)
            continue
        blocks: list[Any] = []
        for block in content:
            digest = block.get("digest") if isinstance(block, dict) else None
            if block.get("type") == "image" and "data" not in block and isinstance(digest, str):
                try:
                    data = base64.b64encode(read(digest)).decode("ascii")
                    block = {**block, "data": data}
                except Exception as exc:
                    log.warning("image %s left out of the request: %s", digest, exc)
            blocks.append(block)
        out.append({**message, "content": blocks})
    return out


def to_chat_messages(req: ModelRequest) -> list[dict[str, Any]]:
    """The chat-completions `messages` for a canonical request.

    Assistant `reasoning_content` is sent back: DeepSeek requires it for steps that
    called tools and ignores it otherwise.
    """
    out: list[dict[str, Any]] = []
    if req.system:
        out.append({"role": "system", "content": req.system})
    for msg in req.messages:
        role, blocks = msg.get("role"), list(msg.get("content", []))
        if role == "user":
            out.append({"role": "user", "content": _user_content(blocks)})
        elif role == "assistant":
            entry: dict[str, Any] = {"role": "assistant", "content": _text_of(blocks, "text")}
            reasoning = _text_of(blocks, "reasoning")
            if reasoning:
                entry["reasoning_content"] = reasoning
            calls = [
                {
                    "id": b["id"],
                    "type": "function",
                    "function": {"name": b["name"], "arguments": b.get("arguments") or "{}"},
                }
                for b in blocks
                if b.get("type") == "tool-call"
            ]
            if calls:
                entry["tool_calls"] = calls
                entry["content"] = entry["content"] or None
            out.append(entry)
        elif role == "tool":
            text = _text_of(blocks, "text")
            out.append({"role": "tool", "tool_call_id": msg.get("toolCallId"), "content": text})
    return out


def to_chat_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chat-completions `tools` for canonical tool specs."""
    return [
        {
            "type": "function",
            "function": {
                "name": t["name"],
                "description": t.get("description", ""),
                "parameters": t.get("parameters") or {"type": "object", "properties": {}},
            },
        }
        for t in tools
    ]


# -- response side (pure) ------------------------------------------------------------------


def map_usage(raw: Mapping[str, Any]) -> dict[str, int]:
    """Chat usage -> StreamChunk usage; input counts exclude cache hits (disjoint counts)."""
    prompt = int(raw.get("prompt_tokens") or 0)
    cached = raw.get("prompt_cache_hit_tokens")  # DeepSeek
    if not isinstance(cached, int):
        details = raw.get("prompt_tokens_details") or {}
        cached = details.get("cached_tokens") if isinstance(details, Mapping) else None
    cached = cached if isinstance(cached, int) else 0
    usage = {
        "inputTokens": max(prompt - cached, 0),
        "outputTokens": int(raw.get("completion_tokens") or 0),
    }
    if cached:
        usage["cacheReadTokens"] = cached
    out_details = raw.get("completion_tokens_details") or {}
    if isinstance(out_details, Mapping) and isinstance(out_details.get("reasoning_tokens"), int):
        usage["reasoningTokens"] = out_details["reasoning_tokens"]
    return usage


@dataclass
class _Block:
    index: int
    kind: str
    text: list[str] = field(default_factory=list)
    call_id: str = ""
    name: str = ""


@dataclass
class ChatChunkMapper:
    """Folds chat-completion chunk dicts into StreamChunks, block by block."""

    _next: int = 0
    _text: _Block | None = None
    _reasoning: _Block | None = None
    _tools: dict[int, _Block] = field(default_factory=dict)
    _open: list[_Block] = field(default_factory=list)
    _usage: dict[str, int] | None = None
    _finish: str | None = None

    def _start(self, kind: str) -> tuple[_Block, dict[str, Any]]:
        block = _Block(self._next, kind)
        self._next += 1
        self._open.append(block)
        return block, {"type": "block-start", "index": block.index, "blockType": kind}

    def _end(self, block: _Block | None) -> list[dict[str, Any]]:
        if block is None or block not in self._open:
            return []
        self._open.remove(block)
        if block.kind == "tool-call":
            final = {
                "type": "tool-call",
                "id": block.call_id,
                "name": block.name,
                "arguments": "".join(block.text),
            }
        else:
            final = {"type": block.kind, "text": "".join(block.text)}
        return [{"type": "block-end", "index": block.index, "block": final}]

    def feed(self, chunk: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The StreamChunks one chat chunk produces (possibly none)."""
        out: list[dict[str, Any]] = []
        if isinstance(chunk.get("usage"), Mapping):
            self._usage = map_usage(chunk["usage"])
        choices = chunk.get("choices") or []
        if not choices:
            return out
        choice = choices[0]
        delta = choice.get("delta") or {}
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            out += self._end(self._text)
            self._text = None
            if self._reasoning is None:
                self._reasoning, start = self._start("reasoning")
                out.append(start)
            self._reasoning.text.append(reasoning)
            out.append(
                {"type": "reasoning-delta", "index": self._reasoning.index, "text": reasoning}
            )
        content = delta.get("content")
        if isinstance(content, str) and content:
            out += self._end(self._reasoning)
            self._reasoning = None
            if self._text is None:
                self._text, start = self._start("text")
                out.append(start)
            self._text.text.append(content)
            out.append({"type": "text-delta", "index": self._text.index, "text": content})
        for call in delta.get("tool_calls") or []:
            out += self._end(self._text) + self._end(self._reasoning)
            self._text = self._reasoning = None
            position = int(call.get("index") or 0)
            block = self._tools.get(position)
            if block is None:
                block, start = self._start("tool-call")
                self._tools[position] = block
                out.append(start)
            fn = call.get("function") or {}
            block.call_id = call.get("id") or block.call_id
            block.name = fn.get("name") or block.name
            fragment = fn.get("arguments") or ""
            block.text.append(fragment)
            tool_delta: dict[str, Any] = {
                "type": "tool-call-delta",
                "index": block.index,
                "id": block.call_id,
                "argumentsDelta": fragment,
            }
            if fn.get("name"):
                tool_delta["name"] = fn["name"]
            out.append(tool_delta)
        if choice.get("finish_reason"):
            self._finish = str(choice["finish_reason"])
        return out

    def close(self) -> list[dict[str, Any]]:
        """At the end of the stream: close open blocks, then usage, then finish."""
        if self._finish is None:
            return [
                error_finish("the provider stream ended without a finish_reason", "EMPTY_RESPONSE")
            ]
        out: list[dict[str, Any]] = []
        for block in list(self._open):
            out += self._end(block)
        if self._usage is not None:
            out.append({"type": "usage", "usage": self._usage})
        kind = _FINISH_KINDS.get(self._finish)
        if kind is None:
            out.append(error_finish(f"the provider stopped: {self._finish}", "PROVIDER_STOP"))
        else:
            out.append({"type": "finish", "reason": {"kind": kind}})
        return out


# -- the provider (I/O) --------------------------------------------------------------------


def _error_message(exc: Exception) -> str:
    """The provider's own error text when its body carries one.

    The SDK's `str()` of a status error is `Error code: 409 - {...}`, the whole JSON body;
    the user (and the turn-failed message, contract 3.4) wants the provider's sentence.
    """
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str) and inner["message"]:
            return str(inner["message"])
    return str(exc) or type(exc).__name__


def _error_code(exc: Exception) -> str:
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        if status in (401, 403):
            return "AUTH"
        if status == 429:
            return "RATE_LIMIT"
        if status >= 500:
            return "SERVER"
        return "BAD_REQUEST"
    name = type(exc).__name__
    if "Timeout" in name:
        return "TIMEOUT"
    if "Connection" in name:
        return "TRANSPORT"
    return "PROVIDER_ERROR"


def _has_image(messages: list[dict[str, Any]]) -> bool:
    return any(
        isinstance(b, dict) and b.get("type") == "image"
        for m in messages
        if isinstance(m.get("content"), list)
        for b in m["content"]
    )


class OpenAIChatProvider:
    """Streams chat completions from one OpenAI-compatible endpoint."""

    def __init__(
        self,
        config: OpenAIChatConfig | None = None,
        environ: Mapping[str, str] | None = None,
        read_attachment: ReadAttachment | None = None,
    ):
        self.config = config or OpenAIChatConfig()
        self._environ = environ if environ is not None else os.environ
        self._read_attachment = read_attachment
        self._client: Any = None

    async def catalog(self) -> list[ProviderInfo]:
        """The configured route and models (no network)."""
        return [
            {"id": self.config.id, "name": self.config.name, "models": list(self.config.models)}
        ]

    def _sdk(self, api_key: str) -> Any:
        if self._client is None:
            # Imported on first use: the SDK takes a good part of a second to import.
            from openai import AsyncOpenAI

            self._client = AsyncOpenAI(
                api_key=api_key,
                base_url=self.config.base_url,
                max_retries=self.config.max_retries,
                timeout=self.config.timeout,
            )
        return self._client

    async def stream(self, req: ModelRequest) -> AsyncGenerator[dict[str, Any], None]:
        """Stream one step; SDK errors end in `finish{error}` with the SDK's message."""
        api_key = self._environ.get(self.config.api_key_env, "")
        if not api_key:
            yield error_finish(
                f"{self.config.api_key_env} is not set "
                f"(the {self.config.name} provider reads its API key from it)",
                "MISSING_CREDENTIAL",
            )
            return
        if "openai" not in sys.modules:
            # The SDK import is CPU-heavy; keep it off the event loop.
            await asyncio.to_thread(importlib.import_module, "openai")
        import httpx
        import openai

        if self._read_attachment is not None and _has_image(req.messages):
            messages = await asyncio.to_thread(inline_images, req.messages, self._read_attachment)
            req = dataclasses.replace(req, messages=messages)
        params: dict[str, Any] = {
            "model": req.model,
            "messages": to_chat_messages(req),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if req.tools:
            params["tools"] = to_chat_tools(req.tools)
        if req.reasoning_effort:
            params["reasoning_effort"] = req.reasoning_effort
        if self.config.max_tokens is not None:
            params["max_tokens"] = self.config.max_tokens
        mapper = ChatChunkMapper()
        route = self.config.id
        try:
            stream = await self._sdk(api_key).chat.completions.create(**params)
            # `async with` closes the HTTP response on every exit, cancellation included.
            async with stream:
                chunks = stream.__aiter__()
                with StallGuard(self.config.stream_idle_timeout) as guard:
                    while True:
                        try:
                            chunk = await guard.next(chunks)
                        except StopAsyncIteration:
                            break
                        for out in mapper.feed(chunk.model_dump(exclude_none=True)):
                            yield out
        except StreamStalled as exc:
            yield provider_failure(route, API, str(exc), "TIMEOUT")
            return
        except openai.APIStatusError as exc:
            status = exc.status_code
            yield provider_failure(route, API, _error_message(exc), _error_code(exc), status)
            return
        except (openai.APIConnectionError, openai.APIResponseValidationError) as exc:
            # APITimeoutError is an APIConnectionError.
            yield provider_failure(route, API, _error_message(exc), _error_code(exc))
            return
        except openai.OpenAIError as exc:
            # An error event inside the stream: the provider's own failure, verbatim.
            yield error_finish(_error_message(exc), _error_code(exc))
            return
        except httpx.HTTPError as exc:
            # A transport failure while reading the body reaches us unwrapped.
            yield provider_failure(route, API, f"transport failed: {exc}", "TRANSPORT")
            return
        for out in mapper.close():
            yield out

    async def aclose(self) -> None:
        """Close the SDK client."""
        if self._client is not None:
            await self._client.close()
            self._client = None
