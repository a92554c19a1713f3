"""Tools: the registry, built-ins, catalog fixture tools and MCP tools."""

from acp_plus.core.tools.base import Tool, ToolContext, ToolRegistry, ToolResult

__all__ = ["Tool", "ToolContext", "ToolRegistry", "ToolResult"]
