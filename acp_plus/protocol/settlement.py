"""How a prompt ends on the wire: turn endings to ACP stop reasons (§3.1) and the
settlement of `session/prompt` once its turn is quiescent (§3.2). Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from acp_plus.wire.errors import RpcError, internal_error

_STOP_REASONS: dict[str, str] = {
    "completed": "end_turn",
    "max-tokens": "max_tokens",
    # A hook or another owner aborted the turn; a client cancel is settled before this table.
    "aborted": "end_turn",
    # Crash recovery marks an unfinished turn interrupted when the session reloads.
    "interrupted": "cancelled",
    "blocked": "end_turn",
}


def stop_reason(kind: str) -> str:
    """ACP `stopReason` for a `turn/end` reason kind; unknown kinds give `end_turn`.

    `error` is settled before this lookup (it rejects the prompt), so it too falls to the
    default here; `refusal` and `max_turn_requests` are never produced.
    """
    return _STOP_REASONS.get(kind, "end_turn")


def settle(
    *,
    cancel_requested: bool,
    delivery_failure: str | None = None,
    foreign_failure: str | None = None,
    turn_end: Mapping[str, Any] | None = None,
) -> dict[str, str] | RpcError:
    """Outcome of a prompt once it is quiescent: the first matching rule of §3.2.

    `delivery_failure` is the message of a failed assistant-output conversion in the
    prompt's turn; `foreign_failure` the error chain of an agent failure outside it;
    `turn_end` the `reason` object of the correlated `turn/end` (None: none correlated).
    Returns the `session/prompt` result or the error to answer with.
    """
    if cancel_requested:
        return {"stopReason": "cancelled"}
    if delivery_failure is not None:
        return internal_error(f"assistant output delivery failed: {delivery_failure}")
    if foreign_failure is not None:
        return internal_error(f"turn failed: {foreign_failure}")
    if turn_end is None:
        return {"stopReason": "cancelled"}
    kind = turn_end.get("kind")
    if kind == "error":
        error = turn_end.get("error")
        message = error.get("message") if isinstance(error, Mapping) else None
        return internal_error(f"turn failed: {message if isinstance(message, str) else ''}")
    return {"stopReason": stop_reason(kind if isinstance(kind, str) else "")}
