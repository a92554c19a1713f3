"""Google Gemini API dialect (`gemini`), pure parts.

Routes below the run base, `v1beta` or `v1`: `POST models/{model}:streamGenerateContent`
(SSE, `?alt=sse`: one `data: {GenerateContentResponse}` per event),
`POST models/{model}:generateContent` (one JSON response), `POST models/{model}:countTokens`
and `GET models` / `GET models/{model}`. The model sits in the path, not the body.

Every response has one candidate whose `content` (role `model`) holds `parts`: `text`,
`text` with `thought: true` for reasoning, `functionCall {id?, name, args}` with `args`
a JSON object. A function call is sent whole, in the event of its block's end (Gemini
does not stream arguments). The last event carries `finishReason` (STOP, also after
tool calls; MAX_TOKENS) and `usageMetadata`. A failure after the stream started is a
`data: {"error": {code, message, status}}` event, which the official SDK raises as
`APIError`; before it, the HTTP status carries the same Google error JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from parity.fakellm.script import Chunk, RequestView
from parity.fakellm.toolnames import Offered
from parity.fakellm.wire import FAILED_KINDS, Wire, assemble, failure_fields, finish_of, sse

VERSIONS = ("v1beta", "v1")
"""API versions served; the official SDK defaults to `v1beta`."""
METHODS = ("generateContent", "streamGenerateContent", "countTokens")
"""The `models/{model}:<method>` POST endpoints (`supportedGenerationMethods`)."""

_FINISH_REASONS = {"stop": "STOP", "tool-calls": "STOP", "max-tokens": "MAX_TOKENS"}

_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
    529: "UNAVAILABLE",
}


def status_name(status: int) -> str:
    """The google.rpc status name for an HTTP status (INTERNAL / INVALID_ARGUMENT otherwise)."""
    return _STATUS_NAMES.get(status, "INTERNAL" if status >= 500 else "INVALID_ARGUMENT")


def error(message: str, code: str, status: int) -> dict[str, Any]:
    """Google's error JSON; the scripted `code` rides as the `ErrorInfo.reason` detail."""
    detail = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": code}
    return {
        "error": {
            "code": status,
            "message": message,
            "status": status_name(status),
            "details": [{**detail, "domain": "parity"}],
        }
    }


def problem(body: Any) -> str | None:
    """Why `body` is not a `generateContent` request, or None."""
    if not isinstance(body, Mapping):
        return "malformed request: body is not a JSON object"
    if not isinstance(body.get("contents"), list):
        return "malformed request: `contents` must be a list"
    system = body.get("systemInstruction", body.get("system_instruction"))
    if system is not None and not isinstance(system, (Mapping, str)):
        return "malformed request: `systemInstruction` must be a Content object"
    if "tools" in body and not isinstance(body["tools"], list):
        return "malformed request: `tools` must be a list"
    config = body.get("generationConfig", body.get("generation_config"))
    if config is not None and not isinstance(config, Mapping):
        return "malformed request: `generationConfig` must be an object"
    return None


def count_problem(body: Any) -> str | None:
    """Why `body` is not a `countTokens` request (`contents` or `generateContentRequest`)."""
    if isinstance(body, Mapping) and "generateContentRequest" in body:
        return problem(body["generateContentRequest"])
    return problem(body)


def _strings(value: Any) -> list[str]:
    """Every string inside a JSON value (a `functionResponse.response` object)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def _part_texts(content: Any) -> list[str]:
    """Texts of one Content (`{role, parts}`): text and thought parts, tool results."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, Mapping):
        return []
    out: list[str] = []
    for part in content.get("parts") or []:
        if not isinstance(part, Mapping):
            continue
        if isinstance(part.get("text"), str):
            out.append(part["text"])
        result = part.get("functionResponse", part.get("function_response"))
        if isinstance(result, Mapping):
            out += _strings(result.get("response"))
    return out


def _request(body: Mapping[str, Any]) -> Mapping[str, Any]:
    """The generate request inside a body (countTokens may wrap one)."""
    inner = body.get("generateContentRequest")
    return inner if isinstance(inner, Mapping) else body


def view(body: Mapping[str, Any]) -> RequestView:
    """Side-request view: tools present, texts of the system instruction and contents
    (text parts, thought parts and string values of `functionResponse.response`)."""
    body = _request(body)
    texts = _part_texts(body.get("systemInstruction", body.get("system_instruction")))
    for content in body.get("contents") or []:
        texts += _part_texts(content)
    return RequestView(has_tools=bool(body.get("tools")), texts=tuple(texts))


def offered(body: Mapping[str, Any]) -> list[Offered]:
    """Tools of a Gemini request: `tools[].functionDeclarations[].name`."""
    out: list[Offered] = []
    for tool in _request(body).get("tools") or []:
        if not isinstance(tool, Mapping):
            continue
        declarations = tool.get("functionDeclarations", tool.get("function_declarations"))
        for declaration in declarations if isinstance(declarations, list) else []:
            if isinstance(declaration, Mapping) and isinstance(declaration.get("name"), str):
                out.append(Offered(declaration["name"]))
    return out


def count_tokens(body: Mapping[str, Any]) -> dict[str, Any]:
    """The `countTokens` answer: about four characters a token over the request's texts
    (deterministic; the script is not consulted)."""
    chars = sum(len(text) for text in view(body).texts)
    return {"totalTokens": (chars + 3) // 4}


def usage_json(usage: Mapping[str, int]) -> dict[str, int]:
    """parity-stream usage -> `usageMetadata`. Canonical output tokens include the
    reasoning tokens (as OpenAI's do); Gemini counts thoughts apart from candidates."""
    prompt = int(usage.get("inputTokens", 0))
    output = int(usage.get("outputTokens", 0))
    out = {"promptTokenCount": prompt}
    if "reasoningTokens" in usage:
        thoughts = int(usage["reasoningTokens"])
        out["candidatesTokenCount"] = max(output - thoughts, 0)
        out["thoughtsTokenCount"] = thoughts
        out["totalTokenCount"] = prompt + max(output, thoughts)
    else:
        out["candidatesTokenCount"] = output
        out["totalTokenCount"] = prompt + output
    return out


def _args(arguments: str) -> dict[str, Any]:
    """Raw argument JSON -> the `args` object (`{}` when it is not a JSON object)."""
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        return {}  # a scripted malformed string cannot be an object here
    return value if isinstance(value, dict) else {}


def _call_part(ident: Any, name: Any, arguments: str) -> dict[str, Any]:
    call: dict[str, Any] = {"name": str(name or ""), "args": _args(arguments)}
    if ident:
        call = {"id": str(ident), **call}
    return {"functionCall": call}


def _response(
    parts: list[dict[str, Any]],
    *,
    ident: str,
    model: str,
    finish: str | None = None,
    usage: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = _FINISH_REASONS.get(finish, "STOP")
    out: dict[str, Any] = {"candidates": [candidate]}
    if usage is not None:
        out["usageMetadata"] = usage_json(usage)
    out["modelVersion"] = model
    out["responseId"] = ident
    return out


def render_stream(chunks: Sequence[Chunk], *, ident: str, model: str) -> Wire:
    """Canonical chunks -> `streamGenerateContent?alt=sse` events, one part per chunk."""

    def event(parts: list[dict[str, Any]], **extra: Any) -> bytes:
        return sse(_response(parts, ident=ident, model=model, **extra))

    wire = Wire()
    calls: dict[int, dict[str, Any]] = {}
    """Tool-call blocks opened by a delta and not sent yet, by block index."""
    usage: Mapping[str, int] | None = None
    for chunk in chunks:
        kind = chunk.get("type")
        block = int(chunk.get("index", 0))
        part = b""
        if kind in ("text-delta", "reasoning-delta") and chunk.get("text"):
            piece: dict[str, Any] = {"text": str(chunk["text"])}
            if kind == "reasoning-delta":
                piece["thought"] = True
            part = event([piece])
        elif kind == "tool-call-delta":
            call = calls.setdefault(block, {"id": None, "name": "", "arguments": ""})
            call["id"] = chunk.get("id") or call["id"]
            call["name"] = chunk.get("name") or call["name"]
            call["arguments"] += str(chunk.get("argumentsDelta", ""))
        elif kind == "block-end" and (chunk.get("block") or {}).get("type") == "tool-call":
            done = chunk["block"]
            call = calls.pop(block, {"id": None, "name": "", "arguments": ""})
            arguments = done.get("arguments")
            part = event(
                [
                    _call_part(
                        done.get("id") or call["id"],
                        done.get("name") or call["name"],
                        arguments if isinstance(arguments, str) else call["arguments"],
                    )
                ]
            )
        elif kind == "usage":
            usage = chunk.get("usage")
        elif (fin := finish_of(chunk)) is not None:
            finish, failure = fin
            if finish in FAILED_KINDS:
                part = sse(error(*failure_fields(failure)))
            else:  # calls whose block never ended still reach the client, whole
                pending = [_call_part(c["id"], c["name"], c["arguments"]) for c in calls.values()]
                calls.clear()
                part = event(pending, finish=finish, usage=usage)
        wire.parts.append(part)
    return wire


def render_full(chunks: Sequence[Chunk], *, ident: str, model: str) -> dict[str, Any]:
    """Canonical chunks -> one `generateContent` response."""
    whole = assemble(chunks)
    parts: list[dict[str, Any]] = []
    if whole.reasoning is not None:
        parts.append({"text": whole.reasoning, "thought": True})
    if whole.text is not None:
        parts.append({"text": whole.text})
    parts += [_call_part(c["id"], c["name"], c["arguments"]) for c in whole.tool_calls]
    return _response(
        parts, ident=ident, model=model, finish=whole.finish or "stop", usage=whole.usage
    )


def model_json(model: Mapping[str, Any]) -> dict[str, Any]:
    """A catalog model as a Gemini `Model` resource."""
    out: dict[str, Any] = {
        "name": f"models/{model['id']}",
        "displayName": str(model.get("name", model["id"])),
        "description": str(model.get("description", "")),
        "supportedGenerationMethods": list(METHODS),
    }
    if model.get("contextWindow") is not None:
        out["inputTokenLimit"] = int(model["contextWindow"])
    if model.get("reasoning"):
        out["thinking"] = True
    return out


def models(catalog: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every catalog model as a Gemini `Model`, in catalog order."""
    return [
        model_json(model)
        for provider in catalog.get("providers", [])
        for model in provider.get("models", [])
        if isinstance(model, Mapping) and "id" in model
    ]


def find_model(catalog: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    """The catalog model `name` (with or without `models/`), as a Gemini `Model`."""
    wanted = f"models/{name.removeprefix('models/')}"
    return next((m for m in models(catalog) if m["name"] == wanted), None)
