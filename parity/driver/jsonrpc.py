"""NDJSON JSON-RPC framing for the harness's own ACP client.

The harness must record whatever an agent writes, byte for byte, and never stop reading
because a line is odd: a JSON array, a bare string, invalid UTF-8, NaN, a 50 MiB line.
So framing is split into pure functions over bytes (`parse_line`, `classify`,
`encode`) and one small reader (`read_line`) that turns an `asyncio.StreamReader` into
lines while bounding memory. Nothing here knows about ACP methods or transcripts.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from parity.core.depth import MAX_DEPTH, cut, depth, may_be_deeper

FRAME_LIMIT = 8 * 1024 * 1024
"""Longest line recorded in full (bytes, newline excluded). Longer lines are oversize."""

MAX_INT_DIGITS = 4300
"""The longest integer read as a number (Python's own limit for converting text)."""

OVERSIZE_HEAD = 4096
"""Bytes of an oversize line kept in the transcript: enough to tell what it was,
small enough for a readable snapshot."""

REFUSED = -32603
"""The JSON-RPC code of the client's answer to a request of the agent it did not handle
for a limit (past the frame limit, over the line limit): an internal error of the client,
not the scenario's answer."""

Kind = Literal["request", "notification", "response", "invalid"]


@dataclass(frozen=True)
class Line:
    """One line read from a stream, without its newline."""

    data: bytes
    """The line's bytes; for an oversize line only its first `OVERSIZE_HEAD` bytes."""
    size: int
    """The full length in bytes (excluding the newline)."""
    oversize: bool = False


@dataclass(frozen=True)
class Parsed:
    """A decoded line: its text, and either its JSON value or why it is not JSON."""

    raw: str
    message: Any = None
    error: str | None = None
    cut_from: int = 0
    """How deep the value nested when it is deeper than `MAX_DEPTH` (`message` is then
    cut there, `parity.core.depth`); 0 otherwise."""
    long_int: int = 0
    """The digits of the longest integer over `MAX_INT_DIGITS` (it stands as text in
    `message`); 0 when none."""


def _reject_constant(name: str) -> Any:
    # Python's json accepts NaN/Infinity, which are not JSON; an agent sending them is
    # sending something other peers' parsers reject, so the transcript must say so.
    raise ValueError(f"non-JSON constant {name}")


def parse_line(line: Line) -> Parsed:
    """Decode and parse one line. Never raises: failures become `Parsed.error`.

    `raw` keeps every byte: one that is not UTF-8 becomes a lone surrogate
    (`surrogateescape`), so `raw.encode("utf-8", "surrogateescape")` gives the line back
    exactly; what shows it escapes it (`parity.core.printable`)."""
    raw = line.data.decode("utf-8", errors="surrogateescape")
    if line.oversize:
        return Parsed(raw, None, f"oversize frame: {line.size} bytes exceed {FRAME_LIMIT}")
    try:
        text = line.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Parsed(raw, None, f"invalid UTF-8: {exc.reason} at byte {exc.start}")
    if not text.strip():
        return Parsed(raw, None, "empty line")
    longest: list[int] = []

    def integer(digits: str) -> Any:
        # Python refuses (ValueError) integers of more than 4,300 digits, which JSON
        # allows: converting them takes quadratic time. Such a number stands as text;
        # the line stays whole, and the recording names the frame.
        if len(digits) <= MAX_INT_DIGITS:
            return int(digits)
        longest.append(len(digits))
        return f"<integer of {len(digits)} digits>"

    try:
        value = json.loads(text, parse_constant=_reject_constant, parse_int=integer)
    except (ValueError, RecursionError) as exc:
        return Parsed(raw, None, f"invalid JSON: {exc}")
    if may_be_deeper(text) and (levels := depth(value)) > MAX_DEPTH:
        return Parsed(raw, cut(value), cut_from=levels, long_int=max(longest, default=0))
    return Parsed(raw, value, long_int=max(longest, default=0))


_WS_CHARS = re.compile(rb"[ \t\r\n]*")
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)
_SCALAR = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|["\[\]{}]', re.S)
UNREAD: Any = object()
"""`head_members`' value of a member that is an array or object, or that the head cuts."""


def head_members(head: bytes) -> dict[str, Any]:
    """The top-level members of the JSON object a line too long to parse starts with,
    read from its head: each scalar's value (`UNREAD` for an array or object), up to the
    first member the head cuts off (`UNREAD` too). An oversize request or response
    still names its id and method here when they come before its bulk, as JSON-RPC
    writers put them, so the agent gets an answer and the step a reason
    (`parity.driver.connection`)."""
    found: dict[str, Any] = {}
    pos = _ws(head, 0)
    if head[pos : pos + 1] != b"{":
        return found
    pos += 1
    while (key := _STRING.match(head, _ws(head, pos))) is not None:
        pos = _ws(head, key.end())
        if head[pos : pos + 1] != b":":
            break
        pos = _ws(head, pos + 1)
        scalar = _STRING.match(head, pos) or _SCALAR.match(head, pos)
        end = scalar.end() if scalar else _skip_nested(head, pos)
        after = _ws(head, end) if end is not None else len(head)
        try:
            name = json.loads(key.group())
            # Cut off, a number's digits or the member's end may be missing.
            cut = after >= len(head)
            found[name] = json.loads(scalar.group()) if scalar and not cut else UNREAD
        except ValueError:
            break
        if cut:
            break
        if head[after : after + 1] != b",":
            break
        pos = after + 1
    return found


def _ws(head: bytes, pos: int) -> int:
    """Where the whitespace at `pos` ends (the pattern matches everywhere)."""
    found = _WS_CHARS.match(head, pos)
    return found.end() if found else pos


def _skip_nested(head: bytes, pos: int) -> int | None:
    """Where the array or object at `pos` ends in `head`, or None when it does not."""
    if head[pos : pos + 1] not in (b"[", b"{"):
        return None
    depth = 0
    for token in _TOKEN.finditer(head, pos):
        text = token.group()
        if text == b'"':
            return None  # a string the head cuts off
        if text in (b"[", b"{"):
            depth += 1
        elif text in (b"]", b"}"):
            depth -= 1
            if depth == 0:
                return token.end()
        elif depth == 0:
            return None
    return None


def classify(message: Any) -> Kind:
    """Which JSON-RPC shape a parsed value has (`invalid` for anything else)."""
    if not isinstance(message, dict):
        return "invalid"
    method = message.get("method")
    if isinstance(method, str):
        return "request" if "id" in message else "notification"
    if "method" not in message and "id" in message and ("result" in message or "error" in message):
        return "response"
    return "invalid"


def is_batch(value: Any) -> bool:
    """Whether a parsed value is a JSON-RPC batch: a non-empty array of objects."""
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def encode(message: Any) -> str:
    """The wire text of a message: compact JSON, UTF-8 kept, no trailing newline."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


def request(id_: int | str, method: str, params: Any = None) -> dict[str, Any]:
    """A JSON-RPC 2.0 request object (`params` omitted when None)."""
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def notification(method: str, params: Any = None) -> dict[str, Any]:
    """A JSON-RPC 2.0 notification object (`params` omitted when None)."""
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def result(id_: Any, value: Any) -> dict[str, Any]:
    """A JSON-RPC 2.0 success response."""
    return {"jsonrpc": "2.0", "id": id_, "result": value}


def error(id_: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC 2.0 error response (`data` omitted when None)."""
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": id_, "error": err}


def method_not_found(req_id: Any, method: str) -> dict[str, Any]:
    """The standard JSON-RPC -32601 answer."""
    return error(req_id, -32601, "Method not found", {"method": method})


async def read_line(reader: asyncio.StreamReader) -> Line | None:
    """Read the next line; None at end of stream.

    The reader's `limit` must be at least `FRAME_LIMIT`. A longer line is consumed in
    pieces so memory stays bounded; only its head is returned, flagged oversize. A last
    line without a newline is returned as is.
    """
    try:
        data = await reader.readuntil(b"\n")
        return Line(data[:-1], len(data) - 1)
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        return _sized(exc.partial)
    except asyncio.LimitOverrunError as exc:
        # The separator is not within the limit; the bytes stay buffered, so read them
        # in bounded pieces until the newline (or EOF) while keeping only the head.
        head = await reader.readexactly(exc.consumed)
        size = len(head)
        head = head[:OVERSIZE_HEAD]
        while True:
            try:
                rest = await reader.readuntil(b"\n")
                size += len(rest) - 1
                break
            except asyncio.LimitOverrunError as more:
                size += len(await reader.readexactly(more.consumed))
            except asyncio.IncompleteReadError as end:
                size += len(end.partial)
                break
        return Line(head, size, oversize=True)


def _sized(data: bytes) -> Line:
    if len(data) > FRAME_LIMIT:
        return Line(data[:OVERSIZE_HEAD], len(data), oversize=True)
    return Line(data, len(data))
