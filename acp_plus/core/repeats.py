"""The repeated-tool-call reminder native adds to the model's view (pure).

When the model calls the same tool with the same arguments several times in a row,
native appends a user message after the result: a gentle note at the third
consecutive call, a detailed one at the fifth and eighth. A new user message (a prompt
or a steered message) starts the count again. acp-plus does the same so the model sees
the same conversation (docs/native.md, "The model's view").
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from acp_plus.core.js_json import js_json

THRESHOLDS = (3, 5, 8)
PREVIEW_CHARS = 500

GENTLE = (
    "You are repeating the exact same tool call with identical arguments. Carefully analyze "
    "the previous result before calling again: if the task is not complete, try a different "
    "approach or different arguments instead of repeating the call."
)


def detailed(name: str, count: int, arguments: str) -> str:
    """The reminder from the second threshold on: names the call and how often."""
    return (
        "Repeated tool call detected:\n"
        f"- tool: {name}\n"
        f"- consecutive_calls: {count}\n"
        f"- arguments: {arguments}\n"
        "The repeated calls are not making progress. Do not call this tool with these exact "
        "arguments again. Inspect the latest result and choose a different action, different "
        "arguments, or finish the task if enough evidence has been gathered."
    )


def _sorted(value: Any) -> Any:
    """Object keys in sorted order at every depth, so key order does not matter."""
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def canonical_arguments(raw: str) -> str:
    """A call's arguments as compact JSON with sorted keys (the raw text when it does
    not parse), the identity two calls are compared by."""
    try:
        return js_json(_sorted(json.loads(raw)))
    except ValueError:
        return raw


def preview(canonical: str, cap: int = PREVIEW_CHARS) -> str:
    """At most `cap` characters of the arguments, with a count of the rest."""
    if len(canonical) <= cap:
        return canonical
    return f"{canonical[:cap]}… (+{len(canonical) - cap} more chars)"


class RepeatTracker:
    """Counts consecutive identical tool calls of one session."""

    def __init__(self, thresholds: Sequence[int] = THRESHOLDS) -> None:
        self.thresholds = tuple(sorted(thresholds))
        self._key: tuple[str, str] | None = None
        self._count = 0

    def reset(self) -> None:
        """A user message arrived: repetition across it is not a loop."""
        self._key, self._count = None, 0

    def observe(self, name: str, raw_arguments: str) -> str | None:
        """Count one executed call; the reminder text when the count hits a threshold."""
        canonical = canonical_arguments(raw_arguments)
        key = (name, canonical)
        self._count = self._count + 1 if key == self._key else 1
        self._key = key
        if self._count not in self.thresholds:
            return None
        if self._count == self.thresholds[0]:
            return GENTLE
        return detailed(name, self._count, preview(canonical))
