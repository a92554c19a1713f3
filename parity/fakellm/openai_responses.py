"""OpenAI Responses dialect (`POST /v1/responses`, SSE), pure renderer.

What codex-acp reads: `response.created`, output items (`message` with `output_text`
deltas, `reasoning` with summary-text deltas, `function_call` with argument deltas),
each opened by `response.output_item.added` and closed by `response.output_item.done`,
then `response.completed` (usage), `response.incomplete` (max tokens) or
`response.failed` (provider error). Item ids are derived from the response id and the
block index, so a run's output is deterministic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from parity.fakellm.script import Chunk, RequestView
from parity.fakellm.wire import FAILED_KINDS, Wire, field_problem, finish_of, sse


def problem(body: Any) -> str | None:
    """Why `body` is not a Responses request, or None."""
    return field_problem(body, "input", (str, list), "a string or a list")


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    out: list[str] = []
    if isinstance(value, list):
        for item in value:
            if isinstance(item, Mapping):
                if isinstance(item.get("text"), str):
                    out.append(item["text"])
                out += _texts(item.get("content"))
    return out


def view(body: Mapping[str, Any]) -> RequestView:
    """Side-request view: tools present, texts of instructions and input items."""
    texts = _texts(body.get("instructions")) + _texts(body.get("input"))
    return RequestView(has_tools=bool(body.get("tools")), texts=tuple(texts))


def usage_json(usage: Mapping[str, int]) -> dict[str, Any]:
    """parity-stream usage counts -> Responses `usage`."""
    given = int(usage.get("inputTokens", 0))
    produced = int(usage.get("outputTokens", 0))
    return {
        "input_tokens": given,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": produced,
        "output_tokens_details": {"reasoning_tokens": int(usage.get("reasoningTokens", 0))},
        "total_tokens": given + produced,
    }


class _Renderer:
    """Stateful translation of one response; only used inside `render`."""

    def __init__(self, ident: str, model: str, namespaces: Mapping[str, str]) -> None:
        self.ident = ident
        self.model = model
        self.namespaces = namespaces
        self.seq = 0
        self.slots: dict[int, int] = {}
        """block index -> output_index"""
        self.items: dict[int, dict[str, Any]] = {}
        """output_index -> the item as built so far"""
        self.texts: dict[int, str] = {}
        self.usage: Mapping[str, int] | None = None

    def event(self, kind: str, **fields: Any) -> bytes:
        data = {"type": kind, "sequence_number": self.seq, **fields}
        self.seq += 1
        return sse(data, event=kind)

    def response(self, status: str, **extra: Any) -> dict[str, Any]:
        done = [self.items[i] for i in sorted(self.items) if self.items[i]["status"] == "completed"]
        usage = (
            usage_json(self.usage) if self.usage is not None and status != "in_progress" else None
        )
        return {
            "id": self.ident,
            "object": "response",
            "created_at": 0,
            "status": status,
            "model": self.model,
            "output": done if status != "in_progress" else [],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": usage,
            "error": None,
            "incomplete_details": None,
            **extra,
        }

    def head(self) -> bytes:
        return self.event("response.created", response=self.response("in_progress")) + self.event(
            "response.in_progress", response=self.response("in_progress")
        )

    def open(self, block: int, item: dict[str, Any]) -> bytes:
        index = self.slots[block] = len(self.slots)
        item = {**item, "status": "in_progress"}
        self.items[index] = item
        self.texts[index] = ""
        return self.event("response.output_item.added", output_index=index, item=item)

    def chunk(self, chunk: Chunk) -> bytes:
        kind = chunk.get("type")
        block = int(chunk.get("index", 0))
        item_id = f"{self.ident}_{block}"
        if kind == "block-start":
            shape = chunk.get("blockType")
            item: dict[str, Any]
            if shape == "text":
                item = {
                    "type": "message",
                    "id": f"msg_{item_id}",
                    "role": "assistant",
                    "content": [],
                }
                part = {"type": "output_text", "text": "", "annotations": []}
                out = self.open(block, item)
                return out + self.event(
                    "response.content_part.added",
                    item_id=item["id"],
                    output_index=self.slots[block],
                    content_index=0,
                    part=part,
                )
            if shape == "reasoning":
                item = {"type": "reasoning", "id": f"rs_{item_id}", "summary": []}
                summary = {"type": "summary_text", "text": ""}
                out = self.open(block, item)
                return out + self.event(
                    "response.reasoning_summary_part.added",
                    item_id=item["id"],
                    output_index=self.slots[block],
                    summary_index=0,
                    part=summary,
                )
            return b""  # a tool call opens on its first delta, which names it
        if kind == "tool-call-delta":
            out = b""
            if block not in self.slots:
                call: dict[str, Any] = {
                    "type": "function_call",
                    "id": f"fc_{item_id}",
                    "call_id": chunk.get("id"),
                    "name": chunk.get("name", ""),
                    "arguments": "",
                }
                if str(chunk.get("id")) in self.namespaces:
                    call["namespace"] = self.namespaces[str(chunk.get("id"))]
                out = self.open(block, call)
            index = self.slots[block]
            fragment = str(chunk.get("argumentsDelta", ""))
            self.texts[index] += fragment
            if fragment:
                out += self.event(
                    "response.function_call_arguments.delta",
                    item_id=self.items[index]["id"],
                    output_index=index,
                    delta=fragment,
                )
            return out
        if kind in ("text-delta", "reasoning-delta") and block in self.slots:
            index = self.slots[block]
            text = str(chunk.get("text", ""))
            self.texts[index] += text
            if kind == "text-delta":
                return self.event(
                    "response.output_text.delta",
                    item_id=self.items[index]["id"],
                    output_index=index,
                    content_index=0,
                    delta=text,
                    logprobs=[],
                )
            return self.event(
                "response.reasoning_summary_text.delta",
                item_id=self.items[index]["id"],
                output_index=index,
                summary_index=0,
                delta=text,
            )
        if kind == "block-end" and block in self.slots:
            return self.close(self.slots[block])
        if kind == "usage":
            self.usage = chunk.get("usage")
            return b""
        if (fin := finish_of(chunk)) is not None:
            return self.finish(*fin)
        return b""

    def close(self, index: int) -> bytes:
        item = self.items[index]
        text = self.texts[index]
        ids = {"item_id": item["id"], "output_index": index}
        out = b""
        if item["type"] == "message":
            part = {"type": "output_text", "text": text, "annotations": []}
            out += self.event(
                "response.output_text.done", **ids, content_index=0, text=text, logprobs=[]
            )
            out += self.event("response.content_part.done", **ids, content_index=0, part=part)
            item = {**item, "content": [part]}
        elif item["type"] == "reasoning":
            part = {"type": "summary_text", "text": text}
            out += self.event(
                "response.reasoning_summary_text.done", **ids, summary_index=0, text=text
            )
            out += self.event(
                "response.reasoning_summary_part.done", **ids, summary_index=0, part=part
            )
            item = {**item, "summary": [part]}
        else:
            out += self.event(
                "response.function_call_arguments.done", **ids, name=item["name"], arguments=text
            )
            item = {**item, "arguments": text}
        item["status"] = "completed"
        self.items[index] = item
        return out + self.event("response.output_item.done", output_index=index, item=item)

    def finish(self, kind: str, failure: dict[str, Any]) -> bytes:
        if kind in FAILED_KINDS:
            error = {
                "code": str(failure.get("code", "server_error")),
                "message": str(failure.get("message", "provider error")),
            }
            return self.event("response.failed", response=self.response("failed", error=error))
        if kind == "max-tokens":
            details = {"reason": "max_output_tokens"}
            response = self.response("incomplete", incomplete_details=details)
            return self.event("response.incomplete", response=response)
        return self.event("response.completed", response=self.response("completed"))


def render(
    chunks: Sequence[Chunk], *, ident: str, model: str, namespaces: Mapping[str, str] | None = None
) -> Wire:
    """Canonical chunks -> Responses SSE events, one part per chunk.

    `namespaces` maps call ids to the `namespace` their function_call item names
    (tools the request offered inside a `namespace` tool).
    """
    renderer = _Renderer(ident, model, namespaces or {})
    wire = Wire(head=renderer.head())
    wire.parts = [renderer.chunk(chunk) for chunk in chunks]
    return wire


def render_full(
    chunks: Sequence[Chunk], *, ident: str, model: str, namespaces: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Canonical chunks -> the final non-streaming `response` object."""
    renderer = _Renderer(ident, model, namespaces or {})
    kind = "stop"
    for chunk in chunks:
        renderer.chunk(chunk)
        if (fin := finish_of(chunk)) is not None:
            kind = fin[0]
    if kind == "max-tokens":
        return renderer.response("incomplete", incomplete_details={"reason": "max_output_tokens"})
    return renderer.response("completed")
