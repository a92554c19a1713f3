"""`acp_plus.wire.rpc.Connection` over an in-memory reader: framing across reads, dispatch, EOF."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from acp_plus.wire.errors import invalid_params
from acp_plus.wire.frames import UNDEFINED
from acp_plus.wire.rpc import Connection, ConnectionClosed, RequestContext


class Sink:
    """Collects written frames."""

    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []

    def write(self, data: bytes) -> None:
        assert data.endswith(b"\n") and data.count(b"\n") == 1
        self.frames.append(json.loads(data))

    async def drain(self) -> None:
        return None


async def echo(method: str, params: Any, ctx: RequestContext) -> Any:
    if method == "fail":
        raise invalid_params("nope")
    if method == "boom":
        raise RuntimeError("plain failure")
    # Absent params reach the handler as `UNDEFINED` (the schema check tells it from null).
    return {"method": method, "params": "<undefined>" if params is UNDEFINED else params}


async def ignore(method: str, params: Any) -> None:
    return None


def connection(reader: asyncio.StreamReader) -> tuple[Connection, Sink]:
    sink = Sink()
    return Connection(reader, sink, echo, ignore), sink


async def test_lines_split_across_reads_and_a_last_line_without_newline() -> None:
    reader = asyncio.StreamReader()
    conn, sink = connection(reader)
    big = "x" * 300_000  # spans several 64 KiB reads
    first = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "a", "params": {"t": big}})
    data = (first + "\n\n" + '{"jsonrpc":"2.0","id":2,"method":"b"}').encode()
    for i in range(0, len(data), 1000):
        reader.feed_data(data[i : i + 1000])
    reader.feed_eof()
    await conn.serve()
    await conn.finish(timeout=1)
    by_id = {f["id"]: f for f in sink.frames}
    assert by_id[1]["result"]["params"]["t"] == big
    assert by_id[2]["result"] == {"method": "b", "params": "<undefined>"}


async def test_errors_keep_their_shape() -> None:
    reader = asyncio.StreamReader()
    conn, sink = connection(reader)
    reader.feed_data(b'{"jsonrpc":"2.0","id":1,"method":"fail"}\n')
    reader.feed_data(b'{"jsonrpc":"2.0","id":2,"method":"boom"}\n')
    reader.feed_eof()
    await conn.serve()
    await conn.finish(timeout=1)
    by_id = {f["id"]: f["error"] for f in sink.frames}
    assert by_id[1] == {"code": -32602, "message": "Invalid params: nope"}
    # A plain exception is the SDK's generic -32603 with data.details (§1.0).
    assert by_id[2] == {
        "code": -32603,
        "message": "Internal error",
        "data": {"details": "plain failure"},
    }


async def test_outgoing_requests_resolve_and_fail_at_eof() -> None:
    reader = asyncio.StreamReader()
    conn, sink = connection(reader)
    serving = asyncio.create_task(conn.serve())
    answered = asyncio.create_task(conn.request("ask", {"q": 1}))
    refused = asyncio.create_task(conn.request("ask", {"q": 2}))
    pending = asyncio.create_task(conn.request("ask", {"q": 3}))
    await asyncio.sleep(0)
    ids = [f["id"] for f in sink.frames]
    reader.feed_data(json.dumps({"jsonrpc": "2.0", "id": ids[0], "result": {"ok": True}}).encode())
    reader.feed_data(b"\n")
    error = {"jsonrpc": "2.0", "id": ids[1], "error": {"code": -1, "message": "no"}}
    reader.feed_data(json.dumps(error).encode() + b"\n")
    assert await answered == {"ok": True}
    with pytest.raises(Exception) as info:
        await refused
    assert getattr(info.value, "code", None) == -1
    reader.feed_eof()
    await serving
    with pytest.raises(ConnectionClosed):
        await pending
    with pytest.raises(ConnectionClosed):
        await conn.request("ask", {})


@pytest.mark.parametrize(
    "params",
    [{}, {"requestId": None}, {"other": 1}, [], None, {"requestId": {"nested": 1}}],
    ids=["no-key", "null-id", "other-key", "array", "none", "object-id"],
)
async def test_a_malformed_cancel_request_cancels_nothing_and_the_next_frame_is_served(
    params: Any,
) -> None:
    """Found by the fuzz test (tests/plus/hardening/test_rpc_fuzz.py): `$/cancel_request`
    with params lacking `requestId` ended the read loop, and acp-plus exited."""
    reader = asyncio.StreamReader()
    conn, sink = connection(reader)
    cancel = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": params}
    reader.feed_data(json.dumps(cancel).encode() + b"\n")
    reader.feed_data(b'{"jsonrpc":"2.0","id":7,"method":"after"}\n')
    reader.feed_eof()
    await conn.serve()
    await conn.finish(timeout=1)
    assert [f["id"] for f in sink.frames] == [7]
    assert sink.frames[0]["result"]["method"] == "after"
