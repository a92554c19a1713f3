"""A live session's children (native's subagents): how the `subagent` tools build a child
agent from the session, and how a notice or message reaches a session.

The child runs on the parent's provider and route, tools, sandbox and workspace, with a
log of its own (origin `subagent`, so `session/list` never shows it) and no client to
ask: native pins a delegated child's approval policy to `never`, so anything that needs
approval is refused. Nothing of its work reaches the client; its parent's model hears
of it through the settlement notice (`core/subagents.py`), or a workflow's script through
its `agent()` call (a child started with a schema gets native's `structured_output`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp_plus.core import events as ev
from acp_plus.core.context import _APPROVAL_ASK, _APPROVAL_NEVER, _CWD
from acp_plus.core.history import last_turn
from acp_plus.core.subagents import Host, Source, Subagents
from acp_plus.core.tools.structured import INSTRUCTION, StructuredTools
from acp_plus.core.tools.subagent_family import DELEGATION_TOOLS

if TYPE_CHECKING:
    from acp_plus.core.agent import Agent
    from acp_plus.core.approvals import ApprovalRequest
    from acp_plus.core.events import ApprovalOutcome
    from acp_plus.core.store import SessionLog
    from acp_plus.core.tools.base import ToolRegistry
    from acp_plus.live.runtime import Runtime
    from acp_plus.live.sessions import LiveSession

DELEGATED = (
    "You are a delegated subagent: your permission scope was fixed when you were started "
    "and cannot be widened from inside this session \u2014 operations that require approval "
    "are rejected automatically. When the task needs access beyond that scope, do not "
    "retry the denied operation; state the limitation in your reply so the delegating agent "
    "can handle it."
)


def child_runtime(text: str, tools: list[str], depth: int, max_depth: int) -> str:
    """A child's runtime-context text from its parent's: approvals off, the delegation
    depth of each delegation tool offered (native's `tool:<name>:depth` paragraphs, at
    the maximum only), and native's paragraph for delegated agents."""
    parts = [text.replace(_APPROVAL_ASK, _APPROVAL_NEVER)]
    if depth >= max_depth:
        for name in (n for n in DELEGATION_TOOLS if n in tools):
            parts.append(
                f"Delegation depth for `{name}`: current {depth}, maximum {max_depth}, remaining "
                f"levels 0. Do not call `{name}` at this depth; carry out the work directly."
            )
    parts.append(DELEGATED)
    return "\n\n".join(parts)


def _quoted(path: Path) -> str:
    return json.dumps(str(path), ensure_ascii=False)  # native's JSON.stringify


def moved(runtime: str, old: Path, new: Path) -> str:
    """A runtime-context text naming working directory `new` where it named `old`."""
    return runtime.replace(_CWD.format(cwd=_quoted(old)), _CWD.format(cwd=_quoted(new)))


def context_message(msg_id: str, turn: int, text: str) -> ev.UserMessage:
    return ev.context_message(msg_id, turn, "runtime-context", text)


def completed_turns(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A fork's seed: the log before the turn in flight (native: completed turns only)."""
    starts = [i for i, e in enumerate(events) if e.get("type") == "turn/start"]
    return events[: starts[-1]] if starts else events


def notify(session: LiveSession, agent: Agent, content: list[dict[str, Any]], source: Any) -> None:
    """Model context for a session (a job's or a child's notice, a child's message):
    native injects it into a busy session's next step, and wakes an idle one with a turn
    of its own (the client sees that turn's updates without having prompted)."""
    if agent.steer(content, source) or session.wake(content, source):
        return
    route = session.turn_route()
    if session.closing or route is None or session.run is not None:
        return

    async def wake() -> None:
        await agent.run_turn(content, route, source)
        await session.queue.drain()

    task = asyncio.ensure_future(wake())
    session.commands.add(task)  # cancelled with the session's commands on cancel and close
    task.add_done_callback(session.commands.discard)


def host_children(session: LiveSession, runtime: Runtime, agent: Agent) -> None:
    """Let `agent`'s session delegate, when the `subagent` family is offered."""
    agents = runtime.subagents
    if agents is None:
        return
    spawn, reopen = _spawner(runtime, agents, agent)
    record = agent.commit  # `subagent/started`: no update, no message, kept in the log
    agents.host(session.id, Host(spawn, session.turn_route, _to(session, agent), record, reopen))
    agents.adopt(session.id, agent.log.events())  # a resumed session's earlier children
    agent.waiter = lambda: agents.wait(session.id)

    async def close() -> None:  # the session's children stop with it
        agents.close(session.id)

    session.on_close.append(close)


def _to(session: LiveSession, agent: Agent) -> Any:
    def deliver(content: list[dict[str, Any]], source: Source) -> None:
        notify(session, agent, content, source)

    return deliver


async def _never(request: ApprovalRequest) -> ApprovalOutcome:
    """A delegated child's approval policy, `never`: the answer is a rejection (native's
    words: `the user rejected ...`), and nobody is asked."""
    return "rejected"


def shared_tools(tools: ToolRegistry) -> ToolRegistry:
    """The parent's tools but its session's MCP servers' (their tools, the resource
    tools): native mounts a session's servers for that session's agent alone, so a child
    shows its model neither them nor their prompt sections."""
    from acp_plus.core.tools.base import ToolRegistry

    found = (tools.get(name) for name in tools.names())
    return ToolRegistry(t for t in found if t is not None and not getattr(t, "session_only", False))


def _spawner(
    runtime: Runtime, agents: Subagents, parent: Agent, root: Agent | None = None
) -> tuple[Any, Any]:
    """How `parent` starts children. Its tools, system prompt, runtime context and route
    come from the session's own agent (`root`): a workflow child's own children (its
    agent() calls) are made like it, not from a child's narrowed context."""
    from acp_plus.core.agent import Agent
    from acp_plus.core.approvals import ApprovalChain

    base = root or parent

    def spawn(fork: bool, cwd: str | None, schema: dict[str, Any] | None) -> Agent:
        where = parent.cwd if cwd is None else (parent.cwd / Path(cwd)).resolve()
        log = runtime.store.create(str(where), origin="subagent")
        if fork:
            for event in completed_turns(parent.log.events()):
                log.append(event)
        agent = child(log, where)
        if where != parent.cwd:  # native's note, before the task: the child starts elsewhere
            note = f"The working directory changed from {_quoted(parent.cwd)} to {_quoted(where)}."
            log.append(context_message(str(uuid.uuid4()), last_turn(log.events()) + 1, note))
        if schema is not None:  # native's structured child: the tool, and the demand last
            agent.tools = StructuredTools(agent.tools, schema)
            guidance = (*agent.context.guidance, INSTRUCTION)
            agent.context = dataclasses.replace(agent.context, guidance=guidance)
        return agent

    def reopen(child_id: str) -> Agent:
        log = runtime.store.open(child_id)
        log.acquire()
        return child(log, Path(str(log.header.get("cwd") or parent.cwd)))

    def child(log: SessionLog, where: Path) -> Agent:
        depth = agents.depth(parent.log.id) + 1
        text = base.context.runtime
        if text is not None:
            names = base.tools.names()
            text = child_runtime(moved(text, parent.cwd, where), names, depth, agents.max_depth)
        agent = Agent(
            log,
            base.providers,
            shared_tools(base.tools),
            ApprovalChain([_never]),  # approvals pinned to `never`: refused, nobody asked
            where,
            lambda _event: None,  # the client sees nothing of a child's work
            sandbox=base.sandbox,
            context=dataclasses.replace(base.context, runtime=text, servers=()),
        )
        agent.waiter = lambda: agents.wait(log.id)
        # A child hosts children of its own: its workflow's agent() calls (the subagent
        # tools refuse it by depth before asking for a host).
        spawn, reopen = _spawner(runtime, agents, agent, base)
        route = lambda: agents.route_of(log.id)  # noqa: E731
        agents.host(log.id, Host(spawn, route, lambda _c, _s: None, agent.commit, reopen))
        return agent

    return spawn, reopen
