"""The `parity-stream/1` client (docs/parity-stream.md).

One base URL serves the catalog (providers, models, fixture tools), the NDJSON model
stream and fixture tool calls. Any non-200 answer becomes a `PARITY_PROTOCOL` failure
carrying the server's `error` text, exactly as the fixed wire says (native's adapter
reports it the same way), and is never retried; a `finish{error}` inside the stream is
the scripted model failure and passes on verbatim. Failures this client detects itself
(a malformed or unfinished stream, a stall, a transport error) name the route and what
happened (`provider mock (parity-stream): stream stalled: ...`).
`retries` applies only to transport errors before any answer (connection refused or
reset, `request_timeout`). Closing the HTTP response (which task cancellation does) is
how the fake learns that a turn was cancelled.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any, TypedDict

from acp_plus.core.llm.base import (
    ModelRequest,
    ProviderError,
    ProviderInfo,
    StallGuard,
    StreamStalled,
    error_finish,
    ndjson_lines,
    provider_failure,
)

if TYPE_CHECKING:
    import httpx

PROTOCOL = "parity-stream/1"
PROTOCOL_CODE = "PARITY_PROTOCOL"
API = "parity-stream"
CONNECT_TIMEOUT = 10.0
RETRY_BACKOFF = 0.25
"""Seconds before the first transport retry; doubled per retry."""


class FixtureToolSpec(TypedDict):
    """A fixture tool the catalog asks the target to register under exactly this name."""

    name: str
    description: str
    parameters: dict[str, Any]
    approval: str


class ToolCallFailed(Exception):
    """`/tools/call` answered with a non-200 status or an unreadable body."""


def _error_message(body: bytes) -> str | None:
    """The server's `error` field, else the raw answer's text (None when empty)."""
    try:
        parsed = json.loads(body)
        if isinstance(parsed, dict) and isinstance(parsed.get("error"), str):
            return str(parsed["error"])
    except ValueError:
        pass
    text = body.decode("utf-8", "replace").strip()
    return text[:500] if text else None


def _error_text(status: int, body: bytes) -> str:
    """The server's `error` field, or a description of the raw answer."""
    try:
        parsed = json.loads(body)
        if isinstance(parsed, dict) and isinstance(parsed.get("error"), str):
            return str(parsed["error"])
    except ValueError:
        pass
    text = _error_message(body)
    return f"HTTP {status}" + (f": {text}" if text else "")


def wire_body(req: ModelRequest) -> dict[str, Any]:
    """The `/stream` body: an image block without its bytes, as native's plugin sends it
    (parity-stream/1 lets a request leave them out; a stored image keeps its digest), so
    a tool's image (`read_image`'s) reads the same in a model view whichever agent made
    it."""
    body = req.to_json()
    body["messages"] = [
        {**m, "content": [_image_ref(b) for b in m["content"]]}
        if isinstance(m.get("content"), list)
        else m
        for m in body["messages"]
    ]
    return body


def _image_ref(block: Any) -> Any:
    if isinstance(block, dict) and block.get("type") == "image" and "data" in block:
        return {key: value for key, value in block.items() if key != "data"}
    return block


def parse_catalog(doc: Any) -> tuple[list[ProviderInfo], list[FixtureToolSpec]]:
    """Validate a catalog document; raise `ProviderError` on a foreign protocol or bad shape."""
    if not isinstance(doc, dict):
        raise ProviderError("parity-stream catalog is not a JSON object")
    protocol = doc.get("protocol")
    if protocol != PROTOCOL:
        raise ProviderError(
            f"parity-stream server speaks protocol {protocol!r}; "
            f"this adapter supports only {PROTOCOL!r}"
        )
    providers = doc.get("providers", [])
    tools = doc.get("tools", [])
    if not isinstance(providers, list) or not isinstance(tools, list):
        raise ProviderError("parity-stream catalog: providers and tools must be arrays")
    out: list[ProviderInfo] = []
    for p in providers:
        if (
            not isinstance(p, dict)
            or not isinstance(p.get("id"), str)
            or not isinstance(p.get("models", []), list)
        ):
            raise ProviderError(f"parity-stream catalog: malformed provider entry {p!r}")
        models = [
            m for m in p.get("models", []) if isinstance(m, dict) and isinstance(m.get("id"), str)
        ]
        for m in models:
            m.setdefault("name", m["id"])
        out.append({"id": p["id"], "name": str(p.get("name") or p["id"]), "models": models})  # type: ignore[typeddict-item]
    specs: list[FixtureToolSpec] = []
    for t in tools:
        if not isinstance(t, dict) or not isinstance(t.get("name"), str):
            raise ProviderError(f"parity-stream catalog: malformed tool entry {t!r}")
        specs.append(
            {
                "name": t["name"],
                "description": str(t.get("description", "")),
                "parameters": t.get("parameters") or {"type": "object", "properties": {}},
                "approval": "ask" if t.get("approval") == "ask" else "none",
            }
        )
    return out, specs


class ParityStreamProvider:
    """A provider (and fixture-tool host) behind one parity-stream base URL."""

    def __init__(
        self,
        base_url: str,
        timeout: float | None = None,
        *,
        request_timeout: float | None = None,
        stream_idle_timeout: float | None = None,
        retries: int = 0,
    ):
        self._base = base_url.rstrip("/")
        self._timeout = timeout
        self._request_timeout = request_timeout
        self._idle_timeout = stream_idle_timeout
        self._retries = retries
        self._client: httpx.AsyncClient | None = None
        self._providers: list[ProviderInfo] | None = None
        self._tools: list[FixtureToolSpec] = []

    @property
    def base_url(self) -> str:
        """The run's base URL."""
        return self._base

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            # Imported here: httpx costs tens of milliseconds and startup must stay fast.
            import httpx

            # No read timeout by default: a scripted hang must last until we cancel it.
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self._timeout, connect=CONNECT_TIMEOUT)
            )
        return self._client

    async def _load(self) -> None:
        import httpx

        try:
            resp = await self._http().get(f"{self._base}/catalog")
        except httpx.HTTPError as exc:
            raise ProviderError(
                f"parity-stream catalog unreachable at {self._base}: {exc}"
            ) from exc
        if resp.status_code != 200:
            raise ProviderError(
                f"parity-stream catalog failed: {_error_text(resp.status_code, resp.content)}"
            )
        try:
            doc = resp.json()
        except ValueError as exc:
            raise ProviderError(f"parity-stream catalog is not JSON: {exc}") from exc
        self._providers, self._tools = parse_catalog(doc)

    async def catalog(self) -> list[ProviderInfo]:
        """The catalog's providers (fetched once)."""
        if self._providers is None:
            await self._load()
        assert self._providers is not None
        return self._providers

    async def fixture_tools(self) -> list[FixtureToolSpec]:
        """The catalog's fixture tools (fetched once)."""
        if self._providers is None:
            await self._load()
        return list(self._tools)

    async def _open(self, req: ModelRequest) -> httpx.Response:
        """Send POST /stream and wait for the answer's status (bounded by request_timeout);
        transport errors before an answer are retried `retries` times."""
        import httpx

        client = self._http()
        attempt = 0
        while True:
            request = client.build_request("POST", f"{self._base}/stream", json=wire_body(req))
            try:
                async with asyncio.timeout(self._request_timeout):
                    return await client.send(request, stream=True)
            except (httpx.TransportError, TimeoutError):
                if attempt >= self._retries:
                    raise
            await asyncio.sleep(RETRY_BACKOFF * 2**attempt)
            attempt += 1

    async def stream(self, req: ModelRequest) -> AsyncGenerator[dict[str, Any], None]:
        """POST /stream and yield its NDJSON chunks; failures end in `finish{error}`."""
        import httpx

        def fail(message: str, code: str, status: int | None = None) -> dict[str, Any]:
            return provider_failure(req.provider, API, message, code, status)

        saw_finish = False
        try:
            resp = await self._open(req)
        except TimeoutError:
            yield fail(f"no answer within {self._request_timeout:g} s (request_timeout)", "TIMEOUT")
            return
        except httpx.HTTPError as exc:
            yield fail(f"transport failed: {exc}", "TRANSPORT")
            return
        try:
            if resp.status_code != 200:
                # The fixed wire (docs/fakellm.md, parity-stream/1): a non-200 answer is a
                # PARITY_PROTOCOL failure whose message is the server's `error` text, as
                # native's adapter reports it; only our own failures below say more.
                body = await resp.aread()
                yield error_finish(_error_text(resp.status_code, body), PROTOCOL_CODE)
                return
            lines = ndjson_lines(resp.aiter_bytes())
            with StallGuard(self._idle_timeout) as guard:
                while True:
                    try:
                        line = await guard.next(lines)
                    except StopAsyncIteration:
                        break
                    if not line.strip():
                        continue
                    try:
                        chunk = json.loads(line)
                    except ValueError:
                        yield fail(f"malformed stream line: {line[:200]}", PROTOCOL_CODE)
                        return
                    if not isinstance(chunk, dict):
                        yield fail(f"malformed stream chunk: {line[:200]}", PROTOCOL_CODE)
                        return
                    yield chunk
                    if chunk.get("type") == "finish":
                        saw_finish = True
                        return
        except StreamStalled as exc:
            yield fail(str(exc), "TIMEOUT")
            return
        except httpx.HTTPError as exc:
            yield fail(f"transport failed: {exc}", "TRANSPORT")
            return
        finally:
            await resp.aclose()
        if not saw_finish:
            yield fail("response ended without a finish chunk", PROTOCOL_CODE)

    async def call_tool(
        self, name: str, call_id: str, arguments: Any
    ) -> tuple[list[dict[str, Any]], bool]:
        """POST /tools/call; returns (content, isError). Raises `ToolCallFailed` on non-200."""
        import httpx

        body = {"name": name, "callId": call_id, "arguments": arguments}
        try:
            resp = await self._http().post(f"{self._base}/tools/call", json=body)
        except httpx.HTTPError as exc:
            raise ToolCallFailed(f"parity-stream tool call failed: {exc}") from exc
        if resp.status_code != 200:
            raise ToolCallFailed(_error_text(resp.status_code, resp.content))
        try:
            doc = resp.json()
            content = doc["content"]
            if not isinstance(content, list):
                raise TypeError("content is not an array")
        except (ValueError, KeyError, TypeError) as exc:
            raise ToolCallFailed(f"malformed /tools/call answer: {exc}") from exc
        return content, bool(doc.get("isError", False))

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None
