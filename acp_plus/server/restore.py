"""`session/resume` and `session/load`: bringing a stored session back (§1.1, §6.1).

`Restore` is one group of the method table's handlers, composed by `methods.Server`,
which passes in what it uses: the configuration, the shared runtime, the increments, the
session table (`state.LiveSessions`), the client (`state.ClientLink`), and two steps of
the server's own (making a `LiveSession`, the deployment's route). Resume and load are
one path (`_bring_back`): a load first claims the session's one-writer lock, replays
the log (`features/session_load.py`), and after the agent is live sends one current
usage reading. While a load runs, requests for its id wait for it
(`LiveSessions.after_load`) instead of finding no session (docs/contract-notes.md,
"session/load").
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from acp_plus import features
from acp_plus.features import session_load
from acp_plus.live.runtime import Runtime, SharedRuntime, config_options
from acp_plus.live.sessions import LiveSession
from acp_plus.protocol import model_control
from acp_plus.protocol.params import absolute_cwd
from acp_plus.server.activation import (
    claim,
    open_resumable,
    requested_roots,
    rollback,
    start_agent,
    validate_mcp,
)
from acp_plus.wire.errors import internal_error, invalid_params
from acp_plus.wire.rpc import RequestContext, request_cancelled

if TYPE_CHECKING:
    from acp_plus.features.wiring import Increments
    from acp_plus.server.state import ClientLink, LiveSessions
    from acp_plus.settings.config import Config


MakeSession = Callable[[str, str, Runtime], LiveSession]
"""(session id, cwd, runtime) -> a session of this connection, not yet live."""
DeploymentRoute = Callable[[], Awaitable[model_control.Selection | None]]


@dataclass(frozen=True)
class Restore:
    """The `session/resume` and `session/load` handlers, and what they use."""

    config: Config
    runtime: SharedRuntime
    plus: Increments
    live: LiveSessions
    client: ClientLink
    make_session: MakeSession
    deployment_route: DeploymentRoute

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
        roots = requested_roots(self.config, params, cwd)
        mcp_servers = validate_mcp(params, cwd)
        if self.live.taken(session_id):
            raise invalid_params(f"session is already active: {session_id}")
        self.live.activating.add(session_id)
        answered = asyncio.Event()
        if load:
            self.live.loading[session_id] = answered
        try:
            runtime = await self.runtime.get()
            verb = "loadable" if load else "resumable"
            session_log, stored_cwd = open_resumable(runtime, session_id, cwd, realpath, verb=verb)
            session = self.make_session(session_id, stored_cwd, runtime)
            try:
                if load:
                    # One writer before one update: a session live in another process
                    # fails here, with nothing replayed (docs/contract-notes.md).
                    claim(session_log)
                    await self.replay(session, session_log.events(), runtime, ctx)
                selection = model_control.restore(
                    last_route(session_log.events()), await self.deployment_route()
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
                    session_tools=self.plus.session_tools(
                        session, self.client.withdrawable_request
                    ),
                    source="resume",
                )
                assert session.agent is not None
                # A turn a crash left open ends `interrupted` before new work starts.
                session.agent.settle_interrupted()
                if self.live.disposed:
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
            self.live.sessions[session_id] = session
            return await self.plus.activated(session, {"configOptions": options}, new=False)
        finally:
            self.live.activating.discard(session_id)
            if load:
                del self.live.loading[session_id]
                # Once the answer is written: this runs after the handler returns, and
                # the response is written before the connection's task next yields.
                asyncio.get_running_loop().call_soon(answered.set)

    async def replay(
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
                await self.client.send_update({"sessionId": session.id, "update": update})
            if self.live.disposed or self.client.closed:
                raise internal_error("connection closed during session/load")


def realpath(path: str) -> str | None:
    """`path` through its symlinks, or None when it does not exist: session/list and
    session/resume compare directories by physical identity (§1.1, §1.6)."""
    try:
        return os.path.realpath(path, strict=True)
    except OSError:
        return None
