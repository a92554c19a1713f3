"""A canonical model request -> a real provider's streaming request body (pure).

Recording mode (docs/capture.md) forwards an agent's model call to a real provider. When
the agent speaks another dialect than the provider (a DSH-family agent on parity-stream
recorded against an OpenAI-compatible endpoint, say), the call is first reduced to the
canonical request (`dialects.canonical_request`) and rebuilt here in the provider's
dialect: one builder per dialect (`chat_body`, `responses_body`, `anthropic_body`), chosen
by the dialect's entry in the registry (`dialects.upstream_body`). The rebuilt body says to
the provider what the agent's body said to the fake: reading it back with
`canonical_request` gives the same canonical request, with the model replaced, except for
what the target dialect cannot carry (`dialects.upstream_body`).

Always a streaming request: the provider then answers as coarsely or finely as it
streams, which the recorded entry keeps (`upstream_answer`'s `deltas`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

_Message = Mapping[str, Any]


# -- canonical parts ----------------------------------------------------------------------


def _messages(canonical: Mapping[str, Any]) -> list[_Message]:
    return [m for m in canonical.get("messages") or [] if isinstance(m, Mapping)]


def _blocks(message: _Message, kind: str) -> list[Mapping[str, Any]]:
    return [
        b for b in message.get("content") or [] if isinstance(b, Mapping) and b.get("type") == kind
    ]


def _texts(message: _Message, kind: str = "text") -> list[str]:
    return [str(b.get("text") or "") for b in _blocks(message, kind)]


def _tools(canonical: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [t for t in canonical.get("tools") or [] if isinstance(t, Mapping)]


def _function(
    tool: Mapping[str, Any], schema_key: str = "parameters", empty: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A tool's name, description (only when it has one) and schema under `schema_key`
    (`empty` standing for a tool without parameters)."""
    out: dict[str, Any] = {"name": tool.get("name")}
    if tool.get("description"):
        out["description"] = tool["description"]
    out[schema_key] = tool.get("parameters") or dict(empty or {})
    return out


def _arguments_object(arguments: Any) -> dict[str, Any]:
    """Canonical raw-JSON arguments as the object Anthropic's `tool_use.input` must be."""
    try:
        value = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        value = None
    # Malformed or non-object arguments (a script can send them) cannot be an `input`.
    return dict(value) if isinstance(value, Mapping) else {}


def _content(texts: list[str], part: str) -> str | list[dict[str, Any]]:
    """One text as a plain string, several as a list of `part` parts (keeping their
    boundaries, which the canonical form has)."""
    if len(texts) == 1:
        return texts[0]
    return [{"type": part, "text": text} for text in texts]


# -- OpenAI chat completions --------------------------------------------------------------


def _chat_assistant(message: _Message) -> dict[str, Any] | None:
    texts = _texts(message)
    calls = [
        {
            "id": call.get("id"),
            "type": "function",
            "function": {"name": call.get("name"), "arguments": call.get("arguments") or "{}"},
        }
        for call in _blocks(message, "tool-call")
    ]
    reasoning = "".join(_texts(message, "reasoning"))
    if not (texts or calls or reasoning):
        return None
    # OpenAI's convention: no content beside tool calls; some providers refuse a null
    # content without them.
    out: dict[str, Any] = {
        "role": "assistant",
        "content": _content(texts, "text") if texts else (None if calls else ""),
    }
    if reasoning:
        # DeepSeek's field: its thinking mode wants the reasoning of a tool-call turn back.
        out["reasoning_content"] = reasoning
    if calls:
        out["tool_calls"] = calls
    return out


def chat_body(canonical: Mapping[str, Any], model: str, _max_tokens: int) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    if canonical.get("system"):
        messages.append({"role": "system", "content": str(canonical["system"])})
    for message in _messages(canonical):
        role = message.get("role")
        if role == "tool":
            texts = _texts(message)
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": message.get("toolCallId"),
                    "content": _content(texts, "text") if texts else "",
                }
            )
        elif role == "assistant":
            if (turn := _chat_assistant(message)) is not None:
                messages.append(turn)
        elif texts := _texts(message):
            messages.append({"role": role, "content": _content(texts, "text")})
    body: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if tools := _tools(canonical):
        body["tools"] = [{"type": "function", "function": _function(t)} for t in tools]
    if canonical.get("reasoningEffort"):
        body["reasoning_effort"] = canonical["reasoningEffort"]
    return body


# -- OpenAI responses ---------------------------------------------------------------------


def _responses_items(message: _Message) -> list[dict[str, Any]]:
    """The input items of one canonical message, in block order.

    Reasoning is dropped: the Responses API takes earlier reasoning back only as
    `reasoning` items carrying the provider's own item id (and, without server-side
    storage, its encrypted content), neither of which the canonical form has.
    """
    role = message.get("role")
    if role == "tool":
        # `output` as one string: the list form's `input_text` parts are not read back by
        # the canonical form, so several text blocks are joined.
        output = "".join(_texts(message))
        return [
            {"type": "function_call_output", "call_id": message.get("toolCallId"), "output": output}
        ]
    if role != "assistant":
        texts = _texts(message)
        parts = [{"type": "input_text", "text": text} for text in texts]
        return [{"type": "message", "role": role, "content": parts}] if parts else []
    items: list[dict[str, Any]] = []
    for block in message.get("content") or []:
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == "text":
            # The API takes assistant text only as `output_text` parts.
            part = {"type": "output_text", "text": str(block.get("text") or "")}
            items.append({"type": "message", "role": "assistant", "content": [part]})
        elif block.get("type") == "tool-call":
            items.append(
                {
                    "type": "function_call",
                    "call_id": block.get("id"),
                    "name": block.get("name"),
                    "arguments": block.get("arguments") or "{}",
                }
            )
    return items


def responses_body(canonical: Mapping[str, Any], model: str, _max_tokens: int) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model}
    if canonical.get("system"):
        body["instructions"] = str(canonical["system"])
    body["input"] = [item for m in _messages(canonical) for item in _responses_items(m)]
    body["stream"] = True
    if tools := _tools(canonical):
        # strict off: the Responses API defaults function tools to strict mode, which
        # refuses the schemas agents write (every property required, no extra ones).
        body["tools"] = [{"type": "function", **_function(t), "strict": False} for t in tools]
    if canonical.get("reasoningEffort"):
        body["reasoning"] = {"effort": canonical["reasoningEffort"]}
    return body


# -- Anthropic messages -------------------------------------------------------------------

_EMPTY_SCHEMA = {"type": "object", "properties": {}}
"""Anthropic requires an object schema; a canonical tool without parameters has `{}`
(so such a tool reads back with this schema)."""


def _anthropic_assistant(message: _Message) -> list[dict[str, Any]]:
    """The content blocks of an assistant turn, in block order.

    Reasoning is dropped: Anthropic takes earlier thinking back only with the
    `signature` it issued for it, which the canonical form does not keep.
    """
    blocks: list[dict[str, Any]] = []
    for block in message.get("content") or []:
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == "text":
            blocks.append({"type": "text", "text": str(block.get("text") or "")})
        elif block.get("type") == "tool-call":
            blocks.append(
                {
                    "type": "tool_use",
                    "id": block.get("id"),
                    "name": block.get("name"),
                    "input": _arguments_object(block.get("arguments")),
                }
            )
    return blocks


def _tool_result(message: _Message) -> dict[str, Any]:
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.get("toolCallId")}
    if texts := _texts(message):
        result["content"] = _content(texts, "text")
    return result


def anthropic_body(canonical: Mapping[str, Any], model: str, max_tokens: int) -> dict[str, Any]:
    """Anthropic's body. No reasoning effort: Anthropic sizes thinking by a token budget
    (`thinking.budget_tokens`, below `max_tokens`), and a budget per effort level would
    be a number made up here."""
    messages: list[dict[str, Any]] = []
    results: list[dict[str, Any]] | None = None
    """The content of the user message collecting consecutive tool results (Anthropic
    answers one assistant turn's calls in one user turn)."""
    for message in _messages(canonical):
        role = message.get("role")
        if role == "tool":
            if results is None:
                results = []
                messages.append({"role": "user", "content": results})
            results.append(_tool_result(message))
            continue
        results = None
        if role == "assistant":
            blocks = _anthropic_assistant(message)
        else:
            blocks = [{"type": "text", "text": text} for text in _texts(message)]
        if blocks:
            messages.append({"role": role, "content": blocks})
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens}
    if canonical.get("system"):
        body["system"] = str(canonical["system"])
    body["messages"] = messages
    body["stream"] = True
    if tools := _tools(canonical):
        body["tools"] = [_function(t, "input_schema", _EMPTY_SCHEMA) for t in tools]
    return body
