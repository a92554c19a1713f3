"""Conformance findings on hand-built transcripts, against the pinned ACP schema.

The schema is fetched on first use (`parity.checks.acp_schema.fetch`, idempotent); without npm
these tests fail with the fetch error rather than skip, because schema validation is a
feature, not an option.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from parity.checks.acp_schema import fetch, load_schema
from parity.checks.conformance import Finding, SchemaIndex, findings
from parity.core.transcript import Frame, StepRecord, Transcript

S1 = "sess-1"
NO_CAPS: dict[str, Any] = {}


@pytest.fixture(scope="module")
def index() -> SchemaIndex:
    return SchemaIndex(load_schema(fetch()))


def rpc(**body: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", **body}


def update(update: dict[str, Any], session: str = S1) -> tuple[str, Any]:
    return "in", rpc(method="session/update", params={"sessionId": session, "update": update})


def text(t: str) -> dict[str, Any]:
    return {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": t}}


def transcript(*steps: list[tuple[str, Any]], after: list[tuple[str, Any]] = ()) -> Transcript:  # type: ignore[assignment]
    """Steps of (direction, message) frames; a str message is a raw unparsable line."""
    t = Transcript(scenario="unit/conformance", target="plus", run_id="r")

    def add(direction: str, message: Any) -> int:
        seq = len(t.frames)
        raw = message if isinstance(message, str) else json.dumps(message)
        t.frames.append(
            Frame(
                seq=seq,
                t=float(seq),
                direction="in" if direction == "in" else "out",
                raw=raw,
                message=None if isinstance(message, str) else message,
                parse_error="Expecting value" if isinstance(message, str) else None,
            )
        )
        return seq

    for i, frames in enumerate(steps):
        record = StepRecord(index=i, kind="step", label=f"step {i + 1}")
        record.frames = [add(d, m) for d, m in frames]
        sent = [m for d, m in frames if d == "out" and isinstance(m, dict) and "id" in m]
        if sent and "method" in sent[0]:
            record.request = sent[0]
            record.response = next(
                (
                    m
                    for d, m in frames
                    if d == "in"
                    and isinstance(m, dict)
                    and "method" not in m
                    and m.get("id") == sent[0]["id"]
                ),
                None,
            )
        t.steps.append(record)
    for d, m in after:
        add(d, m)
    return t


def prompt_turn(*updates: tuple[str, Any], stop: Any = "end_turn") -> list[tuple[str, Any]]:
    return [
        (
            "out",
            rpc(
                id=3,
                method="session/prompt",
                params={"sessionId": S1, "prompt": [{"type": "text", "text": "go"}]},
            ),
        ),
        *updates,
        ("in", rpc(id=3, result={"stopReason": stop})),
    ]


def handshake() -> list[list[tuple[str, Any]]]:
    return [
        [
            (
                "out",
                rpc(
                    id=1,
                    method="initialize",
                    params={"protocolVersion": 1, "clientCapabilities": {}},
                ),
            ),
            (
                "in",
                rpc(
                    id=1,
                    result={
                        "protocolVersion": 1,
                        "agentCapabilities": {
                            "mcpCapabilities": {"http": True},
                            "promptCapabilities": {
                                "image": False,
                                "audio": False,
                                "embeddedContext": False,
                            },
                            "sessionCapabilities": {"close": {}, "list": {}, "resume": {}},
                        },
                        "agentInfo": {"name": "deepseek-harness-acp", "version": "0.0.1"},
                        "authMethods": [],
                    },
                ),
            ),
        ],
        [
            ("out", rpc(id=2, method="session/new", params={"cwd": "/w", "mcpServers": []})),
            ("in", rpc(id=2, result={"sessionId": S1, "configOptions": []})),
        ],
    ]


def kinds(found: list[Finding]) -> list[tuple[str, int | None, int | None]]:
    return [(f.kind, f.step, f.seq) for f in found]


def test_a_conforming_tool_turn_has_no_findings(index: SchemaIndex) -> None:
    t = transcript(
        *handshake(),
        prompt_turn(
            update(
                {
                    "sessionUpdate": "agent_thought_chunk",
                    "messageId": "m1",
                    "content": {"type": "text", "text": "hm"},
                }
            ),
            update({"sessionUpdate": "usage_update", "used": 12, "size": 1024}),
            update(
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "call-1",
                    "title": "echo",
                    "kind": "other",
                    "status": "in_progress",
                    "rawInput": {},
                }
            ),
            update(
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": "call-1",
                    "status": "completed",
                    "content": [
                        {"type": "content", "content": {"type": "text", "text": "tool result"}}
                    ],
                }
            ),
            update(text("done")),
        ),
    )
    assert findings(t, NO_CAPS, schema=index) == []


def test_malformed_session_update_is_a_schema_finding(index: SchemaIndex) -> None:
    t = transcript(
        *handshake(),
        prompt_turn(
            update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text"}}),
            update({"sessionUpdate": "usage_update", "used": "twelve", "size": 1024}),
            update({"sessionUpdate": "no_such_update"}),
        ),
    )
    found = findings(t, NO_CAPS, schema=index)
    assert kinds(found) == [("schema", 3, 5), ("schema", 3, 6), ("schema", 3, 7)]
    head = "session/update notification: SessionNotification.update"
    assert [f.message for f in found[:2]] == [
        f"{head}.content: 'text' is a required property",
        f"{head}.used: 'twelve' is not of type 'integer'",
    ]
    assert found[2].message.startswith(
        "session/update notification: SessionNotification.update: "
        "sessionUpdate 'no_such_update' is not one of \"agent_message_chunk\""
    )


def test_responses_are_checked_by_the_method_they_answer(index: SchemaIndex) -> None:
    t = transcript(
        *handshake(),
        prompt_turn(stop="finished"),
        [
            ("out", rpc(id=4, method="session/list", params={})),
            ("in", rpc(id=4, result={"sessions": [{"cwd": "/w"}]})),
            ("out", rpc(id=5, method="bogus", params={})),
            ("in", rpc(id=5, error={"code": "-32601", "message": "Method not found"})),
        ],
    )
    found = findings(t, NO_CAPS, schema=index)
    assert kinds(found) == [("schema", 3, 5), ("schema", 4, 7), ("schema", 4, 9)]
    assert found[0].message == (
        "session/prompt response: PromptResponse.stopReason: 'finished' is not one of "
        '"cancelled", "end_turn", "max_tokens", "max_turn_requests", "refusal"'
    )
    assert found[1].message.startswith("session/list response: ListSessionsResponse")
    assert found[2].message.startswith("bogus response: Error")


def test_calls_the_client_did_not_advertise(index: SchemaIndex) -> None:
    calls = [
        ("in", rpc(id=10, method="fs/read_text_file", params={"sessionId": S1, "path": "/w/a"})),
        (
            "in",
            rpc(
                id=11,
                method="fs/write_text_file",
                params={"sessionId": S1, "path": "/w/a", "content": "x"},
            ),
        ),
        ("in", rpc(id=12, method="terminal/create", params={"sessionId": S1, "command": "ls"})),
        (
            "in",
            rpc(
                id=13,
                method="elicitation/create",
                params={
                    "sessionId": S1,
                    "mode": "form",
                    "message": "name?",
                    "requestedSchema": {"type": "object", "properties": {}},
                },
            ),
        ),
    ]
    t = transcript(*handshake(), prompt_turn(*calls))
    found = findings(t, NO_CAPS, schema=index)
    assert [f.kind for f in found] == ["unadvertised_call"] * 4
    assert "fs/write_text_file" in found[1].message
    caps = {
        "fs": {"readTextFile": True, "writeTextFile": True},
        "terminal": True,
        "elicitation": {"form": {}},
    }
    assert findings(t, caps, schema=index) == []
    only_read = findings(t, {"fs": {"readTextFile": True}}, schema=index)
    assert [f.seq for f in only_read] == [6, 7, 8]


def test_tool_call_update_for_an_unknown_call(index: SchemaIndex) -> None:
    t = transcript(
        *handshake(),
        prompt_turn(
            update(
                {"sessionUpdate": "tool_call_update", "toolCallId": "ghost", "status": "completed"}
            ),
            update({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "t"}),
            update(
                {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed"}
            ),
            update(
                {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed"},
                session="sess-2",
            ),
        ),
    )
    found = findings(t, NO_CAPS, schema=index)
    assert kinds(found) == [("unknown_tool_call", 3, 5), ("unknown_tool_call", 3, 8)]


def test_late_updates_after_the_prompt_response(index: SchemaIndex) -> None:
    t = transcript(
        *handshake(),
        [update(text("before any prompt"))],
        prompt_turn(),
        [
            (
                "out",
                rpc(
                    id=9,
                    method="session/load",
                    params={"sessionId": S1, "cwd": "/w", "mcpServers": []},
                ),
            ),
            update(text("replayed while loading")),
            ("in", rpc(id=9, result={})),
        ],
        after=[
            update({"sessionUpdate": "session_info_update", "title": "late title"}),
            update(text("other"), "s2"),
        ],
    )
    found = findings(t, NO_CAPS, schema=index)
    # The view shows it as trailing the load, the last step that answered about sess-1.
    assert kinds(found) == [("late_update", 5, 10)]
    assert "session_info_update for session sess-1" in found[0].message


def test_lines_that_are_not_json_rpc(index: SchemaIndex) -> None:
    t = transcript(
        *handshake(),
        [
            ("in", "Loading model..."),
            ("in", ["array"]),
            ("in", {"jsonrpc": "1.0", "method": "x"}),
            ("in", rpc(id=2, result={}, error={"code": 1, "message": "both"})),
            ("in", rpc(id=77, result={})),
            ("in", rpc(id=2, result={"sessionId": S1})),
            ("in", rpc(method="agent/hello", params={})),
            ("in", rpc(method="_vendor/hello", params={})),
            ("out", "{garbage the harness sent on purpose"),
            ("in", rpc(id=None, error={"code": -32700, "message": "Parse error"})),
        ],
    )
    t.frames.append(
        Frame(
            seq=len(t.frames), t=99.0, direction="in", raw='{"jsonrpc": "2.0", "meth', oversize=True
        )
    )
    found = findings(t, NO_CAPS, schema=index)
    assert [f.kind for f in found] == [
        "not_json",
        "not_jsonrpc",
        "not_jsonrpc",
        "not_jsonrpc",
        "unknown_response",
        "unknown_response",
        "unknown_method",
        "oversize",
    ]
    assert "never sent" in found[4].message and "already answered" in found[5].message
    assert str(found[0]).startswith("[not_json] step 3, frame 4: ")


def test_findings_load_the_cached_schema_by_default() -> None:
    fetch()
    t = transcript(*handshake(), prompt_turn(stop="finished"))
    assert [f.kind for f in findings(t, NO_CAPS)] == ["schema"]


def test_a_restart_forgets_what_the_old_process_was_asked(index: SchemaIndex) -> None:
    hung = [("out", rpc(id=3, method="session/prompt", params={"sessionId": S1, "prompt": []}))]
    t = transcript(
        *handshake(),
        prompt_turn(),
        hung,
        [
            ("out", rpc(id=4, method="session/resume", params={"sessionId": S1, "cwd": "/w"})),
            ("in", rpc(id=4, result={})),
            update(text("after the resume")),
            ("in", rpc(id=3, result={"stopReason": "end_turn"})),
        ],
    )
    for f in t.frames[t.steps[4].frames[0] :]:
        f.process = 1
    found = findings(t, NO_CAPS, schema=index)
    # The hung prompt died with process 0, so nothing about sess-1 is in flight any
    # more: the update is late, and a response to id 3 answers nothing.
    assert [f.kind for f in found] == ["late_update", "unknown_response"]
