"""acp-plus's goal family against native's, as recorded, and its tools over a fake agent.

Definitions, the system-prompt paragraph, the `<goal_round>` prompt and the closing
instructions are read from the native snapshots of real runs
(`snapshots/tools/goal-*/native.yaml`), never from a copy written here.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from acp_plus.core import goals
from acp_plus.core.tools.base import ToolContext
from acp_plus.core.tools.families import ToolSetup, offered, select
from acp_plus.core.tools.goal_family import GOAL_GUIDANCE, GoalBook, goal_tools
from parity.view.dump import load_view

SNAPSHOTS = Path(__file__).parents[4] / "snapshots" / "tools"
FAMILY = ("create_goal", "get_goal", "update_goal")


def _native_bodies() -> list[dict[str, Any]]:
    bodies = []
    for path in sorted(SNAPSHOTS.glob("goal-*/native.yaml")):
        view = load_view(path.read_text())
        bodies += [r["body"] for r in view.get("model") or [] if "tools" in (r.get("body") or {})]
    return bodies


NATIVE = _native_bodies()


def _native_texts() -> list[str]:
    return [
        block["text"]
        for body in NATIVE
        for message in body["messages"]
        if message["role"] == "user"
        for block in message["content"]
        if block.get("type") == "text"
    ]


@pytest.mark.parametrize("name", FAMILY)
def test_each_definition_is_natives_byte_for_byte(name: str) -> None:
    tools = {t.name: t for t in goal_tools(GoalBook())}
    tool = tools[name]
    ours = {"name": name, "description": tool.description, "parameters": tool.parameters}
    seen = [t for body in NATIVE for t in body["tools"] if t["name"] == name]
    assert seen and all(t == ours for t in seen)


def test_the_guidance_is_natives_paragraph_and_the_family_is_offered() -> None:
    offer = offered(select(["goal"]), ToolSetup())
    assert [t.name for t in offer.tools] == list(FAMILY)
    assert offer.guidance == GOAL_GUIDANCE and not offer.missing
    # Last, or followed by the paragraph of a family offered beside it (a subagent's).
    paragraph = "\n\n" + GOAL_GUIDANCE[0]
    assert NATIVE and all(
        body["system"].endswith(paragraph) or paragraph + "\n\n" in body["system"]
        for body in NATIVE
    )


def test_the_round_prompt_and_closing_instructions_are_natives() -> None:
    texts = _native_texts()
    goal = {"objective": "Fix the typo", "maxGoalRounds": 5}
    assert goals.round_prompt(goal, 2) in texts
    assert goals.wrapup("Fix the typo") in texts
    assert goals.wrapup("Fix the typo", " the file is locked ") in texts


class Host:
    """A session's agent as the goal tools see it: a log to fold, commit and defer."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.log = events
        self.deferred: list[dict[str, Any]] = []

    def commit(self, event: Any) -> dict[str, Any]:
        self.log.append(dict(event))
        return dict(event)

    def defer(self, note: Any) -> None:
        self.deferred.append(note)

    def events(self) -> list[dict[str, Any]]:
        return list(self.log)


HUMAN = [{"type": "turn/start", "turn": 1}, {"type": "user/message", "turn": 1, "content": []}]


def _call(book: GoalBook, name: str, args: dict[str, Any]) -> tuple[Any, bool]:
    tool = {t.name: t for t in goal_tools(book)}[name]
    ctx = ToolContext("s", Path("/w"), "c", 1)
    result = asyncio.run(tool.run(args, ctx))
    text = result.content[0]["text"]
    return (text if result.is_error else json.loads(text)), result.is_error


def test_a_person_creates_and_the_round_completes_with_a_closing_instruction() -> None:
    book, host = GoalBook(), Host(list(HUMAN))
    session = book.attach("s", host, host.events)
    created, failed = _call(book, "create_goal", {"objective": " Fix it ", "max_goal_rounds": 2})
    assert not failed and created["activation"] == "armed"
    assert created["goal"]["objective"] == "Fix it" and session.activation == "armed"
    goal_id = created["goal"]["id"]
    # The agent's own round: no person's message in the turn, only the round's.
    round_msg = {"type": "user/message", "turn": 2, "source": goals.ROUND_SOURCE}
    round_msg["goal"] = {"id": goal_id, "revision": 1, "round": 1}
    host.log += [{"type": "turn/start", "turn": 2}, round_msg]
    refused, failed = _call(book, "create_goal", {"objective": "Another"})
    assert failed and refused == f"Error: {goals.HUMAN_REQUIRED}"
    early, failed = _call(
        book,
        "update_goal",
        {"goal_id": goal_id, "revision": 1, "action": "blocked", "blocked_reason": "x"},
    )
    assert failed and early.endswith("at least 3 consecutive goal rounds; current round is 1")
    done, failed = _call(
        book, "update_goal", {"goal_id": goal_id, "revision": 1, "action": "complete"}
    )
    assert not failed and done["goal"]["phase"] == "complete" and done["activation"] == "disarmed"
    assert [n["source"] for n in host.deferred] == [goals.NOTICE_SOURCE]
    assert host.deferred[0]["turn"] == 2
    assert host.deferred[0]["content"][0]["text"] == goals.wrapup("Fix it")


def test_a_person_completing_gets_no_closing_instruction_and_a_stale_round_no_authority() -> None:
    book, host = GoalBook(), Host(list(HUMAN))
    book.attach("s", host, host.events)
    goal_id = _call(book, "create_goal", {"objective": "Fix it"})[0]["goal"]["id"]
    edited, _ = _call(
        book, "update_goal", {"goal_id": goal_id, "revision": 1, "action": "edit", "objective": "B"}
    )
    assert edited["goal"]["revision"] == 2
    stale_round = {"type": "user/message", "turn": 2, "source": goals.ROUND_SOURCE}
    stale_round["goal"] = {"id": goal_id, "revision": 1, "round": 1}
    host.log += [{"type": "turn/start", "turn": 2}, stale_round]
    refused, failed = _call(
        book, "update_goal", {"goal_id": goal_id, "revision": 2, "action": "complete"}
    )
    assert failed and refused == f"Error: {goals.COMPLETION_REQUIRED}"
    host.log += [{"type": "turn/start", "turn": 3}, {"type": "user/message", "turn": 3}]
    done, failed = _call(
        book, "update_goal", {"goal_id": goal_id, "revision": 2, "action": "complete"}
    )
    assert not failed and done["goal"]["phase"] == "complete" and not host.deferred


def test_a_session_brought_back_is_disarmed_and_a_closed_one_forgotten() -> None:
    book, host = GoalBook(), Host(list(HUMAN))
    first = book.attach("s", host, host.events)
    created = _call(book, "create_goal", {"objective": "Fix it"})[0]
    again = book.attach("s", host, host.events)  # session/resume: the same log, a new session
    shown, _ = _call(book, "get_goal", {})
    assert shown["goal"] == created["goal"] and shown["activation"] == "disarmed"
    book.detach("s", first)  # an older registration's close leaves the newer one
    assert book.get("s") is again
    book.detach("s", again)
    missing, failed = _call(book, "get_goal", {})
    assert failed and missing == "Error: goal tools require a calling agent"
