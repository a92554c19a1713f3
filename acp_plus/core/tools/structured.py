"""A child agent's structured output, as native 0.2.1-rc.2 demands it of a workflow child
started with `agent(prompt, {schema})`: a `structured_output` tool whose parameters are
the schema, a closing paragraph in the system prompt telling the child to call it, and
a registry that ends the child's turn once a call is recorded.

The first call whose arguments fit the schema is the child's result ("Structured output
recorded.") and ends its turn after that step; arguments that do not fit are refused in
native's words (`invalid arguments: "value.n" must be an integer`) and the child may try
again; once recorded, any other call of the step is not run. A child that ends its turn
without a recorded call has no result (`core/subagents.py` reports it as failed).
"""

from __future__ import annotations

from typing import Any

from acp_plus.core.tools.arg_check import violations
from acp_plus.core.tools.base import Tool, ToolContext, ToolRegistry, ToolResult

TOOL_NAME = "structured_output"
INSTRUCTION = (
    f"When you have your final answer, you MUST report it by calling the `{TOOL_NAME}` tool "
    "with arguments matching its parameter schema exactly. Do not finish with a plain text "
    "answer: only the tool call counts as your result."
)
"""The paragraph native adds last to a structured child's system prompt."""
DESCRIPTION = (
    "Report your final structured result. Call this exactly once, when your answer is "
    "complete; the arguments must match this tool's parameter schema exactly."
)
RECORDED = "Structured output recorded."


class StructuredOutput:
    """The `structured_output` tool of one child: its schema is its parameters."""

    name = TOOL_NAME
    description = DESCRIPTION

    def __init__(self, schema: dict[str, Any]) -> None:
        self.parameters = dict(schema)
        self.schema = schema
        self.recorded = False
        self.value: Any = None

    def approval_reason(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """The child's own result: nothing to ask."""
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Record `args` when they fit the schema (native's root name is `value`)."""
        found = violations(self.schema, args, "value")
        if found:
            return ToolResult.text(f"Error: invalid arguments: {'; '.join(found)}", is_error=True)
        self.recorded, self.value = True, args
        return ToolResult.text(RECORDED)


class _NotRun:
    """Any call after the result was recorded: native's guard refuses it."""

    description = ""
    parameters: dict[str, Any] = {}  # noqa: RUF012 (never shown: the tool is not registered)

    def __init__(self, name: str) -> None:
        self.name = name

    def approval_reason(self, args: dict[str, Any], ctx: ToolContext) -> str | None:
        return None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult.text(
            f"Error: structured output already recorded: the run is complete, so "
            f"`{self.name}` is not executed",
            is_error=True,
        )


class StructuredTools(ToolRegistry):
    """A structured child's tools: its parent's plus `structured_output`; the turn ends
    with the step that recorded the result (`concluded`)."""

    def __init__(self, tools: ToolRegistry, schema: dict[str, Any]) -> None:
        self.output = StructuredOutput(schema)
        self.base = tools
        """The ordinary tools, the child's once its caller has the result."""
        own = [tool for name in tools.names() if (tool := tools.get(name)) is not None]
        super().__init__([*own, self.output])

    @property
    def concluded(self) -> bool:
        return self.output.recorded

    def get(self, name: str) -> Tool | None:
        tool = super().get(name)
        return _NotRun(name) if tool is not None and self.output.recorded else tool


__all__ = ["INSTRUCTION", "TOOL_NAME", "StructuredOutput", "StructuredTools"]
