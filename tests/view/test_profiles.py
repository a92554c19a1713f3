"""Semantic profile, masks and the selector grammar."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from parity.scenario.model import Rule
from parity.scenario.selectors import format_path, parse_selector, select
from parity.view.masks import MASKED, apply_masks, unmatched_masks
from parity.view.normalize import view
from parity.view.semantic import merge_chunks, semantic_updates
from tests.support.wire import Wire, chunk

S1 = "0f6c1d9e-2b8a-4c51-9a77-3f0e5d1c2b4a"


def peer_turn() -> Wire:
    """A peer-style turn: one chunk per delta, _meta usage, pending tool call, side request."""
    w = Wire()
    w.step("prompt", 'prompt s1 "go"').send(
        3, "session/prompt", {"sessionId": S1, "_meta": {"x": 1}}
    )
    for piece in ("ins", "pect"):
        w.update(S1, chunk("m1", piece, "agent_thought_chunk"))
    w.update(
        S1,
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "c9",
            "title": "read",
            "status": "pending",
            "rawInput": {},
        },
    )
    w.update(
        S1,
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c9",
            "status": "in_progress",
            "rawInput": {"p": 1},
        },
    )
    w.update(
        S1,
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c9",
            "status": "completed",
            "title": None,
            "content": [{"type": "content", "content": {"type": "text", "text": "ok"}}],
        },
    )
    for piece in ("do", "ne", ""):
        w.update(S1, chunk("m2", piece))
    w.update(S1, {**chunk("m2", ""), "_meta": {"usage": {"in": 5}}})
    w.update(S1, {"sessionUpdate": "usage_update", "used": 12, "size": 1024})
    w.reply(3, {"stopReason": "end_turn", "usage": {"totalTokens": 9}, "_meta": {"t": 1}}).end()
    w.model({"messages": ["title please"]}, side=True)
    w.model({"messages": ["go"], "_meta": {"trace": "x"}})
    w.process(exit_code=None, signal=15, stopped_by="sigterm")
    w.t.problems.append("agent wrote garbage")
    return w


def test_semantic_merges_chunks_folds_tools_drops_meta_usage_and_side_requests() -> None:
    v = view(peer_turn().t, "semantic", [])
    step = v["steps"][0]
    assert step["send"] == {"method": "session/prompt", "params": {"sessionId": "<session:1>"}}
    assert step["result"] == {"stopReason": "end_turn"}
    assert step["updates"] == [
        {
            "sessionUpdate": "agent_thought_chunk",
            "content": {"text": "inspect", "type": "text"},
        },
        {
            "sessionUpdate": "tool_call",
            "content": [{"content": {"text": "ok", "type": "text"}, "type": "content"}],
            "rawInput": {"p": 1},
            "status": "completed",
            "title": "read",
            "toolCallId": "<toolcall:1>",
        },
        {
            "sessionUpdate": "agent_message_chunk",
            "content": {"text": "done", "type": "text"},
        },
        {"sessionUpdate": "usage_update"},
    ]
    assert list(step["updates"][1]) == [
        "sessionUpdate",
        "content",
        "rawInput",
        "status",
        "title",
        "toolCallId",
    ]
    assert v["model"] == [{"path": "/stream", "body": {"messages": ["go"]}}]
    assert v["process"] == {"problems": ["agent wrote garbage"]}


def test_exact_keeps_every_chunk_and_meta() -> None:
    v = view(peer_turn().t, "exact", [])
    updates = v["steps"][0]["updates"]
    assert len(updates) == 10
    assert updates[-2]["_meta"] == {"usage": {"in": 5}}
    assert v["steps"][0]["result"]["usage"] == {"totalTokens": 9}
    assert len(v["model"]) == 2
    assert v["process"]["exit"] == [{"by": "sigterm", "signal": 15}]


def test_semantic_keeps_messages_and_sessions_apart() -> None:
    updates: list[Any] = [
        chunk("a", "x"),
        chunk("b", "y"),
        {**chunk("b", "z"), "session": "<session:2>"},
        chunk("b", "w", "agent_thought_chunk"),
        {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "failed"},
    ]
    merged = semantic_updates(updates)
    assert [u.get("content", {}).get("text") for u in merged] == ["x", "y", "z", "w", None]
    # An update for a call never announced still folds into one final state.
    assert merged[-1] == {"sessionUpdate": "tool_call", "toolCallId": "t", "status": "failed"}


def test_merging_thousands_of_chunks_keeps_each_messages_text_in_order() -> None:
    """Chunks are merged by joining their texts once (adding each to the text so far
    copied it every time: 8 s for a flood of 200,000); usage readings between them stay
    after the message, another message starts its own, the inputs are left as they were."""
    usage = {"sessionUpdate": "usage_update", "used": 1}
    updates: list[Any] = []
    for n in range(3000):
        updates.append(chunk("a", f"{n} "))
        if n % 1000 == 999:
            updates.append(usage)
    updates += [chunk("b", "x"), chunk("b", "y"), chunk("b", "")]
    before = copy.deepcopy(updates)
    merged = merge_chunks(updates)
    first = chunk("a", "".join(f"{n} " for n in range(3000)))
    assert merged == [first, usage, usage, usage, chunk("b", "xy")]
    assert list(merged[0]) == list(chunk("a", "")) and list(merged[0]["content"]) == [
        "type",
        "text",
    ]
    assert updates == before


def test_masks_replace_count_and_report_unmatched() -> None:
    masks = [
        Rule(path="*.usage_update.used", reason="meters differ"),
        Rule(path="model[*].body.messages", reason="prompt text differs"),
        Rule(path="*.plan.entries", reason="never sent: stale"),
        Rule(path="steps[*].result", reason="only for native", targets=["native"]),
    ]
    v = view(peer_turn().t, "exact", masks)
    updates = v["steps"][0]["updates"]
    # A masked number keeps its JSON type: `used` turning into a float would still show.
    assert updates[-1] == {
        "sessionUpdate": "usage_update",
        "size": 1024,
        "used": "<masked:integer>",
    }
    assert [m["body"]["messages"] for m in v["model"]] == [MASKED, MASKED]
    assert v["steps"][0]["result"]["stopReason"] == "end_turn"  # native-only mask not applied
    assert v["masked"] == {
        "*.usage_update.used": 1,
        "model[*].body.messages": 2,
        "*.plan.entries": 0,
    }
    assert unmatched_masks(v) == ["*.plan.entries"]


def test_masks_under_an_already_masked_value_count_once() -> None:
    root: dict[str, Any] = {"a": {"b": {"c": 1}}, "xs": [1, "2"]}
    counts = apply_masks(
        root,
        [
            Rule(path="a", reason="r"),
            Rule(path="a.b.c", reason="r"),
            Rule(path="xs[-1]", reason="r"),
        ],
    )
    assert root == {"a": MASKED, "xs": [1, MASKED]}
    assert counts == {"a": 1, "a.b.c": 0, "xs[-1]": 1}


@pytest.mark.parametrize(
    ("value", "masked"),
    [
        ("text", MASKED),
        ({"k": 1}, MASKED),
        ([1], MASKED),
        (2, "<masked:integer>"),
        (2.0, "<masked:float>"),
        (True, "<masked:boolean>"),
        (0, "<masked:integer>"),
        (False, "<masked:boolean>"),
        (None, "<masked:null>"),
    ],
)
def test_a_mask_keeps_the_json_type_of_a_scalar(value: Any, masked: str) -> None:
    root: dict[str, Any] = {"v": value}
    apply_masks(root, [Rule(path="v", reason="r")])
    assert root == {"v": masked}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("steps[*].updates[*].used", ["steps[0].updates[1].used"]),
        ("*.used", ["steps[0].updates[1].used"]),
        ("**.used", ["steps[0].updates[1].used"]),
        ("steps[0].*", ["steps[0].do", "steps[0].updates"]),
        ("*.agent_message_chunk", ["steps[0].updates[0]"]),
        ("*.session/request_permission.params", ["steps[0].agent_requests[0].params"]),
        ("steps[0].updates[-1]", ["steps[0].updates[1]"]),
        ('steps[0]["do"]', ["steps[0].do"]),
        ("steps[3]", []),
        ("*.nothing", []),
    ],
)
def test_selectors(selector: str, expected: list[str]) -> None:
    root = {
        "steps": [
            {
                "do": "prompt",
                "updates": [
                    chunk(None, "hi"),
                    {"sessionUpdate": "usage_update", "used": 3},
                ],
            }
        ]
    }
    if "request_permission" in selector:
        root["steps"][0] = {
            "agent_requests": [{"method": "session/request_permission", "params": {"a": 1}}]
        }
    assert [format_path(p) for p in select(root, selector)] == expected


@pytest.mark.parametrize("bad", ["", ".a", "a..b", "a[x]", "a[1"])
def test_bad_selectors_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_selector(bad)


def test_format_path_quotes_awkward_keys() -> None:
    assert format_path(("files", "a.txt", 0)) == 'files["a.txt"][0]'
    assert select({"files": {"a.txt": [5]}}, 'files["a.txt"][0]') == [("files", "a.txt", 0)]


def test_agent_requests_keep_their_place_among_updates_in_both_profiles() -> None:
    w = Wire()
    w.step("prompt", "p").send(1, "session/prompt", {"sessionId": S1})
    for piece in ("a", "b", "c"):
        w.update(S1, chunk("m1", piece))
    w.update(S1, {"sessionUpdate": "tool_call", "toolCallId": "t1", "status": "pending"})
    w.update(S1, {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "in_progress"})
    w.ask(0, "session/request_permission", {"sessionId": S1, "toolCall": {"toolCallId": "t1"}})
    w.answer(0, {"outcome": {"outcome": "cancelled"}})
    w.reply(1, {"stopReason": "end_turn"}).end()
    exact = view(w.t, "exact", [])["steps"][0]["agent_requests"][0]
    semantic = view(w.t, "semantic", [])["steps"][0]["agent_requests"][0]
    assert (exact["after_updates"], semantic["after_updates"]) == (5, 2)
