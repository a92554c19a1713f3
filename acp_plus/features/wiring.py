"""How the M5/M7 increments act on a connection's live sessions (docs/contract.md §6.3-§6.7).

`Increments` is the one object the method table (`acp_plus/server/methods.py`) asks: which of
modes, commands, elicitation, steering and the default model are on (the profile
switch, `acp_plus.features.enabled`), and what they add to each method. The decisions
are the pure modules' (`modes`, `commands`, `elicitation`, `steering`,
`default_model`); this module only applies them to a `LiveSession`: commits their
events through the session's agent (so the ordered output queue carries their updates,
and the log keeps them for resume and load), adds answer members, and queues updates.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from acp_plus import features
from acp_plus.features import approvals, commands, default_model, elicitation, modes, steering
from acp_plus.features.approval_review import SessionReviewer
from acp_plus.protocol.model_control import Selection, resolved_effort
from acp_plus.protocol.updates import config_option_update
from acp_plus.wire.errors import invalid_params, session_closing

if TYPE_CHECKING:
    from acp_plus.core.agent import Agent
    from acp_plus.core.tools.base import Tool
    from acp_plus.live.runtime import Runtime, SharedRuntime
    from acp_plus.live.sessions import LiveSession
    from acp_plus.settings.config import Config
    from acp_plus.wire.rpc import RequestContext

ClientRequest = Callable[[str, Any], Awaitable[Any]]

AFTER_RESPONSE_TURNS = 3
"""Event-loop turns an update "sent after the answer" waits. The connection writes a
handler's answer in the turn the handler returns, or two turns later for the requests it
runs in a task of their own (`rpc.CANCELLABLE_METHODS`, session/new among them); three
turns put the update behind the answer, as the reference's zero-delay timer does (§6.4).
tests/plus/features/test_commands.py checks the wire order."""


def session_mode(session: LiveSession) -> str:
    """The mode the session's log leaves it in (`default` before any switch)."""
    if session.agent is None:
        return modes.DEFAULT
    return modes.current_mode(session.agent.log.events())


def apply_mode(agent: Agent) -> None:
    """Give the model the mode note for the log's current mode (at activation and after
    every switch); the agent re-sends the runtime context when its text changed."""
    events = agent.log.events()
    runtime = modes.runtime_for_mode(
        agent.context.runtime, modes.current_mode(events), switched=modes.ever_switched(events)
    )
    agent.context = dataclasses.replace(agent.context, runtime=runtime)


class Increments:
    """The M5/M7 increments of one connection."""

    def __init__(self, config: Config, runtime: SharedRuntime) -> None:
        self._runtime = runtime
        self.modes = features.enabled(config, "modes")
        self.commands = features.enabled(config, "commands")
        self.elicitation = features.enabled(config, "elicitation")
        self.steering = features.enabled(config, "steering")
        self.default_model = features.enabled(config, "default_model")
        self.approval_settings = config.approvals
        self.approvals = features.enabled(config, "approvals") and config.approvals.active
        self._home = config.home
        self._extra = approvals.commands_for(config.approvals) if self.approvals else ()
        self._reviewers: dict[str, SessionReviewer] = {}
        self.forms = False
        """Whether the client declared `elicitation.form` (the last `initialize` wins)."""
        self._background: set[asyncio.Task[None]] = set()

    def registry(self, mode: str) -> tuple[commands.Command, ...]:
        """The session's commands in `mode`, with the approval features' commands."""
        return commands.registry(mode, self._extra)

    # -- initialize ----------------------------------------------------------------------

    def initialize(self, params: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
        """Read the client's elicitation capability; advertise steering (§1.2)."""
        if self.elicitation:
            caps = params.get("clientCapabilities")
            elicit = caps.get("elicitation") if isinstance(caps, dict) else None
            # §1.2: a `form` object turns form elicitation on (the schema parse has
            # dropped any other value, as native's SDK does).
            self.forms = isinstance(elicit, dict) and elicit.get("form") is not None
        if self.steering:
            result["_meta"] = {key: dict(value) for key, value in steering.META.items()}
        return result

    async def default_route(self, explicit: Selection | None) -> Selection | None:
        """The deployment's route: the configured one, else the first catalog model
        (§6.7) when that increment is on."""
        if explicit is not None or not self.default_model:
            return explicit
        runtime = await self._runtime.get()
        return default_model.default_selection(await runtime.catalog())

    # -- sessions coming live ------------------------------------------------------------

    def session_tools(self, session: LiveSession, request: ClientRequest) -> list[Tool]:
        """The session's own tools: `ask_user_question` when the client shows forms, and
        `request_approval_plan` when the ledger is on."""
        own: list[Tool] = []
        if self.approvals and self.approval_settings.ledger:
            own.append(approvals.ApprovalPlan(lambda: session.agent))
        if not (self.elicitation and self.forms):
            return own

        async def ask(params: dict[str, Any]) -> Any:
            # The tool_call update goes out before the form, as before a permission (§4).
            await session.queue.drain()
            return await request("elicitation/create", params)

        return [elicitation.AskUserQuestion(ask, lambda: self.forms), *own]

    async def activated(
        self, session: LiveSession, result: dict[str, Any], *, new: bool
    ) -> dict[str, Any]:
        """Finish a new (`new`), resumed or loaded session: the restored mode reaches the
        model, the answer gets `modes` and the mode option (§6.3), and the client gets
        the command list (§6.4), and the session gets its approval gate when approval
        features are configured. Returns `result`, completed.

        The list follows a session/new answer, since the client learns the id from it;
        for resume and load, whose client named the session, it goes just before the
        answer, so it can never race the client's next request about the session
        (docs/contract-notes.md, "Commands")."""
        if self.approvals:
            assert session.agent is not None
            gate = approvals.make_gate(self.approval_settings, session.agent, self._home)
            session.agent.gate = gate
            if self.approval_settings.reviewer.enabled:
                self._reviewers[session.id] = approvals.make_reviewer(
                    self.approval_settings, session.agent, gate
                )
        if self.modes:
            assert session.agent is not None
            apply_mode(session.agent)
            current = session_mode(session)
            result["configOptions"] = [*result.get("configOptions", []), modes.mode_option(current)]
            result["modes"] = modes.modes_state(current)
        if self.commands:
            update = commands.available_commands_update(self.registry(session_mode(session)))
            if new:
                task = asyncio.get_running_loop().create_task(_after_response(session, update))
                self._background.add(task)
                task.add_done_callback(self._background.discard)
            else:
                session.queue.put(update)
                await session.queue.drain()
        return result

    def config_options(self, session: LiveSession, options: list[dict[str, Any]]) -> list[Any]:
        """A session's `configOptions` with the mode option after the route's."""
        if not self.modes:
            return options
        return [*options, modes.mode_option(session_mode(session))]

    # -- modes ---------------------------------------------------------------------------

    async def switch_mode(
        self, session: LiveSession, mode: str, *, announce_options: bool = True
    ) -> None:
        """Switch `session` to `mode` (checked). A no-op when it is the current mode;
        otherwise `plan/mode` is committed (projected as `current_mode_update`), the
        model gets the new note at its next prompt, and the client hears the new
        command list and, unless the caller answers with them, the config options, all
        before this returns."""
        agent = session.agent
        assert agent is not None
        if session_mode(session) == mode:
            return
        agent.commit(modes.mode_event(mode))
        apply_mode(agent)
        if self.commands:
            session.queue.put(commands.available_commands_update(self.registry(mode)))
        if announce_options:
            options = await self.session_options(session)
            session.queue.put(config_option_update(options))
        await session.queue.drain()  # the client hears the switch before the answer

    async def session_options(self, session: LiveSession) -> list[dict[str, Any]]:
        """The session's complete `configOptions` now."""
        from acp_plus.live.runtime import config_options

        runtime = await self._runtime.get()
        return self.config_options(session, await config_options(session, runtime))

    async def set_mode_option(self, session: LiveSession, value: Any) -> dict[str, Any]:
        """`session/set_config_option` for the `mode` option: the same switch as
        `session/set_mode`, answered with the complete options."""
        if not isinstance(value, str):
            raise invalid_params(f"{modes.CONFIG_ID} requires a select value")
        await self.switch_mode(session, modes.check_mode(value), announce_options=False)
        return {"configOptions": await self.session_options(session)}

    # -- commands ------------------------------------------------------------------------

    def command_line(self, session: LiveSession, blocks: Any) -> commands.CommandLine | None:
        """The slash command `blocks` name, or None for an ordinary prompt."""
        if not self.commands:
            return None
        return commands.parse(blocks, self.registry(session_mode(session)))

    async def run_command(
        self, session: LiveSession, line: commands.CommandLine, ctx: RequestContext
    ) -> dict[str, Any]:
        """Run a slash command as a prompt's answer: no model turn, allowed while a
        prompt is in flight; `end_turn` once its updates are sent, `cancelled` when
        session/cancel, close or the request's abort stopped it (§6.4)."""
        if session.closing:
            raise session_closing(session.id)
        body = asyncio.ensure_future(self._command(session, line))
        session.commands.add(body)
        aborted = asyncio.ensure_future(ctx.aborted.wait())
        try:
            await asyncio.wait({body, aborted}, return_when=asyncio.FIRST_COMPLETED)
            if not body.done():
                body.cancel()
                await asyncio.wait({body})
        finally:
            aborted.cancel()
            session.commands.discard(body)
            if not body.done():
                body.cancel()  # this request itself was cancelled (teardown)
        await session.queue.drain()
        if body.cancelled():
            return {"stopReason": "cancelled"}
        body.result()  # a command's own failure answers the prompt (plain: -32603)
        return {"stopReason": "end_turn"}

    async def _command(self, session: LiveSession, line: commands.CommandLine) -> None:
        agent = session.agent
        assert agent is not None
        agent.commit(commands.run_event(line))
        text = await self._answer(session, line)
        agent.commit(commands.done_event(line, text))

    async def _answer(self, session: LiveSession, line: commands.CommandLine) -> str:
        mode = session_mode(session)
        if line.name == "help":
            return commands.help_text(self.registry(mode))
        if line.name == "approval-review":
            return self._reviewers[session.id].command(line.args)
        if line.name in ("backups", "undo", "approvals"):
            assert session.agent is not None
            return approvals.answer(session.agent, line)
        if line.name == "status":
            runtime = await self._runtime.get()
            return commands.status_text(await status(session, runtime, mode))
        choice = commands.mode_choice(line.args, mode)
        if choice.target is not None:
            await self.switch_mode(session, choice.target)
        return choice.text

    # -- steering ------------------------------------------------------------------------

    def steer(self, session: LiveSession, prompt: Any) -> dict[str, str]:
        """`_session/steering` for a known session (§6.6): inject into the running turn
        of the prompt in flight, else `promptRequired`."""
        text = steering.steering_text(prompt)
        run, agent = session.run, session.agent
        if text is None or run is None or run.cancel_requested or session.closing:
            return dict(steering.PROMPT_REQUIRED)
        if agent is None or not agent.steer([{"type": "text", "text": text}]):
            return dict(steering.PROMPT_REQUIRED)  # still in admission, or already ending
        return dict(steering.INJECTED)


async def status(session: LiveSession, runtime: Runtime, mode: str) -> commands.Status:
    """The facts `/status` reports, read from the session and the catalog."""
    selection, info = session.selection, session.route_info
    model = None
    effort = None
    if selection is not None:
        name = selection.model
        for provider in await runtime.catalog():
            if provider.id == selection.provider:
                name = next((m.name for m in provider.models if m.id == selection.model), name)
        model = f"{name} ({selection.provider}/{selection.model})"
        if info.reasoning is not None:
            effort = resolved_effort(selection, info.reasoning) or ""
    agent = session.agent
    return commands.Status(
        model=model,
        effort=effort,
        mode=mode,
        sandbox=agent.sandbox if agent is not None else "workspace-write",
        roots=(session.cwd, *session.roots),
        used_tokens=agent.used_tokens() if agent is not None else 0,
        context_window=info.context_window,
    )


async def _after_response(session: LiveSession, update: dict[str, Any]) -> None:
    for _ in range(AFTER_RESPONSE_TURNS):
        await asyncio.sleep(0)
    session.queue.put(update)
