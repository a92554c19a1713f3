"""The `ralph` family as native 0.1.0-rc.8 mounts it: one tool that runs a foreground
loop of fresh child agents toward one objective, and its system-prompt paragraph
(`ralph_text.py` holds the words).

Each round starts a fresh child whose result the loop awaits
(`Subagents.start_for_caller`: no parent conversation, no earlier child's session, no
notice to the parent) that must report through `structured_output`; only that report
crosses to the next round. The loop ends when a worker reports completion or a
blocker (the call's result), at the round limit (the last report, work remaining), or
when a round fails: a child that gave no report, or a report native's checks refuse
(the call's error). Native runs this loop as a fixed workflow script whose only inputs
are the model's data; acp-plus runs the same loop here, without a script engine.
Cancelling the call cancels the round's child.
"""

from __future__ import annotations

from typing import Any

from acp_plus.core.subagents import SubagentError, Subagents
from acp_plus.core.tools.arg_check import arguments_error
from acp_plus.core.tools.base import Tool, ToolContext, ToolResult
from acp_plus.core.tools.ralph_text import (
    CANCELLED,
    DESCRIPTION,
    GUIDANCE,
    MAX_HANDOFF_CHARS,
    MAX_RESULT_CHARS,
    MAX_ROUNDS,
    PARAMETERS,
    REPORT_SCHEMA,
    RalphError,
    check_report,
    max_rounds,
    objective,
    render_result,
    round_failure,
    round_prompt,
)

RALPH_GUIDANCE = GUIDANCE


class RalphTool:
    """`ralph`: checks in native's order, then the rounds."""

    name = "ralph"
    description = DESCRIPTION
    parameters = PARAMETERS
    cancelled_text = CANCELLED

    def __init__(
        self,
        agents: Subagents,
        *,
        ceiling: int = MAX_ROUNDS,
        max_handoff: int = MAX_HANDOFF_CHARS,
        max_result: int = MAX_RESULT_CHARS,
    ):
        self.agents = agents
        self.ceiling = ceiling
        self.max_handoff = max_handoff
        self.max_result = max_result

    def approval_reason(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """Nothing to ask: each round's child asks (and is refused) for what it does."""
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        problem = arguments_error(PARAMETERS, args)
        if problem is not None:
            return ToolResult.text(f"Error: {problem}", is_error=True)
        try:
            goal = objective(str(args["objective"]))
            rounds = max_rounds(args.get("maxRounds"), self.ceiling)
            return ToolResult.text(await self._loop(ctx.session_id, goal, rounds))
        except RalphError as exc:
            return ToolResult.text(f"Error: {exc}", is_error=True)

    async def _loop(self, session: str, goal: str, rounds: int) -> str:
        """The rounds, one fresh child each, to the run's end (its text, or raises)."""
        previous: dict[str, Any] | None = None
        for number in range(1, rounds + 1):
            prompt = round_prompt(goal, number, rounds, previous)
            report = await self._round(session, f"Ralph round {number}", prompt)
            if report is None:
                raise RalphError(round_failure(number, previous, self.max_result))
            check_report(report, self.max_handoff)
            if report["status"] in ("complete", "blocked"):
                return render_result(str(report["status"]), number, report, self.max_result)
            previous = report
        assert previous is not None  # every round continued
        return render_result("budget-limited", rounds, previous, self.max_result)

    async def _round(self, session: str, label: str, prompt: str) -> dict[str, Any] | None:
        """One round's child, to its report (None: it gave none)."""
        try:
            child = await self.agents.start_for_caller(
                session, label, prompt, REPORT_SCHEMA, listed=False
            )  # rc.8's rounds are one-shot children: list_agents shows none of them
        except SubagentError as exc:
            raise RalphError(f"Ralph workflow failed: {exc}") from exc
        try:
            result = await child.result()
        finally:
            await child.dispose()
        if result.get("stopReason") != "completed":
            return None
        structured = result.get("structured")
        return structured if isinstance(structured, dict) else None


def ralph_tools(agents: Subagents) -> list[Tool]:
    """The family's tools: `ralph`, its rounds started through `agents`."""
    return [RalphTool(agents)]


__all__ = ["RALPH_GUIDANCE", "RalphTool", "ralph_tools"]
