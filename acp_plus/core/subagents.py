"""Child agents (native's subagents): started by the `subagent` tools, run in the
background on the parent's provider, sandbox and workspace, and heard from again.

A session that may delegate registers a `Host` (how to build a child agent from it, its
route, how a notice reaches it). A child is a core `Agent` with a log of its own; its turn
runs as a task, and when it ends its parent gets native's settlement notice (a user
message: the summary line, then the child's closing text). The parent's turn does not
end while a child of its runs (`wait`): native holds the prompt open and answers the
notice in the same turn. Messages (`send_message`) reach a working agent at its next
step and start a new turn on an idle child, as native's service delivers them.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from acp_plus.core.caller_runs import CallerRun, closing_text, run_result, unstructure

if TYPE_CHECKING:
    from acp_plus.core.agent import Agent, Route

log = logging.getLogger(__name__)

MAX_DEPTH = 1
"""How deep delegation goes (native's default `maxDepth`): a child cannot delegate."""

Source = Literal["subagent-notice", "agent-message"]


STARTED = "subagent/started"
"""The event in a parent's log naming a child it started (no projection, no message)."""


def started(child_id: str, label: str, depth: int) -> dict[str, Any]:
    return {"type": STARTED, "id": child_id, "label": label, "depth": depth}


class SubagentError(Exception):
    """A call the service refuses (an unknown agent, delegation too deep)."""


def return_guidance(parent_id: str) -> str:
    """Native's paragraph after a continuable child's task: report to the parent."""
    quoted = json.dumps(parent_id)
    return (
        f"Your parent agent id is {quoted}. Before you finish, send your result to that agent "
        f'with send_message({{ agent_id: {quoted}, message: "<self-contained result>" }}). The '
        "parent shares your workspace but does not automatically receive your transcript, tool "
        "output, or reasoning. Send earlier messages as well when a finding changes what the "
        "parent should do next; sending a message does not end your turn."
    )


_SUMMARY = {
    "completed": "finished and will do no further work unless you send it more.",
    "aborted": "was stopped before it finished.",
    "max-tokens": "ran out of room before it finished.",
    "refusal": "declined the task.",
    "error": "failed before it finished.",
}


def settlement(child_id: str, kind: str, closing: list[str]) -> list[dict[str, Any]]:
    """Native's notice of a settled child: how its turn ended, then its closing text."""
    summary = _SUMMARY.get(kind, f"ended abnormally ({kind}) before it finished.")
    blocks = [f"Background subagent {child_id} {summary}"]
    blocks += ["Its closing message:", *closing] if closing else ["It left no closing message."]
    return [{"type": "text", "text": text} for text in blocks]


def agent_message(sender: str, text: str) -> list[dict[str, Any]]:
    """What the recipient of `send_message` reads (native's `createAgentMessage`)."""
    return [
        {"type": "text", "text": f"Agent {sender} sent a message: "},
        {"type": "text", "text": text},
    ]


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _last_turn(events: Sequence[Mapping[str, Any]]) -> int:
    return max((int(e.get("turn", 0)) for e in events if e.get("type") == "turn/start"), default=0)


@dataclass
class Host:
    """What a session that may delegate gives its children."""

    spawn: Callable[[bool, str | None, dict[str, Any] | None], Agent]
    """A new child agent over a log of its own: fresh, or (True) seeded with the host's
    completed turns; in the given working directory (None: the host's); given a schema,
    with native's `structured_output` tool (`core/tools/structured.py`)."""
    route: Callable[[], Route | None]
    deliver: Callable[[list[dict[str, Any]], Source], None]
    """A notice or message for the host's session: its running turn's next step, or a
    turn of its own when it is idle."""
    record: Callable[[dict[str, Any]], object]
    """Commit an event to the host's log (`subagent/started`: its children outlive a
    restart, as native's durable children do)."""
    reopen: Callable[[str], Agent]
    """A child of an earlier process, its agent over its stored log (a cold resume)."""


@dataclass
class Child:
    id: str
    parent: str
    label: str
    depth: int
    agent: Agent | None
    """None for a child of an earlier process until a message wakes it (`adopt`)."""
    route: Route | None
    task: asyncio.Task[Any] | None = field(default=None, repr=False)
    caller: bool = False
    """Working for a caller that awaits its result (a workflow's `agent()`): no notice to
    the parent, and the parent's turn is not held for it. Once the caller has it, the
    child is an ordinary one (a message wakes it, its parent hears when it settles)."""
    listed: bool = True
    """Shown by `list_agents` (and kept in the parent's log): not ralph's rounds (rc.8)."""

    @property
    def status(self) -> str:
        return "running" if self.task is not None and not self.task.done() else "inactive"


@dataclass(frozen=True)
class Row:
    """One `list_agents` line."""

    id: str
    label: str
    status: str
    parent: str
    depth: int


class Subagents:
    """Every child agent of the process, and the sessions that may delegate."""

    def __init__(self, max_depth: int = MAX_DEPTH) -> None:
        self.max_depth = max_depth
        self._hosts: dict[str, Host] = {}
        self._children: dict[str, Child] = {}
        self._woken: dict[str, asyncio.Event] = {}

    def host(self, session_id: str, host: Host) -> None:
        self._hosts[session_id] = host

    def close(self, session_id: str) -> None:
        """The session closed: its children stop, and it hears from nobody again."""
        self._hosts.pop(session_id, None)
        for child in [c for c in self._children.values() if c.parent == session_id]:
            if child.task is not None:
                child.task.cancel()
            self.close(child.id)
            if child.agent is not None:
                child.agent.log.release()
            del self._children[child.id]

    def depth(self, session_id: str) -> int:
        child = self._children.get(session_id)
        return 0 if child is None else child.depth

    async def start(
        self, parent: str, label: str, prompt: str, *, fork: bool, cwd: str | None = None
    ) -> str:
        """Start a child of `parent` on `prompt`; its id (its session id) at once."""
        depth = self.depth(parent) + 1
        if depth > self.max_depth:
            raise SubagentError(f"subagent depth {depth} exceeds maxDepth {self.max_depth}")
        host = self._hosts.get(parent)  # a child (below the maximum depth) hosts none yet
        if host is None:
            raise SubagentError("subagent tool requires a calling agent")
        route = host.route()
        if route is None:
            raise SubagentError("no model route to start a subagent on")
        agent = host.spawn(fork, cwd, None)
        child = Child(agent.log.id, parent, label, depth, agent, route)
        self._children[child.id] = child
        host.record(started(child.id, label, depth))
        content = [
            {"type": "text", "text": prompt},
            {"type": "text", "text": return_guidance(parent)},
        ]
        self._run(child, content, None)
        return child.id

    async def start_for_caller(
        self,
        parent: str,
        label: str,
        prompt: str,
        schema: dict[str, Any] | None = None,
        provider: str | None = None,
        model: str | None = None,
        listed: bool = True,
    ) -> CallerRun:
        """Start a child whose result its caller awaits (native's `delivery: "caller"`, a
        workflow's `agent()`): its first message is the prompt alone, no notice reaches
        the parent, and, given a schema, it must report through `structured_output`.
        `provider`/`model` replace the parent's route (a changed one drops the parent's
        effort for the model's default, as native's does). Native sets no depth
        limit here: a child's own workflow starts children of its own."""
        depth = self.depth(parent) + 1
        host = self._hosts.get(parent)
        if host is None:
            raise SubagentError("subagent tool requires a calling agent")
        route = host.route()
        if route is None:
            raise SubagentError("no model route to start a subagent on")
        chosen = (provider or route.provider, model or route.model)
        if chosen != (route.provider, route.model):  # another model: its own default effort
            route = type(route)(*chosen)
        agent = host.spawn(False, None, schema)
        child = Child(agent.log.id, parent, label, depth, agent, route, caller=True, listed=listed)
        self._children[child.id] = child
        if listed:  # as native's catalog has it; rc.8's one-shot ralph rounds are not
            host.record(started(child.id, label, depth))

        async def turn() -> dict[str, Any]:
            kind = "error"
            try:
                kind = str((await agent.run_turn([_text(prompt)], route, None)).get("kind"))
            except asyncio.CancelledError:
                kind = "aborted"  # disposed: the caller no longer waits
            except Exception:
                log.exception("subagent %s failed", child.id)
            events = list(agent.log.events())
            result = run_result(kind, events, _last_turn(events), agent.tools)
            unstructure(agent)
            child.caller = False  # from now on an ordinary child: a message wakes it
            return result

        task = asyncio.ensure_future(turn())
        child.task = task
        return CallerRun(child.id, task)

    def route_of(self, session_id: str) -> Route | None:
        """A child's route (a child hosting its workflow's children starts them on it)."""
        child = self._children.get(session_id)
        return None if child is None else child.route

    def adopt(self, session_id: str, events: Sequence[Mapping[str, Any]]) -> None:
        """The children a session's log says it started (a resumed or loaded session):
        inactive until a message wakes one."""
        for event in events:
            child_id = event.get("id")
            fresh = isinstance(child_id, str) and child_id not in self._children
            if event.get("type") == STARTED and fresh:
                label, depth = str(event.get("label", "")), int(event.get("depth", 1))
                self._children[str(child_id)] = Child(
                    str(child_id), session_id, label, depth, None, None
                )

    def _live(self, child: Child) -> Agent:
        """The child's agent, reopened over its stored log when an earlier process ran it."""
        if child.agent is None:
            host = self._hosts.get(child.parent)
            route = host.route() if host is not None else None
            if host is None or route is None:
                raise SubagentError(f"subagent {json.dumps(child.id)} is unavailable")
            child.agent, child.route = host.reopen(child.id), route
        return child.agent

    def _run(self, child: Child, content: list[dict[str, Any]], source: Source | None) -> None:
        child.task = asyncio.ensure_future(self._turn(child, content, source))

    async def _turn(
        self, child: Child, content: list[dict[str, Any]], source: Source | None
    ) -> None:
        kind = "error"
        agent = self._live(child)
        assert child.route is not None  # set with the agent
        try:
            reason = await agent.run_turn(content, child.route, source)
            kind = str(reason.get("kind", "error"))
        except asyncio.CancelledError:
            raise  # its session closed: nobody is left to tell
        except Exception:
            log.exception("subagent %s failed", child.id)
        events = list(agent.log.events())
        closing = closing_text(events, _last_turn(events)) if kind != "error" else []
        self.deliver(child.parent, settlement(child.id, kind, closing), "subagent-notice")

    def deliver(self, session_id: str, content: list[dict[str, Any]], source: Source) -> None:
        """Hand a notice or message to a session: a child's next step or a new turn of
        its own; a host's through its `deliver`. Whoever waits on it wakes."""
        child = self._children.get(session_id)
        if child is not None:
            if not self._live(child).steer(content, source):
                self._run(child, content, source)
        elif session_id in self._hosts:
            self._hosts[session_id].deliver(content, source)
        else:
            log.info("dropped a %s for closed session %s", source, session_id)
            return
        self._woken.setdefault(session_id, asyncio.Event()).set()

    def running(self, session_id: str) -> bool:
        """Whether a child of the session works that will send it a notice."""
        return any(
            c.parent == session_id and c.status == "running" and not c.caller
            for c in self._children.values()
        )

    async def wait(self, session_id: str) -> bool:
        """Hold a turn that would end while children of its session run, until something
        is delivered to it (True); False at once when none runs."""
        if not self.running(session_id):
            return False
        woken = self._woken.setdefault(session_id, asyncio.Event())
        woken.clear()
        await woken.wait()
        return True

    def listing(self, session_id: str, *, descendants: bool = False) -> list[Row]:
        rows: list[Row] = []
        for child in self._children.values():
            if child.parent == session_id and child.listed:
                rows.append(Row(child.id, child.label, child.status, child.parent, child.depth))
                if descendants:
                    rows.extend(self.listing(child.id, descendants=True))
        return rows

    def send(self, sender: str, agent_id: str, text: str) -> None:
        """Deliver `text` from `sender` to its direct child or its direct parent."""
        child = self._children.get(agent_id)
        mine = self._children.get(sender)
        if not (child is not None and child.parent == sender) and not (
            mine is not None and mine.parent == agent_id
        ):
            raise SubagentError(f"subagent {json.dumps(agent_id)} is unavailable")
        self.deliver(agent_id, agent_message(sender, text), "agent-message")

    def interrupt(self, caller: str, agent_id: str) -> None:
        """Stop the current turn of a descendant of `caller`. Like native's, the request
        is accepted whatever the id: one that names no descendant stops nothing."""
        child = self._children.get(agent_id)
        ancestor = child.parent if child is not None else None
        while ancestor is not None and ancestor != caller:
            above = self._children.get(ancestor)
            ancestor = above.parent if above is not None else None
        if child is not None and ancestor == caller and child.agent is not None:
            child.agent.cancel(keep_inbox=True)  # native's interrupt keeps queued input
