"""The session event vocabulary (see `acp_plus/ARCHITECTURE.md`).

Every event is a plain JSON object with a `type`. The store adds `seq` (per session,
from 1) and `at` (ISO-8601 UTC time) when it commits one; the constructors here build
the uncommitted form. Everything downstream (the ACP projection, replay, the model
request builder) reads committed events only, so these shapes are the contract between
the loop and the rest of the bridge.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NotRequired, TypedDict

ApprovalOutcome = Literal["allowed-once", "rejected", "cancelled", "unavailable"]
TurnEndKind = Literal["completed", "max-tokens", "aborted", "blocked", "error", "interrupted"]


class Usage(TypedDict):
    """Token counts of one model step (disjoint: `inputTokens` excludes cached input)."""

    inputTokens: int
    outputTokens: int
    reasoningTokens: NotRequired[int]
    cacheReadTokens: NotRequired[int]
    cacheWriteTokens: NotRequired[int]


class RouteRef(TypedDict):
    """The route a model step ran on."""

    provider: str
    model: str
    effort: str | None


class Failure(TypedDict):
    """A provider or loop failure carried by a `turn/end` of kind `error`."""

    message: str
    code: str


class TurnEndReason(TypedDict):
    """Why a turn ended; `error` is present only for kind `error`."""

    kind: TurnEndKind
    error: NotRequired[Failure]


class TurnStart(TypedDict):
    type: Literal["turn/start"]
    turn: int


ContextSource = Literal[
    "workspace-instructions",
    "runtime-context",
    "repeat-reminder",
    "hook-context",
    "job-notice",
    "skill-catalog",
    "skill-invocation",
    "goal-round",
    "goal-notice",
    "subagent-notice",
    "agent-message",
]
SourceFields = Mapping[str, Any]
"""A source with more fields than its name: a goal round's `{source, goal}`."""


class UserMessage(TypedDict):
    type: Literal["user/message"]
    id: str
    turn: int
    content: list[dict[str, Any]]
    source: NotRequired[ContextSource]
    """Set on model context the agent adds (not typed by the user): replay skips it."""
    entries: NotRequired[list[dict[str, str]]]
    """A `skill-catalog` message's skills (`name`, `description`), as its text lists them."""
    goal: NotRequired[dict[str, Any]]
    """With `source: goal-round`: the round's `{id, revision, round}` (core/goals.py)."""


class RouteSet(TypedDict):
    type: Literal["route/set"]
    provider: str
    model: str
    effort: str | None
    explicitEffort: bool


class AssistantMessage(TypedDict):
    type: Literal["assistant/message"]
    id: str
    turn: int
    blocks: list[dict[str, Any]]
    route: RouteRef
    usage: NotRequired[Usage]
    meter: NotRequired[int]
    """With usage: the token meter's reading after this step (`core.token_meter`)."""


class ToolCall(TypedDict):
    type: Literal["tool/call"]
    turn: int
    callId: str
    name: str
    arguments: str


class ApprovalAsked(TypedDict):
    type: Literal["approval/asked"]
    turn: int
    callId: str
    tool: str
    reason: str


class ApprovalDecided(TypedDict):
    type: Literal["approval/decided"]
    turn: int
    callId: str
    outcome: ApprovalOutcome


class ToolResult(TypedDict):
    type: Literal["tool/result"]
    turn: int
    callId: str
    content: list[dict[str, Any]]
    isError: bool


class TurnEnd(TypedDict):
    type: Literal["turn/end"]
    turn: int
    reason: TurnEndReason


def turn_start(turn: int) -> TurnStart:
    """A new turn begins (turn numbers are 1-based and consecutive)."""
    return {"type": "turn/start", "turn": turn}


def user_message(msg_id: str, turn: int, content: list[dict[str, Any]]) -> UserMessage:
    """The admitted user content of a turn (text blocks and image references)."""
    return {"type": "user/message", "id": msg_id, "turn": turn, "content": content}


def context_message(msg_id: str, turn: int, source: ContextSource, text: str) -> UserMessage:
    """Model context the agent adds to a turn (workspace instructions, runtime context):
    a user-role message for the model, never shown to the client as a prompt."""
    return {
        "type": "user/message",
        "id": msg_id,
        "turn": turn,
        "content": [text_block(text)],
        "source": source,
    }


def with_source(message: UserMessage, source: ContextSource | SourceFields | None) -> UserMessage:
    """`message` as model context from `source` (a name, or the fields a source brings)."""
    if source is None:
        return message
    if isinstance(source, str):
        return {**message, "source": source}
    return {**message, **source}  # type: ignore[typeddict-item]


def route_set(provider: str, model: str, effort: str | None, explicit_effort: bool) -> RouteSet:
    """The route changed; `explicitEffort` tells resume whether the effort was chosen."""
    return {
        "type": "route/set",
        "provider": provider,
        "model": model,
        "effort": effort,
        "explicitEffort": explicit_effort,
    }


def assistant_message(
    msg_id: str,
    turn: int,
    blocks: list[dict[str, Any]],
    route: RouteRef,
    usage: Usage | None = None,
) -> AssistantMessage:
    """One committed model step: only closed blocks (or the abort prefix)."""
    event: AssistantMessage = {
        "type": "assistant/message",
        "id": msg_id,
        "turn": turn,
        "blocks": blocks,
        "route": route,
    }
    if usage is not None:
        event["usage"] = usage
    return event


def tool_call(turn: int, call_id: str, name: str, arguments: str) -> ToolCall:
    """A tool call is about to run; `arguments` stays the raw JSON string."""
    return {
        "type": "tool/call",
        "turn": turn,
        "callId": call_id,
        "name": name,
        "arguments": arguments,
    }


def approval_asked(turn: int, call_id: str, tool: str, reason: str) -> ApprovalAsked:
    """An approval was requested for a tool call."""
    return {
        "type": "approval/asked",
        "turn": turn,
        "callId": call_id,
        "tool": tool,
        "reason": reason,
    }


def approval_decided(turn: int, call_id: str, outcome: ApprovalOutcome) -> ApprovalDecided:
    """The approval chain answered."""
    return {"type": "approval/decided", "turn": turn, "callId": call_id, "outcome": outcome}


def tool_result(
    turn: int, call_id: str, content: list[dict[str, Any]], is_error: bool
) -> ToolResult:
    """The result the model sees for a tool call."""
    return {
        "type": "tool/result",
        "turn": turn,
        "callId": call_id,
        "content": content,
        "isError": is_error,
    }


def turn_end(turn: int, kind: TurnEndKind, error: Failure | None = None) -> TurnEnd:
    """The turn is over; `error` only accompanies kind `error`."""
    reason: TurnEndReason = {"kind": kind}
    if error is not None:
        reason["error"] = error
    return {"type": "turn/end", "turn": turn, "reason": reason}


def text_block(text: str) -> dict[str, Any]:
    """A text content block (the shape shared by messages and tool results)."""
    return {"type": "text", "text": text}


# Event types the increments add (acp_plus/features/); named here, beside the core's, so
# the projection (protocol/updates.py) and replay read them without importing the features.
COMMAND_RUN = "command/run"
COMMAND_DONE = "command/done"
MODE_SET = "plan/mode"
