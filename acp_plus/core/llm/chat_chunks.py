"""Streamed chat-completion chunks folded into StreamChunks (§8.1), block by block. Pure.

One block per text run, reasoning run (DeepSeek `reasoning_content`) and tool call, each
with block-start / deltas / block-end, then `usage`, then `finish`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from acp_plus.core.llm.base import error_finish

_FINISH_KINDS = {"stop": "stop", "tool_calls": "tool-calls", "length": "max-tokens"}


def map_usage(raw: Mapping[str, Any]) -> dict[str, int]:
    """Chat usage -> StreamChunk usage; input counts exclude cache hits (disjoint counts)."""
    prompt = int(raw.get("prompt_tokens") or 0)
    cached = raw.get("prompt_cache_hit_tokens")  # DeepSeek
    if not isinstance(cached, int):
        details = raw.get("prompt_tokens_details") or {}
        cached = details.get("cached_tokens") if isinstance(details, Mapping) else None
    cached = cached if isinstance(cached, int) else 0
    usage = {
        "inputTokens": max(prompt - cached, 0),
        "outputTokens": int(raw.get("completion_tokens") or 0),
    }
    if cached:
        usage["cacheReadTokens"] = cached
    out_details = raw.get("completion_tokens_details") or {}
    if isinstance(out_details, Mapping) and isinstance(out_details.get("reasoning_tokens"), int):
        usage["reasoningTokens"] = out_details["reasoning_tokens"]
    return usage


@dataclass
class _Block:
    index: int
    kind: str
    text: list[str] = field(default_factory=list)
    call_id: str = ""
    name: str = ""


@dataclass
class ChatChunkMapper:
    """Folds chat-completion chunk dicts into StreamChunks, block by block."""

    _next: int = 0
    _text: _Block | None = None
    _reasoning: _Block | None = None
    _tools: dict[int, _Block] = field(default_factory=dict)
    _open: list[_Block] = field(default_factory=list)
    _usage: dict[str, int] | None = None
    _finish: str | None = None

    def _start(self, kind: str) -> tuple[_Block, dict[str, Any]]:
        block = _Block(self._next, kind)
        self._next += 1
        self._open.append(block)
        return block, {"type": "block-start", "index": block.index, "blockType": kind}

    def _end(self, block: _Block | None) -> list[dict[str, Any]]:
        if block is None or block not in self._open:
            return []
        self._open.remove(block)
        if block.kind == "tool-call":
            final = {
                "type": "tool-call",
                "id": block.call_id,
                "name": block.name,
                "arguments": "".join(block.text),
            }
        else:
            final = {"type": block.kind, "text": "".join(block.text)}
        return [{"type": "block-end", "index": block.index, "block": final}]

    def feed(self, chunk: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The StreamChunks one chat chunk produces (possibly none)."""
        out: list[dict[str, Any]] = []
        if isinstance(chunk.get("usage"), Mapping):
            self._usage = map_usage(chunk["usage"])
        choices = chunk.get("choices") or []
        if not choices:
            return out
        choice = choices[0]
        delta = choice.get("delta") or {}
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            out += self._end(self._text)
            self._text = None
            if self._reasoning is None:
                self._reasoning, start = self._start("reasoning")
                out.append(start)
            self._reasoning.text.append(reasoning)
            out.append(
                {"type": "reasoning-delta", "index": self._reasoning.index, "text": reasoning}
            )
        content = delta.get("content")
        if isinstance(content, str) and content:
            out += self._end(self._reasoning)
            self._reasoning = None
            if self._text is None:
                self._text, start = self._start("text")
                out.append(start)
            self._text.text.append(content)
            out.append({"type": "text-delta", "index": self._text.index, "text": content})
        for call in delta.get("tool_calls") or []:
            out += self._end(self._text) + self._end(self._reasoning)
            self._text = self._reasoning = None
            position = int(call.get("index") or 0)
            block = self._tools.get(position)
            if block is None:
                block, start = self._start("tool-call")
                self._tools[position] = block
                out.append(start)
            fn = call.get("function") or {}
            block.call_id = call.get("id") or block.call_id
            block.name = fn.get("name") or block.name
            fragment = fn.get("arguments") or ""
            block.text.append(fragment)
            tool_delta: dict[str, Any] = {
                "type": "tool-call-delta",
                "index": block.index,
                "id": block.call_id,
                "argumentsDelta": fragment,
            }
            if fn.get("name"):
                tool_delta["name"] = fn["name"]
            out.append(tool_delta)
        if choice.get("finish_reason"):
            self._finish = str(choice["finish_reason"])
        return out

    def close(self) -> list[dict[str, Any]]:
        """At the end of the stream: close open blocks, then usage, then finish."""
        if self._finish is None:
            return [
                error_finish("the provider stream ended without a finish_reason", "EMPTY_RESPONSE")
            ]
        out: list[dict[str, Any]] = []
        for block in list(self._open):
            out += self._end(block)
        if self._usage is not None:
            out.append({"type": "usage", "usage": self._usage})
        kind = _FINISH_KINDS.get(self._finish)
        if kind is None:
            out.append(error_finish(f"the provider stopped: {self._finish}", "PROVIDER_STOP"))
        else:
            out.append({"type": "finish", "reason": {"kind": kind}})
        return out
