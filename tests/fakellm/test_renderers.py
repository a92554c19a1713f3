"""Dialect renderers as pure functions: canonical chunks in, wire events out."""

from __future__ import annotations

import json
from typing import Any

from parity.fakellm import anthropic_messages, openai_chat, openai_responses, parity_stream
from parity.fakellm.script import build_response
from parity.fakellm.wire import Wire, assemble, batches

TURN = build_response(
    {
        "reasoning": "r",
        "text": "hi",
        "tool_calls": [{"id": "a", "name": "x", "arguments": {"k": 1}}, {"id": "b", "name": "y"}],
        "usage": {"input": 3, "output": 4},
    }
).chunks


def events(raw: bytes) -> list[tuple[str | None, Any]]:
    """Parse SSE bytes into (event, data) pairs."""
    out: list[tuple[str | None, Any]] = []
    for block in raw.decode().split("\n\n"):
        if not block:
            continue
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        data = fields["data"]
        out.append((fields.get("event"), data if data == "[DONE]" else json.loads(data)))
    return out


def all_events(wire: Wire) -> list[tuple[str | None, Any]]:
    return events(wire.head + b"".join(wire.parts))


def test_one_part_per_canonical_chunk_in_every_dialect() -> None:
    # delays and hangs are applied per part, so parts must align with chunks
    wires = [
        parity_stream.render(TURN),
        openai_chat.render_stream(TURN, ident="c", model="m", include_usage=True),
        openai_responses.render(TURN, ident="r", model="m"),
        anthropic_messages.render_stream(TURN, ident="a", model="m"),
    ]
    assert {len(w.parts) for w in wires} == {len(TURN)}


def test_parity_stream_is_ndjson_of_the_chunks() -> None:
    wire = parity_stream.render(TURN)
    assert [json.loads(p) for p in wire.parts] == list(TURN) and wire.head == b""


def test_chat_tool_calls_are_numbered_among_tool_calls_not_blocks() -> None:
    got = all_events(openai_chat.render_stream(TURN, ident="c", model="m", include_usage=True))
    calls = [d["choices"][0]["delta"]["tool_calls"][0] for _, d in got if _is_tool_delta(d)]
    assert calls == [
        {"index": 0, "id": "a", "type": "function", "function": {"name": "x", "arguments": ""}},
        {"index": 0, "function": {"arguments": '{"k":1}'}},
        {"index": 1, "id": "b", "type": "function", "function": {"name": "y", "arguments": ""}},
        {"index": 1, "function": {"arguments": "{}"}},
    ]
    usage = got[-2][1]
    assert usage["choices"] == [] and usage["usage"]["total_tokens"] == 7
    assert got[-1] == (None, "[DONE]")


def _is_tool_delta(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and bool(data.get("choices"))
        and ("tool_calls" in data["choices"][0]["delta"])
    )


def test_responses_output_indexes_follow_block_order() -> None:
    got = all_events(openai_responses.render(TURN, ident="r", model="m"))
    added = [
        (d["output_index"], d["item"]["type"]) for e, d in got if e == "response.output_item.added"
    ]
    assert added == [(0, "reasoning"), (1, "message"), (2, "function_call"), (3, "function_call")]
    assert all(e == d["type"] for e, d in got)


def test_anthropic_tool_use_opens_with_its_id_and_input_tokens_come_first() -> None:
    got = all_events(anthropic_messages.render_stream(TURN, ident="a", model="m"))
    assert got[0][1]["message"]["usage"] == {"input_tokens": 3, "output_tokens": 0}
    starts = [d["content_block"] for e, d in got if e == "content_block_start"]
    assert [s["type"] for s in starts] == ["thinking", "text", "tool_use", "tool_use"]
    assert (starts[2]["id"], starts[2]["name"]) == ("a", "x")
    assert got[-2][1]["usage"] == {"output_tokens": 4}


def test_hang_renders_no_terminal_event() -> None:
    hang = build_response({"text": "p", "then": "hang"}).chunks
    chat = all_events(openai_chat.render_stream(hang, ident="c", model="m", include_usage=True))
    responses = all_events(openai_responses.render(hang, ident="r", model="m"))
    messages = all_events(anthropic_messages.render_stream(hang, ident="a", model="m"))
    assert (None, "[DONE]") not in chat
    assert not [e for e, _ in responses if e in ("response.completed", "response.failed")]
    assert "message_stop" not in [e for e, _ in messages]


def test_assemble_folds_deltas_and_keeps_unterminated_text() -> None:
    whole = assemble(TURN)
    assert (whole.reasoning, whole.text, whole.finish, whole.failure) == (
        "r",
        "hi",
        "tool-calls",
        None,
    )
    assert whole.tool_calls == [
        {"id": "a", "name": "x", "arguments": '{"k":1}'},
        {"id": "b", "name": "y", "arguments": "{}"},
    ]
    failed = assemble(build_response({"text": "part", "error": {"message": "m"}}).chunks)
    assert failed.text == "part" and failed.failure == {"message": "m", "code": "PROVIDER_ERROR"}


def test_batches_join_parts_up_to_the_limit_without_splitting_any() -> None:
    assert batches([b"ab", b"", b"cd", b"efg", b"hi"], limit=4) == [b"abcd", b"efg", b"hi"]
    assert batches([b"toolarge", b"x"], limit=3) == [b"toolarge", b"x"]
    assert batches([b"", b""]) == []
