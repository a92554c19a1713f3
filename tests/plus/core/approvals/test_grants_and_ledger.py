"""Grants from approved plans, and the ledger's join of decisions to tool calls."""

from __future__ import annotations

import json
from pathlib import Path

from acp_plus.core.approvals import ledger
from acp_plus.core.approvals.grants import grant_event, grants, matching, plan_items


def test_plan_items_are_checked() -> None:
    assert plan_items({}) == "items must be a non-empty list of {tool, path?, description}"
    assert (
        plan_items({"items": [{"tool": "write"}]})
        == "item 1: description must be a non-empty string"
    )
    assert plan_items({"items": [{"tool": "w", "description": "d", "path": 3}]}) == (
        "item 1: path must be a string"
    )
    ok = [{"tool": "write", "path": "docs/*", "description": "docs"}]
    assert plan_items({"items": ok}) == ok


def test_a_path_grant_covers_only_paths_inside_it(tmp_path: Path) -> None:
    found = grants(
        [grant_event(1, "plan", {"tool": "write", "path": "docs/*", "description": "d"})]
    )
    assert matching(found, "write", {"file_path": "docs/a.md"}, tmp_path) is not None
    assert matching(found, "write", {"file_path": "docs/../.env"}, tmp_path) is None
    assert matching(found, "write", {"file_path": "other.md"}, tmp_path) is None
    assert matching(found, "edit", {"file_path": "docs/a.md"}, tmp_path) is None
    assert matching(found, "write", {}, tmp_path) is None  # no path: not covered


def test_a_tool_grant_covers_every_call_of_the_tool(tmp_path: Path) -> None:
    found = grants([grant_event(1, "plan", {"tool": "mcp__*", "description": "d"})])
    assert matching(found, "mcp__srv__x", {"q": 1}, tmp_path) is not None


EVENTS = [
    {"type": "tool/call", "turn": 1, "callId": "c1", "name": "write", "arguments": "{}"},
    {"type": "approval/asked", "turn": 1, "callId": "c1", "tool": "write", "reason": "why"},
    {"type": "approval/decided", "turn": 1, "callId": "c1", "outcome": "allowed-once"},
    {
        "type": "approval/decided",
        "turn": 1,
        "callId": "c2",
        "outcome": "rejected",
        "source": "rule",
        "rule": "r",
        "reason": "no",
    },
    {"type": "tool/call", "turn": 2, "callId": "c3", "name": "a", "arguments": "{}"},
    {"type": "tool/call", "turn": 2, "callId": "c3", "name": "b", "arguments": "{}"},
    {
        "type": "approval/decided",
        "turn": 2,
        "callId": "c3",
        "outcome": "allowed-once",
        "source": "grant",
        "grant": 1,
    },
    grant_event(1, "p", {"tool": "write", "path": "docs/*", "description": "docs"}),
]


def test_rows_join_and_mark_what_they_cannot_join() -> None:
    rows = ledger.rows(EVENTS)
    assert [(r.n, r.joined, r.tool, r.source, r.question) for r in rows] == [
        (1, True, "write", "client", "why"),
        (2, False, None, "rule", None),
        (3, False, None, "grant", None),
    ]
    assert rows[1].unjoined == "no tool call c2 in turn 1"
    assert rows[2].unjoined == "2 tool calls c3 in turn 2"  # never a guess between them


def test_json_and_text_forms() -> None:
    document = json.loads(ledger.as_json(EVENTS))
    assert document["decisions"][1]["detail"] == {"rule": "r", "reason": "no"}
    assert document["decisions"][1]["callId"] == "c2"
    assert document["grants"] == [
        {"n": 1, "tool": "write", "path": "docs/*", "description": "docs", "callId": "p"}
    ]
    text = ledger.as_text(EVENTS)
    assert "  2. turn 1 c2 [not joined: no tool call c2 in turn 1]: rejected (rule r)" in text
    assert "  1. write on docs/*: docs" in text
