"""Provider protocol, the canonical model request, and the route router.

A provider turns a `ModelRequest` (the parity-stream canonical request) into a stream of
`StreamChunk` dicts (§8.1): block-start / *-delta / block-end per block, then at most
one `usage`, then exactly one `finish`. Providers report failures as a final
`finish{kind: error, failure}` chunk rather than raising, so the loop has one path.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NotRequired, Protocol, TypedDict

from acp_plus.core.history import accepts_images, images_as_text


class Effort(TypedDict):
    """One selectable reasoning effort."""

    id: str
    name: str
    description: NotRequired[str]


class ReasoningInfo(TypedDict):
    """A model's reasoning efforts and its default effort, if any."""

    efforts: list[Effort]
    defaultEffort: NotRequired[str]


class ModelInfo(TypedDict):
    """A model as the parity-stream catalog describes it (optional fields may be absent)."""

    id: str
    name: str
    description: NotRequired[str]
    inputModalities: NotRequired[list[str]]
    contextWindow: NotRequired[int]
    reasoning: NotRequired[ReasoningInfo]


class ProviderInfo(TypedDict):
    """A provider route and its models."""

    id: str
    name: str
    models: list[ModelInfo]


class ProviderError(Exception):
    """A provider cannot serve at all (bad catalog, wrong protocol version)."""


@dataclass
class ModelRequest:
    """The canonical model request of docs/parity-stream.md."""

    provider: str
    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)
    reasoning_effort: str | None = None
    system: str | None = None
    session_id: str | None = None
    purpose: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The wire body: absent optional fields are omitted, never null."""
        body: dict[str, Any] = {"provider": self.provider, "model": self.model}
        if self.reasoning_effort is not None:
            body["reasoningEffort"] = self.reasoning_effort
        if self.system is not None:
            body["system"] = self.system
        body["messages"] = self.messages
        if self.tools:  # as native: no `tools` key when the model gets none
            body["tools"] = self.tools
        if self.session_id is not None:
            body["sessionId"] = self.session_id
        if self.purpose is not None:
            body["purpose"] = self.purpose
        return body


class Provider(Protocol):
    """One source of models; may serve several provider routes."""

    async def catalog(self) -> list[ProviderInfo]:
        """The routes and models this provider serves."""
        ...

    def stream(self, req: ModelRequest) -> AsyncGenerator[dict[str, Any], None]:
        """Stream the chunks of one model step; cancelling the consumer aborts the request."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


def error_finish(message: str, code: str) -> dict[str, Any]:
    """A terminal `finish` chunk of kind `error`."""
    return {
        "type": "finish",
        "reason": {"kind": "error", "failure": {"message": message, "code": code}},
    }


def provider_failure(
    route: str, api: str, message: str, code: str, status: int | None = None
) -> dict[str, Any]:
    """A `finish{error}` for a failed HTTP exchange, naming route, api and status.

    `provider mock (parity-stream): transport failed: ...`, `provider mock (openai-chat):
    HTTP 502: <body>`. The turn-failed text (§3.4, `turn failed: <message>`) then says who
    failed and how. A failure the provider words itself (parity-stream `finish{error}`, a
    chat-completions error event, an OpenAI error body's `error.message`) is passed on
    verbatim instead, as native does.
    """
    head = f"provider {route} ({api}): "
    if status is not None:
        head += f"HTTP {status}: "
    return error_finish(head + message, code)


class StreamStalled(Exception):
    """No chunk arrived within the stream idle timeout."""

    def __init__(self, seconds: float):
        super().__init__(f"stream stalled: no data for {seconds:g} s (stream_idle_timeout)")
        self.seconds = seconds


async def ndjson_lines(chunks: AsyncIterator[bytes]) -> AsyncIterator[str]:
    """The lines of an NDJSON body, split at b"\\n" only, each decoded as UTF-8 (an
    invalid byte becomes U+FFFD, as a JavaScript TextDecoder reads it).

    Not httpx's `aiter_lines`: it splits where `str.splitlines` does, also at U+0085,
    U+2028, U+2029 and the \\x1c-\\x1e separators, which JSON carries unescaped inside
    strings (a tool call's arguments), so a valid line came apart into two malformed
    ones. Splitting the bytes also never cuts a multi-byte character."""
    head: list[bytes] = []  # the line begun in earlier chunks, never scanned twice
    async for chunk in chunks:
        *complete, rest = chunk.split(b"\n")
        if complete:
            complete[0] = b"".join([*head, complete[0]])
            head = []
            for line in complete:
                yield line.decode("utf-8", "replace")
        if rest:
            head.append(rest)
    if head:
        yield b"".join(head).decode("utf-8", "replace")


class StallGuard:
    """Bounds the wait for each next chunk of a provider stream (`stream_idle_timeout`).

    Only the time spent awaiting the provider counts: the consumer's own work between
    chunks (commit, projection) never trips it, and no timer is created per chunk (one
    timer re-arms itself), so a 100,000-delta stream pays a float store per chunk.
    `seconds=None` disables the guard.
    """

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        self._since = 0.0
        self._waiting = False
        self._fired = False
        self._handle: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[Any] | None = None

    def __enter__(self) -> StallGuard:
        if self.seconds is not None:
            loop = asyncio.get_running_loop()
            self._task = asyncio.current_task()
            self._handle = loop.call_at(loop.time() + self.seconds, self._check)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _check(self) -> None:
        assert self.seconds is not None and self._task is not None
        loop = asyncio.get_running_loop()
        now = loop.time()
        due = (self._since if self._waiting else now) + self.seconds
        if self._waiting and now >= due:
            self._fired = True
            self._handle = None
            self._task.cancel()
            return
        self._handle = loop.call_at(due, self._check)

    async def next(self, source: AsyncIterator[Any]) -> Any:
        """`await anext(source)`, raising `StreamStalled` when it takes too long."""
        if self._handle is None:
            return await source.__anext__()
        task = self._task
        assert task is not None
        base = task.cancelling()
        self._since = asyncio.get_running_loop().time()
        self._waiting = True
        try:
            return await source.__anext__()
        except asyncio.CancelledError:
            if self._fired and task.uncancel() <= base:
                assert self.seconds is not None
                raise StreamStalled(self.seconds) from None
            raise
        finally:
            self._waiting = False


class Router:
    """Dispatches a request to the provider serving its route."""

    def __init__(self, providers: Sequence[Provider]):
        self._providers = list(providers)
        self._routes: dict[str, Provider] = {}
        self._catalog: list[ProviderInfo] | None = None

    @property
    def providers(self) -> list[Provider]:
        """The providers, in registration order."""
        return list(self._providers)

    async def catalog(self, refresh: bool = False) -> list[ProviderInfo]:
        """Every provider's routes, in registration order (cached after the first call).

        A provider that raises `ProviderError` makes this raise: a misconfigured
        provider should be reported, not silently dropped.
        """
        if self._catalog is None or refresh:
            merged: list[ProviderInfo] = []
            routes: dict[str, Provider] = {}
            for provider in self._providers:
                for info in await provider.catalog():
                    # The first provider to claim a route keeps it.
                    if info["id"] not in routes:
                        routes[info["id"]] = provider
                        merged.append(info)
            self._catalog, self._routes = merged, routes
        return self._catalog

    async def find_model(self, provider: str, model: str) -> ModelInfo | None:
        """The catalog entry of a route's model, or None when it is not listed."""
        for info in await self.catalog():
            if info["id"] == provider:
                for entry in info["models"]:
                    if entry["id"] == model:
                        return entry
        return None

    async def stream(self, req: ModelRequest) -> AsyncGenerator[dict[str, Any], None]:
        """Stream from the provider that serves `req.provider`; unknown routes fail.

        Images in the history reach only a model that declares image input; for any
        other model they become text first (§8.2), whichever provider serves it.
        """
        await self.catalog()
        target = self._routes.get(req.provider)
        if target is None:
            yield error_finish(f"no provider serves route {req.provider!r}", "NO_ADAPTER")
            return
        info = await self.find_model(req.provider, req.model)
        if not accepts_images(info.get("inputModalities", ["text"]) if info else None):
            req = dataclasses.replace(req, messages=images_as_text(req.messages))
        # aclosing: an early stop by the consumer must close the HTTP response now, not at GC.
        async with contextlib.aclosing(target.stream(req)) as chunks:
            async for chunk in chunks:
                yield chunk

    async def aclose(self) -> None:
        """Close every provider."""
        for provider in self._providers:
            await provider.aclose()
