"""Side requests, whatever their wording: a model call an agent makes besides the turn.

Agents ask the model for a session title, a summary or a "who speaks next" check beside
the turn, each in its own words (opencode: "You are a title generator...", with the
user's prompt as the last message, exactly like the turn). What they share is their
shape: a coding agent offers the model its tools on every turn and none on a side
request. So, within one run, a request without tools is a side request once the agent
has shown that its turns carry tools.

An agent that sends the side request first (opencode sends its title request, then the
turn 0.5-0.8 s later on an idle 2-core machine, while it lists its MCP tools) has shown
nothing yet; the first tool-less request of a run therefore waits up to `HOLD` seconds
for a request with tools.
If one comes, the tool-less one is a side request; if none comes, this agent's turns
carry no tools (a chat-only agent) and its tool-less requests are turns from then on.
The hold is only paid where a script asks for it (a `match: {request: side}` entry).
"""

from __future__ import annotations

import asyncio

HOLD = 10.0
"""Seconds the first tool-less request of a run waits for the agent's turn to show tools:
many times opencode's gap, for a loaded machine (at 3 s, a `make test` with four workers
on two cores saw opencode's turn come later, and its title request took the turn's
entry); a chat-only agent pays it once a run, and only under a script with a side entry."""


class SideRequests:
    """One run's view of which of its requests are side requests."""

    def __init__(self) -> None:
        self._tools_seen: asyncio.Event | None = None
        self._tool_less_turns = False

    def _event(self) -> asyncio.Event:
        # Created on the server's loop, at the first request (the run is built elsewhere).
        if self._tools_seen is None:
            self._tools_seen = asyncio.Event()
        return self._tools_seen

    def seen(self, has_tools: bool) -> bool:
        """Note a request's shape; whether it is a side request by what is known now
        (no waiting): tool-less after the agent's turns have shown tools."""
        if has_tools:
            self._event().set()
            return False
        return self._event().is_set()

    async def classify(self, has_tools: bool, hold: float | None = None) -> bool:
        """Whether a request is a side request, waiting up to `hold` (default `HOLD`) for
        the agent's turn to show its tools when nothing has yet (module docstring)."""
        if self.seen(has_tools) or has_tools:
            return not has_tools
        if self._tool_less_turns:
            return False
        try:
            await asyncio.wait_for(self._event().wait(), HOLD if hold is None else hold)
        except TimeoutError:
            self._tool_less_turns = True
            return False
        return True
