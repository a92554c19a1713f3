"""An OpenAI-compatible chat-completions provider (DeepSeek by default), via the `openai` SDK.

`chat_messages.py` converts the canonical parity-stream request to chat messages and
`chat_chunks.py` (`ChatChunkMapper`) turns the streamed chat chunks into StreamChunks;
this module holds the route's config and the I/O between them. Failures are
reported as `finish{error}`: an HTTP status error names the route, the status and the
provider's message (`provider mock (openai-chat): HTTP 409: script exhausted`), an error
event inside the stream passes on the provider's message verbatim; a missing API key
fails the prompt (naming the variable), never startup.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import os
import sys
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass
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
from acp_plus.core.llm.chat_chunks import ChatChunkMapper
from acp_plus.core.llm.chat_messages import (
    ReadAttachment,
    inline_images,
    to_chat_messages,
    to_chat_tools,
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


API = "openai-chat"


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


# -- the provider (I/O) --------------------------------------------------------------------


def _error_message(exc: Exception) -> str:
    """The provider's own error text when its body carries one.

    The SDK's `str()` of a status error is `Error code: 409 - {...}`, the whole JSON body;
    the user (and the turn-failed message, §3.4) wants the provider's sentence.
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
