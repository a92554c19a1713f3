"""NDJSON JSON-RPC 2.0 connection for acp-plus (one JSON object per line on stdio).

Why our own layer and not the ACP SDK's: the SDK's receive loop dies on a JSON array or a
bare string line, spreads `_meta` into handler arguments, and costs ~0.5 s to import
(design.md). This module is small, tolerant, and imports only the standard library.

Shape:
- `classify(line)` is pure: raw line -> one `Incoming` variant (request, notification,
  response, or a protocol error to answer with id null / the request's id).
- `Connection` is the I/O edge: it reads lines, answers protocol errors, runs every request
  handler in its own task (so a long `session/prompt` never blocks `session/cancel`), tracks
  outgoing requests with futures, and maps `$/cancel_request` to a per-request abort event.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from acp_plus.codec import js_json, js_parse
from acp_plus.errors import RpcError, from_exception, invalid_request, parse_error

log = logging.getLogger("acp_plus.rpc")

JsonId = str | int | float | None

CANCEL_REQUEST = "$/cancel_request"


# ---------------------------------------------------------------------------------------
# Pure framing


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


def _valid_id(value: Any) -> bool:
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
    if not isinstance(value, dict):
        return Invalid(None, invalid_request())
    has_id = "id" in value
    msg_id = value.get("id")
    id_ok = _valid_id(msg_id)
    method = value.get("method")
    if value.get("jsonrpc") != "2.0":
        return Invalid(msg_id if has_id and id_ok else None, invalid_request())
    if method is None:
        if has_id and id_ok and ("result" in value or "error" in value):
            error = value.get("error")
            return Response(msg_id, value.get("result"), error if isinstance(error, dict) else None)
        return Invalid(msg_id if has_id and id_ok else None, invalid_request())
    if not isinstance(method, str) or (has_id and not id_ok):
        return Invalid(msg_id if has_id and id_ok else None, invalid_request())
    params = value.get("params")
    if has_id:
        return Request(msg_id, method, params)
    return Notification(method, params)


def encode(message: dict[str, Any]) -> bytes:
    """One frame as native writes it: `JSON.stringify` text (JS number spelling and key
    order, lone surrogates escaped) plus a newline."""
    return js_json(message).encode() + b"\n"


def error_frame(msg_id: JsonId, error: RpcError) -> dict[str, Any]:
    """The response object for a failed request."""
    return {"jsonrpc": "2.0", "id": msg_id, "error": error.to_json()}


def _id_key(msg_id: JsonId) -> tuple[str, JsonId]:
    # 1 and "1" are different ids; keying by type keeps them apart.
    return (type(msg_id).__name__, msg_id)


# ---------------------------------------------------------------------------------------
# I/O edge


class LineSink(Protocol):
    """Where encoded frames go (stdout in production, a pipe in tests)."""

    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...


@dataclass
class RequestContext:
    """Per-request state a handler can watch: `aborted` is set by `$/cancel_request`."""

    request_id: JsonId
    aborted: asyncio.Event = field(default_factory=asyncio.Event)


RequestHandler = Callable[[str, Any, RequestContext], Awaitable[Any]]
NotificationHandler = Callable[[str, Any], Awaitable[None]]


class ConnectionClosed(Exception):
    """The peer went away before answering an outgoing request."""


class Connection:
    """One JSON-RPC peer over a line source and a line sink."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        sink: LineSink,
        on_request: RequestHandler,
        on_notification: NotificationHandler,
    ) -> None:
        self._reader = reader
        self._sink = sink
        self._on_request = on_request
        self._on_notification = on_notification
        self._next_id = 0
        self._pending: dict[tuple[str, JsonId], asyncio.Future[Any]] = {}
        self._active: dict[tuple[str, JsonId], RequestContext] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._eof = False
        self.closed = False

    # -- sending ------------------------------------------------------------------------

    async def _send(self, message: dict[str, Any]) -> None:
        if self.closed:
            return
        try:
            self._sink.write(encode(message))
            await self._sink.drain()
        except (ConnectionError, OSError) as exc:
            # The client is gone; further writes are pointless but not fatal to teardown.
            log.warning("write to client failed: %s", exc)
            self.closed = True

    async def notify(self, method: str, params: Any) -> None:
        """Send a notification; delivery failures are logged, never raised (§1.3)."""
        await self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def request(self, method: str, params: Any) -> Any:
        """Send a request and wait for its result; an error response raises `RpcError`,
        a peer that is gone (or goes before answering) raises `ConnectionClosed`."""
        if self.closed or self._eof:
            raise ConnectionClosed(f"connection closed before {method}")
        msg_id = self._next_id
        self._next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[_id_key(msg_id)] = future
        try:
            await self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
            if self.closed:
                raise ConnectionClosed(f"connection closed while sending {method}")
            return await future
        finally:
            self._pending.pop(_id_key(msg_id), None)

    # -- receiving ----------------------------------------------------------------------

    async def serve(self) -> None:
        """Read until EOF; every line is handled, none can end the loop but EOF."""
        partial: list[bytes] = []  # pieces of a line longer than one read
        while chunk := await self._reader.read(1 << 16):
            start = 0
            while (end := chunk.find(b"\n", start)) != -1:
                partial.append(chunk[start:end])
                line = b"".join(partial)
                partial.clear()
                if line.strip():
                    self._receive(line)
                start = end + 1
            if start < len(chunk):
                partial.append(chunk[start:])
        line = b"".join(partial)
        if line.strip():
            self._receive(line)
        self._eof = True
        self._close_pending()

    def _receive(self, line: bytes) -> None:
        message = classify(line)
        if isinstance(message, Invalid):
            self._spawn(self._send(error_frame(message.id, message.error)))
        elif isinstance(message, Response):
            future = self._pending.get(_id_key(message.id))
            if future is None or future.done():
                log.warning("response for unknown request id %r ignored", message.id)
            elif message.error is not None:
                future.set_exception(_error_from_frame(message.error))
            else:
                future.set_result(message.result)
        elif isinstance(message, Notification):
            if message.method == CANCEL_REQUEST:
                self._cancel_request(message.params)
            else:
                self._spawn(self._notification(message))
        else:
            # Registered before the handler runs, so a `$/cancel_request` on the very next
            # line already finds it (the prompt then settles `cancelled`, §3.3).
            ctx = RequestContext(message.id)
            self._active[_id_key(message.id)] = ctx
            self._spawn(self._request(message, ctx))

    def _cancel_request(self, params: Any) -> None:
        if isinstance(params, dict) and _valid_id(params.get("requestId")):
            ctx = self._active.get(_id_key(params["requestId"]))
            if ctx is not None:
                ctx.aborted.set()

    async def _notification(self, message: Notification) -> None:
        try:
            await self._on_notification(message.method, message.params)
        except Exception:
            log.exception("notification %s failed", message.method)

    async def _request(self, message: Request, ctx: RequestContext) -> None:
        key = _id_key(message.id)
        try:
            result = await self._on_request(message.method, message.params, ctx)
        except RpcError as exc:
            await self._send(error_frame(message.id, exc))
        except Exception as exc:
            log.exception("handler for %s failed", message.method)
            await self._send(error_frame(message.id, from_exception(exc)))
        else:
            await self._send({"jsonrpc": "2.0", "id": message.id, "result": result})
        finally:
            if self._active.get(key) is ctx:
                del self._active[key]

    def _spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _close_pending(self) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionClosed("client closed the connection"))

    async def finish(self, timeout: float) -> None:
        """After EOF: give in-flight handlers `timeout` seconds, then cancel the rest."""
        if self._tasks:
            _done, pending = await asyncio.wait(set(self._tasks), timeout=timeout)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=0.5)
        self.closed = True


def _error_from_frame(error: dict[str, Any]) -> RpcError:
    code = error.get("code")
    message = error.get("message")
    return RpcError(
        code if isinstance(code, int) else -32603,
        message if isinstance(message, str) else "error",
        error.get("data"),
    )


# ---------------------------------------------------------------------------------------
# stdio plumbing


class _BlockingSink:
    """Fallback sink when stdout is a regular file (asyncio pipes refuse files)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    async def drain(self) -> None:
        return None


async def open_stdio() -> tuple[asyncio.StreamReader, LineSink]:
    """Take over fds 0/1 for the protocol and return an async reader and a frame sink.

    The protocol keeps private duplicates of fds 0 and 1; fd 0 then reads /dev/null and
    fd 1 points at stderr, so a child process (bash, an MCP server) or a C library that
    writes to "stdout" can never corrupt the frame stream or steal client input.
    """
    loop = asyncio.get_running_loop()
    in_fd, out_fd = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    reader = asyncio.StreamReader(limit=1 << 30)
    try:
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(in_fd, "rb", 0)
        )
    except (ValueError, OSError):
        # stdin is a regular file: feed it from a thread so the loop never blocks on disk.
        loop.run_in_executor(None, _pump_file, loop, reader, in_fd)
    sink: LineSink
    try:
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(out_fd, "wb", 0)
        )
        sink = asyncio.StreamWriter(transport, protocol, None, loop)
    except (ValueError, OSError):
        sink = _BlockingSink(out_fd)
    return reader, sink


def _pump_file(loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader, fd: int) -> None:
    with contextlib.suppress(RuntimeError):  # loop closed while reading
        while chunk := os.read(fd, 1 << 16):
            loop.call_soon_threadsafe(reader.feed_data, chunk)
        loop.call_soon_threadsafe(reader.feed_eof)
