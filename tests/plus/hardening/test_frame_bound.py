"""One incoming frame is bounded (config `max_frame_bytes`, default 64 MiB): a longer line
is answered -32600 with id null the moment it crosses the bound, discarded while it is
scanned for its newline (never buffered), and the next frame is served as usual. Against
the real process: 300 MB on one line leaves its peak resident memory far below 300 MB."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from plus_agent import RawAgent, World, WorldFactory, raw_agent

from acp_plus.wire.frames import MAX_FRAME_BYTES, LineSplitter, Oversized

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

FLOOD = 300 * 1000 * 1000


def _split(chunks: list[bytes], limit: int) -> list[bytes | Oversized]:
    splitter = LineSplitter(limit)
    out: list[bytes | Oversized] = []
    for chunk in chunks:
        out.extend(splitter.feed(chunk))
    last = splitter.finish()
    return [*out, last] if last is not None else out


def test_lines_at_the_bound_pass_and_longer_ones_become_one_marker() -> None:
    stream = [b"a" * 8 + b"\n" + b"b" * 9 + b"\n" + b"c\n" + b"d" * 30 + b"\nlast"]
    assert _split(stream, 8) == [b"a" * 8, Oversized(8), b"c", Oversized(8), b"last"]
    # An oversized line that never ends is still reported once, then dropped at EOF.
    assert _split([b"x" * 5, b"x" * 5, b"x" * 5], 8) == [Oversized(8)]
    assert _split([b"\n\n"], 8) == [b"", b""]


@settings(max_examples=200, derandomize=True, deadline=None)
@given(
    lines=st.lists(st.binary(max_size=24).map(lambda b: b.replace(b"\n", b"")), max_size=8),
    cuts=st.lists(st.integers(min_value=0, max_value=300), max_size=12),
)
def test_chunk_boundaries_never_change_the_result(lines: list[bytes], cuts: list[int]) -> None:
    data = b"".join(line + b"\n" for line in lines)
    bounds = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    chunks = [data[a:b] for a, b in itertools.pairwise(bounds)]
    expected = [line if len(line) <= 10 else Oversized(10) for line in lines]
    assert _split(chunks, 10) == expected
    assert _split([data], 10) == expected


def _peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


async def _flood(agent: RawAgent, size: int) -> None:
    """`size` bytes of one line without its newline, written as fast as the pipe takes."""
    assert agent.process.stdin is not None
    block = b"x" * (1 << 20)
    sent = 0
    while sent < size:
        piece = block[: min(len(block), size - sent)]
        agent.process.stdin.write(piece)
        await agent.process.stdin.drain()
        sent += len(piece)


async def test_a_300_mb_line_is_refused_in_flat_memory_and_serving_goes_on(
    world: WorldFactory,
) -> None:
    w = world(llm=[{"text": "still here"}])
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        before = _peak_rss_kib(agent.process.pid)
        await _flood(agent, FLOOD)
        # Answered once the line crossed the bound, before its newline was sent.
        refused = await agent.recv(timeout=30)
        await agent.send_line(b"")  # the newline that ends the 300 MB line
        assert refused == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32600,
                "message": "Invalid request",
                "data": {"details": f"frame exceeds {MAX_FRAME_BYTES} bytes; discarded unread"},
            },
        }
        new = await agent.call("session/new", {"cwd": str(w.workdir), "mcpServers": []})
        prompt = await agent.call(
            "session/prompt",
            {"sessionId": new["result"]["sessionId"], "prompt": [{"type": "text", "text": "hi"}]},
            timeout=30,
        )
        assert prompt["result"] == {"stopReason": "end_turn"}
        peak = _peak_rss_kib(agent.process.pid)
    print(f"acp-plus VmHWM: {before} KiB before, {peak} KiB after a {FLOOD}-byte line")
    # The bound's 64 MiB may be held once while the line is measured; nothing more.
    assert peak - before < 100 * 1024
    assert peak < 200 * 1024


async def test_the_bound_is_configurable_and_a_frame_below_it_is_served(
    world: WorldFactory,
) -> None:
    limit = 64 * 1024
    w = world(extra_config=f"max_frame_bytes = {limit}\n")
    pad = "p" * (limit - 200)
    async with raw_agent(w) as agent:
        await agent.call("initialize", {"protocolVersion": 1})
        fits = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "session/list", "params": {"pad": pad}}
        )
        assert len(fits) <= limit
        await agent.send_line(fits)
        assert "result" in await agent.recv()
        await agent.send_line(fits.replace(pad, pad * 2))
        refused = await agent.recv()
        assert (refused["id"], refused["error"]["code"]) == (None, -32600)
        assert str(limit) in refused["error"]["data"]["details"]
        # The very next frame is served.
        assert "result" in await agent.call("session/list", {})
        # With a small bound, a 300 MB line costs next to nothing: it is never held.
        before = _peak_rss_kib(agent.process.pid)
        await _flood(agent, FLOOD)
        await agent.send_line(b"")
        assert (await agent.recv(timeout=30))["error"]["code"] == -32600
        assert "result" in await agent.call("session/list", {})
        small_bound_growth = _peak_rss_kib(agent.process.pid) - before
        print(f"acp-plus VmHWM growth, {FLOOD}-byte line, bound {limit}: {small_bound_growth} KiB")
        assert small_bound_growth < 8 * 1024
        # An oversized line cut short by EOF is answered too, and the exit is clean.
        assert agent.process.stdin is not None
        agent.process.stdin.write(b"y" * (limit * 3))
        await agent.process.stdin.drain()
        assert (await agent.recv())["error"]["code"] == -32600
        assert await agent.close() == 0


async def test_a_bad_bound_is_a_config_error(world: WorldFactory) -> None:
    w = world(extra_config="max_frame_bytes = 10\n")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, *w.argv(), "--dump-config", stderr=asyncio.subprocess.PIPE
    )
    _, err = await proc.communicate()
    assert proc.returncode == 2
    assert b"max_frame_bytes: must be >= 1024" in err


def _serve_file(w: World, frames: Path, flood: int) -> tuple[list[dict[str, Any]], int]:
    """Run acp-plus on a stdin file of initialize, a `flood`-byte line, session/list;
    its answers and its peak RSS (KiB, from wait4)."""
    with frames.open("wb") as fh:
        fh.write(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n')
        block = b"x" * (1 << 20)
        for _ in range(flood // len(block)):
            fh.write(block)
        fh.write(b'\n{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}\n')
    with frames.open("rb") as stdin:
        proc = subprocess.Popen(
            [sys.executable, *w.argv()],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **w.env()},
        )
        assert proc.stdout is not None
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return [json.loads(line) for line in out.splitlines()], usage.ru_maxrss


def test_stdin_from_a_file_is_read_as_served_not_read_ahead(
    world: WorldFactory, tmp_path: Path
) -> None:
    # A regular file cannot be a pipe transport; it is read one chunk per frame-reader
    # call, so a huge file is not pulled into memory faster than it is scanned.
    w = world(extra_config="max_frame_bytes = 65536\n")
    _, baseline = _serve_file(w, tmp_path / "small.ndjson", 0)
    answers, peak = _serve_file(w, tmp_path / "flood.ndjson", FLOOD)
    # Requests run concurrently, so answers come in any order; each comes once.
    assert sorted((str(a["id"]), "error" in a) for a in answers) == [
        ("1", False),
        ("2", False),
        ("None", True),
    ]
    print(f"acp-plus peak RSS, stdin a file: {baseline} KiB; with a {FLOOD}-byte line: {peak} KiB")
    assert peak - baseline < 8 * 1024
