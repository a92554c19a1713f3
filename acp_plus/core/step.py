"""Folding one model step's StreamChunks into what may be committed. Pure.

The commit rule (§8.1, §2): only blocks closed by `block-end` are committed; on a user
abort the streamed prefix is committed too (closed blocks plus the text and reasoning
deltas of still-open blocks); on a provider error nothing is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from acp_plus.core.events import Usage

_DELTA_FIELD = {"text-delta": "text", "reasoning-delta": "text"}


@dataclass
class _OpenBlock:
    block_type: str
    text: list[str] = field(default_factory=list)


@dataclass
class StepAccumulator:
    """Collects one step's chunks; `feed` returns the finish reason once it arrives."""

    closed: dict[int, dict[str, Any]] = field(default_factory=dict)
    open: dict[int, _OpenBlock] = field(default_factory=dict)
    usage: Usage | None = None
    finish: dict[str, Any] | None = None

    def feed(self, chunk: dict[str, Any]) -> dict[str, Any] | None:
        """Apply one chunk; return the `finish.reason` when this chunk finished the step.

        Unknown chunk types are ignored (the union may grow with optional additions).
        """
        kind = chunk.get("type")
        index = chunk.get("index")
        if kind == "block-start" and isinstance(index, int):
            self.open[index] = _OpenBlock(str(chunk.get("blockType", "")))
        elif kind in _DELTA_FIELD and isinstance(index, int):
            open_block = self.open.setdefault(
                index, _OpenBlock("text" if kind == "text-delta" else "reasoning")
            )
            text = chunk.get("text")
            if isinstance(text, str):
                open_block.text.append(text)
        elif kind == "block-end" and isinstance(index, int):
            self.open.pop(index, None)
            block = chunk.get("block")
            if isinstance(block, dict):
                self.closed[index] = block
        elif kind == "usage" and isinstance(chunk.get("usage"), dict):
            self.usage = _usage(chunk["usage"])
        elif kind == "finish":
            reason = chunk.get("reason")
            self.finish = reason if isinstance(reason, dict) else {"kind": "stop"}
            return self.finish
        return None

    def committed_blocks(self) -> list[dict[str, Any]]:
        """The closed blocks, in block-index order."""
        return [self.closed[i] for i in sorted(self.closed)]

    def abort_prefix(self) -> list[dict[str, Any]]:
        """Closed blocks plus the non-empty text/reasoning streamed into open blocks."""
        blocks = dict(self.closed)
        for index, block in self.open.items():
            text = "".join(block.text)
            if block.block_type in ("text", "reasoning") and text:
                blocks[index] = {"type": block.block_type, "text": text}
        return [blocks[i] for i in sorted(blocks)]


def _usage(raw: dict[str, Any]) -> Usage:
    usage: Usage = {
        "inputTokens": int(raw.get("inputTokens", 0) or 0),
        "outputTokens": int(raw.get("outputTokens", 0) or 0),
    }
    for name in ("reasoningTokens", "cacheReadTokens", "cacheWriteTokens"):
        if isinstance(raw.get(name), int):
            usage[name] = raw[name]
    return usage


def tool_calls(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tool-call blocks of a committed message, in order."""
    return [b for b in blocks if b.get("type") == "tool-call"]
