"""Bringing a session live: the steps `session/new`, `session/resume` and `session/load` share.

A session is live once its core `Agent` is attached (route resolved, tools and MCP
servers started); a failure on the way closes whatever was started. `session/load`
(§6.1) is the resume steps plus a replay of the log (`features/session_load.py`).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from acp_plus import features
from acp_plus.features import additional_directories
from acp_plus.live.runtime import Runtime
from acp_plus.live.sessions import LiveSession
from acp_plus.protocol import model_control
from acp_plus.protocol.params import no_additional_directories
from acp_plus.server.children import host_children, notify
from acp_plus.wire.errors import invalid_params

if TYPE_CHECKING:
    from acp_plus.core.agent import Agent
    from acp_plus.core.context import ModelContext
    from acp_plus.core.store import SessionLog
    from acp_plus.core.tools.base import Tool
    from acp_plus.core.tools.mcp import McpServerSpec
    from acp_plus.settings.config import Config

log = logging.getLogger(__name__)


def validate_mcp(params: dict[str, Any], cwd: str) -> list[McpServerSpec]:
    """The request's `mcpServers`, validated against the session's cwd (§1.4)."""
    from acp_plus.protocol.mcp_config import validate

    return validate(params.get("mcpServers"), cwd=cwd)


def requested_roots(config: Config, params: dict[str, Any], cwd: str) -> tuple[str, ...]:
    """The request's additional directories (§6.2), or native's refusal when off."""
    if features.enabled(config, "additional_directories"):
        return additional_directories.validate(params.get("additionalDirectories"), cwd)
    no_additional_directories(params)
    return ()


def open_resumable(
    runtime: Runtime,
    session_id: str,
    cwd: str,
    realpath: Callable[[str], str | None],
    *,
    verb: str = "resumable",
) -> tuple[SessionLog, str]:
    """The stored log of a session the client may bring back in `cwd`, and its stored cwd.

    Refuses, with the bridge's texts, an unknown or malformed id, a subagent's session
    and a different directory (compared through `realpath`). `verb` names the method's
    refusal: `session is not resumable` (§1.1) or `session is not loadable` (§6.1).
    """
    from acp_plus.core.store import StoreError, UnknownSession
    from acp_plus.protocol.cursor import same_directory

    try:
        session_log = runtime.store.open(session_id)
    except (UnknownSession, ValueError):
        # ValueError covers ids that are not UUIDs (`../../x`): never a path.
        raise invalid_params(f"session is not {verb}: {session_id}") from None
    except StoreError as exc:
        raise RuntimeError(str(exc)) from exc
    header = session_log.header
    if header.get("origin") == "subagent" or header.get("parentSession") is not None:
        raise invalid_params(f"session is not {verb}: {session_id}")
    stored_cwd = header.get("cwd")
    if not isinstance(stored_cwd, str) or not same_directory(stored_cwd, cwd, realpath):
        raise invalid_params(f"session cwd does not match: {cwd}")
    return session_log, stored_cwd


def claim(session_log: SessionLog) -> None:
    """Take the session's one-writer lock now (`session/load` does, before it replays);
    live in another process: -32602 `session is already active`, as on attach."""
    from acp_plus.core.store import SessionLocked

    try:
        session_log.acquire()
    except SessionLocked:
        raise invalid_params(f"session is already active: {session_log.id}") from None


async def start_agent(
    session: LiveSession,
    runtime: Runtime,
    session_log: SessionLog,
    selection: model_control.Selection | None,
    mcp_servers: list[McpServerSpec],
    *,
    sandbox: str,
    mcp_startup_timeout: float = 30.0,
    roots: Sequence[str] = (),
    session_tools: Sequence[Tool] = (),
    source: str = "startup",
) -> None:
    """Resolve the route, start the MCP servers and attach the session's `Agent`.

    `roots` are the session's validated additional directories (§6.2): the model is told
    them in the runtime context, and their write/edit escalations are self-approved.
    `session_tools` are tools of this session alone (`ask_user_question`, §6.5), offered
    after the shared ones. `source` is what SessionStart hooks read (`resume` when the
    session is brought back).
    """
    from acp_plus.core.agent import Agent
    from acp_plus.core.approvals import ApprovalChain
    from acp_plus.core.tools.base import ToolRegistry

    session.selection = selection
    session.route_info = await runtime.resolve(selection)
    session.roots = tuple(roots)
    tools = [*runtime.tools, *session_tools]
    context = _with_roots(runtime.context.for_session(session.cwd, sandbox), roots)
    if mcp_servers:
        from acp_plus.core.tools.mcp import start_servers
        from acp_plus.core.tools.mcp_resources import prompt_sections, resource_tools

        # A server that fails to start fails the request (failOnStartupError, §1.4).
        # A server that never answers fails it too, after `mcp_startup_timeout` seconds.
        connections = await start_servers(mcp_servers, start_timeout=mcp_startup_timeout)
        for connection in connections:
            session.on_close.append(connection.aclose)
            tools.extend(connection.tools())
        # Native's resource tools over every server of the session, and the servers'
        # system-prompt sections after the families' guidance.
        tools.extend(resource_tools({c.name: c for c in connections}))
        sections = prompt_sections({c.name: c.instructions for c in connections})
        context = dataclasses.replace(context, servers=sections)
    agent = Agent(
        session_log,
        runtime.router,
        ToolRegistry(tools),
        ApprovalChain([session.ask_permission]),
        session.cwd,
        session.on_event,
        sandbox=sandbox,  # type: ignore[arg-type]
        context=context,
    )
    agent.hooks = runtime.hooks  # `hooks = true`: the launch directory's hooks files
    if roots:
        from acp_plus.features.additional_directories import responder

        # Before the client's responder: a self-approved write never reaches the client.
        agent.approvals.responders.insert(
            0, responder(session.id, roots, session.cwd, lambda: agent.sandbox)
        )
    session.attach(agent)
    if runtime.goals is not None:  # the goal tools read this session's log; rounds follow
        from acp_plus.live.goal_rounds import GoalRounds

        session.on_close.append(GoalRounds(session, agent, runtime.goals).close)
    if agent.hooks is not None:  # not awaited: its context waits for the next step
        agent.hooks.session_start(agent, source)
    jobs = runtime.jobs
    if jobs is not None:
        jobs.listen(session.id, lambda _owner, text: _job_notice(session, agent, text))
        session.on_close.append(lambda: jobs.close(session.id))
    host_children(session, runtime, agent)  # the `subagent` tools' children, when offered


def _job_notice(session: LiveSession, agent: Agent, text: str) -> None:
    """A job of the session settled unobserved: its notice, as any model context."""
    from acp_plus.core.events import text_block

    notify(session, agent, [text_block(text)], "job-notice")


def _with_roots(context: ModelContext, roots: Sequence[str]) -> ModelContext:
    # The roots are part of the runtime context, so a resume or load declaring other
    # roots gives the model a new runtime-context message (core/context.py commits one
    # whenever the text changes).
    if not roots or context.runtime is None:
        return context
    from acp_plus.features.additional_directories import runtime_note

    return dataclasses.replace(context, runtime=f"{context.runtime}\n\n{runtime_note(roots)}")


async def rollback(session: LiveSession) -> None:
    """Close a session whose activation failed; the request's own error is what counts."""
    try:
        await session.close()
    except Exception as exc:
        log.warning("rollback of session %s failed: %s", session.id, exc)
