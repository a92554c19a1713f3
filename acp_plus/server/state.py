"""What the handlers of one connection share, held by objects rather than a base class.

`ClientLink` is the way to the client (notifications, requests, withdrawable requests);
`LiveSessions` is the connection's session table (live, being activated, being loaded)
and whether the connection is torn down. `methods.Server` owns one of each and hands
them to the handler groups it composes (`restore.Restore`), so each group names what it
uses in its constructor instead of inheriting the server's attributes.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from acp_plus.live.sessions import LiveSession
from acp_plus.wire.errors import unknown_session
from acp_plus.wire.rpc import Connection


class ClientLink:
    """The client end of the connection, once `attach`ed."""

    def __init__(self) -> None:
        self.conn: Connection | None = None

    @property
    def closed(self) -> bool:
        """Whether an attached connection has closed (never true before `attach`)."""
        return self.conn is not None and self.conn.closed

    async def send_update(self, params: dict[str, Any]) -> None:
        """A `session/update` notification; dropped before a connection is attached."""
        if self.conn is not None:
            await self.conn.notify("session/update", params)

    async def request(self, method: str, params: Any) -> Any:
        """A request to the client, answered by its response."""
        if self.conn is None:
            raise RuntimeError("no client connection")
        return await self.conn.request(method, params)

    async def withdrawable_request(self, method: str, params: Any) -> Any:
        """A client request that is withdrawn (`$/cancel_request`) when the awaiting
        task is cancelled, so the client can close what it shows (§6.5 withdrawal)."""
        conn = self.conn
        if conn is None:
            raise RuntimeError("no client connection")
        # The id `request` is about to take: it reads `_next_id` before its first await,
        # and nothing runs in between. (rpc.Connection has no public way to name it.)
        request_id = conn._next_id
        try:
            return await conn.request(method, params)
        except asyncio.CancelledError:
            await conn.notify("$/cancel_request", {"requestId": request_id})
            raise


@dataclass
class LiveSessions:
    """The connection's sessions: live ones by id, ids on their way in, and loads."""

    sessions: dict[str, LiveSession] = field(default_factory=dict)
    activating: set[str] = field(default_factory=set)
    """Ids a session/new, resume or load is bringing live (not yet in `sessions`)."""
    loading: dict[str, asyncio.Event] = field(default_factory=dict)
    """Ids a `session/load` is bringing back; set when it has answered (§6.1)."""
    disposed: bool = False
    """Set at teardown: no session comes live after it."""

    def taken(self, session_id: str) -> bool:
        """Whether the id is live or on its way in."""
        return session_id in self.sessions or session_id in self.activating

    def require(self, params: dict[str, Any]) -> LiveSession:
        """The live session the request's `sessionId` names, or `unknown session`."""
        session_id: str = params["sessionId"]  # the schema check made it a string
        session = self.sessions.get(session_id)
        if session is None:
            raise unknown_session(session_id)
        return session

    async def after_load(self, params: dict[str, Any]) -> None:
        """Wait for a load of the request's session, if one runs.

        A request for a session that a load is still bringing back waits for the load
        instead of getting `unknown session` (docs/contract-notes.md, "session/load").
        """
        session_id = params.get("sessionId")
        loading = self.loading.get(session_id) if isinstance(session_id, str) else None
        if loading is not None:
            await loading.wait()
