"""NDJSON JSON-RPC 2.0 connection for acp-plus (one JSON object per line on stdio).

Why our own layer and not the ACP SDK's: the SDK's receive loop dies on a JSON array or a
bare string line, spreads `_meta` into handler arguments, and costs ~0.5 s to import
(design.md). This module is small, tolerant, and imports only the standard library.

The frames themselves are pure (`frames.py`: classify a line, encode a message, split a
byte stream into bounded lines). `Connection` is the I/O edge: it reads lines, answers
protocol errors, runs every request handler in its own task (so a long `session/prompt`
never blocks `session/cancel`), tracks outgoing requests with futures, and maps
`$/cancel_request` to a per-request abort event (for `CANCELLABLE_METHODS` also to
cancelling the handler, answered -32800).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Protocol

from acp_plus.wire.errors import RpcError, from_exception
from acp_plus.wire.frames import (
    MAX_FRAME_BYTES,
    Invalid,
    JsonId,
    LineSplitter,
    Notification,
    Oversized,
    Request,
    Response,
    classify,
    encode,
    error_frame,
    frame_too_large,
    valid_id,
)

log = logging.getLogger("acp_plus.wire.rpc")

CANCEL_REQUEST = "$/cancel_request"

READ_CHUNK = 1 << 16
READ_BUFFER = 1 << 20
"""StreamReader limit: the pipe transport pauses once twice this much is unread, so a
client writing faster than we parse fills its pipe, not our memory."""

REQUEST_CANCELLED = -32800
CANCELLABLE_METHODS: frozenset[str] = frozenset({"session/new", "session/resume"})
"""Requests whose handler `$/cancel_request` cancels (answered -32800 `Request cancelled`).
Both can wait on a client-named MCP server that never answers, and both roll back on
cancellation (servers stopped, the session released). `session/prompt` watches its abort
itself and answers `{"stopReason": "cancelled"}` (§3.3); every other handler is short and
runs to completion, as native's SDK does for handlers that ignore their signal."""


def request_cancelled() -> RpcError:
    """-32800 `Request cancelled`: the ACP cancellation RFD's code for a request that
    `$/cancel_request` ended before it could answer (docs/contract-notes.md, "Hardening")."""
    return RpcError(REQUEST_CANCELLED, "Request cancelled")


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
        *,
        max_frame: int = MAX_FRAME_BYTES,
        cancellable: frozenset[str] = CANCELLABLE_METHODS,
    ) -> None:
        self._reader = reader
        self._sink = sink
        self._on_request = on_request
        self._on_notification = on_notification
        self._max_frame = max_frame
        self._cancellable = cancellable
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
        """Read until EOF; every line is handled, none can end the loop but EOF.

        A line over `max_frame` bytes is answered -32600 (id null) the moment it crosses
        the bound and skipped to its newline; the next line is served as usual.
        """
        lines = LineSplitter(self._max_frame)
        while chunk := await self._reader.read(READ_CHUNK):
            for line in lines.feed(chunk):
                self._line(line)
        last = lines.finish()
        if last is not None:
            self._line(last)
        self._eof = True
        self._close_pending()

    def _line(self, line: bytes | Oversized) -> None:
        if isinstance(line, Oversized):
            log.warning("discarded an incoming frame over %d bytes", line.limit)
            self._spawn(self._send(error_frame(None, frame_too_large(line.limit))))
        elif line.strip():
            try:
                self._receive(line)
            except Exception:
                # The docstring's promise: no line ends the loop. A bug in handling one
                # frame is logged, and the next frame is served.
                log.exception("an incoming frame could not be handled")

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
        # `"requestId": null` is a valid id (and cancels nothing); a missing key is not one.
        if isinstance(params, dict) and "requestId" in params and valid_id(params["requestId"]):
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
            work = self._on_request(message.method, message.params, ctx)
            if message.method in self._cancellable:
                result = await _unless_aborted(work, ctx)
            else:
                result = await work
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
        """After EOF: give in-flight handlers `timeout` seconds, then cancel the rest
        (and give those at most `timeout` again to unwind)."""
        if self._tasks:
            _done, pending = await asyncio.wait(set(self._tasks), timeout=timeout)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=min(timeout, 0.5) or 0.01)
        self.closed = True

    async def flush(self, timeout: float) -> None:
        """Wait, at most `timeout` seconds, until every frame written has left the
        process (before it ends without the interpreter's own cleanup)."""
        transport = getattr(self._sink, "transport", None)
        if not isinstance(transport, asyncio.WriteTransport):
            return
        deadline = asyncio.get_running_loop().time() + timeout
        while transport.get_write_buffer_size() and not transport.is_closing():
            if asyncio.get_running_loop().time() >= deadline:
                return
            await asyncio.sleep(0.005)


async def _unless_aborted(work: Awaitable[Any], ctx: RequestContext) -> Any:
    """Await `work`; when `ctx` is aborted first, cancel it, wait for its rollback, and
    raise -32800. A handler that finished before the cancel landed keeps its answer."""
    task = asyncio.ensure_future(work)
    aborted = asyncio.ensure_future(ctx.aborted.wait())
    try:
        await asyncio.wait({task, aborted}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        raise
    finally:
        aborted.cancel()
    if not task.done():
        task.cancel()
        # Waiting for the rollback is what makes the answer true: when -32800 goes out,
        # nothing the request started (an MCP server process) is still running.
        await asyncio.wait({task})
    if task.cancelled():
        raise request_cancelled()
    return task.result()


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

    def __init__(self, file: BinaryIO) -> None:
        self._file = file

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._file.fileno(), view)
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
    # One file object per fd, kept by whichever reader or sink uses it: a second one,
    # garbage-collected after a refused `connect_*_pipe`, would close the fd under us.
    stdin_file, stdout_file = os.fdopen(in_fd, "rb", 0), os.fdopen(out_fd, "wb", 0)
    reader = asyncio.StreamReader(limit=READ_BUFFER)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin_file)
    except (ValueError, OSError):
        # stdin is a regular file: read it in a thread so the loop never blocks on disk,
        # one chunk per `read()` call, so a huge file is never read ahead into memory.
        reader = _FileReader(stdin_file)
    sink: LineSink
    try:
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, stdout_file
        )
        sink = asyncio.StreamWriter(transport, protocol, None, loop)
    except (ValueError, OSError):
        sink = _BlockingSink(stdout_file)
    return reader, sink


class _FileReader(asyncio.StreamReader):
    """stdin as a regular file: each `read(n)` is one `os.read` in a worker thread.

    Pulled rather than pushed: the reader never gets ahead of `Connection.serve`, where
    a thread feeding a StreamReader would buffer as fast as the disk delivers.
    """

    def __init__(self, file: BinaryIO) -> None:
        super().__init__(limit=READ_BUFFER)
        self._file = file

    async def read(self, n: int = -1) -> bytes:
        fd = self._file.fileno()
        return await asyncio.to_thread(os.read, fd, n if n > 0 else READ_CHUNK)
