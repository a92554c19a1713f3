"""The ACP method table of acp-plus (baseline: native dsh-acp era 3, contract §1-§5).

`Server._handlers` maps each method to its handler: a new ACP method is one entry there
plus one `async def handler(self, params, ctx)` below, or in a group of handlers the
server composes (`restore.Restore`: resume and load), built with what it uses passed in
explicitly: the session table and the client link of `state.py`. A standard method's
params pass the ACP schema check first (`protocol/schema_check.py`, as native's SDK does
before dispatch); handlers then read the top-level keys only (so `_meta` never overrides
one), run the bridge's own checks (`protocol/params.py`), bring sessions live with
`activation.py`, and leave prompt mechanics to `sessions.LiveSession`. The core runtime
(`live/runtime.py`) is built on first use, so `initialize` stays fast.

The increments (§6, `acp_plus/features/`) exist only in the `plus` profile
(`Config.increments`); in the `native` profile their methods are not registered, as in
native (-32601, `"Method not found": <method>`), and nothing of them is advertised.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from acp_plus import features
from acp_plus.features import modes, steering
from acp_plus.features.wiring import Increments
from acp_plus.live.runtime import Runtime, SharedRuntime, config_options
from acp_plus.live.sessions import LiveSession, close_all
from acp_plus.protocol import model_control
from acp_plus.protocol.params import absolute_cwd
from acp_plus.protocol.schema_check import parse as parse_schema
from acp_plus.server.activation import (
    requested_roots,
    rollback,
    start_agent,
    validate_mcp,
)
from acp_plus.server.restore import Restore, realpath
from acp_plus.server.state import ClientLink, LiveSessions
from acp_plus.settings.config import Config
from acp_plus.wire.errors import (
    RpcError,
    bridge_disposed,
    internal_error,
    method_not_found,
    session_closing,
    unknown_session,
)
from acp_plus.wire.frames import UNDEFINED
from acp_plus.wire.rpc import Connection, RequestContext

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
AGENT_INFO = {"name": "dsh-acp-plus", "version": "0.1.0"}
TEARDOWN_SECONDS = 1.0
"""Seconds the sessions get to close at teardown (the rest of `server.stdio`'s budget
closes the providers and the connection)."""

Handler = Callable[[dict[str, Any], RequestContext], Awaitable[Any]]


class Server:
    """One ACP connection's agent side: the method table and the live sessions."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.client = ClientLink()
        self.live = LiveSessions()
        self.runtime = SharedRuntime(config)
        self.plus = Increments(config, self.runtime)
        """Modes, commands, elicitation, steering, default model (§6.3-§6.7)."""
        self.restore = Restore(
            config,
            self.runtime,
            self.plus,
            self.live,
            self.client,
            make_session=self._make_session,
            deployment_route=self._deployment_route,
        )
        self._image_advertised = False
        self._teardown: asyncio.Task[None] | None = None
        # The method table: one entry per ACP method (§1); anything else is -32601.
        self._handlers: dict[str, Handler] = {
            "initialize": self.initialize,
            "authenticate": self.authenticate,
            "session/new": self.new_session,
            "session/list": self.list_sessions,
            "session/resume": self.restore.resume_session,
            "session/close": self.close_session,
            "session/set_config_option": self.set_config_option,
            "session/prompt": self.prompt,
        }
        if config.increments:
            # Registered even with enable_session_load off: then it answers the -32602
            # gate text, as the reference acp-plus does (§1.2).
            self._handlers["session/load"] = self.restore.load_session
        if self.plus.modes:
            self._handlers["session/set_mode"] = self.set_mode
        if self.plus.steering:
            self._handlers[steering.METHOD] = self.steer

    # -- plumbing ------------------------------------------------------------------------

    def attach(self, conn: Connection) -> None:
        """Bind the connection used for notifications and client requests."""
        self.client.conn = conn

    async def on_request(self, method: str, params: Any, ctx: RequestContext) -> Any:
        """Dispatch a request; unknown methods get -32601 (§1.0)."""
        handler = self._handlers.get(method)
        if handler is None:
            raise method_not_found(method)
        if method == steering.METHOD:
            if self.live.disposed:
                raise bridge_disposed()
            # It answers non-object params itself (§6.6); absent params read as null.
            if params is UNDEFINED:
                params = None
            return await handler(params, ctx)
        # The SDK's schema parse comes before the bridge sees the request (§1.0); the
        # handler gets its output (caught values replaced, refused list items dropped).
        params = parse_schema(method, params)
        if self.live.disposed and method not in ("initialize", "authenticate"):
            raise bridge_disposed()
        return await handler(params, ctx)

    async def on_notification(self, method: str, params: Any) -> None:
        """`session/cancel` is the only notification; others are ignored. Params the
        schema refuses cancel nothing (native's SDK drops them unanswered)."""
        if method != "session/cancel":
            return
        try:
            parsed = parse_schema(method, params)
        except RpcError:
            return
        session = self.live.sessions.get(parsed["sessionId"])
        if session is not None:
            session.cancel()

    def _make_session(self, session_id: str, cwd: str, runtime: Runtime) -> LiveSession:
        return LiveSession(
            session_id,
            cwd,
            send=self.client.send_update,
            client_request=self.client.request,
            image_advertised=lambda: self._image_advertised,
            attachments=runtime.attachments,
            resolve_modalities=runtime.input_modalities,
        )

    def _deployment_selection(self) -> model_control.Selection | None:
        if self.config.provider is None or self.config.model is None:
            return None
        return model_control.Selection(self.config.provider, self.config.model)

    async def _deployment_route(self) -> model_control.Selection | None:
        """The configured route, else the default model (§6.7) when that is on."""
        return await self.plus.default_route(self._deployment_selection())

    # -- handlers ------------------------------------------------------------------------

    async def initialize(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """Native's capabilities plus the increments that are on (§1.2), acp-plus agentInfo."""
        self._image_advertised = await self._initial_image_support()
        capabilities: dict[str, Any] = {
            "mcpCapabilities": {"http": True},
            "promptCapabilities": {
                "image": self._image_advertised,
                "audio": False,
                "embeddedContext": False,
            },
            "sessionCapabilities": {"close": {}, "list": {}, "resume": {}},
        }
        if features.enabled(self.config, "session_load"):
            capabilities["loadSession"] = True
        if features.enabled(self.config, "additional_directories"):
            capabilities["sessionCapabilities"]["additionalDirectories"] = {}
        result = {
            "protocolVersion": PROTOCOL_VERSION,
            "agentCapabilities": capabilities,
            "authMethods": [],
            "agentInfo": dict(AGENT_INFO),
        }
        return self.plus.initialize(params, result)

    async def _initial_image_support(self) -> bool:
        try:
            route = await self._deployment_route()
        except Exception as exc:
            log.warning("cannot find the default route for the image capability: %s", exc)
            return False
        if route is None:
            return False
        spec = self.config.provider_spec(route.provider)
        if spec is not None and spec.api != "parity-stream":
            model = next((m for m in spec.models if m.id == route.model), None)
            return model is not None and "image" in model.input_modalities
        try:
            runtime = await self.runtime.get()
            info = await runtime.resolve(route)
        except Exception as exc:
            log.warning("cannot resolve the initial route for the image capability: %s", exc)
            return False
        return "image" in info.input_modalities

    async def authenticate(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """No authentication methods: any `methodId` succeeds."""
        return {}

    async def new_session(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """`session/new`: validate, persist the header, start the agent (§1.1)."""
        cwd = absolute_cwd(params["cwd"])
        roots = requested_roots(self.config, params, cwd)
        mcp_servers = validate_mcp(params, cwd)
        runtime = await self.runtime.get()
        session_log = runtime.store.create(cwd)
        session = self._make_session(session_log.id, cwd, runtime)
        self.live.activating.add(session.id)
        try:
            await start_agent(
                session,
                runtime,
                session_log,
                await self._deployment_route(),
                mcp_servers,
                sandbox=self.config.sandbox,
                mcp_startup_timeout=self.config.mcp_startup_timeout,
                roots=roots,
                session_tools=self.plus.session_tools(session, self.client.withdrawable_request),
            )
            if self.live.disposed:
                raise internal_error("connection closed during session/new")
            options = await config_options(session, runtime)
        except BaseException:
            await rollback(session)
            raise
        finally:
            self.live.activating.discard(session.id)
        self.live.sessions[session.id] = session
        result = {"sessionId": session.id, "configOptions": options}
        return await self.plus.activated(session, result, new=True)

    async def list_sessions(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """`session/list` with the keyset cursor (§1.6)."""
        from acp_plus.protocol.cursor import page

        cwd: str | None = params.get("cwd")
        if cwd is not None:
            absolute_cwd(cwd)
        cursor: str | None = params.get("cursor")
        runtime = await self.runtime.get()
        headers = await asyncio.to_thread(runtime.store.headers)
        return page(
            headers,
            cwd_filter=cwd,
            cursor=cursor,
            page_size=self.config.session_list_page_size,
            exclude_ids=set(self.live.sessions) | self.live.activating,
            realpath=realpath,
        )

    async def close_session(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """`session/close`: concurrent closes share one; the record goes either way."""
        await self.live.after_load(params)
        session = self.live.require(params)
        try:
            await asyncio.shield(session.close())
        except Exception as exc:
            raise internal_error(f"session close failed: {exc}") from None
        finally:
            if self.live.sessions.get(session.id) is session:
                del self.live.sessions[session.id]
        return {}

    async def set_config_option(
        self, params: dict[str, Any], ctx: RequestContext
    ) -> dict[str, Any]:
        """`session/set_config_option` (§1.5); applied in arrival order per session."""
        await self.live.after_load(params)
        session = self.live.require(params)
        if session.closing:
            raise session_closing(session.id)
        config_id: str = params["configId"]
        async with session.config_lock:
            if self.plus.modes and config_id == modes.CONFIG_ID:
                return await self.plus.set_mode_option(session, params.get("value"))
            return await self._set_config_option(session, config_id, params.get("value"))

    async def _set_config_option(
        self, session: LiveSession, config_id: str, value: Any
    ) -> dict[str, Any]:
        runtime = await self.runtime.get()
        catalog = await runtime.catalog()
        chosen = model_control.apply(
            session.selection,
            config_id,
            value,
            catalog=catalog,
            reasoning=session.route_info.reasoning,
        )
        info = session.route_info
        if session.selection is None or (chosen.provider, chosen.model) != (
            session.selection.provider,
            session.selection.model,
        ):
            info = await runtime.resolve(chosen)
        session.selection, session.route_info = chosen, info
        route = session.turn_route()
        if route is not None and session.agent is not None:
            session.agent.record_route(route)
        options = model_control.config_options(chosen, catalog, info.reasoning)
        return {"configOptions": self.plus.config_options(session, options)}

    async def prompt(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """`session/prompt`: the slot, admission and settlement live in `LiveSession`."""
        await self.live.after_load(params)
        session = self.live.require(params)
        blocks: list[Any] = params["prompt"]
        line = self.plus.command_line(session, blocks)
        if line is not None:
            return await self.plus.run_command(session, line, ctx)
        return await session.prompt(blocks, ctx)

    async def set_mode(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """`session/set_mode` (§6.3): `default` or `plan`; the switch is a durable event."""
        mode_id: str = params["modeId"]
        await self.live.after_load(params)
        session = self.live.require(params)
        if session.closing:
            raise session_closing(session.id)
        async with session.config_lock:
            await self.plus.switch_mode(session, modes.check_mode(mode_id))
        return {}

    async def steer(self, params: Any, ctx: RequestContext) -> dict[str, str]:
        """`_session/steering` (§6.6): text for the running turn's next step boundary."""
        session_id = steering.session_id(params)
        await self.live.after_load({"sessionId": session_id})
        session = self.live.sessions.get(session_id)
        if session is None:
            raise unknown_session(session_id)
        return self.plus.steer(session, params.get("prompt"))

    # -- teardown ------------------------------------------------------------------------

    def dispose(self) -> asyncio.Task[None]:
        """The shared, memoized teardown ("quiesce", §1.0)."""
        if self._teardown is None:
            self._teardown = asyncio.get_running_loop().create_task(self._dispose())
        return self._teardown

    async def _dispose(self) -> None:
        self.live.disposed = True
        sessions = list(self.live.sessions.values())
        self.live.sessions.clear()
        failures = await close_all(sessions, TEARDOWN_SECONDS)
        if failures:
            log.error(
                "ACP agent teardown failed for %d session(s): %s",
                len(failures),
                "; ".join(failures),
            )
        await self.runtime.aclose()
