"""Catalog fixture tools: registered under the catalog's names, run through `/tools/call`."""

from __future__ import annotations

from typing import Any

from acp_plus.core.llm.parity_stream import FixtureToolSpec, ParityStreamProvider, ToolCallFailed
from acp_plus.core.tools.base import ToolContext, ToolResult


class FixtureTool:
    """One fixture tool of a parity-stream catalog."""

    raw_arguments = True
    """It takes whatever JSON the model wrote (a list, a string, the text itself when it
    is not JSON), as native's plugin passes it on; the agent checks other tools' shape."""

    cancelled_text = "Error: [object Object]"
    """Native's plugin request rejects with the turn's abort reason, a plain object, and
    native's tool error text is `Error: ` and that value as a string (base.cancelled_text)."""

    def __init__(self, spec: FixtureToolSpec, host: ParityStreamProvider):
        self._spec = spec
        self._host = host

    @property
    def name(self) -> str:
        """The catalog name, unchanged."""
        return self._spec["name"]

    @property
    def description(self) -> str:
        """The catalog description."""
        return self._spec["description"]

    @property
    def parameters(self) -> dict[str, Any]:
        """The catalog's JSON Schema."""
        return self._spec["parameters"]

    def approval_reason(self, args: Any, ctx: ToolContext) -> str | None:
        """`approval: ask` tools go through the approval chain before `/tools/call`."""
        if self._spec["approval"] == "ask":
            return f"tool {self.name} requires approval"
        return None

    async def run(self, args: Any, ctx: ToolContext) -> ToolResult:
        """POST `/tools/call`; cancellation closes the request so the fake sees the abort."""
        try:
            content, is_error = await self._host.call_tool(self.name, ctx.call_id, args)
        except ToolCallFailed as exc:
            return ToolResult.text(str(exc), is_error=True)
        return ToolResult(content, is_error)


async def fixture_tools(host: ParityStreamProvider) -> list[FixtureTool]:
    """The catalog's fixture tools, in catalog order."""
    return [FixtureTool(spec, host) for spec in await host.fixture_tools()]
