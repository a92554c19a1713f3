"""Wire-level building blocks shared by the dialect renderers (pure)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from parity.fakellm.script import Chunk


@dataclass
class Wire:
    """A rendered streaming response.

    `head` goes out when the response starts; `parts[i]` is the wire form of canonical
    chunk i (possibly empty), so a per-chunk delay means the same thing in every
    dialect and a hang happens at the same point of the script.
    """

    head: bytes = b""
    parts: list[bytes] = field(default_factory=list)


def batches(parts: Iterable[bytes], limit: int = 64 * 1024) -> list[bytes]:
    """Join consecutive parts into writes of about `limit` bytes (never splitting one).

    Used when the script asks for no delay: every chunk is ready at once, and one
    socket write per tiny chunk would make the fake, not the agent, the bottleneck.
    """
    out: list[bytes] = []
    pending: list[bytes] = []
    size = 0
    for part in parts:
        if pending and size + len(part) > limit:
            out.append(b"".join(pending))
            pending, size = [], 0
        if part:
            pending.append(part)
            size += len(part)
    if pending:
        out.append(b"".join(pending))
    return out


def dumps(value: Any) -> str:
    """Compact JSON, non-ASCII kept as is (what real providers send)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def sse(data: Any, event: str | None = None) -> bytes:
    """One server-sent event; `data` is JSON-encoded unless it is already a string."""
    payload = data if isinstance(data, str) else dumps(data)
    prefix = f"event: {event}\n" if event else ""
    return f"{prefix}data: {payload}\n\n".encode()


def ndjson(value: Any) -> bytes:
    """One NDJSON line."""
    return (dumps(value) + "\n").encode()


def field_problem(body: Any, key: str, kinds: type | tuple[type, ...], what: str) -> str | None:
    """Why `body` is not a JSON object whose `key` is of `kinds` (described as `what`)."""
    if not isinstance(body, Mapping):
        return "malformed request: body is not a JSON object"
    if not isinstance(body.get(key), kinds):
        return f"malformed request: `{key}` must be {what}"
    return None


def find_usage(chunks: Iterable[Chunk]) -> dict[str, int] | None:
    """The usage counts of the first `usage` chunk, if any."""
    for chunk in chunks:
        if chunk.get("type") == "usage" and isinstance(chunk.get("usage"), Mapping):
            return {str(k): int(v) for k, v in chunk["usage"].items()}
    return None


def finish_of(chunk: Chunk) -> tuple[str, dict[str, Any]] | None:
    """(kind, failure) of a `finish` chunk, None for other chunks."""
    if chunk.get("type") != "finish":
        return None
    reason = chunk.get("reason") or {}
    failure = reason.get("failure") or {}
    return str(reason.get("kind", "stop")), dict(failure)


FAILED_KINDS = frozenset({"error", "aborted"})


@dataclass
class Assembled:
    """A whole response collapsed into its final parts (for non-streaming answers)."""

    reasoning: str | None = None
    text: str | None = None
    tool_calls: list[dict[str, str]] = field(default_factory=list)
    """Each `{id, name, arguments}` with `arguments` the raw JSON string."""
    usage: dict[str, int] | None = None
    finish: str | None = None
    """The finish kind, None when the chunks end without one (a hang)."""
    failure: dict[str, Any] | None = None


def assemble(chunks: Iterable[Chunk]) -> Assembled:
    """Fold canonical chunks into what a non-streaming response reports.

    Deltas are what the client would have seen, so an unterminated block still
    contributes its text, like a provider that returns the partial output.
    """
    out = Assembled()
    calls: dict[int, dict[str, str]] = {}
    for chunk in chunks:
        kind = chunk.get("type")
        if kind == "text-delta":
            out.text = (out.text or "") + str(chunk.get("text", ""))
        elif kind == "reasoning-delta":
            out.reasoning = (out.reasoning or "") + str(chunk.get("text", ""))
        elif kind == "tool-call-delta":
            call = calls.setdefault(
                int(chunk.get("index", 0)), {"id": "", "name": "", "arguments": ""}
            )
            call["id"] = str(chunk.get("id", call["id"]))
            call["name"] = str(chunk.get("name") or call["name"])
            call["arguments"] += str(chunk.get("argumentsDelta", ""))
        elif kind == "usage":
            out.usage = find_usage([chunk])
        elif (fin := finish_of(chunk)) is not None:
            out.finish, failure = fin
            out.failure = failure if out.finish in FAILED_KINDS else None
    out.tool_calls = [calls[i] for i in sorted(calls)]
    return out


_HTTP_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    409: "conflict_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def anthropic_error_type(status: int) -> str:
    """Anthropic's `error.type` for an HTTP status (`api_error` for other 5xx)."""
    return _HTTP_ERROR_TYPES.get(status, "api_error")


def openai_error(message: str, code: str, status: int) -> dict[str, Any]:
    """OpenAI's error JSON: `{"error": {message, type, param, code}}`."""
    kind = (
        "server_error" if status >= 500 else _HTTP_ERROR_TYPES.get(status, "invalid_request_error")
    )
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def anthropic_error(message: str, status: int) -> dict[str, Any]:
    """Anthropic's error JSON: `{"type": "error", "error": {type, message}}`."""
    return {"type": "error", "error": {"type": anthropic_error_type(status), "message": message}}


def failure_fields(failure: Mapping[str, Any]) -> tuple[str, str, int]:
    """(message, code, HTTP status) of a scripted provider failure, with the fake's
    defaults, as every dialect renders it."""
    return (
        str(failure.get("message", "provider error")),
        str(failure.get("code", "PROVIDER_ERROR")),
        int(failure.get("status", 500)),
    )
