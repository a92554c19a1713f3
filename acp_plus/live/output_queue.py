"""A session's `session/update` notifications, sent one at a time in commit order."""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger("acp_plus.live.sessions")

Send = Callable[[dict[str, Any]], Awaitable[None]]


class OutputQueue:
    """Serial, ordered delivery of one session's `session/update` notifications."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._items: collections.deque[dict[str, Any]] = collections.deque()
        self._idle = asyncio.Event()
        self._idle.set()
        self._worker: asyncio.Task[None] | None = None

    def put(self, item: dict[str, Any]) -> None:
        """Queue one notification params object; sent after everything queued before it."""
        self._items.append(item)
        self._idle.clear()
        if self._worker is None or self._worker.done():
            self._worker = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while self._items:
            item = self._items.popleft()
            try:
                await self._send(item)
            except Exception:
                # Delivery failures are logged and never fatal (§1.3).
                log.exception("session/update delivery failed")
        self._idle.set()

    async def drain(self) -> None:
        """Wait until everything queued so far has been handed to the transport."""
        await self._idle.wait()
