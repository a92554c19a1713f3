"""The stdio entry: serve one ACP connection on stdin/stdout, then leave no process behind."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

from acp_plus.config import Config
from acp_plus.core.tools.proctree import descendants
from acp_plus.rpc import Connection, open_stdio
from acp_plus.server.methods import Server


def kill_descendants() -> None:
    """Last line of the no-leftover-process guarantee: SIGKILL every descendant.

    Tools and MCP clients stop their children on cancel/close; this catches anything a
    bug or a detached grandchild left behind (acp-plus is a child subreaper, so those
    stay its descendants). Linux only (reads /proc); a no-op elsewhere.
    """
    for pid in descendants(os.getpid()):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


async def run_stdio(config: Config) -> None:
    """Serve ACP on stdin/stdout until stdin reaches EOF (or SIGTERM/SIGHUP/SIGINT), then
    tear down within 2 s, leaving no child process behind."""
    reader, sink = await open_stdio()
    server = Server(config)
    conn = Connection(
        reader,
        sink,
        server.on_request,
        server.on_notification,
        max_frame=config.max_frame_bytes,
    )
    server.attach(conn)
    server.runtime.prefetch()
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        # A signal is the harness's (or the user's) second way to say "stop": run the
        # same teardown as stdin EOF instead of dying with children still running.
        loop.add_signal_handler(signum, stop.set)
    serving = loop.create_task(conn.serve())
    stopping = loop.create_task(stop.wait())
    try:
        await asyncio.wait({serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (serving, stopping):
            task.cancel()
        await server.dispose()
        await conn.finish(timeout=0.2)
        kill_descendants()
