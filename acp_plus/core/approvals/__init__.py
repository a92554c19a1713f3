"""The approval chain: ordered responders, first answer wins, fail closed.

A responder is `async (ApprovalRequest) -> outcome | None`; `None` passes the request
on. The ACP responder (client `session/request_permission`) goes last; features insert
responders before it (directory pre-approval, §6.2). When nobody answers, or a
responder raises, the outcome is `unavailable`: a request is never silently allowed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from acp_plus.core.events import ApprovalOutcome

log = logging.getLogger(__name__)

OUTCOMES: tuple[ApprovalOutcome, ...] = ("allowed-once", "rejected", "cancelled", "unavailable")


@dataclass(frozen=True)
class ApprovalRequest:
    """One tool call that needs a decision before it runs."""

    session_id: str
    call_id: str
    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    """The parsed arguments (empty when they were not a JSON object)."""
    reason: str = ""
    """Why approval is needed, e.g. `escalate sandbox to danger-full-access: ...`."""


Responder = Callable[[ApprovalRequest], Awaitable[ApprovalOutcome | None]]


class ApprovalChain:
    """Asks each responder in order until one answers."""

    def __init__(self, responders: Sequence[Responder] = ()):
        self._responders: list[Responder] = list(responders)
        self.answered_by: Responder | None = None
        """The responder that gave the last outcome (None: none did, or one failed)."""

    @property
    def responders(self) -> list[Responder]:
        """The responders, in the order they are asked (mutable: features insert theirs)."""
        return self._responders

    async def decide(self, request: ApprovalRequest) -> ApprovalOutcome:
        """Return the first responder's outcome; `unavailable` when none answers or one fails."""
        self.answered_by = None
        for responder in self._responders:
            try:
                outcome = await responder(request)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # fail closed, whatever the responder did
                log.warning("approval responder failed for %s: %s", request.call_id, exc)
                return "unavailable"
            if outcome is None:
                continue
            if outcome not in OUTCOMES:
                log.warning("approval responder gave unknown outcome %r", outcome)
                return "unavailable"
            self.answered_by = responder
            return outcome
        return "unavailable"


_DENIED = {
    "rejected": 'the user rejected tool "{name}"',
    "cancelled": 'approval for tool "{name}" was cancelled',
    "unavailable": 'tool "{name}" requires approval, but no approval channel is available',
}


def denied_text(outcome: str, name: str) -> str:
    """The failed tool result the model sees when an approval is not granted (native's
    texts, so the model reads the same refusal on both sides)."""
    return "Error: " + _DENIED.get(outcome, 'tool "{name}" was not approved').format(name=name)
