"""The ACP method table of acp-plus (baseline: native dsh-acp era 3, contract §1-§5).

`Server` maps each method to a handler that reads its parameters from the top-level
`params` keys only (so `_meta` can never override one), validates them with the
contract's exact texts, and delegates prompt mechanics to `sessions.LiveSession`. The
core runtime (providers, tools, the session store) is built on first use, so spawning
the process and answering `initialize` stay fast.

Not registered in the baseline, as in native: `session/load`, `session/set_mode`,
`_session/steering` (-32601, `"Method not found": <method>`); see docs/contract-notes.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from acp_plus import model_control
from acp_plus.config import Config, ProviderSpec
from acp_plus.core.tools._reaper import descendants
from acp_plus.core.tools.procs import protect_env
from acp_plus.errors import (
    RpcError,
    bridge_disposed,
    internal_error,
    invalid_params,
    method_not_found,
    session_closing,
    unknown_session,
)
from acp_plus.rpc import Connection, RequestContext, open_stdio
from acp_plus.sessions import LiveSession, RouteInfo, close_all

if TYPE_CHECKING:
    from acp_plus.core.attachments import AttachmentStore
    from acp_plus.core.llm.base import ModelInfo, Provider, Router
    from acp_plus.core.store import SessionStore
    from acp_plus.core.tools.base import Tool
    from acp_plus.mcp_config import McpServerSpec

log = logging.getLogger("acp_plus.server")

PROTOCOL_VERSION = 1
AGENT_INFO = {"name": "dsh-acp-plus", "version": "0.1.0"}
TEARDOWN_SECONDS = 1.5

Handler = Callable[[dict[str, Any], RequestContext], Awaitable[Any]]


# ---------------------------------------------------------------------------------------
# Parameter readers: top-level keys only; failures mimic the SDK's schema rejection.


def _schema_error(key: str, problem: str) -> RpcError:
    # The SDK answers a schema failure with bare "Invalid params" plus the issues as data.
    return invalid_params(data={"_errors": [], key: {"_errors": [problem]}})


def _object(params: Any) -> dict[str, Any]:
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise invalid_params(data={"_errors": ["Expected object"]})
    return params


def _required_str(params: dict[str, Any], key: str) -> str:
    value = params.get(key)
    if value is None:
        raise _schema_error(key, "Required")
    if not isinstance(value, str):
        raise _schema_error(key, f"Expected string, received {_js_type(value)}")
    return value


def _optional_str(params: dict[str, Any], key: str) -> str | None:
    value = params.get(key)
    if value is not None and not isinstance(value, str):
        raise _schema_error(key, f"Expected string, received {_js_type(value)}")
    return value


def _js_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "string" if isinstance(value, str) else "null"


def _absolute_cwd(cwd: str) -> str:
    # Node's path.isAbsolute on POSIX: a leading slash.
    if not cwd.startswith("/"):
        raise invalid_params(f"cwd must be an absolute path: {cwd}")
    return cwd


def _no_additional_directories(params: dict[str, Any]) -> None:
    extra = params.get("additionalDirectories")
    if extra is not None and extra != []:
        raise invalid_params("additionalDirectories is not supported")


def _realpath(path: str) -> str | None:
    try:
        return os.path.realpath(path, strict=True)
    except OSError:
        return None


# ---------------------------------------------------------------------------------------
# Runtime: providers, tools and the store, built once on first use.


def model_infos(spec: ProviderSpec) -> list[ModelInfo]:
    """The catalog entries of a config-declared provider (parity-stream's come from its server)."""
    infos: list[ModelInfo] = []
    for model in spec.models:
        info: ModelInfo = {"id": model.id, "name": model.name}
        if model.description is not None:
            info["description"] = model.description
        info["inputModalities"] = list(model.input_modalities)
        if model.context_window is not None:
            info["contextWindow"] = model.context_window
        if model.reasoning_efforts:
            efforts = []
            for effort in model.reasoning_efforts:
                entry: dict[str, str] = {"id": effort.id, "name": effort.name}
                if effort.description is not None:
                    entry["description"] = effort.description
                efforts.append(entry)
            reasoning: dict[str, Any] = {"efforts": efforts}
            if model.default_effort is not None:
                reasoning["defaultEffort"] = model.default_effort
            info["reasoning"] = reasoning  # type: ignore[typeddict-item]
        infos.append(info)
    return infos


def route_info(info: ModelInfo | None) -> RouteInfo:
    """Reasoning, context window and modalities of a catalog entry (None: unresolved)."""
    if info is None:
        return RouteInfo(None, None)
    reasoning = info.get("reasoning")
    declared = None
    if reasoning is not None:
        declared = model_control.Reasoning(
            tuple(
                model_control.Effort(e["id"], e["name"], e.get("description"))
                for e in reasoning["efforts"]
            ),
            reasoning.get("defaultEffort"),
        )
    return RouteInfo(
        declared, info.get("contextWindow"), tuple(info.get("inputModalities", ["text"]))
    )


@dataclass
class Runtime:
    """The process-wide core services every session shares."""

    router: Router
    tools: list[Tool]
    store: SessionStore
    attachments: AttachmentStore

    async def catalog(self) -> list[model_control.ProviderCatalog]:
        """Provider catalogs in the shape `model_control` reads."""
        return [
            model_control.ProviderCatalog(
                p["id"],
                p["name"],
                tuple(
                    model_control.ModelEntry(m["id"], m["name"], m.get("description"))
                    for m in p["models"]
                ),
            )
            for p in await self.router.catalog()
        ]

    async def resolve(self, selection: model_control.Selection | None) -> RouteInfo:
        """What the core knows about the selected model."""
        if selection is None:
            return RouteInfo(None, None)
        return route_info(await self.router.find_model(selection.provider, selection.model))

    async def input_modalities(self, provider: str, model: str) -> list[str] | None:
        """A route's declared input modalities for §5 image admission; None when the
        catalog does not list the model. Raises when the catalog cannot be read."""
        info = await self.router.find_model(provider, model)
        if info is None:
            return None
        return list(info.get("inputModalities", ["text"]))


async def build_runtime(config: Config) -> Runtime:
    """Create providers, tools and the store from the config (fetches catalogs)."""
    from acp_plus.core.attachments import AttachmentStore
    from acp_plus.core.llm.base import Router
    from acp_plus.core.store import SessionStore
    from acp_plus.core.tools.builtin import builtin_tools
    from acp_plus.core.tools.fixture import fixture_tools

    attachments = AttachmentStore.under_home(config.home)
    providers: list[Provider] = []
    tools: list[Tool] = list(builtin_tools()) if config.builtin_tools else []
    for spec in config.providers:
        if spec.api == "parity-stream":
            from acp_plus.core.llm.parity_stream import ParityStreamProvider

            assert spec.base_url is not None  # config validation guarantees it
            host = ParityStreamProvider(
                spec.base_url,
                request_timeout=spec.request_timeout,
                stream_idle_timeout=spec.stream_idle_timeout,
                retries=spec.retries,
            )
            providers.append(host)
            tools.extend(await fixture_tools(host))
        else:
            from acp_plus.core.llm.openai_chat import OpenAIChatConfig, OpenAIChatProvider

            # Config validation guarantees base_url and api_key_env for openai-chat.
            assert spec.base_url is not None and spec.api_key_env is not None
            # Whatever its name, the provider's key never reaches a tool's environment.
            protect_env(spec.api_key_env)
            chat = OpenAIChatConfig(
                id=spec.route,
                name=spec.name,
                base_url=spec.base_url,
                api_key_env=spec.api_key_env,
                models=tuple(model_infos(spec)),
                max_retries=spec.retries,
                timeout=spec.request_timeout,
                stream_idle_timeout=spec.stream_idle_timeout,
                max_tokens=spec.max_tokens,
            )
            providers.append(OpenAIChatProvider(chat, read_attachment=attachments.read))
    router = Router(providers)
    await router.catalog()
    return Runtime(router, tools, SessionStore(config.home), attachments)


# ---------------------------------------------------------------------------------------
# The server


class Server:
    """One ACP connection's agent side: the method table and the live sessions."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.conn: Connection | None = None
        self.sessions: dict[str, LiveSession] = {}
        self.activating: set[str] = set()
        self.disposed = False
        self._image_advertised = False
        self._runtime: asyncio.Task[Runtime] | None = None
        self._teardown: asyncio.Task[None] | None = None
        self._handlers: dict[str, Handler] = {
            "initialize": self.initialize,
            "authenticate": self.authenticate,
            "session/new": self.new_session,
            "session/list": self.list_sessions,
            "session/resume": self.resume_session,
            "session/close": self.close_session,
            "session/set_config_option": self.set_config_option,
            "session/prompt": self.prompt,
        }

    # -- plumbing ------------------------------------------------------------------------

    def attach(self, conn: Connection) -> None:
        """Bind the connection used for notifications and client requests."""
        self.conn = conn

    def warn_unbuilt_flags(self) -> None:
        """The increment flags are accepted in config, but their features are not built."""
        for flag in ("enable_session_load", "enable_additional_directories"):
            if getattr(self.config, flag):
                log.warning("%s is set but this build has no such feature; ignored", flag)

    def prefetch(self) -> None:
        """Start building the runtime in the background when a catalog must be fetched,
        so the first `initialize`/`session/new` does not pay the whole round trip."""
        if any(p.api == "parity-stream" for p in self.config.providers):
            self._runtime_task()

    def _runtime_task(self) -> asyncio.Task[Runtime]:
        task = self._runtime
        if task is None or (task.done() and task.exception() is not None):
            # A failed build (catalog unreachable) is retried by the next request.
            task = asyncio.get_running_loop().create_task(build_runtime(self.config))
            task.add_done_callback(_consume_exception)
            self._runtime = task
        return task

    async def runtime(self) -> Runtime:
        """The shared runtime (built once)."""
        return await asyncio.shield(self._runtime_task())

    async def on_request(self, method: str, params: Any, ctx: RequestContext) -> Any:
        """Dispatch a request; unknown methods get -32601 (§1.0)."""
        handler = self._handlers.get(method)
        if handler is None:
            raise method_not_found(method)
        if self.disposed and method not in ("initialize", "authenticate"):
            raise bridge_disposed()
        return await handler(_object(params), ctx)

    async def on_notification(self, method: str, params: Any) -> None:
        """`session/cancel` is the only notification; others are ignored."""
        if method == "session/cancel" and isinstance(params, dict):
            session_id = params.get("sessionId")
            session = self.sessions.get(session_id) if isinstance(session_id, str) else None
            if session is not None:
                session.cancel()

    async def _send_update(self, params: dict[str, Any]) -> None:
        if self.conn is not None:
            await self.conn.notify("session/update", params)

    async def _client_request(self, method: str, params: Any) -> Any:
        if self.conn is None:
            raise RuntimeError("no client connection")
        return await self.conn.request(method, params)

    def _session(self, params: dict[str, Any]) -> LiveSession:
        session_id = _required_str(params, "sessionId")
        session = self.sessions.get(session_id)
        if session is None:
            raise unknown_session(session_id)
        return session

    # -- handlers ------------------------------------------------------------------------

    async def initialize(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """Exact native capabilities (both increment flags off), acp-plus agentInfo."""
        version = params.get("protocolVersion")
        if isinstance(version, bool) or not isinstance(version, int) or not 0 <= version < 65536:
            raise _schema_error("protocolVersion", "Expected number")
        self._image_advertised = await self._initial_image_support()
        return {
            "protocolVersion": PROTOCOL_VERSION,
            "agentCapabilities": {
                "mcpCapabilities": {"http": True},
                "promptCapabilities": {
                    "image": self._image_advertised,
                    "audio": False,
                    "embeddedContext": False,
                },
                "sessionCapabilities": {"close": {}, "list": {}, "resume": {}},
            },
            "authMethods": [],
            "agentInfo": dict(AGENT_INFO),
        }

    async def _initial_image_support(self) -> bool:
        config = self.config
        if config.provider is None or config.model is None:
            return False
        spec = config.provider_spec(config.provider)
        if spec is not None and spec.api != "parity-stream":
            model = next((m for m in spec.models if m.id == config.model), None)
            return model is not None and "image" in model.input_modalities
        try:
            runtime = await self.runtime()
            info = await runtime.resolve(model_control.Selection(config.provider, config.model))
        except Exception as exc:
            log.warning("cannot resolve the initial route for the image capability: %s", exc)
            return False
        return "image" in info.input_modalities

    async def authenticate(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """No authentication methods: any `methodId` succeeds."""
        return {}

    def _deployment_selection(self) -> model_control.Selection | None:
        if self.config.provider is None or self.config.model is None:
            return None
        return model_control.Selection(self.config.provider, self.config.model)

    async def new_session(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """`session/new`: validate, persist the header, start the agent (§1.1)."""
        cwd = _absolute_cwd(_required_str(params, "cwd"))
        _no_additional_directories(params)
        mcp_servers = self._validate_mcp(params, cwd)
        runtime = await self.runtime()
        log_ = runtime.store.create(cwd)
        session = self._make_session(log_.id, cwd, runtime)
        self.activating.add(session.id)
        try:
            await self._start(session, runtime, log_, self._deployment_selection(), mcp_servers)
            if self.disposed:
                raise internal_error("connection closed during session/new")
            options = await self._config_options(session, runtime)
        except BaseException:
            await self._rollback(session)
            raise
        finally:
            self.activating.discard(session.id)
        self.sessions[session.id] = session
        return {"sessionId": session.id, "configOptions": options}

    def _validate_mcp(self, params: dict[str, Any], cwd: str) -> list[McpServerSpec]:
        from acp_plus.mcp_config import validate

        return validate(params.get("mcpServers"), cwd=cwd)

    def _make_session(self, session_id: str, cwd: str, runtime: Runtime) -> LiveSession:
        return LiveSession(
            session_id,
            cwd,
            send=self._send_update,
            client_request=self._client_request,
            image_advertised=lambda: self._image_advertised,
            attachments=runtime.attachments,
            resolve_modalities=runtime.input_modalities,
        )

    async def _start(
        self,
        session: LiveSession,
        runtime: Runtime,
        session_log: Any,
        selection: model_control.Selection | None,
        mcp_servers: list[McpServerSpec],
    ) -> None:
        from acp_plus.core.agent import Agent
        from acp_plus.core.approvals import ApprovalChain
        from acp_plus.core.tools.base import ToolRegistry

        session.selection = selection
        session.route_info = await runtime.resolve(selection)
        tools = list(runtime.tools)
        if mcp_servers:
            from acp_plus.core.tools.mcp import start_servers

            # A server that fails to start fails the request (failOnStartupError, §1.4).
            for connection in await start_servers(mcp_servers):
                session.on_close.append(connection.aclose)
                tools.extend(connection.tools())
        agent = Agent(
            session_log,
            runtime.router,
            ToolRegistry(tools),
            ApprovalChain([session.ask_permission]),
            session.cwd,
            session.on_event,
            sandbox=self.config.sandbox,  # type: ignore[arg-type]
        )
        session.attach(agent)

    async def _rollback(self, session: LiveSession) -> None:
        try:
            await session.close()
        except Exception as exc:
            log.warning("rollback of session %s failed: %s", session.id, exc)

    async def _config_options(self, session: LiveSession, runtime: Runtime) -> list[dict[str, Any]]:
        if session.selection is None:
            return []
        return model_control.config_options(
            session.selection, await runtime.catalog(), session.route_info.reasoning
        )

    async def list_sessions(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """`session/list` with the keyset cursor (§1.6)."""
        from acp_plus.cursor import page

        cwd = _optional_str(params, "cwd")
        if cwd is not None:
            _absolute_cwd(cwd)
        cursor = _optional_str(params, "cursor")
        runtime = await self.runtime()
        headers = await asyncio.to_thread(runtime.store.headers)
        return page(
            headers,
            cwd_filter=cwd,
            cursor=cursor,
            page_size=self.config.session_list_page_size,
            exclude_ids=set(self.sessions) | self.activating,
            realpath=_realpath,
        )

    async def resume_session(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """`session/resume`: no replay; the route comes back from the log (§1.1, §1.5)."""
        from acp_plus.core.history import last_route
        from acp_plus.core.store import StoreError, UnknownSession
        from acp_plus.cursor import same_directory

        session_id = _required_str(params, "sessionId")
        cwd = _absolute_cwd(_required_str(params, "cwd"))
        _no_additional_directories(params)
        mcp_servers = self._validate_mcp(params, cwd)
        if session_id in self.sessions or session_id in self.activating:
            raise invalid_params(f"session is already active: {session_id}")
        self.activating.add(session_id)
        try:
            runtime = await self.runtime()
            try:
                session_log = runtime.store.open(session_id)
            except (UnknownSession, ValueError):
                # ValueError covers ids that are not UUIDs (`../../x`): never a path.
                raise invalid_params(f"session is not resumable: {session_id}") from None
            except StoreError as exc:
                raise RuntimeError(str(exc)) from exc
            header = session_log.header
            if header.get("origin") == "subagent" or header.get("parentSession") is not None:
                raise invalid_params(f"session is not resumable: {session_id}")
            stored_cwd = header.get("cwd")
            if not isinstance(stored_cwd, str) or not same_directory(stored_cwd, cwd, _realpath):
                raise invalid_params(f"session cwd does not match: {cwd}")
            session = self._make_session(session_id, stored_cwd, runtime)
            selection = model_control.restore(
                last_route(session_log.events()), self._deployment_selection()
            )
            try:
                await self._start(session, runtime, session_log, selection, mcp_servers)
                assert session.agent is not None
                # A turn a crash left open ends `interrupted` before new work starts.
                session.agent.settle_interrupted()
                if self.disposed:
                    raise internal_error("connection closed during session/resume")
                options = await self._config_options(session, runtime)
            except BaseException:
                await self._rollback(session)
                raise
            self.sessions[session_id] = session
            return {"configOptions": options}
        finally:
            self.activating.discard(session_id)

    async def close_session(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """`session/close`: concurrent closes share one; the record goes either way."""
        session = self._session(params)
        try:
            await asyncio.shield(session.close())
        except Exception as exc:
            raise internal_error(f"session close failed: {exc}") from None
        finally:
            if self.sessions.get(session.id) is session:
                del self.sessions[session.id]
        return {}

    async def set_config_option(
        self, params: dict[str, Any], ctx: RequestContext
    ) -> dict[str, Any]:
        """`session/set_config_option` (§1.5); applied in arrival order per session."""
        session = self._session(params)
        if session.closing:
            raise session_closing(session.id)
        config_id = _required_str(params, "configId")
        async with session.config_lock:
            return await self._set_config_option(session, config_id, params.get("value"))

    async def _set_config_option(
        self, session: LiveSession, config_id: str, value: Any
    ) -> dict[str, Any]:
        runtime = await self.runtime()
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
        return {"configOptions": model_control.config_options(chosen, catalog, info.reasoning)}

    async def prompt(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        """`session/prompt`: the slot, admission and settlement live in `LiveSession`."""
        session = self._session(params)
        blocks = params.get("prompt")
        if not isinstance(blocks, list):
            raise _schema_error("prompt", "Required" if blocks is None else "Expected array")
        return await session.prompt(blocks, ctx)

    # -- teardown ------------------------------------------------------------------------

    def dispose(self) -> asyncio.Task[None]:
        """The shared, memoized teardown ("quiesce", §1.0)."""
        if self._teardown is None:
            self._teardown = asyncio.get_running_loop().create_task(self._dispose())
        return self._teardown

    async def _dispose(self) -> None:
        self.disposed = True
        sessions = list(self.sessions.values())
        self.sessions.clear()
        failures = await close_all(sessions, TEARDOWN_SECONDS)
        if failures:
            log.error(
                "ACP agent teardown failed for %d session(s): %s",
                len(failures),
                "; ".join(failures),
            )
        if self._runtime is not None and self._runtime.done() and not self._runtime.cancelled():
            if self._runtime.exception() is None:
                try:
                    await asyncio.wait_for(self._runtime.result().router.aclose(), 0.3)
                except Exception as exc:
                    log.warning("closing providers failed: %s", exc)
        elif self._runtime is not None:
            self._runtime.cancel()


def _consume_exception(task: asyncio.Task[Any]) -> None:
    # The error is reported to whichever request awaits the runtime; never "unretrieved".
    if not task.cancelled():
        task.exception()


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
    conn = Connection(reader, sink, server.on_request, server.on_notification)
    server.attach(conn)
    server.warn_unbuilt_flags()
    server.prefetch()
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
