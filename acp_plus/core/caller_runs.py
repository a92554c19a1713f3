"""What a caller reads of a child it awaits (a workflow's `agent()`): the result native's
subagent manager captures when the child's turn settles (`run_result`), the handle the
workflow engine holds (`CallerRun`), and the child made ordinary again once the caller
has its result (`unstructure`). `core/subagents.py` starts these children.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from acp_plus.core.tools.structured import INSTRUCTION, StructuredTools

if TYPE_CHECKING:
    from acp_plus.core.agent import Agent


def closing_text(events: Sequence[Mapping[str, Any]], turn: int) -> list[str]:
    """The non-empty text blocks of the turn's last assistant message (a caller's
    output, a parent's notice)."""
    for event in reversed(events):
        if event.get("type") == "assistant/message" and event.get("turn") == turn:
            blocks = event.get("blocks") or []
            return [str(b["text"]) for b in blocks if b.get("type") == "text" and b.get("text")]
    return []


_STOP_REASONS = {"aborted": "aborted", "interrupted": "aborted", "blocked": "refusal"}


def run_result(
    kind: str, events: Sequence[Mapping[str, Any]], turn: int, tools: Any
) -> dict[str, Any]:
    """What a caller reads of a child's settled turn, as native's manager captures it:
    `output` (the last non-empty assistant message's text blocks), `stopReason` (native's
    names for the turn's end), and `structured` when a schema's result was recorded;
    a structured child that completed without one failed (`error`)."""
    output = [{"type": "text", "text": text} for text in closing_text(events, turn)]
    reason = _STOP_REASONS.get(kind, kind)
    if reason not in ("completed", "max-tokens", "aborted", "refusal"):
        reason = "error"
    structured = getattr(tools, "output", None)
    if structured is None:
        return {"output": output, "stopReason": reason}
    if structured.recorded:
        return {"output": output, "stopReason": reason, "structured": structured.value}
    return {"output": output, "stopReason": "error" if reason == "completed" else reason}


@dataclass
class CallerRun:
    """A child started for a caller (`Subagents.start_for_caller`): the workflow engine's
    `ChildRun` (`core/tools/workflow_engine.py`)."""

    id: str
    task: asyncio.Task[dict[str, Any]] = field(repr=False)

    async def result(self) -> dict[str, Any]:
        """`{output, stopReason, structured?}` once the child's turn ends."""
        return await asyncio.shield(self.task)

    async def dispose(self) -> None:
        """Stop the child's turn if it still runs; it stays listed, inactive."""
        if not self.task.done():
            self.task.cancel()
        await asyncio.wait({self.task})


def unstructure(agent: Agent) -> None:
    """A structured child whose caller has its result: a later message wakes it with
    the ordinary tools and system prompt, as native's cold-resumed child has them."""
    tools = agent.tools
    if isinstance(tools, StructuredTools):
        guidance = tuple(g for g in agent.context.guidance if g != INSTRUCTION)
        agent.tools, agent.context = tools.base, replace(agent.context, guidance=guidance)


__all__ = ["CallerRun", "closing_text", "run_result", "unstructure"]
