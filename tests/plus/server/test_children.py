"""What a child agent inherits from its parent session (`acp_plus/server/children.py`)."""

from __future__ import annotations

from typing import Any, ClassVar

from acp_plus.core.tools.base import ToolRegistry
from acp_plus.core.tools.mcp_resources import resource_tools
from acp_plus.core.tools.todo_family import TodoWriteTool
from acp_plus.server.children import shared_tools


class SessionTool:
    """A stand-in for an MCP server's tool: the parent session's own."""

    name = "mcp__srv__echo"
    description = ""
    parameters: ClassVar[dict[str, Any]] = {"type": "object"}
    session_only = True


def test_a_child_gets_the_parents_tools_but_its_mcp_servers() -> None:
    parent = ToolRegistry([TodoWriteTool(), SessionTool(), *resource_tools({"srv": object()})])  # type: ignore[list-item, dict-item]
    assert len(parent.names()) == 5
    assert shared_tools(parent).names() == ["todo_write"]
