"""The driver's pure helpers: placeholders, labels, and answers to client requests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from parity.driver.answers import (
    elicitation_answer,
    fs_answer,
    permission_answer,
    permission_policy,
    permission_titles,
    pick_answer,
)
from parity.driver.state import InFlight
from parity.driver.steps import step_label, substitute
from tests.support.driver import st

OPTIONS = [
    {"optionId": "proceed_always", "name": "Always", "kind": "allow_always"},
    {"optionId": "proceed_once", "name": "Once", "kind": "allow_once"},
    {"optionId": "cancel", "name": "No", "kind": "reject_once"},
]


def test_substitute_replaces_known_placeholders_recursively_and_keeps_other_braces() -> None:
    table = {"workdir": "/w", "session:s1": "id-1"}
    value = {"a": ["{workdir}/x", {"b": "{session:s1}"}], "json": '{"k": "{v}"}', "n": 3}
    assert substitute(value, table.__getitem__) == {
        "a": ["/w/x", {"b": "id-1"}],
        "json": '{"k": "{v}"}',
        "n": 3,
    }


def test_step_labels() -> None:
    assert step_label(st("prompt", session="s1", text="go")) == 'prompt s1 "go"'
    assert step_label(st("prompt", session="s1", content=[])) == "prompt s1 <content>"
    assert step_label(st("request", method="x/y")) == "request x/y"
    assert step_label(st("new_session", as_="s2")) == "new_session s2"
    assert step_label(st("close_session", session="s2")) == "close_session s2"
    assert step_label(st("wait", update="plan", count=2)) == "wait count=2, update=plan"
    waiting = st("wait", update="plan", session="s1")
    assert step_label(waiting) == "wait session=s1, update=plan"
    assert step_label(st("initialize", {})) == "initialize"


def test_pick_answer_repeats_the_last() -> None:
    assert [pick_answer(["a", "b"], i) for i in range(4)] == ["a", "b", "b", "b"]
    assert pick_answer("a", 7) == "a"


@pytest.mark.parametrize(
    ("answer", "outcome"),
    [
        ("allow-once", {"outcome": "selected", "optionId": "proceed_once"}),
        ("reject-once", {"outcome": "selected", "optionId": "cancel"}),
        ("cancelled", {"outcome": "cancelled"}),
    ],
)
def test_permission_answer_selects_by_kind_not_by_id(answer: str, outcome: Any) -> None:
    reply = permission_answer(7, {"options": OPTIONS}, answer)
    assert reply == {"jsonrpc": "2.0", "id": 7, "result": {"outcome": outcome}}


def test_permission_answer_without_the_wanted_kind_cancels_and_error_is_32603() -> None:
    only_reject = {"options": [OPTIONS[2]]}
    assert permission_answer(1, only_reject, "allow-once")["result"] == {
        "outcome": {"outcome": "cancelled"}
    }
    assert permission_answer(1, only_reject, "error")["error"] == {
        "code": -32603,
        "message": "Internal error",
    }


def test_permission_titles_use_the_request_or_the_earlier_tool_call() -> None:
    assert permission_titles({"toolCall": {"toolCallId": "c1"}}, {"c1": "mcp__parity__echo"}) == {
        "mcp__parity__echo",
        "echo",
    }
    assert permission_titles({"toolCall": {"title": "fs/write"}}, {}) == {"fs/write", "write"}
    assert permission_titles("garbage", {}) == set()


def test_permission_policy_per_tool_with_default() -> None:
    policy = {"by_tool": {"echo": "allow-once"}, "default": ["reject-once"]}
    assert permission_policy(policy, {"echo"}) == ("tool:echo", "allow-once")
    assert permission_policy(policy, {"other"}) == ("default", ["reject-once"])
    assert permission_policy({"by_tool": {}}, set()) == ("default", "cancelled")
    assert permission_policy(["allow-once"], {"echo"}) == ("all", ["allow-once"])


def test_permission_policy_by_prompt_first_then_tool_then_default() -> None:
    policy = {"by_prompt": {"p1": "error"}, "by_tool": {"echo": "allow-once"}}
    assert permission_policy(policy, {"echo"}, "p1") == ("prompt:p1", "error")
    assert permission_policy(policy, {"echo"}, "p2") == ("tool:echo", "allow-once")
    assert permission_policy(policy, set(), None) == ("default", "cancelled")
    assert permission_policy({"default": "reject-once"}, set()) == ("default", "reject-once")
    held = {"answer": "allow-once", "after": {"ms": 5}}
    assert permission_policy(held, set(), "p1") == ("all", held)


def test_a_second_prompt_in_a_busy_session_does_not_take_its_turn_over() -> None:
    """`parity explore` sends a prompt to a session whose first prompt waits for its
    permission answer (a branch's `after`): the agent refuses it ("already in flight")
    at once. The first prompt still owns the session, so its request gets the first
    prompt's answer (by prompt), even when the trigger sent the second prompt before
    the answer was chosen; and once the second ended, the first is still in flight."""
    flying = InFlight()
    flying.start("s1", "p2")
    flying.start("s1", "p3")
    assert flying.owner("s1") == "p2"
    flying.end("s1", "p3")
    assert flying.owner("s1") == "p2"
    flying.end("s1", "p2")
    assert flying.owner("s1") is None and flying.prompts == {}
    # Queued instead: once the first ends, the turn is the second's.
    flying.start("s1", "p2")
    flying.start("s1", "p3")
    flying.end("s1", "p2")
    assert flying.owner("s1") == "p3"
    assert flying.owner("s2") is None


def test_elicitation_answers() -> None:
    assert elicitation_answer(1, "accept")["result"] == {"action": "accept", "content": {}}
    assert elicitation_answer(1, {"action": "accept", "content": {"a": 1}})["result"] == {
        "action": "accept",
        "content": {"a": 1},
    }
    assert elicitation_answer(1, "decline")["result"] == {"action": "decline"}
    assert elicitation_answer(1, None)["result"] == {"action": "cancel"}


def test_fs_answer_reads_lines_and_refuses_paths_outside(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("1\n2\n3\n4\n")
    read = {"path": str(tmp_path / "f.txt"), "line": 2, "limit": 2}
    assert fs_answer(1, "fs/read_text_file", read, tmp_path)["result"] == {"content": "2\n3\n"}
    escape = {"path": str(tmp_path / ".." / "x"), "content": "no"}
    assert fs_answer(1, "fs/write_text_file", escape, tmp_path)["error"]["code"] == -32602
    relative = {"path": "f.txt"}
    assert fs_answer(1, "fs/read_text_file", relative, tmp_path)["error"]["message"] == (
        "Invalid params: path must be absolute"
    )
    (tmp_path / "link").symlink_to("/etc")
    through_link = {"path": str(tmp_path / "link" / "hostname")}
    assert fs_answer(1, "fs/read_text_file", through_link, tmp_path)["error"]["code"] == -32602


def test_fs_write_failure_is_an_internal_error(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    params = {"path": str(tmp_path / "dir"), "content": "x"}
    error = fs_answer(1, "fs/write_text_file", params, tmp_path)["error"]
    assert error["code"] == -32603
    assert error["message"].startswith("Internal error: [Errno 21] Is a directory")
