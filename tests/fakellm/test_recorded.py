"""A captured entry's recorded request: harmless tokens, projection, compact form, staleness."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from parity.fakellm.dialects import canonical_request
from parity.fakellm.identity import Identity
from parity.fakellm.recorded import Projection, decode, encode, harmless, projection, stale_diff

# -- harmless -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("now 2026-12-02T10:11:12Z.", "now <time>."),
        ("now 2026-12-02T10:11:12.345+01:00", "now <time>"),
        ("now 2026-12-02 10:11:12", "now <time>"),
        ("today is 2026-12-02, ok", "today is <date>, ok"),
        ("Today is Wednesday, December 2, 2026.", "Today is <date>."),
        ("Today is December 2, 2026.", "Today is <date>."),
        ("Date: Wed Dec 02 2026 (local)", "Date: <date> (local)"),
        ("Wall time: 0.0039 seconds", "Wall time: <duration>"),
        ("took 12ms", "took <duration>"),
        ("took 12 ms, then 3s and 1.5 secs", "took <duration>, then <duration> and <duration>"),
        ("id 123e4567-e89b-12d3-a456-426614174000 end", "id <uuid> end"),
        ("ID 123E4567-E89B-12D3-A456-426614174000", "ID <uuid>"),
    ],
)
def test_harmless_tokens(text: str, want: str) -> None:
    assert harmless(text) == want


@pytest.mark.parametrize(
    "text",
    [
        "version v1.5s here",
        "file2s",
        "12026-12-021",
        "3 sections",
        "seconds",
        "call-1 and abc",
        "December 2026",
    ],
)
def test_harmless_leaves_other_text(text: str) -> None:
    assert harmless(text) == text


def projection_of(path: str, body: Any, scrub: Callable[[str], str]) -> Projection | None:
    """What the server keeps of a call: the projection of its canonical request."""
    return projection(canonical_request(path, body), scrub)


# -- projection ---------------------------------------------------------------------------

SCRUB = Identity(paths={"workdir": "/tmp/run-2026-12-02/workdir"}).scrub
"""A workdir whose name holds a date: it must be scrubbed before dates become tokens."""


def test_projection_of_a_parity_stream_body() -> None:
    body = {
        "model": "m-1",
        "system": "You are a helpful agent. Today is 2026-12-02.",
        "reasoningEffort": "high",
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "read /tmp/run-2026-12-02/workdir/a.md"}],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "reading"},
                    {"type": "tool-call", "id": "c1", "name": "read", "arguments": {"p": "x"}},
                ],
            },
            {
                "role": "tool",
                "toolCallId": "c1",
                "content": [{"type": "text", "text": "done in 12ms"}],
            },
        ],
        "tools": [
            {"name": "echo", "description": "d", "parameters": {"type": "object"}},
            {"name": "read", "description": "r", "parameters": {}},
        ],
    }
    assert projection_of("/runs/r1/stream", body, SCRUB) == {
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "read <workdir>/a.md"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "reading"},
                    {"type": "tool-call", "id": "c1", "name": "read", "arguments": '{"p":"x"}'},
                ],
            },
            {
                "role": "tool",
                "content": [{"type": "text", "text": "done in <duration>"}],
                "toolCallId": "c1",
            },
        ],
        "tools": ["echo", "read"],
    }


def test_projection_of_an_openai_chat_body_keeps_messages_and_tool_names_only() -> None:
    body = {
        "model": "gpt-secret-model",
        "temperature": 0.2,
        "stream": True,
        "messages": [
            {"role": "system", "content": "SYSTEM PROMPT at /tmp/run-2026-12-02/workdir"},
            {"role": "user", "content": "hello"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "echo", "arguments": '{"b": 1, "a": 2}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "tool result"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {"name": "echo", "description": "E", "parameters": {}},
            }
        ],
    }
    got = projection_of("/v1/chat/completions", body, SCRUB)
    assert got == {
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hello"}]},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool-call",
                        "id": "call_1",
                        "name": "echo",
                        "arguments": '{"a":2,"b":1}',
                    }
                ],
            },
            {
                "role": "tool",
                "content": [{"type": "text", "text": "tool result"}],
                "toolCallId": "call_1",
            },
        ],
        "tools": ["echo"],
    }
    assert "SYSTEM PROMPT" not in repr(got) and "gpt-secret-model" not in repr(got)


def test_projection_without_tools() -> None:
    body = {"messages": [{"role": "user", "content": "hi"}]}
    assert projection_of("/v1/chat/completions", body, SCRUB) == {
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        "tools": [],
    }


@pytest.mark.parametrize("path", ["/v1/models", "/runs/r1/catalog", "/tool-call"])
def test_projection_of_a_non_model_path_is_none(path: str) -> None:
    assert projection_of(path, {"messages": []}, SCRUB) is None


def test_projection_of_a_non_object_body_is_none() -> None:
    assert projection_of("/v1/chat/completions", ["not", "an", "object"], SCRUB) is None


# -- encode / decode ----------------------------------------------------------------------


def msg(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": text}]}


U1, A1, T1, A2, U2 = (
    msg("user", "one"),
    msg("assistant", "calling"),
    msg("tool", "result"),
    msg("assistant", "done"),
    msg("user", "two"),
)


def test_encode_a_growing_conversation_stores_only_the_new_messages() -> None:
    full: list[Projection | None] = [
        {"messages": [U1], "tools": ["echo"]},
        {"messages": [U1, A1, T1], "tools": ["echo"]},
        {"messages": [U1, A1, T1, A2, U2], "tools": ["echo", "read"]},
    ]
    stored = encode(full)
    assert stored == [
        {"messages": [U1], "tools": ["echo"]},
        {"prefix": 1, "messages": [A1, T1]},
        {"prefix": 3, "messages": [A2, U2], "tools": ["echo", "read"]},
    ]
    assert decode(stored) == full


def test_encode_a_conversation_that_restarts() -> None:
    full: list[Projection | None] = [
        {"messages": [U1, A1], "tools": []},
        {"messages": [U2], "tools": []},
        {"messages": [U2, A2], "tools": ["echo"]},
    ]
    stored = encode(full)
    assert stored == [
        {"messages": [U1, A1], "tools": []},
        {"messages": [U2]},  # prefix 0 is not written; unchanged tools are left out
        {"prefix": 1, "messages": [A2], "tools": ["echo"]},
    ]
    assert decode(stored) == full


def test_encode_a_diverging_conversation_shares_only_the_common_head() -> None:
    full: list[Projection | None] = [
        {"messages": [U1, A1, T1], "tools": ["echo"]},
        {"messages": [U1, A2], "tools": ["echo"]},
    ]
    stored = encode(full)
    assert stored[1] == {"prefix": 1, "messages": [A2]}
    assert decode(stored) == full


def test_none_items_are_kept_and_do_not_break_the_chain() -> None:
    full: list[Projection | None] = [
        None,
        {"messages": [U1], "tools": ["echo"]},
        None,
        {"messages": [U1, A1], "tools": ["echo"]},
    ]
    stored = encode(full)
    assert stored == [
        None,
        {"messages": [U1], "tools": ["echo"]},
        None,
        {"prefix": 1, "messages": [A1]},
    ]
    assert decode(stored) == full


def test_identical_requests_store_nothing_new() -> None:
    same: Projection = {"messages": [U1], "tools": ["echo"]}
    stored = encode([same, same])
    assert stored[1] == {"prefix": 1, "messages": []}
    assert decode(stored) == [same, same]


def test_encode_does_not_touch_its_input() -> None:
    first: Projection = {"messages": [U1], "tools": ["echo"]}
    second: Projection = {"messages": [U1, A1], "tools": ["echo"]}
    encode([first, second])
    assert first == {"messages": [U1], "tools": ["echo"]}
    assert second == {"messages": [U1, A1], "tools": ["echo"]}


def test_decode_without_tools_anywhere_gives_no_tools() -> None:
    assert decode([{"messages": [U1]}, {"prefix": 1}]) == [
        {"messages": [U1], "tools": []},
        {"messages": [U1], "tools": []},
    ]


def test_decode_of_a_hand_edited_prefix_longer_than_the_previous_request() -> None:
    stored = [{"messages": [U1], "tools": ["echo"]}, {"prefix": 5, "messages": [A1]}]
    assert decode(stored) == [
        {"messages": [U1], "tools": ["echo"]},
        {"messages": [U1, A1], "tools": ["echo"]},
    ]


# -- stale_diff ---------------------------------------------------------------------------


def test_stale_diff_is_none_when_equal() -> None:
    a: Projection = {"messages": [U1], "tools": ["echo"]}
    b: Projection = {"messages": [msg("user", "one")], "tools": ["echo"]}
    assert stale_diff(a, b) is None


def test_stale_diff_shows_the_changed_text() -> None:
    recorded: Projection = {"messages": [U1, msg("user", "old wording")], "tools": ["echo"]}
    new: Projection = {"messages": [U1, msg("user", "new wording é")], "tools": ["echo"]}
    diff = stale_diff(recorded, new)
    assert diff is not None
    lines = diff.splitlines()
    assert lines[0] == "--- recorded request"
    assert lines[1] == "+++ new request"
    removed = [line for line in lines if line.startswith("-") and not line.startswith("---")]
    added = [line for line in lines if line.startswith("+") and not line.startswith("+++")]
    assert len(removed) == 1 and '"old wording"' in removed[0]
    assert len(added) == 1 and '"new wording é"' in added[0]


def test_stale_diff_names_changed_tools() -> None:
    diff = stale_diff({"messages": [], "tools": ["echo"]}, {"messages": [], "tools": ["read"]})
    assert diff is not None
    assert '-  "echo"' in diff and '+  "read"' in diff


def test_a_clock_time_without_a_date_is_harmless() -> None:
    # JavaScript's Date.toString(), which an agent may put into its runtime context.
    assert harmless("Wed Dec 02 2026 10:11:12 GMT+0000") == "<date> <time> GMT+0000"
    assert harmless("version 1:22:33:44") == "version 1:22:33:44"
