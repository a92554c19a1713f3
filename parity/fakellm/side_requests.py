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
for a request with tools, and up to `BRIDGE_HOLD` if by then the agent has started the
harness's MCP bridge (which reads the run's catalog as it starts: an agent that starts
it will offer its tools, and only a slow machine keeps its turn). If one comes, the
tool-less one is a side request; if none comes, this agent's turns carry no tools (a
chat-only agent) and its tool-less requests are turns from then on. The hold is only
paid where a script asks for it (a `match: {request: side}` entry), and a chat-only
agent, which starts no bridge, pays the short one.
"""

from __future__ import annotations

import asyncio

HOLD = 3.0
"""Seconds the first tool-less request of a run waits for the agent's turn to show tools:
several times opencode's gap; a chat-only agent pays it once a run."""

BRIDGE_HOLD = 12.0
"""The same, in all, for an agent that has started the MCP bridge: at 3 s, a `make test`
with four workers on two cores saw opencode's turn come later, and its title request
took the turn's entry."""


class SideRequests:
    """One run's view of which of its requests are side requests."""

    def __init__(self) -> None:
        self._tools_seen: asyncio.Event | None = None
        self._tool_less_turns = False
        self._bridge = False

    def bridge_started(self) -> None:
        """The agent started the harness's MCP bridge (it read the run's catalog)."""
        self._bridge = True

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
        first = HOLD if hold is None else hold
        if await self._shown_within(first):
            return True
        if self._bridge and await self._shown_within(max(BRIDGE_HOLD - first, 0.0)):
            return True
        self._tool_less_turns = True
        return False

    async def _shown_within(self, seconds: float) -> bool:
        try:
            await asyncio.wait_for(self._event().wait(), seconds)
        except TimeoutError:
            return False
        return True
