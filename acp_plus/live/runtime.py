"""The core runtime every session of a connection shares: providers, tools, the stores.

`build_runtime` turns the config into a `Runtime` (it fetches the parity-stream catalog,
so it is network I/O); `SharedRuntime` builds it once, on first use, so spawning the
process and answering `initialize` stay fast. `model_infos` and `route_info` are the
pure translations between config, catalog entries and what a session needs to know.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp_plus.core.context import ContextSettings
from acp_plus.core.hook_runner import Hooks
from acp_plus.core.tools.procs import protect_env
from acp_plus.live.sessions import LiveSession, RouteInfo
from acp_plus.protocol import model_control
from acp_plus.settings.config import Config, ProviderSpec

if TYPE_CHECKING:
    from acp_plus.core.attachments import AttachmentStore
    from acp_plus.core.llm.base import ModelInfo, Provider, Router
    from acp_plus.core.store import SessionStore
    from acp_plus.core.subagents import Subagents
    from acp_plus.core.tools.base import Tool
    from acp_plus.core.tools.goal_family import GoalBook
    from acp_plus.core.tools.job_table import JobTable

log = logging.getLogger(__name__)


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
    context: ContextSettings = field(default_factory=ContextSettings)
    """What each session adds to the model's view (system prompt, runtime context,
    workspace instructions)."""
    hooks: Hooks | None = None
    """The command hooks every tool call goes through (`hooks = true`), read at start."""
    jobs: JobTable | None = None
    """The background jobs `bash` starts and the job tools read, when built-in tools run."""
    goals: GoalBook | None = None
    """The live sessions' goals, when the goal tools run (the round driver reads them)."""
    subagents: Subagents | None = None
    """The child agents the `subagent` tools, workflow runs and ralph's rounds start, when
    one of those families is offered."""

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
    # Imported here: the providers pull in httpx/openai, which `initialize` never needs.
    from acp_plus.core.attachments import AttachmentStore
    from acp_plus.core.llm.base import Router
    from acp_plus.core.store import SessionStore
    from acp_plus.core.tools.families import ToolSetup, offered, select
    from acp_plus.core.tools.fixture import fixture_tools

    attachments = AttachmentStore.under_home(config.home)
    providers: list[Provider] = []
    from acp_plus.core.subagents import Subagents
    from acp_plus.core.tools.goal_family import GoalBook
    from acp_plus.core.tools.job_table import JobTable

    jobs = JobTable() if config.builtin_tools else None
    goals = GoalBook() if "goal" in config.builtin_tools else None
    delegating = {"subagent", "workflow", "ralph"} & set(config.builtin_tools)
    subagents = Subagents() if delegating else None  # agent() and ralph's rounds start them too
    setup = ToolSetup(home=config.home, jobs=jobs, goals=goals, subagents=subagents)
    own = offered(select(config.builtin_tools), setup)
    if own.missing:
        # Never silently: the model is shown none of these families' tools.
        log.warning(
            "built-in tool families not implemented, none offered: %s", ", ".join(own.missing)
        )
    tools: list[Tool] = list(own.tools)
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
    context = ContextSettings(
        identity=config.identity,
        persona=config.persona,
        runtime_context=config.runtime_context,
        instructions=config.workspace_context,
        home=config.home,
        guidance=own.guidance,
    )
    # Read once, from the launch directory, as native 0.1.0-rc.8 reads its hooks files.
    hooks = Hooks.load(Path.cwd(), (config.home,)) if config.hooks else None
    store = SessionStore(config.home)
    return Runtime(
        router,
        tools,
        store,
        attachments,
        context,
        hooks=hooks,
        jobs=jobs,
        goals=goals,
        subagents=subagents,
    )


class SharedRuntime:
    """The connection's runtime, built once on first use; a failed build is retried."""

    def __init__(self, config: Config) -> None:
        self._config = config
        self._task: asyncio.Task[Runtime] | None = None

    def prefetch(self) -> None:
        """Start building in the background when a catalog must be fetched, so the first
        `initialize`/`session/new` does not pay the whole round trip."""
        if any(p.api == "parity-stream" for p in self._config.providers):
            self._start()

    def _start(self) -> asyncio.Task[Runtime]:
        task = self._task
        if task is None or (task.done() and task.exception() is not None):
            # A failed build (catalog unreachable) is retried by the next request.
            task = asyncio.get_running_loop().create_task(build_runtime(self._config))
            task.add_done_callback(_consume_exception)
            self._task = task
        return task

    async def get(self) -> Runtime:
        """The shared runtime (built once); a caller's cancel never cancels the build."""
        return await asyncio.shield(self._start())

    async def aclose(self) -> None:
        """Close the providers of a built runtime, or stop a build still running."""
        task = self._task
        if task is not None and task.done() and not task.cancelled():
            if task.exception() is None:
                try:
                    await asyncio.wait_for(task.result().router.aclose(), 0.3)
                except Exception as exc:
                    log.warning("closing providers failed: %s", exc)
        elif task is not None:
            task.cancel()


def _consume_exception(task: asyncio.Task[Any]) -> None:
    # The error is reported to whichever request awaits the runtime; never "unretrieved".
    if not task.cancelled():
        task.exception()


async def config_options(session: LiveSession, runtime: Runtime) -> list[dict[str, Any]]:
    """The `configOptions` a new or resumed session answers with (§1.5)."""
    if session.selection is None:
        return []
    return model_control.config_options(
        session.selection, await runtime.catalog(), session.route_info.reasoning
    )
