"""The subagent service's children for a caller (core/subagents.py, `start_for_caller`):
what a workflow's `agent()` call reads of a child, and what a caller's child does not do
(notify its parent, hold its parent's turn). Scenarios tools/workflow-agent* compare the
whole path with native live.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from acp_plus.core.agent import Route
from acp_plus.core.caller_runs import run_result
from acp_plus.core.context import ModelContext
from acp_plus.core.subagents import Host, SubagentError, Subagents
from acp_plus.core.tools.base import ToolRegistry
from acp_plus.core.tools.structured import INSTRUCTION, StructuredTools


class _Output:
    def __init__(self, recorded: bool, value: Any = None) -> None:
        self.recorded, self.value = recorded, value


class _Tools:
    def __init__(self, output: _Output | None) -> None:
        if output is not None:
            self.output = output


def _said(*texts: str) -> list[dict[str, Any]]:
    blocks = [{"type": "text", "text": t} for t in texts]
    return [
        {"type": "turn/start", "turn": 1},
        {"type": "assistant/message", "turn": 1, "blocks": [{"type": "text", "text": "old"}]},
        {"type": "assistant/message", "turn": 1, "blocks": blocks},
    ]


def test_a_run_result_names_natives_stop_reasons_and_the_last_text() -> None:
    events = _said("a", "b")
    assert run_result("completed", events, 1, _Tools(None)) == {
        "output": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        "stopReason": "completed",
    }
    kinds = {"aborted": "aborted", "interrupted": "aborted", "blocked": "refusal"}
    kinds |= {"max-tokens": "max-tokens", "error": "error", "odd": "error"}
    for kind, reason in kinds.items():
        assert run_result(kind, events, 1, _Tools(None))["stopReason"] == reason


def test_a_structured_child_without_a_recorded_result_failed() -> None:
    events = _said("in words")
    recorded = run_result("completed", events, 1, _Tools(_Output(True, {"n": 1})))
    assert (recorded["stopReason"], recorded["structured"]) == ("completed", {"n": 1})
    missing = run_result("completed", events, 1, _Tools(_Output(False)))
    assert missing["stopReason"] == "error" and "structured" not in missing
    cut = run_result("max-tokens", events, 1, _Tools(_Output(False)))
    assert cut["stopReason"] == "max-tokens"


class _Log:
    def __init__(self, number: int) -> None:
        self.id = f"child-{number}"
        self.said: list[dict[str, Any]] = []

    def events(self) -> list[dict[str, Any]]:
        return self.said


class _Child:
    """A stand-in child agent: its turn says the prompt back once `release` is set."""

    def __init__(self, number: int, schema: Any) -> None:
        self.log = _Log(number)
        self.tools = _Tools(_Output(False) if schema is not None else None)
        self.release = asyncio.Event()
        self.prompts: list[Any] = []

    async def run_turn(self, content: Any, route: Any, source: Any = None) -> dict[str, str]:
        self.prompts.append(content)
        await self.release.wait()
        self.log.said = _said("echo " + content[0]["text"])
        return {"kind": "completed"}

    def steer(self, content: Any, source: Any = None) -> bool:
        return False  # idle between turns: a message starts a turn of its own


@pytest.fixture
def rig() -> tuple[Subagents, list[_Child], list[Any], list[Any]]:
    agents = Subagents()
    made: list[_Child] = []
    heard: list[Any] = []
    recorded: list[Any] = []

    def spawn(fork: bool, cwd: str | None, schema: Any = None) -> Any:
        made.append(_Child(len(made) + 1, schema))
        return made[-1]

    route = Route("mock", "mock")
    deliver = lambda content, source: heard.append(content)  # noqa: E731
    reopen: Any = lambda _id: None  # noqa: E731 (never asked: no child of an earlier process)
    agents.host("p", Host(spawn, lambda: route, deliver, recorded.append, reopen))
    return agents, made, heard, recorded


async def test_a_callers_child_gets_its_prompt_alone_and_tells_the_parent_nothing(
    rig: tuple[Subagents, list[_Child], list[Any], list[Any]],
) -> None:
    agents, made, heard, recorded = rig
    run = await agents.start_for_caller("p", "flow child 1", "Say it.")
    [child] = made
    await asyncio.sleep(0)
    assert child.prompts == [[{"type": "text", "text": "Say it."}]]  # no return guidance
    assert [(r.id, r.label, r.status) for r in agents.listing("p")] == [
        (run.id, "flow child 1", "running")
    ]
    assert recorded == [
        {"type": "subagent/started", "id": run.id, "label": "flow child 1", "depth": 1}
    ]
    assert not agents.running("p")  # the caller waits for it, not the parent's turn
    child.release.set()
    result = await asyncio.wait_for(run.result(), 5)
    assert result == {
        "output": [{"type": "text", "text": "echo Say it."}],
        "stopReason": "completed",
    }
    assert heard == []  # native's delivery "caller": no settlement notice
    assert agents.listing("p")[0].status == "inactive"
    await run.dispose()


async def test_disposing_a_running_child_stops_it_as_aborted(
    rig: tuple[Subagents, list[_Child], list[Any], list[Any]],
) -> None:
    agents, _, heard, _ = rig
    run = await agents.start_for_caller("p", "flow child 1", "Wait.", {"type": "object"})
    await asyncio.sleep(0)
    await asyncio.wait_for(run.dispose(), 5)
    assert (await run.result())["stopReason"] == "aborted"
    assert agents.listing("p")[0].status == "inactive" and heard == []


async def test_a_session_nobody_hosts_gets_the_services_refusal() -> None:
    agents = Subagents()
    with pytest.raises(SubagentError, match="subagent tool requires a calling agent"):
        await agents.start_for_caller("nobody", "x child 1", "go")


async def test_a_childs_own_workflow_children_have_no_depth_limit(
    rig: tuple[Subagents, list[_Child], list[Any], list[Any]],
) -> None:
    """Native's workflow passes no maxDepth: a child's agent() call starts a grandchild
    (the `subagent` tool, asking for depth 2, is refused)."""
    agents, made, _, _ = rig
    first = await agents.start_for_caller("p", "flow child 1", "Run a workflow.")
    agents.host(first.id, agents._hosts["p"])
    second = await agents.start_for_caller(first.id, "inner child 1", "Go deeper.")
    assert [r.depth for r in agents.listing(first.id)] == [2]
    with pytest.raises(SubagentError, match="subagent depth 2 exceeds maxDepth 1"):
        await agents.start(first.id, "deeper", "go", fork=False)
    for child in made:
        child.release.set()
    assert (await second.result())["stopReason"] == "completed"
    await first.result()


async def test_a_route_option_replaces_the_route_and_drops_the_parents_effort() -> None:
    agents = Subagents()
    routes: list[Any] = []

    class _Recording(_Child):
        async def run_turn(self, content: Any, route: Any, source: Any = None) -> dict[str, str]:
            routes.append(route)
            return {"kind": "completed"}

    spawn: Any = lambda fork, cwd, schema: _Recording(len(routes) + 1, schema)  # noqa: E731
    route = Route("mock", "mock", "high", True)
    agents.host("p", Host(spawn, lambda: route, lambda c, s: None, lambda e: None, spawn))
    for options in [{}, {"model": "mock"}, {"model": "other"}, {"provider": "else"}]:
        run = await agents.start_for_caller("p", "x", "go", None, **options)
        await run.result()
    assert routes == [route, route, Route("mock", "other"), Route("else", "mock")]


async def test_after_its_run_a_structured_child_is_an_ordinary_one() -> None:
    """Native's cold-resumed child: no structured_output, no demand for it, and a
    message wakes it as any child (its parent then waits for its notice)."""
    agents = Subagents()
    made: list[_Child] = []
    plain = ToolRegistry()

    def spawn(fork: bool, cwd: str | None, schema: Any = None) -> Any:
        child = _Child(len(made) + 1, None)
        child.tools = StructuredTools(plain, schema)  # type: ignore[assignment]
        child.context = ModelContext(guidance=("g", INSTRUCTION))  # type: ignore[attr-defined]
        made.append(child)
        return child

    route = Route("mock", "mock")
    agents.host("p", Host(spawn, lambda: route, lambda c, s: None, lambda e: None, spawn))
    run = await agents.start_for_caller("p", "x child 1", "go", {"type": "object"})
    made[0].release.set()
    assert (await run.result())["stopReason"] == "error"  # no result was recorded
    [child] = made
    assert child.tools is plain
    assert child.context.guidance == ("g",)  # type: ignore[attr-defined]
    child.release.clear()
    agents.deliver(run.id, [{"type": "text", "text": "more"}], "agent-message")
    assert agents.running("p")  # an ordinary child's turn: the parent waits for it
    child.release.set()
