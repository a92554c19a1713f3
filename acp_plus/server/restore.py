"""`session/resume` and `session/load`: bringing a stored session back (§1.1, §6.1).

`RestoreHandlers` is a base class of `methods.Server`, so the method table names these
handlers like any other; what they use of the server is declared below. Resume and load
are one path (`_bring_back`): a load first claims the session's one-writer lock,
replays the log (`features/session_load.py`), and after the agent is live sends one
current usage reading. While a load runs, requests for its id wait for it
(`_after_load`) instead of finding no session (docs/contract-notes.md, "session/load").
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from acp_plus import features, model_control
from acp_plus.errors import internal_error, invalid_params
from acp_plus.features import additional_directories, session_load
from acp_plus.params import absolute_cwd, no_additional_directories
from acp_plus.rpc import Connection, RequestContext, request_cancelled
from acp_plus.runtime import Runtime, SharedRuntime, config_options
from acp_plus.server.activation import (
    claim,
    open_resumable,
    rollback,
    start_agent,
    validate_mcp,
)
from acp_plus.sessions import LiveSession

if TYPE_CHECKING:
    from acp_plus.config import Config
    from acp_plus.features.wiring import Increments


class RestoreHandlers:
    """The resume and load handlers of `methods.Server`."""

    # Provided by `methods.Server`.
    config: Config
    conn: Connection | None
    sessions: dict[str, LiveSession]
    activating: set[str]
    loading: dict[str, asyncio.Event]
    disposed: bool
    runtime: SharedRuntime
    plus: Increments
    _make_session: Callable[[str, str, Runtime], LiveSession]
    _deployment_route: Callable[[], Awaitable[model_control.Selection | None]]
    _withdrawable_request: Callable[[str, Any], Awaitable[Any]]
    _send_update: Callable[[dict[str, Any]], Awaitable[None]]

    async def _after_load(self, params: dict[str, Any]) -> None:
        # A request for a session that a load is still bringing back waits for the load
        # instead of getting `unknown session` (docs/contract-notes.md, "session/load").
        session_id = params.get("sessionId")
        loading = self.loading.get(session_id) if isinstance(session_id, str) else None
        if loading is not None:
            await loading.wait()

    def _roots(self, params: dict[str, Any], cwd: str) -> tuple[str, ...]:
        """The request's additional directories (§6.2), or native's refusal when off."""
        if features.enabled(self.config, "additional_directories"):
            return additional_directories.validate(params.get("additionalDirectories"), cwd)
        no_additional_directories(params)
        return ()

    async def resume_session(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """`session/resume`: no replay; the route comes back from the log (§1.1, §1.5)."""
        return await self._bring_back(params, ctx, load=False)

    async def load_session(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """`session/load` (§6.1): a resume that first replays the log to the client."""
        if not features.enabled(self.config, "session_load"):
            raise invalid_params(session_load.NOT_ENABLED)
        return await self._bring_back(params, ctx, load=True)

    async def _bring_back(
        self, params: dict[str, Any], ctx: RequestContext, *, load: bool
    ) -> dict[str, Any]:
        """Resume (§1.1) or load (§6.1) a stored session into this connection."""
        from acp_plus.core.history import last_route

        method = "session/load" if load else "session/resume"
        session_id: str = params["sessionId"]
        cwd = absolute_cwd(params["cwd"])
        roots = self._roots(params, cwd)
        mcp_servers = validate_mcp(params, cwd)
        if session_id in self.sessions or session_id in self.activating:
            raise invalid_params(f"session is already active: {session_id}")
        self.activating.add(session_id)
        answered = asyncio.Event()
        if load:
            self.loading[session_id] = answered
        try:
            runtime = await self.runtime.get()
            verb = "loadable" if load else "resumable"
            session_log, stored_cwd = open_resumable(runtime, session_id, cwd, realpath, verb=verb)
            session = self._make_session(session_id, stored_cwd, runtime)
            try:
                if load:
                    # One writer before one update: a session live in another process
                    # fails here, with nothing replayed (docs/contract-notes.md).
                    claim(session_log)
                    await self._replay(session, session_log.events(), runtime, ctx)
                selection = model_control.restore(
                    last_route(session_log.events()), await self._deployment_route()
                )
                await start_agent(
                    session,
                    runtime,
                    session_log,
                    selection,
                    mcp_servers,
                    sandbox=self.config.sandbox,
                    mcp_startup_timeout=self.config.mcp_startup_timeout,
                    roots=roots,
                    session_tools=self.plus.session_tools(session, self._withdrawable_request),
                )
                assert session.agent is not None
                # A turn a crash left open ends `interrupted` before new work starts.
                session.agent.settle_interrupted()
                if self.disposed:
                    raise internal_error(f"connection closed during {method}")
                options = await config_options(session, runtime)
                if load:
                    reading = session_load.current_usage(
                        session_log.events(), session.route_info.context_window
                    )
                    if reading is not None:
                        session.queue.put(reading)
                    await session.queue.drain()
            except BaseException:
                await rollback(session)
                session_log.release()  # a load's early claim, when no agent took it over
                raise
            self.sessions[session_id] = session
            return await self.plus.activated(session, {"configOptions": options}, new=False)
        finally:
            self.activating.discard(session_id)
            if load:
                del self.loading[session_id]
                # Once the answer is written: this runs after the handler returns, and
                # the response is written before the connection's task next yields.
                asyncio.get_running_loop().call_soon(answered.set)

    async def _replay(
        self,
        session: LiveSession,
        events: list[dict[str, Any]],
        runtime: Runtime,
        ctx: RequestContext,
    ) -> None:
        """Send a load's replay (§6.1 step 5), stopping between two events when the
        request is aborted (-32800) or the client is gone."""
        reader = session_load.image_reader(runtime.attachments)
        for group in session_load.replay(events, reader):
            if ctx.aborted.is_set():
                raise request_cancelled()
            for update in group:
                await self._send_update({"sessionId": session.id, "update": update})
            if self.disposed or (self.conn is not None and self.conn.closed):
                raise internal_error("connection closed during session/load")


def realpath(path: str) -> str | None:
    """`path` through its symlinks, or None when it does not exist: session/list and
    session/resume compare directories by physical identity (§1.1, §1.6)."""
    try:
        return os.path.realpath(path, strict=True)
    except OSError:
        return None
