"""Hypothesis strategies for the model's side of a scenario: fixture tools and `llm`
entries (docs/scenarios.md, `tools` and `llm`).

Pure: each strategy draws plain dicts in the scenario file's shape. A turn is a list of
entries the agent consumes in one prompt: zero or more tool-call answers, then one
closing answer (text, reasoning, a finish kind, a provider error). A turn that is to be
cancelled ends in a hanging entry instead, so what the cancel interrupts is always
under way (docs/scenarios.md, "Writing deterministic scenarios").
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from parity.explore.vocabulary import finish_kinds

ECHO = "echo"
"""A fixture tool answering at once, without approval."""
ASKING = "write_note"
"""A fixture tool declared `approval: ask`: the agent must get a permission first."""
CONFIRMING = "confirm_note"
"""Asks first too; called only by turns cancelled while its permission is pending, so the
answers held for them never race an answer given at once (`client.permission.by_tool`)."""
HANGING = "wait_forever"
"""A fixture tool that never answers: only a cancel ends its call."""

# Words rather than arbitrary text: DSH's repetition guard ends a degenerate stream, and
# unicode beyond ASCII is drawn on purpose below, where it is the point.
WORDS = ("alpha", "beta", "gamma", "delta", "note", "ok", "done", "read", "café", "日本", "🙂")


def tools(approvals: bool = True) -> list[dict[str, Any]]:
    """The fixture tools every generated scenario declares: one of each behaviour the
    model's calls can meet (answers, asks first, never answers). Without `approvals`
    none asks first: the pair's targets get the tools by different transports, and an
    MCP tool carries no `approval: ask` (docs/explore.md)."""
    params = {"type": "object", "properties": {"text": {"type": "string"}}}
    declared: list[dict[str, Any]] = [
        {
            "name": ECHO,
            "description": "Return a fixed result.",
            "parameters": params,
            "result": "tool result",
        },
        {
            "name": ASKING,
            "description": "Write a note (asks first).",
            "parameters": params,
            "result": "note written",
            "approval": "ask",
        },
        {
            "name": CONFIRMING,
            "description": "Confirm a note (asks first).",
            "parameters": params,
            "result": "note confirmed",
            "approval": "ask",
        },
        {"name": HANGING, "description": "Never returns.", "hang": True},
    ]
    if approvals:
        return declared
    return [{k: v for k, v in tool.items() if k != "approval"} for tool in declared]


def sentence(max_words: int = 4) -> st.SearchStrategy[str]:
    """A few distinct words: no repetition for a guard to trip on."""
    return st.lists(st.sampled_from(WORDS), min_size=1, max_size=max_words, unique=True).map(
        " ".join
    )


def misspelt(name: str) -> st.SearchStrategy[str]:
    """`name` with one character dropped, doubled or changed in case."""
    index = st.integers(0, len(name) - 1)
    return st.one_of(
        index.map(lambda i: name[:i] + name[i + 1 :]),
        index.map(lambda i: name[: i + 1] + name[i:]),
        st.just(name.upper()),
    )


def tool_name() -> st.SearchStrategy[str]:
    """A called name: a declared tool (most often), one nobody declared, or a typo."""
    return st.one_of(
        st.just(ECHO),
        st.just(ECHO),
        st.just("no_such_tool"),
        misspelt(ECHO),
    )


ODD_NUMBERS = st.sampled_from([1.0, -0.0, 0.1, 1e-7, 1.5e300, 2**53 + 1, -(2**63), 10**22])
"""Numbers JSON carries that languages read differently: integral floats, negative zero,
integers beyond 2**53 (a JavaScript double loses them), tiny and huge exponents."""
JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63),
    ODD_NUMBERS,
    st.text(max_size=8),
)


def arguments_object() -> st.SearchStrategy[dict[str, Any]]:
    """Valid arguments: an object, with unusual numbers and unicode among its values."""
    value = st.recursive(
        JSON_SCALARS,
        lambda inner: (
            st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=4), inner, max_size=2)
        ),
        max_leaves=4,
    )
    return st.one_of(
        st.just({}),
        st.fixed_dictionaries({"text": sentence()}),
        st.fixed_dictionaries({"n": ODD_NUMBERS}),
        st.dictionaries(st.sampled_from(["text", "n", "ü", "a b"]), value, max_size=3),
    )


NOT_OBJECTS = ("[]", '"just a string"', "null")
"""Arguments that are JSON but not an object."""


def arguments_text(objects_only: bool = False) -> st.SearchStrategy[str]:
    """Arguments sent verbatim: JSON written oddly (spaces, escapes, duplicate keys, big
    or negative-zero numbers), or not JSON at all. With `objects_only`, only text that
    reads as an object (`""` reads as `{}`): MCP's `tools/call` carries an object, so a
    pair whose targets get the fixture tools by different transports would differ on
    anything else by transport, not by agent (docs/explore.md)."""
    odd_json = st.one_of(
        arguments_object().map(lambda v: json.dumps(v, indent=2)),
        arguments_object().map(lambda v: json.dumps(v, ensure_ascii=True)),
        st.sampled_from(
            [
                '{"text": "a", "text": "b"}',
                '{"n": 1.0}',
                '{"n": -0}',
                '{"n": 1e400}',
                '{"n": 12345678901234567890123}',
                '{"text":"\\u00e9\\ud83d\\ude42"}',
                *(() if objects_only else NOT_OBJECTS),
            ]
        ),
    )
    if objects_only:
        return st.one_of(odd_json, st.just(""))
    # Not JSON, though some parsers take it: Python's reads NaN and Infinity.
    not_json = st.sampled_from(
        ["", "{", "{text: a}", "not json", '{"text": "a"', '{"n": NaN}', '{"n": -Infinity}', "NaN"]
    )
    return st.one_of(odd_json, not_json)


def tool_call(call_id: str, objects_only: bool = False) -> st.SearchStrategy[dict[str, Any]]:
    """One scripted call (`tool_calls[]`) with a fixed id (ids link a call's updates);
    `objects_only`: arguments that read as an object (`arguments_text`)."""
    args: st.SearchStrategy[Any] = st.one_of(arguments_object(), arguments_text(objects_only))
    return st.builds(
        lambda name, arguments: {"id": call_id, "name": name, "arguments": arguments},
        tool_name(),
        args,
    )


def usage() -> st.SearchStrategy[dict[str, int]]:
    small = st.integers(0, 50)
    return st.one_of(
        st.builds(lambda i, o: {"input": i, "output": o}, small, small),
        st.builds(lambda i, o, r: {"input": i, "output": o, "reasoning": r}, small, small, small),
    )


@st.composite
def closing_entry(draw: st.DrawFn) -> dict[str, Any]:
    """The answer that ends a turn: text and/or reasoning with a finish kind and usage, or
    a provider failure (mid-stream, or an HTTP status before any chunk)."""
    kind = draw(st.sampled_from(("content", "content", "content", "error", "status")))
    if kind == "status":
        status = draw(st.sampled_from((400, 429, 500, 503)))
        return {"error": {"message": draw(sentence()), "status": status}}
    entry: dict[str, Any] = {}
    if draw(st.booleans()):
        entry["reasoning"] = draw(sentence())
    if draw(st.booleans()) or not entry:
        entry["text"] = draw(sentence())
    if draw(st.booleans()):
        entry["deltas"] = draw(st.integers(1, 5))
    if kind == "error":
        entry["error"] = {"message": draw(sentence())}
        return entry
    finish = draw(st.sampled_from((None, *finish_kinds())))
    if finish is not None and finish != "tool-calls":  # tool-calls without calls: no
        entry["finish"] = finish
    if draw(st.booleans()):
        entry["usage"] = draw(usage())
    return entry


@st.composite
def calling_entry(draw: st.DrawFn, first_id: int, objects_only: bool = False) -> dict[str, Any]:
    """An answer with one to three tool calls (ids `call-N` from `first_id`)."""
    count = draw(st.integers(1, 3))
    calls = [draw(tool_call(f"call-{first_id + i}", objects_only)) for i in range(count)]
    entry: dict[str, Any] = {"tool_calls": calls}
    if draw(st.booleans()):
        entry["text"] = draw(sentence())
    if draw(st.booleans()):
        entry["usage"] = draw(usage())
    return entry


def hanging_entry() -> dict[str, Any]:
    """A stream held open with nothing sent: the turn's cancel fires on its request
    (`llm_request`), and no streamed prefix races the cancel."""
    return {"then": "hang"}
