"""An OpenAI-compatible chat-completions provider (DeepSeek by default), via the `openai` SDK.

`chat_messages.py` converts the canonical parity-stream request to chat messages and
`chat_chunks.py` (`ChatChunkMapper`) turns the streamed chat chunks into StreamChunks;
this module holds the route's config and the I/O between them. Failures are
reported as `finish{error}` with the provider's own message, as the parity-stream route
and native pass `failure.message` on (§3.4, `turn failed: <message>`): an HTTP status
answer's message is the one its error body carries the way the OpenAI API writes it
(`{"error": {"message": ...}}`), logged with the route and status; an answer without one
is described (`provider mock (openai-chat): HTTP 502: <body>`), and so are transport
failures and timeouts; an error event inside the stream passes on its message verbatim.
A missing API key fails the prompt (naming the variable), never startup.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import logging
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


log = logging.getLogger(__name__)


def _body_message(body: object) -> str | None:
    """The message an error body carries as the OpenAI API writes it, or None.

    The API answers a failure with `{"error": {"message", "type", "param", "code"}}`; the
    SDK hands over the inner object as `exc.body` (the whole body when there is no
    `error` key, the raw text when it is not JSON). A string `message` there is the
    provider's own sentence, passed on as it is (an empty one too, as the parity-stream
    route passes `failure.message`).
    """
    if isinstance(body, dict):
        message = body.get("message")
        if isinstance(message, str):
            return message
        inner = body.get("error")
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
    return None


def _error_message(exc: Exception) -> str:
    """The provider's own error text when its body carries one, else the SDK's text.

    The SDK's `str()` of a status error is `Error code: 409 - {...}`, the whole JSON body;
    the user (and the turn-failed message, §3.4) wants the provider's sentence.
    """
    message = _body_message(getattr(exc, "body", None))
    if message:
        return message
    return str(exc) or type(exc).__name__


def _status_failure(route: str, exc: Any) -> dict[str, Any]:
    """`finish{error}` for an HTTP status answer (`openai.APIStatusError`).

    With a provider message in the body, that message alone, as the parity-stream route
    gives the failure's message (a scripted `error: {status: 400}` is one failure in both
    dialects); the route and status go to the log. Without one (an HTML page from a proxy,
    an empty body), the answer is described: `provider mock (openai-chat): HTTP 502: ...`.
    """
    status = int(exc.status_code)
    code = _error_code(exc)
    message = _body_message(exc.body)
    if message is None:
        raw = exc.body if isinstance(exc.body, str) else exc.response.text
        text = raw.strip()[:500] if isinstance(raw, str) else ""
        text = text or exc.response.reason_phrase or "no message"
        return provider_failure(route, API, text, code, status)
    log.warning("provider %s (%s): HTTP %d: %s", route, API, status, message)
    return error_finish(message, code)


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
            yield _status_failure(route, exc)
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
