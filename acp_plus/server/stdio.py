"""The stdio entry: serve one ACP connection on stdin/stdout, then leave no process behind."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

from acp_plus.core.tools.proctree import descendants
from acp_plus.server.methods import Server
from acp_plus.settings.config import Config
from acp_plus.wire.rpc import Connection, open_stdio


def kill_descendants() -> None:
    """Last line of the no-leftover-process guarantee: SIGKILL every descendant.

    Tools and MCP clients stop their children on cancel/close; this catches anything a
    bug or a detached grandchild left behind (acp-plus is a child subreaper, so those
    stay its descendants). Linux only (reads /proc); a no-op elsewhere.
    """
    for pid in descendants(os.getpid()):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


SESSIONS_BUDGET = 1.3
"""Seconds the teardown waits for the sessions to close (`Server.dispose`): closing waits
on processes acp-plus does not control (an MCP server leaving on EOF, a tool's process
tree); whatever is still running then is killed."""
TEARDOWN_BUDGET = 1.6
"""Seconds from stdin EOF (or a signal) until `run_stdio` returns; the caller then ends
the process at once (`acp_plus.__main__`), inside the 2 s a client waits."""


async def run_stdio(config: Config) -> None:
    """Serve ACP on stdin/stdout until stdin reaches EOF (or SIGTERM/SIGHUP/SIGINT), then
    tear down within `TEARDOWN_BUDGET` seconds, leaving no child process behind."""
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
        deadline = loop.time() + TEARDOWN_BUDGET
        # Bounded, not awaited to the end: a session whose close still waits (on an MCP
        # server that does not leave on EOF, say) must not hold the exit.
        await asyncio.wait({server.dispose()}, timeout=SESSIONS_BUDGET)
        await conn.finish(timeout=max(0.0, deadline - loop.time() - 0.1))
        kill_descendants()
        await conn.flush(timeout=max(0.0, deadline - loop.time()))
