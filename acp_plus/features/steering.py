"""M7 `_session/steering` (docs/contract.md §6.6): the parameters and the answers. Pure.

A client adds text to the turn that is running; the agent commits it as a user message
at its next step boundary (`Agent.steer`), so the model's next request carries it. When
no turn runs the answer says a prompt is required instead; it is never an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from acp_plus.core.js_json import js_trim
from acp_plus.protocol.content import text_only
from acp_plus.wire.errors import RpcError, from_exception, invalid_params

METHOD = "_session/steering"
META = {"steering": {"supported": True}}
"""The top-level `_meta` of the `initialize` result that advertises the method."""

INJECTED: dict[str, str] = {"outcome": "injected"}
PROMPT_REQUIRED: dict[str, str] = {"outcome": "promptRequired", "reason": "noRunningTurn"}


def not_an_object() -> RpcError:
    """Params that are not an object: the reference's parser throws a plain error, so
    the answer is the generic -32603 with `data.details` (§6.6)."""
    return from_exception(ValueError(f"{METHOD} params must be an object"))


def session_id(params: Any) -> str:
    """The target session id; refuses non-object params and a missing or empty id."""
    if not isinstance(params, Mapping):
        raise not_an_object()
    value = params.get("sessionId")
    if not isinstance(value, str) or not value:
        raise invalid_params(f"{METHOD} requires a sessionId")
    return value


def steering_text(prompt: Any) -> str | None:
    """The text to inject: a non-empty list of `{type: text, text}` blocks joined with
    nothing between them; None (answer `promptRequired`) for anything else, including
    text that is blank once trimmed."""
    joined = text_only(prompt)
    return joined if joined is not None and js_trim(joined) else None
