"""Provider protocol, the canonical model request, and the route router.

A provider turns a `ModelRequest` (the parity-stream canonical request) into a stream of
`StreamChunk` dicts (§8.1): block-start / *-delta / block-end per block, then at most
one `usage`, then exactly one `finish`. Providers report failures as a final
`finish{kind: error, failure}` chunk rather than raising, so the loop has one path.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncGenerator, Sequence
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
    """The canonical model request of `spec/parity-stream-protocol.md`."""

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
