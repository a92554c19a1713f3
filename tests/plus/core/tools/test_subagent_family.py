"""acp-plus's `subagent` family against native's, as recorded, and the child service.

Definitions, the system-prompt paragraph and the child's runtime context are read from
native's snapshots of real runs (`snapshots/tools/subagent-*/native.yaml`), never from a
copy written here.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from acp_plus.core.agent import Route
from acp_plus.core.subagents import Host, SubagentError, Subagents, settlement
from acp_plus.core.tools.base import ToolContext
from acp_plus.core.tools.subagent_family import subagent_guidance, subagent_tools
from acp_plus.server.children import child_runtime, completed_turns
from parity.view.dump import load_view

SNAPSHOTS = Path(__file__).parents[4] / "snapshots" / "tools"
FAMILY = ("subagent", "subagent_fork", "list_agents", "send_message", "interrupt_agent")


def _native(scenario: str) -> list[dict[str, Any]]:
    view = load_view((SNAPSHOTS / scenario / "native.yaml").read_text())
    # The main agent's requests first, then each child's (the view's order).
    return [r for r in view["model"] if r["path"] == "/stream"]


MAIN = _native("subagent-main")


@pytest.mark.parametrize("name", FAMILY)
def test_each_definition_is_natives_byte_for_byte(name: str) -> None:
    tools = {t.name: t for t in subagent_tools(Subagents())}
    ours = {
        "name": name,
        "description": tools[name].description,
        "parameters": tools[name].parameters,
    }
    (seen,) = [t for t in MAIN[0]["body"]["tools"] if t["name"] == name]
    assert seen == ours


def test_the_guidance_is_natives_paragraph() -> None:
    (paragraph,) = subagent_guidance(FAMILY)
    assert MAIN[0]["body"]["system"].endswith("\n\n" + paragraph)
    assert subagent_guidance(["list_agents"]) == ()


def test_a_childs_runtime_context_and_the_notice_are_natives() -> None:
    parent = MAIN[0]["body"]["messages"][1]["content"][0]["text"]
    (child,) = [r for r in MAIN if r.get("agent") == 1]
    seen = child["body"]["messages"][1]["content"][0]["text"]
    assert child_runtime(parent, list(FAMILY), 1, 1) == seen
    notice = [r for r in MAIN if not r.get("agent")][-1]["body"]["messages"][-1]["content"]
    assert settlement("<session:2>", "completed", ["child"]) == notice
    unscripted = [r for r in _native("subagent-unscripted-child") if not r.get("agent")]
    failed = unscripted[-1]["body"]["messages"][-1]["content"]
    assert settlement("<session:2>", "error", []) == failed


def test_a_fork_is_seeded_with_the_completed_turns_only() -> None:
    events: list[dict[str, Any]] = [
        {"type": "turn/start"},
        {"type": "turn/end"},
        {"type": "turn/start"},
    ]
    assert completed_turns(events) == events[:2]


class _Child:
    """A stand-in child agent: its turn ends when `release` is set."""

    def __init__(self, number: int) -> None:
        self.log = type("Log", (), {"id": f"child-{number}", "events": lambda _: []})()
        self.release = asyncio.Event()
        self.steered: list[Any] = []
        self.cancelled = False
        self.running = False

    async def run_turn(self, content: Any, route: Any, source: Any = None) -> dict[str, str]:
        self.running = True
        try:
            await self.release.wait()
        finally:
            self.running = False
        return {"kind": "aborted" if self.cancelled else "completed"}

    def steer(self, content: Any, source: Any = None) -> bool:
        if self.running:
            self.steered.append(content)
        return self.running

    def cancel(self, keep_inbox: bool = False) -> None:
        self.cancelled = True
        self.release.set()


async def test_children_are_listed_messaged_interrupted_and_waited_for() -> None:
    agents = Subagents()
    made: list[_Child] = []
    heard: list[Any] = []

    def spawn(fork: bool, cwd: str | None, schema: Any = None) -> Any:
        made.append(_Child(len(made) + 1))
        return made[-1]

    recorded: list[Any] = []
    route = Route("mock", "mock")
    reopen = lambda _id: spawn(False, None)  # noqa: E731
    agents.host(
        "p", Host(spawn, lambda: route, lambda c, s: heard.append((s, c)), recorded.append, reopen)
    )
    tools = {t.name: t for t in subagent_tools(agents)}
    ctx = ToolContext("p", Path("/w"), "call-1", 1)
    started = await tools["subagent"].run({"description": "Say", "prompt": "go"}, ctx)
    assert started.content[0]["text"] == "started subagent child-1"
    await asyncio.sleep(0)  # the child's turn begins
    listing = await tools["list_agents"].run({}, ctx)
    assert listing.content[0]["text"] == "child-1 [running] \u2014 Say"
    sent = await tools["send_message"].run({"agent_id": "child-1", "message": "hi"}, ctx)
    assert sent.content[0]["text"] == "message delivered to agent child-1"
    assert made[0].steered[0][1] == {"type": "text", "text": "hi"}
    stray = await tools["send_message"].run({"agent_id": "nobody", "message": "hi"}, ctx)
    assert stray.is_error and stray.content[0]["text"] == 'Error: subagent "nobody" is unavailable'
    unknown = await tools["interrupt_agent"].run({"agent_id": "nobody"}, ctx)
    assert unknown.content[0]["text"] == "interrupt requested for agent nobody"  # as native
    waiting = asyncio.ensure_future(agents.wait("p"))
    await asyncio.sleep(0)
    assert not waiting.done()
    stop = await tools["interrupt_agent"].run({"agent_id": "child-1"}, ctx)
    assert stop.content[0]["text"] == "interrupt requested for agent child-1"
    assert await asyncio.wait_for(waiting, 1) is True
    assert heard == [("subagent-notice", settlement("child-1", "aborted", []))]
    assert (
        (await tools["list_agents"].run({}, ctx))
        .content[0]["text"]
        .endswith("[inactive] \u2014 Say")
    )
    assert await agents.wait("p") is False
    with pytest.raises(SubagentError, match=r"^subagent depth 2 exceeds maxDepth 1$"):
        await agents.start("child-1", "deeper", "go", fork=False)
    # The parent's log names the child, so a later process knows it, inactive, and a
    # message wakes it over its stored log.
    assert recorded == [{"type": "subagent/started", "id": "child-1", "label": "Say", "depth": 1}]
    later = Subagents()
    later.host(
        "p", Host(spawn, lambda: route, lambda c, s: heard.append((s, c)), recorded.append, reopen)
    )
    later.adopt("p", recorded)
    assert [(r.id, r.status) for r in later.listing("p")] == [("child-1", "inactive")]
    later.send("p", "child-1", "again")  # an idle child: a new turn, not a steer
    await asyncio.sleep(0)
    assert made[-1].steered == [] and made[-1].running
    waiting = asyncio.ensure_future(later.wait("p"))
    await asyncio.sleep(0)
    made[-1].release.set()
    assert await asyncio.wait_for(waiting, 1) is True
    assert heard[-1] == ("subagent-notice", settlement("child-1", "completed", []))


def test_a_rejected_bash_escalation_is_worded_as_natives() -> None:
    from acp_plus.core.tools.bash import BashTool
    from acp_plus.core.tools.job_table import JobTable

    requests = _native("subagent-approvals")
    seen = [
        m["content"][0]["text"]
        for r in requests
        for m in r["body"]["messages"]
        if m.get("toolCallId") == "call-3"
    ]
    args = {"command": "x", "sandbox_permissions": "danger-full-access", "justification": "j"}
    assert seen and seen[0] == BashTool(JobTable()).refusal(args, "rejected")
    assert BashTool(JobTable()).refusal({"command": "x"}, "rejected") is None
