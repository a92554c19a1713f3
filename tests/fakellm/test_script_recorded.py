"""A captured scenario's script: entries answer only the request they recorded."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from parity.fakellm.identity import Identity
from parity.fakellm.recorded import Projection, encode
from parity.fakellm.script import Answer, RequestView, Script

VIEW = RequestView(has_tools=True)


def msg(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": text}]}


TITLE: Projection = {"messages": [msg("user", "hi")], "tools": []}
"""A title request: the same user message, no tools."""
TURN: Projection = {"messages": [msg("user", "hi")], "tools": ["echo"]}
AFTER_TOOL: Projection = {
    "messages": [msg("user", "hi"), msg("assistant", "calling"), msg("tool", "result")],
    "tools": ["echo"],
}
OTHER: Projection = {"messages": [msg("user", "something else")], "tools": ["echo"]}


def recorded(*pairs: tuple[str, Projection | None]) -> list[Mapping[str, Any]]:
    """Entries answering `text`, each with its request encoded as a capture writes it."""
    requests = encode([p for _, p in pairs])
    out: list[Mapping[str, Any]] = []
    for (text, _), request in zip(pairs, requests, strict=True):
        entry: dict[str, Any] = {"text": text}
        if request is not None:
            entry["request"] = request
        out.append(entry)
    return out


def text_of(answer: Answer) -> str:
    assert answer.response is not None, answer
    return "".join(c["text"] for c in answer.response.chunks if c["type"] == "text-delta")


def test_encoded_entries_share_a_prefix() -> None:
    # the fixtures below exercise decoding: later entries store only the new messages
    entries = recorded(("title", TITLE), ("turn", TURN), ("after", AFTER_TOOL))
    assert entries[1]["request"] == {"prefix": 1, "messages": [], "tools": ["echo"]}
    assert entries[2]["request"]["prefix"] == 1


def test_an_entry_answers_only_its_recorded_request() -> None:
    script = Script(recorded(("turn", TURN)))
    assert script.checks_requests
    refused = script.answer(VIEW, OTHER)
    assert refused.response is None and refused.problem == "stale recording"
    assert script.used == 0
    ok = script.answer(VIEW, TURN)
    assert (text_of(ok), ok.entry, ok.problem) == ("turn", 0, None)
    assert script.used == 1


def test_requests_arriving_out_of_order_find_their_entries() -> None:
    script = Script(recorded(("title", TITLE), ("turn", TURN), ("after", AFTER_TOOL)))
    second = script.answer(VIEW, TURN)
    assert (text_of(second), second.entry) == ("turn", 1)
    first = script.answer(VIEW, TITLE)
    assert (text_of(first), first.entry) == ("title", 0)
    third = script.answer(VIEW, AFTER_TOOL)
    assert (text_of(third), third.entry) == ("after", 2)
    assert script.used == 3


def test_the_same_request_twice_takes_the_next_unused_entry() -> None:
    script = Script(recorded(("a", TURN), ("b", TURN)))
    assert [script.answer(VIEW, TURN).entry for _ in range(2)] == [0, 1]
    assert script.answer(VIEW, TURN).problem == "script exhausted"


def test_entries_without_request_answer_anything_in_file_order() -> None:
    script = Script([{"text": "one"}, {"text": "two"}, {"text": "three"}])
    assert not script.checks_requests
    got = [
        script.answer(VIEW, OTHER),
        script.answer(VIEW, None),
        script.answer(VIEW, TITLE),
    ]
    assert [(text_of(a), a.entry) for a in got] == [("one", 0), ("two", 1), ("three", 2)]
    assert script.answer(VIEW, TURN).problem == "script exhausted"


def test_a_request_with_no_projection_is_not_checked() -> None:
    script = Script(recorded(("turn", TURN)))
    got = script.answer(VIEW, None)
    assert (text_of(got), got.entry) == ("turn", 0)


def test_stale_recording_names_the_first_unused_recorded_entry() -> None:
    script = Script(recorded(("title", TITLE), ("turn", TURN)))
    assert script.answer(VIEW, TITLE).entry == 0
    stale = script.answer(VIEW, OTHER)
    assert stale.response is None
    assert stale.problem == "stale recording"
    assert stale.entry == 1
    assert stale.detail is not None
    assert "--- recorded request" in stale.detail and "+++ new request" in stale.detail
    assert any(
        line.startswith("+") and "something else" in line for line in stale.detail.splitlines()
    )
    assert any(line.startswith("-") and '"hi"' in line for line in stale.detail.splitlines())
    assert script.used == 1  # nothing was used up by the stale request


def test_stale_recording_with_several_unused_names_the_first() -> None:
    script = Script(recorded(("title", TITLE), ("turn", TURN), ("after", AFTER_TOOL)))
    stale = script.answer(VIEW, OTHER)
    assert (stale.problem, stale.entry) == ("stale recording", 0)
    assert stale.detail is not None and '"tools": []' in stale.detail  # TITLE's, not TURN's
    assert script.used == 0


def test_stale_recording_skips_used_and_side_entries() -> None:
    entries = [*recorded(("title", TITLE)), {"match": {"purpose": "x"}, "text": "side"}]
    entries += recorded(("title", TITLE), ("turn", TURN))[1:]
    script = Script(entries)
    assert script.answer(VIEW, TITLE).entry == 0
    stale = script.answer(VIEW, OTHER)
    assert (stale.problem, stale.entry) == ("stale recording", 2)


def test_exhausted_when_every_entry_is_used() -> None:
    script = Script(recorded(("title", TITLE), ("turn", TURN)))
    script.answer(VIEW, TURN)
    script.answer(VIEW, TITLE)
    assert script.used == 2
    done = script.answer(VIEW, OTHER)
    assert (done.response, done.problem, done.entry) == (None, "script exhausted", None)


def test_side_entries_still_answer_first_and_use_nothing() -> None:
    entries = [{"match": {"purpose": "title"}, "text": "T"}, *recorded(("turn", TURN))]
    script = Script(entries)
    side = script.answer(RequestView(has_tools=False, purpose="title"), OTHER)
    assert (text_of(side), side.side, side.entry) == ("T", True, 0)
    assert script.used == 0
    assert script.answer(VIEW, TURN).entry == 1


def test_a_side_entrys_request_is_not_a_recording() -> None:
    script = Script([{"match": {"purpose": "title"}, "text": "T", "request": {"messages": []}}])
    assert not script.checks_requests


def test_expand_is_applied_to_an_entry_before_it_is_built() -> None:
    ident = Identity(paths={"workdir": "/tmp/run-7/workdir"})
    entries: list[Mapping[str, Any]] = [
        {
            "text": "<workdir>/a",
            "tool_calls": [{"id": "c", "name": "read", "arguments": {"path": "<workdir>/a"}}],
        }
    ]
    script = Script(entries, expand=ident.expand_value)
    got = script.answer(VIEW)
    assert text_of(got) == "/tmp/run-7/workdir/a"
    assert got.response is not None
    calls = [c for c in got.response.chunks if c["type"] == "tool-call-delta"]
    assert calls[0]["argumentsDelta"] == '{"path":"/tmp/run-7/workdir/a"}'
    assert entries[0]["text"] == "<workdir>/a"  # the scenario's entry is not touched


def test_without_expand_tokens_are_sent_as_written() -> None:
    assert text_of(Script([{"text": "<workdir>/a"}]).answer(VIEW)) == "<workdir>/a"
