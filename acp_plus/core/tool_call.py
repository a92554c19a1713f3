"""One tool call from its parsed arguments to its result: the checks native makes before
it runs a call, the approval it may need, and the run itself (`Agent.run_checked`)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any, Protocol

from acp_plus.core import events as ev
from acp_plus.core.approvals import ApprovalChain, ApprovalRequest
from acp_plus.core.approvals.gate import Gate, Screen, approve
from acp_plus.core.sandbox import SandboxMode
from acp_plus.core.store import SessionLog
from acp_plus.core.tool_arguments import NOT_AN_OBJECT_TEXT
from acp_plus.core.tool_schedule import dispatching
from acp_plus.core.tools.base import ToolContext, ToolRegistry, ToolResult, cancelled_text

log = logging.getLogger("acp_plus.core.agent")


class CallingAgent(Protocol):
    """What a call needs of the agent that makes it (`core/agent.py`)."""

    log: SessionLog
    cwd: Path
    sandbox: SandboxMode
    tools: ToolRegistry
    approvals: ApprovalChain
    gate: Gate | None

    def commit(self, event: Any) -> dict[str, Any]: ...

    @property
    def turn_model(self) -> tuple[str, bool]: ...


async def run_checked(
    agent: CallingAgent, turn: int, call_id: str, name: str, args: Any, ask: str | None = None
) -> ToolResult:
    """A call past its arguments' round trip: `ask` (a hook's question) first, then the
    guard, the tool's own approval reason, the approval chain, and the tool's body."""
    tool = agent.tools.get(name)
    if tool is None:
        return ToolResult.text(f'Error: unknown tool "{name}"', is_error=True)
    if not isinstance(args, dict):
        if not getattr(tool, "raw_arguments", False):
            return ToolResult.text(NOT_AN_OBJECT_TEXT, is_error=True)
        # Catalog tools get what the model wrote, null as {} (docs/parity-stream.md).
        args = {} if args is None else args
    ctx = ToolContext(agent.log.id, agent.cwd, call_id, turn, agent.sandbox, *agent.turn_model)
    gate = agent.gate  # the guard comes first: a deny is never asked about
    screen = gate.screen(turn, call_id, name, args) if gate else Screen()
    if screen.error is not None:
        return ToolResult.text(screen.error, is_error=True)
    try:
        reason = ask or tool.approval_reason(args, ctx) or screen.reason
    except Exception as exc:
        return ToolResult.text(f"tool {name} failed: {exc}", is_error=True)
    if reason is not None:
        shown = args if isinstance(args, dict) else {}
        asked = ApprovalRequest(agent.log.id, call_id, name, shown, reason)
        decision = await approve(
            agent.commit, agent.gate, agent.approvals, asked, turn, screen.rule
        )
        if decision.outcome != "allowed-once":
            worded = getattr(tool, "refusal", lambda *_: None)  # native's, per tool
            text = decision.message or worded(args, decision.outcome)
            return ToolResult.text(text or decision.refusal(name), is_error=True)
    dispatching()  # a pool's next call starts now (tool_schedule.py)
    try:
        return await (gate.run(tool, args, ctx) if gate else tool.run(args, ctx))
    except asyncio.CancelledError:
        # Settle the call in the log so the client does not see it running forever.
        agent.commit(ev.tool_result(turn, call_id, [ev.text_block(cancelled_text(tool))], True))
        raise
    except Exception as exc:
        log.debug("tool %s raised", name, exc_info=True)
        return ToolResult.text(f"tool {name} failed: {exc}", is_error=True)
