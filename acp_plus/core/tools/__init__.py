"""Tools: the registry, built-ins, catalog fixture tools and MCP tools.

`session_tools` is the one thing defined here; the tool types are in `base.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from acp_plus.core.tools.base import Tool, ToolRegistry

if TYPE_CHECKING:
    from acp_plus.core.llm.parity_stream import ParityStreamProvider
    from acp_plus.core.tools.mcp import McpConnection


async def session_tools(
    *,
    fixture_host: ParityStreamProvider | None = None,
    mcp: Sequence[McpConnection] = (),
    builtin_tools: bool = True,
) -> ToolRegistry:
    """The tool list a session's model sees: catalog fixture tools, MCP tools, built-ins.

    For parity with native dsh-acp, run with `builtin_tools=False`: the model then sees
    exactly the catalog's fixture tools plus the MCP tools. A built-in whose name is
    already taken is left out rather than shadowing the catalog's tool.
    """
    from acp_plus.core.tools.builtin import builtin_tools as builtins
    from acp_plus.core.tools.fixture import fixture_tools

    registry = ToolRegistry()
    offered: list[Tool] = []
    if fixture_host is not None:
        offered += await fixture_tools(fixture_host)
    for connection in mcp:
        offered += connection.tools()
    for tool in offered:
        registry.register(tool)
    if builtin_tools:
        for builtin in builtins():
            if registry.get(builtin.name) is None:
                registry.register(builtin)
    return registry
