"""Each dialect's model request -> the fake's canonical form (pure).

Two agents that speak different provider dialects (acp-plus through parity-stream and
through chat completions, say) cannot be compared on the raw bodies: the paths, the
field names and the shapes all differ while what the model was shown may be the same.
Each `from_*` reduces one dialect's request body to what the model sees, in the parity-stream
vocabulary (docs/fakellm.md): `model`, `reasoningEffort`, `system`, `messages` with
`text` / `reasoning` / `tool-call` / `image` blocks and `tool` messages, and `tools`.
Dialect plumbing (stream flags, usage options, ids of the provider's own objects) and
what some dialects cannot say at all (`isError` of a tool result, the provider route)
are left out. `parity.checks.diff` compares model views this way when the two sides' dialects
differ. Which function reads which dialect, and which paths are model calls, is the dialect
registry's (`parity.fakellm.dialects`: `canonical_request`, `dialect_of`); every reader takes
(body, path) there, though only Gemini names its model in the path.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def _text(text: Any) -> dict[str, Any]:
    return {"type": "text", "text": str(text)}


def _args(value: Any) -> str:
    """Tool-call arguments as the canonical raw JSON string (compact, keys sorted)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return str(value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def _tool(name: Any, description: Any, parameters: Any) -> dict[str, Any]:
    return {"name": name, "description": description or "", "parameters": parameters or {}}


# -- parity-stream ------------------------------------------------------------------------


def from_parity_stream(body: Mapping[str, Any], _path: str) -> dict[str, Any]:
    messages = []
    for message in body.get("messages") or []:
        if not isinstance(message, Mapping):
            continue
        blocks = [_stream_block(b) for b in message.get("content") or [] if isinstance(b, Mapping)]
        entry: dict[str, Any] = {"role": message.get("role"), "content": blocks}
        if message.get("role") == "tool":
            entry["toolCallId"] = message.get("toolCallId")
        messages.append(entry)
    return {
        "model": body.get("model"),
        "reasoningEffort": body.get("reasoningEffort"),
        "system": body.get("system"),
        "messages": messages,
        "tools": [
            _tool(t.get("name"), t.get("description"), t.get("parameters"))
            for t in body.get("tools") or []
            if isinstance(t, Mapping)
        ],
    }


def _stream_block(block: Mapping[str, Any]) -> dict[str, Any]:
    if block.get("type") == "tool-call":
        return {
            "type": "tool-call",
            "id": block.get("id"),
            "name": block.get("name"),
            "arguments": _args(block.get("arguments")),
        }
    if block.get("type") == "image":
        return {"type": "image", "mimeType": block.get("mimeType")}
    return {"type": block.get("type"), "text": block.get("text")}


# -- OpenAI chat completions --------------------------------------------------------------


def _chat_content(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [_text(content)] if content else []
    out = []
    for part in content or []:
        if isinstance(part, Mapping) and part.get("type") == "text":
            out.append(_text(part.get("text")))
        elif isinstance(part, Mapping) and part.get("type") == "image_url":
            url = str((part.get("image_url") or {}).get("url", ""))
            mime = url[5:].split(";", 1)[0] if url.startswith("data:") else None
            out.append({"type": "image", "mimeType": mime})
    return out


def from_openai_chat(body: Mapping[str, Any], _path: str) -> dict[str, Any]:
    system: list[str] = []
    messages: list[dict[str, Any]] = []
    for message in body.get("messages") or []:
        if not isinstance(message, Mapping):
            continue
        role = message.get("role")
        if role in ("system", "developer"):
            system.extend(b["text"] for b in _chat_content(message.get("content")))
        elif role == "tool":
            messages.append(
                {
                    "role": "tool",
                    "content": _chat_content(message.get("content")),
                    "toolCallId": message.get("tool_call_id"),
                }
            )
        elif role == "assistant":
            blocks: list[dict[str, Any]] = []
            if message.get("reasoning_content"):
                blocks.append({"type": "reasoning", "text": message["reasoning_content"]})
            blocks.extend(_chat_content(message.get("content")))
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                blocks.append(
                    {
                        "type": "tool-call",
                        "id": call.get("id"),
                        "name": function.get("name"),
                        "arguments": _args(function.get("arguments")),
                    }
                )
            messages.append({"role": "assistant", "content": blocks})
        else:
            messages.append({"role": role, "content": _chat_content(message.get("content"))})
    return {
        "model": body.get("model"),
        "reasoningEffort": body.get("reasoning_effort"),
        "system": "\n\n".join(system) or None,
        "messages": messages,
        "tools": [
            _tool(f.get("name"), f.get("description"), f.get("parameters"))
            for t in body.get("tools") or []
            if isinstance(t, Mapping) and isinstance(f := t.get("function"), Mapping)
        ],
    }


# -- OpenAI responses ---------------------------------------------------------------------


def from_openai_responses(body: Mapping[str, Any], _path: str) -> dict[str, Any]:
    system = [str(body["instructions"])] if body.get("instructions") else []
    messages: list[dict[str, Any]] = []
    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]

    def assistant() -> list[dict[str, Any]]:
        if not messages or messages[-1]["role"] != "assistant":
            messages.append({"role": "assistant", "content": []})
        blocks: list[dict[str, Any]] = messages[-1]["content"]
        return blocks

    for item in items or []:
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type", "message")
        if kind == "message":
            content = item.get("content")
            parts = (
                [_text(content)]
                if isinstance(content, str)
                else [
                    _text(p.get("text"))
                    for p in content or []
                    if isinstance(p, Mapping) and "text" in p
                ]
            )
            if item.get("role") in ("system", "developer"):
                system.extend(p["text"] for p in parts)
            elif item.get("role") == "assistant":
                assistant().extend(parts)
            else:
                messages.append({"role": item.get("role"), "content": parts})
        elif kind == "reasoning":
            texts = [s.get("text") for s in item.get("summary") or [] if isinstance(s, Mapping)]
            if any(texts):
                assistant().append({"type": "reasoning", "text": "".join(filter(None, texts))})
        elif kind in ("function_call", "custom_tool_call"):
            assistant().append(
                {
                    "type": "tool-call",
                    "id": item.get("call_id"),
                    "name": item.get("name"),
                    "arguments": _args(item.get("arguments", item.get("input"))),
                }
            )
        elif kind in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            messages.append(
                {
                    "role": "tool",
                    "content": _chat_content(output)
                    if not isinstance(output, str)
                    else [_text(output)],
                    "toolCallId": item.get("call_id"),
                }
            )
    reasoning = body.get("reasoning")
    return {
        "model": body.get("model"),
        "reasoningEffort": reasoning.get("effort") if isinstance(reasoning, Mapping) else None,
        "system": "\n\n".join(system) or None,
        "messages": messages,
        "tools": [
            _tool(t.get("name"), t.get("description"), t.get("parameters"))
            for t in body.get("tools") or []
            if isinstance(t, Mapping)
        ],
    }


# -- Anthropic messages -------------------------------------------------------------------


def from_anthropic_messages(body: Mapping[str, Any], _path: str) -> dict[str, Any]:
    raw_system = body.get("system")
    system: Any
    if isinstance(raw_system, list):
        system = "\n\n".join(
            str(b.get("text")) for b in raw_system if isinstance(b, Mapping) and "text" in b
        )
    else:
        system = raw_system
    messages: list[dict[str, Any]] = []
    for message in body.get("messages") or []:
        if not isinstance(message, Mapping):
            continue
        content = message.get("content")
        blocks = [_text(content)] if isinstance(content, str) else list(content or [])
        current: list[dict[str, Any]] = []
        for block in blocks:
            if not isinstance(block, Mapping):
                continue
            kind = block.get("type")
            if kind == "tool_result":
                inner = block.get("content")
                messages.append(
                    {
                        "role": "tool",
                        "content": [_text(inner)]
                        if isinstance(inner, str)
                        else _chat_content(inner),
                        "toolCallId": block.get("tool_use_id"),
                    }
                )
            elif kind == "text":
                current.append(_text(block.get("text")))
            elif kind == "thinking":
                current.append({"type": "reasoning", "text": block.get("thinking")})
            elif kind == "tool_use":
                current.append(
                    {
                        "type": "tool-call",
                        "id": block.get("id"),
                        "name": block.get("name"),
                        "arguments": _args(block.get("input")),
                    }
                )
            elif kind == "image":
                source = block.get("source") or {}
                current.append({"type": "image", "mimeType": source.get("media_type")})
        if current:
            messages.append({"role": message.get("role"), "content": current})
    thinking = body.get("thinking")
    return {
        "model": body.get("model"),
        "reasoningEffort": None if not isinstance(thinking, Mapping) else thinking.get("effort"),
        "system": system,
        "messages": messages,
        "tools": [
            _tool(t.get("name"), t.get("description"), t.get("input_schema"))
            for t in body.get("tools") or []
            if isinstance(t, Mapping)
        ],
    }


# -- Gemini -------------------------------------------------------------------------------


def from_gemini(body: Mapping[str, Any], path: str) -> dict[str, Any]:
    instruction = body.get("systemInstruction") or body.get("system_instruction")
    system = None
    if isinstance(instruction, Mapping):
        system = "".join(
            str(p.get("text")) for p in instruction.get("parts") or [] if isinstance(p, Mapping)
        )
    messages: list[dict[str, Any]] = []
    for content in body.get("contents") or []:
        if not isinstance(content, Mapping):
            continue
        current: list[dict[str, Any]] = []
        for part in content.get("parts") or []:
            if not isinstance(part, Mapping):
                continue
            if "functionResponse" in part:
                response = part["functionResponse"] or {}
                messages.append(
                    {
                        "role": "tool",
                        "content": [_text(_args(response.get("response")))],
                        "toolCallId": response.get("id"),
                    }
                )
            elif "functionCall" in part:
                call = part["functionCall"] or {}
                current.append(
                    {
                        "type": "tool-call",
                        "id": call.get("id"),
                        "name": call.get("name"),
                        "arguments": _args(call.get("args", {})),
                    }
                )
            elif "text" in part:
                kind = "reasoning" if part.get("thought") else "text"
                current.append({"type": kind, "text": part.get("text")})
        if current:
            role = "assistant" if content.get("role") == "model" else content.get("role")
            messages.append({"role": role, "content": current})
    return {
        # Gemini names the model in the path (`/v1beta/models/{model}:generateContent`).
        "model": path.split("/models/", 1)[-1].split(":", 1)[0],
        "system": system,
        "messages": messages,
        "tools": [
            _tool(d.get("name"), d.get("description"), d.get("parameters"))
            for t in body.get("tools") or []
            if isinstance(t, Mapping)
            for d in t.get("functionDeclarations") or []
            if isinstance(d, Mapping)
        ],
    }
