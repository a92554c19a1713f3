"""The normalized view: tokens, paths, times, step buckets, loose frames."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import yaml

from parity.view.normalize import view
from parity.view.ownership import frame_steps
from parity.view.tokens import date_spellings, run_dates
from tests.support.wire import Wire, chunk

S1 = "0f6c1d9e-2b8a-4c51-9a77-3f0e5d1c2b4a"
S2 = "7a1e2f3d-4c5b-4a69-8877-665544332211"
PATHS = {"workdir": "/tmp/run-1/work", "home": "/tmp/run-1/home", "tmp": "/tmp/run-1"}


def text_turn(
    session: str = S1, message: str = "msg-aaaa-1111", call: str = "call_9f8e7d6c"
) -> Wire:
    """initialize, new_session, a prompt with a tool call and text; random ids injected."""
    w = Wire(paths=PATHS)
    w.step("initialize", "initialize").send(1, "initialize", {"protocolVersion": 1})
    w.reply(1, {"protocolVersion": 1, "agentCapabilities": {}}).end()
    w.step("new_session", "new_session s1")
    w.send(2, "session/new", {"cwd": PATHS["workdir"], "mcpServers": []})
    w.reply(2, {"sessionId": session, "configOptions": []}).end()
    w.step("prompt", 'prompt s1 "go"')
    w.send(3, "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]})
    w.update(session, chunk(message, "inspect", "agent_thought_chunk"))
    w.update(
        session,
        {"sessionUpdate": "tool_call", "toolCallId": call, "title": "echo", "status": "pending"},
    )
    w.ask(0, "session/request_permission", {"sessionId": session, "toolCall": {"toolCallId": call}})
    w.answer(0, {"outcome": {"outcome": "cancelled"}})
    w.update(
        session,
        {"sessionUpdate": "tool_call_update", "toolCallId": call, "status": "failed"},
    )
    w.update(session, chunk(message + "-2", "done"))
    w.reply(3, {"stopReason": "end_turn"}).end()
    w.model({"sessionId": session, "messages": [{"role": "user", "content": "go"}]})
    w.model(
        {
            "sessionId": session,
            "messages": [{"role": "tool", "toolCallId": call, "content": "no"}],
        }
    )
    w.process(exit_code=0, stopped_by="eof", stderr_tail="pid 999 bye")
    return w


def test_ids_become_linked_positional_tokens() -> None:
    v = view(text_turn().t, "exact", [])
    new, prompt = v["steps"][1], v["steps"][2]
    assert new["result"]["sessionId"] == "<session:1>"
    assert prompt["send"]["params"]["sessionId"] == "<session:1>"
    kinds = [
        (u["sessionUpdate"], u.get("messageId"), u.get("toolCallId")) for u in prompt["updates"]
    ]
    assert kinds == [
        ("agent_thought_chunk", "<message:1>", None),
        ("tool_call", None, "<toolcall:1>"),
        ("tool_call_update", None, "<toolcall:1>"),
        ("agent_message_chunk", "<message:2>", None),
    ]
    (ask,) = prompt["agent_requests"]
    assert list(ask) == ["method", "params", "after_updates", "answer"]
    assert ask["after_updates"] == 2  # after the thought and the tool_call
    assert ask["params"]["toolCall"]["toolCallId"] == "<toolcall:1>"
    assert ask["answer"] == {"result": {"outcome": {"outcome": "cancelled"}}}
    # The same values in the model bodies get the same tokens.
    assert v["model"][0]["body"]["sessionId"] == "<session:1>"
    assert v["model"][1]["body"]["messages"][0]["toolCallId"] == "<toolcall:1>"
    # One session: updates carry no session key.
    assert all("session" not in u for u in prompt["updates"])


def test_views_of_two_runs_with_different_random_ids_are_equal() -> None:
    a = view(text_turn().t, "exact", [])
    b = view(text_turn(session=S2, message="other-msg-22", call="call_0000aaaa").t, "exact", [])
    assert a == b
    assert S1 not in yaml.safe_dump(a)


def test_scripted_tool_call_ids_stay_verbatim() -> None:
    v = view(text_turn(call="call-1").t, "exact", [], scripted_ids={"call-1"})
    assert v["steps"][2]["updates"][1]["toolCallId"] == "call-1"


def test_machine_paths_are_masked_in_strings_and_uris() -> None:
    w = Wire(paths=PATHS)
    w.step("request", "request x/y")
    w.send(
        1,
        "x/y",
        {
            "cwd": "/tmp/run-1/work",
            "uri": "file:///tmp/run-1/work/notes.txt",
            "home": "/tmp/run-1/home/.config",
            "log": "wrote /tmp/run-1/scratch.txt",
            "sibling": "/tmp/run-10/other",
            "memory": "/tmp/run-1/home/.qwen/projects/-tmp-run-1-work/memory",
            "dotted": "~/.claude/projects/-tmp-run-1-home--cache/x",
            "title": "Wrote tmp/run-1/work/note.txt",
            "glued": "xtmp/run-1/work/note.txt",
        },
    )
    w.reply(1, {"path": "/tmp/run-1/work"}).end()
    step = view(w.t, "exact", [])["steps"][0]
    assert step["send"]["params"] == {
        "cwd": "<workdir>",
        "dotted": "~/.claude/projects/<home:dashed>--cache/x",
        "glued": "xtmp/run-1/work/note.txt",
        "home": "<home>/.config",
        "memory": "<home>/.qwen/projects/<workdir:dashed>/memory",
        "log": "wrote <tmp>/scratch.txt",
        "sibling": "/tmp/run-10/other",
        "title": "Wrote <workdir:unrooted>/note.txt",
        "uri": "file://<workdir>/notes.txt",
    }
    assert step["result"] == {"path": "<workdir>"}


def test_long_ids_inside_text_and_times_are_replaced() -> None:
    w = text_turn()
    w.step("list_sessions", "list_sessions")
    w.send(4, "session/list", {})
    w.reply(
        4,
        {
            "sessions": [
                {
                    "sessionId": S1,
                    "title": f"log at /home/u/.dsh/{S1}.jsonl",
                    "updatedAt": "2026-11-29T18:45:14.123Z",
                }
            ]
        },
    ).end()
    (entry,) = view(w.t, "exact", [])["steps"][3]["result"]["sessions"]
    assert entry == {
        "sessionId": "<session:1>",
        "title": "log at /home/u/.dsh/<session:1>.jsonl",
        "updatedAt": "<time>",
    }


def test_request_ids_never_leak_and_cancel_request_keeps_its_link() -> None:
    w = Wire()
    w.step("prompt", "prompt s1 hang").send(17, "session/prompt", {"sessionId": "s"})
    w.notify("$/cancel_request", {"requestId": 17}, direction="out")
    w.reply(17, {"stopReason": "cancelled"}).end()
    step = view(w.t, "exact", [])["steps"][0]
    assert step["send"] == {"method": "session/prompt", "params": {"sessionId": "<session:1>"}}
    assert step["notes"] == [
        {"sent": {"method": "$/cancel_request", "params": {"requestId": "<request:1>"}}}
    ]
    assert step["result"] == {"stopReason": "cancelled"}


def test_session_key_only_when_the_run_has_several_sessions() -> None:
    w = Wire()
    w.step("prompt", "prompt s1").send(1, "session/prompt", {"sessionId": S1})
    w.update(S1, chunk(None, "a"))
    w.update(S2, chunk(None, "b"))
    w.reply(1, {"stopReason": "end_turn"}).end()
    updates = view(w.t, "exact", [])["steps"][0]["updates"]
    assert [u["session"] for u in updates] == ["<session:1>", "<session:2>"]
    assert list(updates[0])[:2] == ["sessionUpdate", "session"]


def test_errors_notes_and_problems() -> None:
    w = Wire()
    w.step("send_raw", "send_raw").frame("out", None, raw="{not json")
    w.frame("in", None, raw="garbage on stdout")
    w.frame("in", ["a", "json", "array"])
    w.notify("_x/log", {"level": "info"})
    w.reply(99, {"stray": True})
    w.end(problem="no response within 15 s")
    w.step("request", "request nope").send(2, "nope", {})
    w.reply(
        2, error={"code": -32601, "message": '"Method not found": nope', "data": {"method": "nope"}}
    )
    w.end()
    v = view(w.t, "exact", [])
    assert v["steps"][0]["notes"] == [
        {"sent_raw": "{not json"},
        {"unparsable": "garbage on stdout"},
        {"not_jsonrpc": ["a", "json", "array"]},
        {"notify": {"method": "_x/log", "params": {"level": "info"}}},
        {"response": {"id": 99, "result": {"stray": True}}},
        {"problem": "no response within 15 s"},
    ]
    assert "send" not in v["steps"][0]
    assert v["steps"][1]["error"] == {
        "code": -32601,
        "message": '"Method not found": nope',
        "data": {"method": "nope"},
    }
    assert "result" not in v["steps"][1]


def test_frames_outside_steps_go_to_late_and_after() -> None:
    w = Wire()
    w.step("prompt", "p1").send(1, "session/prompt", {"sessionId": S1})
    w.reply(1, {"stopReason": "end_turn"}).end()
    w.update(S1, {"sessionUpdate": "session_info_update", "title": "between steps"})
    w.notify("_vendor/heartbeat", {})
    w.step("wait", "wait 10ms").end()
    w.update(S1, {"sessionUpdate": "session_info_update", "title": "after the last step"})
    w.update(S2, chunk(None, "a session nobody asked about"))
    w.ask(5, "fs/read_text_file", {"sessionId": S2, "path": "/x"})
    w.frame("out", {"jsonrpc": "2.0", "id": 5, "error": {"code": -32601, "message": "no"}})
    v = view(w.t, "exact", [])
    # Frames about S1 while nothing about S1 is in flight belong to its answered prompt;
    # a frame about no session between two steps trails the earlier one. Wire order.
    assert v["steps"][0]["late"] == [
        {
            "update": {
                "sessionUpdate": "session_info_update",
                "session": "<session:1>",
                "title": "between steps",
            }
        },
        {"notify": {"method": "_vendor/heartbeat", "params": {}}},
        {
            "update": {
                "sessionUpdate": "session_info_update",
                "session": "<session:1>",
                "title": "after the last step",
            }
        },
    ]
    assert v["after"] == [
        {
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "session": "<session:2>",
                "content": {"text": "a session nobody asked about", "type": "text"},
            }
        },
        {
            "agent_request": {
                "method": "fs/read_text_file",
                "params": {"path": "/x", "sessionId": "<session:2>"},
                "answer": {"error": {"code": -32601, "message": "no"}},
            }
        },
    ]


def test_model_and_process_keep_only_deterministic_facts() -> None:
    w = Wire(paths=PATHS)
    w.model({"messages": []}, status=409, problem="script exhausted", aborted=True, aborted_at=3.2)
    w.model({"purpose": "title"}, side=True, path="/v1/chat/completions")
    w.process(exit_code=None, signal=15, stopped_by="sigterm")
    w.t.problems.append("agent wrote to /tmp/run-1/home/x.log")
    v = view(w.t, "exact", [])
    assert v["model"] == [
        {
            "path": "/stream",
            "body": {"messages": []},
            "status": 409,
            "aborted": True,
            "problem": "script exhausted",
        },
        {"path": "/v1/chat/completions", "body": {"purpose": "title"}, "side": True},
    ]
    assert v["process"] == {
        "exit": [{"by": "sigterm", "signal": 15}],
        "problems": ["agent wrote to <home>/x.log"],
    }


def test_view_skeleton_order_and_yaml_round_trip() -> None:
    v = view(text_turn().t, "exact", [])
    assert list(v) == ["steps", "after", "model", "process", "masked"]
    assert list(v["steps"][2]) == [
        "step",
        "do",
        "label",
        "send",
        "result",
        "updates",
        "agent_requests",
    ]
    assert yaml.safe_load(yaml.safe_dump(v, sort_keys=False)) == v


def test_parallel_children_each_get_their_own_frames() -> None:
    w = Wire()
    parent = w.step("parallel", "parallel").open
    assert parent is not None
    w.open = None
    a = w.step("prompt", "prompt s1").open
    w.open = None
    b = w.step("prompt", "prompt s2").open
    w.open = None
    seqs = [
        w.frame(
            "out",
            {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {"sessionId": S1}},
        ),
        w.frame(
            "out",
            {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": S2}},
        ),
        w.frame(
            "in",
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": S2, "update": chunk(None, "two")},
            },
        ),
        w.frame(
            "in",
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": S1, "update": chunk(None, "one")},
            },
        ),
        w.frame("in", {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}}),
        w.frame("in", {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "cancelled"}}),
    ]
    assert a is not None and b is not None
    for record in (parent, a, b):
        record.frames = list(seqs)
    a.request, a.response = w.t.frames[0].message, w.t.frames[5].message
    b.request, b.response = w.t.frames[1].message, w.t.frames[4].message
    steps = view(w.t, "exact", [])["steps"]
    assert steps[0] == {"step": 1, "do": "parallel", "label": "parallel"}
    texts: list[Any] = [[u["content"]["text"] for u in s["updates"]] for s in steps[1:]]
    assert texts == [["one"], ["two"]]
    assert [s["result"]["stopReason"] for s in steps[1:]] == ["cancelled", "end_turn"]
    assert frame_steps(w.t) == {0: 1, 1: 2, 2: 2, 3: 1, 4: 2, 5: 1}


def test_unknown_profile_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown profile 'fuzzy'"):
        view(Wire().t, "fuzzy", [])


def test_unparsable_lines_are_cut_to_a_recognisable_head() -> None:
    w = Wire()
    w.step("prompt", "p").send(1, "session/prompt", {"sessionId": S1})
    w.frame("in", None, raw="x" * 5000)
    w.reply(1, {"stopReason": "end_turn"})
    w.update(S1, chunk(None, "after the response"))
    w.end()
    step = view(w.t, "exact", [])["steps"][0]
    assert step["notes"] == [{"unparsable": "x" * 200 + "... (5000 chars)"}]
    assert step["late"] == [
        {
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"text": "after the response", "type": "text"},
            }
        }
    ]


def test_stray_uuids_get_their_own_tokens_and_known_ids_keep_their_kind() -> None:
    install = "8beee907-caed-4dba-92b9-cc8ac3c04eb6"
    w = Wire()
    w.step("new_session", "new_session s1").send(1, "session/new", {"cwd": "/w"})
    w.notify("_vendor/log", {"text": f"opened /store/{S1}.jsonl for {install}"})
    w.reply(1, {"sessionId": S1}).end()
    w.model({"client_metadata": {"installation-id": install}, "sessionId": S1})
    v = view(w.t, "exact", [])
    assert v["steps"][0]["notes"] == [
        {
            "notify": {
                "method": "_vendor/log",
                "params": {"text": "opened /store/<session:1>.jsonl for <uuid:1>"},
            }
        }
    ]
    assert v["model"][0]["body"] == {
        "client_metadata": {"installation-id": "<uuid:1>"},
        "sessionId": "<session:1>",
    }


def test_the_run_date_in_any_usual_spelling_becomes_date() -> None:
    prompt = (
        "<current_date>2026-11-29</current_date> Today's date: Sun Nov 29 2026. "
        "Today's date is Sunday, November 29, 2026. Due 11/29/2026, not 2026-03-05."
    )
    w = Wire()
    w.model({"system": prompt, "at": "2026-11-29T18:45:14Z"})
    v = view(w.t, "exact", [], dates=[dt.date(2026, 11, 29)])
    assert v["model"][0]["body"] == {
        "at": "<time>",
        "system": (
            "<current_date><date></current_date> Today's date: <date>. "
            "Today's date is <date>. Due <date>, not 2026-03-05."
        ),
    }


def test_run_dates_cover_today_and_yesterday_in_utc_and_local_time() -> None:
    just_after_midnight = dt.datetime(2026, 12, 1, 0, 5, tzinfo=dt.UTC)
    dates = run_dates(just_after_midnight)
    assert {dt.date(2026, 11, 30), dt.date(2026, 12, 1)} <= set(dates)
    assert "Tue Dec 01 2026" in date_spellings(dt.date(2026, 12, 1))


def test_semantic_links_an_agents_own_tool_call_ids_to_the_scripted_ones() -> None:
    from parity.view.semantic import link_tool_calls

    own = {
        "steps": [
            {
                "updates": [
                    {"sessionUpdate": "tool_call", "toolCallId": "<toolcall:2>", "title": "a"},
                    {"sessionUpdate": "tool_call", "toolCallId": "<toolcall:1>", "title": "b"},
                    {"sessionUpdate": "tool_call", "toolCallId": "<toolcall:3>", "title": "c"},
                ],
                "agent_requests": [{"params": {"toolCall": {"toolCallId": "<toolcall:1>"}}}],
            }
        ],
        "model": [{"body": "<toolcall:2>"}],
    }
    linked = link_tool_calls(own, ["call-1", "call-2"])
    updates = linked["steps"][0]["updates"]
    # In order of first appearance; more own ids than scripted ones stay tokens.
    assert [u["toolCallId"] for u in updates] == ["call-1", "call-2", "<toolcall:3>"]
    assert linked["steps"][0]["agent_requests"][0]["params"]["toolCall"]["toolCallId"] == "call-2"
    assert linked["model"] == own["model"]  # only the ACP side is linked
    echoed = {"steps": [{"updates": [{"sessionUpdate": "tool_call", "toolCallId": "call-1"}]}]}
    assert link_tool_calls(echoed, ["call-1"]) == echoed


def test_child_agents_requests_follow_the_main_ones_in_a_fixed_order() -> None:
    # The parent's and its children's requests interleave as the run goes: whichever
    # order they came in, the view lists the main agent's, then child 1's, then child
    # 2's, and the child sessions' tokens follow that order.
    c1, c2 = "11111111-2222-4333-8444-555555555555", "99999999-8888-4777-8666-555555555555"

    def run(order: list[tuple[str, int]]) -> Any:
        w = text_turn()
        w.t.model_requests.clear()
        for session, agent in order:
            w.model({"sessionId": session, "messages": [f"from {session}"]}, agent=agent)
        return view(w.t, "exact", [])

    one = run([(S1, 0), (c2, 2), (c1, 1), (S1, 0), (c1, 1)])
    two = run([(c1, 1), (S1, 0), (c1, 1), (c2, 2), (S1, 0)])
    assert one["model"] == two["model"]
    assert [(m["body"]["sessionId"], m.get("agent")) for m in one["model"]] == [
        ("<session:1>", None),
        ("<session:1>", None),
        ("<session:2>", 1),
        ("<session:2>", 1),
        ("<session:3>", 2),
    ]
    assert one["model"][2]["body"]["messages"] == ["from <session:2>"]
