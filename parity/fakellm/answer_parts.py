"""What a provider's answer said, gathered piece by piece, and the `llm` entry it makes
(pure; the parts `upstream_answer`'s dialect readers share).

`Heard` collects one answer's reasoning, text, tool calls (their arguments in
fragments), usage, finish and error, from stream events or a whole object; `entry_of`
makes the scenario entry (docs/capture.md). The body helpers read SSE framing and JSON.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from parity.fakellm.script import DEFAULT_ERROR_CODE

Event = Mapping[str, Any]


@dataclass
class HeardCall:
    """A tool call as it arrives: id and name once, the arguments in fragments."""

    id: str = ""
    name: str = ""
    fragments: list[str] = field(default_factory=list)
    final: str | None = None
    """The whole argument string, when the provider repeats it at the end."""
    opened_with: Any = None
    """The argument object a call is opened with (Anthropic's `tool_use.input`), which
    stands when no fragment follows (a call without arguments)."""


@dataclass
class Heard:
    """What one answer said, gathered from its events or its whole object."""

    reasoning: list[str] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    calls: dict[Any, HeardCall] = field(default_factory=dict)
    """Tool calls by the provider's slot key (index, block or output index), in order."""
    usage: dict[str, int] = field(default_factory=dict)
    finish: str | None = None
    """The finish kind (`stop`, `tool-calls`, `max-tokens`) when the provider gave one."""
    error: dict[str, str] | None = None
    deltas: int = 0
    """Streamed events that carried text or reasoning."""

    def add(self, reasoning: Any = None, text: Any = None, *, delta: bool = False) -> None:
        """Add text and reasoning pieces (non-strings are malformed and ignored)."""
        pieces = [(self.reasoning, reasoning), (self.text, text)]
        added = False
        for into, piece in pieces:
            if isinstance(piece, str) and piece:
                into.append(piece)
                added = True
        if added and delta:
            self.deltas += 1

    def call(self, key: Any) -> HeardCall:
        return self.calls.setdefault(key, HeardCall())

    def fragment(self, key: Any, piece: Any) -> None:
        """Add an argument fragment to an opened call (others are malformed, skipped)."""
        if key in self.calls and isinstance(piece, str):
            self.calls[key].fragments.append(piece)


# -- the entry ----------------------------------------------------------------------------


def arguments_of(call: HeardCall) -> Any:
    """The arguments as an entry has them: a JSON object, else the raw string."""
    raw = call.final if call.final is not None else "".join(call.fragments)
    if not raw and isinstance(call.opened_with, Mapping):
        return dict(call.opened_with)
    try:
        value = json.loads(raw)
    except ValueError:
        return raw
    return value if isinstance(value, dict) else raw


def tool_calls_of(answer: Heard) -> list[dict[str, Any]]:
    # A call without a name cannot be replayed (the schema requires one): malformed.
    return [
        {"id": call.id or f"call-{n}", "name": call.name, "arguments": arguments_of(call)}
        for n, call in enumerate(answer.calls.values())
        if call.name
    ]


def usage_of(counts: Mapping[str, int]) -> dict[str, int] | None:
    """`{input, output, reasoning?}`; None when nothing was counted (the fake's Anthropic
    renderer, like any provider without usage, says zero). Zero reasoning tokens are
    left out: OpenAI reports them for models that do not reason."""
    if not (counts.get("input") or counts.get("output")):
        return None
    usage = {"input": counts.get("input", 0), "output": counts.get("output", 0)}
    if counts.get("reasoning"):
        usage["reasoning"] = counts["reasoning"]
    return usage


def deltas_of(answer: Heard, chars: int) -> int | None:
    """Characters per delta for a replay that streams about as coarsely as the provider
    did; None for the default (1) and for an answer that was not streamed."""
    if not answer.deltas:
        return None
    size = max(1, round(chars / answer.deltas))
    return size if size > 1 else None


def entry_of(answer: Heard) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    reasoning, text = "".join(answer.reasoning), "".join(answer.text)
    if reasoning:
        entry["reasoning"] = reasoning
    if text:
        entry["text"] = text
    if answer.error is not None:
        # A mid-stream error streams only text and reasoning (scenario checks, _check_llm).
        entry["error"] = answer.error
    else:
        if calls := tool_calls_of(answer):
            entry["tool_calls"] = calls
        if (usage := usage_of(answer.usage)) is not None:
            entry["usage"] = usage
        default = "tool-calls" if calls else "stop"
        finish = answer.finish or default
        if finish != default or not entry:
            entry["finish"] = finish  # also the one key of an empty answer (minProperties 1)
    if (size := deltas_of(answer, len(reasoning + text))) is not None:
        entry["deltas"] = size
    return entry


# -- errors -------------------------------------------------------------------------------


def failure_of(error: Any, fallback: str = "provider error") -> dict[str, str]:
    """`{message, code}` of a provider's error object: OpenAI's `{message, type, code}`,
    Anthropic's `{type, message}`, or a bare string. The code, more specific than
    OpenAI's type, wins; Anthropic has only the type."""
    if isinstance(error, str):
        return {"message": error or fallback, "code": DEFAULT_ERROR_CODE}
    if not isinstance(error, Mapping):
        return {"message": fallback, "code": DEFAULT_ERROR_CODE}
    message = error.get("message")
    code = next(
        (str(error[key]) for key in ("code", "type") if error.get(key) not in (None, "", "error")),
        DEFAULT_ERROR_CODE,
    )
    return {"message": str(message) if message else fallback, "code": code}


def http_error(text: str, status: int) -> dict[str, Any]:
    """The `error` of an HTTP error answer (OpenAI's or Anthropic's JSON, else text)."""
    data = json_object(text)
    excerpt = text.strip()[:500] or f"HTTP {status}"
    if data is None:
        failure = {"message": excerpt, "code": DEFAULT_ERROR_CODE}
    elif "error" in data:
        failure = failure_of(data["error"], excerpt)
    else:
        failure = failure_of(data, excerpt)
    return {**failure, "status": status}


# -- reading the body ---------------------------------------------------------------------


def json_object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def sse_events(text: str) -> Iterator[tuple[str | None, Event]]:
    """(event name, JSON object) of each server-sent event; `[DONE]`, comments and
    data that is no JSON object are skipped."""
    for block in text.replace("\r\n", "\n").split("\n\n"):
        name: str | None = None
        data: list[str] = []
        for line in block.split("\n"):
            key, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if key == "event":
                name = value
            elif key == "data":
                data.append(value)
        if data and (event := json_object("\n".join(data))) is not None:
            yield name, event


def is_sse(text: str) -> bool:
    return any(line.startswith("data:") for line in text.splitlines())


def as_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def as_mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
