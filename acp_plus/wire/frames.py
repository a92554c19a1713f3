"""NDJSON JSON-RPC 2.0 frames, pure: classifying a line, encoding a message, splitting a
byte stream into bounded lines. `rpc.Connection` is the I/O around them.

- `classify(line)`: raw line -> one `Incoming` variant (request, notification, response,
  or a protocol error to answer with id null / the request's id); never raises.
- `encode(message)`: one frame as native writes it (`JSON.stringify` text plus newline).
- `LineSplitter`: byte chunks -> complete lines, one line's size bounded (`max_frame`);
  a longer line is discarded while it is scanned, never buffered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from acp_plus.core.js_json import js_json, js_parse
from acp_plus.wire.errors import RpcError, invalid_request, parse_error

JsonId = str | int | float | None

MAX_FRAME_BYTES = 64 * 1024 * 1024
"""Default bound on one incoming line (bytes, newline excluded). The largest legitimate
frame is a prompt at the image store's limit: 40 MiB of images is 53.3 MiB of base64
(docs/acp-plus.md, "Images"), so 64 MiB admits it with room for the JSON around it."""


class _Undefined:
    def __repr__(self) -> str:
        return "UNDEFINED"


UNDEFINED: Final = _Undefined()
"""JavaScript's `undefined`: the `params` of a request that has none. The ACP SDK's
schema check tells it from `null` (`expected object, received undefined`)."""


@dataclass(frozen=True)
class Request:
    """A call that expects a response."""

    id: JsonId
    method: str
    params: Any


@dataclass(frozen=True)
class Notification:
    """A call without an id: never answered."""

    method: str
    params: Any


@dataclass(frozen=True)
class Response:
    """The peer's answer to one of our outgoing requests."""

    id: JsonId
    result: Any = None
    error: dict[str, Any] | None = None


@dataclass(frozen=True)
class Invalid:
    """A line we must answer with an error (parse error or invalid request)."""

    id: JsonId
    error: RpcError


Incoming = Request | Notification | Response | Invalid


def valid_id(value: Any) -> bool:
    """Whether `value` may be a JSON-RPC id: a string, a number or null."""
    # JSON-RPC ids are strings, numbers or null; bool is an int subclass in Python but not
    # a JSON number, so exclude it explicitly.
    return value is None or (isinstance(value, str | int | float) and not isinstance(value, bool))


def classify(line: bytes | str) -> Incoming:
    """Turn one raw line into a typed incoming message; never raises."""
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    try:
        # As Node reads it: invalid UTF-8 becomes U+FFFD, numbers follow JS semantics
        # (1.0 is the integer 1), and NaN/Infinity are not JSON.
        value = js_parse(text)
    except (ValueError, RecursionError):
        return Invalid(None, parse_error())
    # As native 0.2.1-rc.2's ACP SDK classifies a message: a call needs the `jsonrpc: "2.0"`
    # envelope, a string method and (for a request) a valid id; a response-shaped object
    # (no method; an id, result or error) is routed as a response and never answered;
    # anything else is -32600 with id null and what came as its data (scenarios/protocol/
    # raw-*). Its SDK closes the connection on a batch; acp-plus answers it like any other
    # invalid request (docs/contract-notes.md).
    if not isinstance(value, dict):
        return Invalid(None, invalid_request(value))
    method = value.get("method")
    has_id = "id" in value
    if value.get("jsonrpc") == "2.0" and isinstance(method, str):
        if not has_id:
            return Notification(method, value.get("params"))
        if valid_id(value["id"]):
            return Request(value["id"], method, value.get("params", UNDEFINED))
    elif "method" not in value and (has_id or "result" in value or "error" in value):
        msg_id = value.get("id")
        error = value.get("error")
        return Response(
            msg_id if valid_id(msg_id) else None,
            value.get("result"),
            error if isinstance(error, dict) else None,
        )
    return Invalid(None, invalid_request(value))


def encode(message: dict[str, Any]) -> bytes:
    """One frame as native writes it: `JSON.stringify` text (JS number spelling and key
    order, lone surrogates escaped) plus a newline."""
    return js_json(message).encode() + b"\n"


def error_frame(msg_id: JsonId, error: RpcError) -> dict[str, Any]:
    """The response object for a failed request."""
    return {"jsonrpc": "2.0", "id": msg_id, "error": error.to_json()}


def frame_too_large(limit: int) -> RpcError:
    """-32600 for a line longer than `limit` bytes; it was discarded unread, so no id."""
    return invalid_request({"details": f"frame exceeds {limit} bytes; discarded unread"})


@dataclass(frozen=True)
class Oversized:
    """Stands for a line that passed the size bound; it was dropped, not kept."""

    limit: int


class LineSplitter:
    """Splits a byte stream into lines of at most `max_frame` bytes (newline excluded).

    A longer line yields one `Oversized` as soon as it crosses the bound; the rest of it
    is skipped up to its newline, so memory never holds more than `max_frame` bytes of
    one line, whatever the peer sends.
    """

    def __init__(self, max_frame: int = MAX_FRAME_BYTES) -> None:
        self.max_frame = max_frame
        self._parts: list[bytes] = []
        self._size = 0
        self._discarding = False

    def feed(self, chunk: bytes) -> list[bytes | Oversized]:
        """The lines (and oversize markers) `chunk` completes, in order."""
        out: list[bytes | Oversized] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            stop = len(chunk) if end == -1 else end
            if not self._discarding:
                if self._size + stop - start > self.max_frame:
                    self._parts.clear()
                    self._size = 0
                    self._discarding = True
                    out.append(Oversized(self.max_frame))
                elif stop > start:
                    self._parts.append(chunk[start:stop])
                    self._size += stop - start
            if end == -1:
                return out
            if self._discarding:
                self._discarding = False
            else:
                out.append(self._take())
            start = end + 1

    def finish(self) -> bytes | None:
        """At EOF: the last line if it had no newline (None if empty or discarded)."""
        if self._discarding or not self._parts:
            return None
        return self._take()

    def _take(self) -> bytes:
        line = b"".join(self._parts)
        self._parts.clear()
        self._size = 0
        return line
