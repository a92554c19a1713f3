"""`FakeLLMThread`: the fake LLM on its own event loop in a daemon thread.

For callers that are not asyncio code (the pytest plugin, the CLI's synchronous
paths). Every call into the server hops onto its loop, so the server's state is only
ever touched from one thread.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from parity.fakellm.run import Run
from parity.fakellm.server import FakeLLM
from parity.scenario.model import LlmEntry, Tool

if TYPE_CHECKING:
    from parity.fakellm.upstream import Upstream

T = TypeVar("T")


async def _cancel_leftovers() -> None:
    """End tasks libraries left behind (e.g. sse-starlette's shutdown watcher under the
    MCP HTTP app) so closing the loop destroys no pending task."""
    current = asyncio.current_task()
    others = [task for task in asyncio.all_tasks() if task is not current]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)


class FakeLLMThread:
    """A `FakeLLM` served from a background thread; usable as a context manager."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._host = host
        self._port = port
        self._server = FakeLLM()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The server's root URL, e.g. `http://127.0.0.1:41237`."""
        return self._server.url

    def start(self) -> None:
        """Start the loop thread and wait until the server listens (errors re-raised)."""
        if self._thread is not None:
            return
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="fakellm", daemon=True)
        self._thread.start()
        try:
            self._call_async(self._server.start(self._host, self._port))
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop the server, then the loop and its thread. Safe to call twice."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        try:
            if self._server.url:
                self._call_async(self._server.stop())
            self._call_async(_cancel_leftovers())
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=10)
            loop.close()
            self._loop = self._thread = None

    def open_run(
        self,
        run_id: str,
        *,
        llm: Sequence[LlmEntry | Mapping[str, Any]],
        tools: Sequence[Tool],
        catalog: Mapping[str, Any],
        upstream: Upstream | None = None,
        api_key: str | None = None,
    ) -> Run:
        """`FakeLLM.open_run`, run on the server's loop."""
        return self._call(
            lambda: self._server.open_run(
                run_id, llm=llm, tools=tools, catalog=catalog, upstream=upstream, api_key=api_key
            )
        )

    def mcp_http_entry(self, run_id: str) -> dict[str, Any]:
        """`FakeLLM.mcp_http_entry`, run on the server's loop."""
        entry: dict[str, Any] = self._call_async(self._server.mcp_http_entry(run_id))
        return entry

    def close_run(self, run_id: str, grace: float = 0.0) -> None:
        """`FakeLLM.close_run`, run on the server's loop, after up to `grace` seconds
        for the run's in-flight requests to end by themselves.

        The runner closes a run once the agent has exited. Its sockets close with it, but
        the server notices each disconnect a moment later, on its own thread: without the
        grace, a request the agent did close would race that notice and be recorded as
        left open (`run closed`)."""
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and self._call(lambda: self._server.in_flight(run_id)):
            time.sleep(0.01)
        self._call(lambda: self._server.close_run(run_id))

    def __enter__(self) -> FakeLLMThread:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _call_async(self, coro: Any) -> Any:
        if self._loop is None:
            raise RuntimeError("FakeLLMThread is not started")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=30)

    def _call(self, fn: Callable[[], T]) -> T:
        async def hop() -> T:
            return fn()

        result: T = self._call_async(hop())
        return result
