"""The shape most built-in tools share: nothing to ask, native's argument checks, then
the tool's answer as one text block, and the family's own refusals as `Error: ...`
(the job, goal and subagent tools)."""

from __future__ import annotations

from typing import Any, ClassVar

from acp_plus.core.tools.arg_check import arguments_error
from acp_plus.core.tools.base import ToolContext, ToolResult


class AnsweringTool:
    """Subclasses set `name`, `description`, `parameters`, the exceptions that are the
    family's refusals (`refusals`), and `answer`; `precheck` adds a value check native
    makes after the schema's."""

    name = ""
    description = ""
    parameters: ClassVar[dict[str, Any]] = {}
    refusals: ClassVar[tuple[type[Exception], ...]] = ()

    def approval_reason(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """The session's own jobs, goals and children: nothing to ask (native)."""
        return None

    def precheck(self, args: dict[str, Any]) -> str | None:
        """A check past the schema's, in native's words; None when the call may go on."""
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Native's checks, then the answer; a refusal is the call's error."""
        problem = arguments_error(self.parameters, args) or self.precheck(args)
        if problem is not None:
            return ToolResult.text(f"Error: {problem}", is_error=True)
        try:
            return ToolResult.text(await self.answer(args, ctx))
        except self.refusals as exc:
            return ToolResult.text(f"Error: {exc}", is_error=True)

    async def answer(self, args: dict[str, Any], ctx: ToolContext) -> str:
        """The tool's own work (subclasses)."""
        raise NotImplementedError


__all__ = ["AnsweringTool"]
