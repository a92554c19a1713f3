"""The built-in tool families a scenario can switch on (its `builtin_tools` key).

A family is a group of an agent's own tools that native mounts as one unit of its
composition (`parity.targets.dsh_rows.FAMILY_PLUGINS` names the rows), and that acp-plus
offers as one unit (its `builtin_tools` setting, `acp_plus/core/tools/families.py`).
Both sides get exactly the scenario's families, so the model view's `tools` and
`system` compare like everything else (docs/scenarios.md, `builtin_tools`).

Pure data: names, and which family owns each built-in tool name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

ALL = "all"
"""The `builtin_tools` value that switches every family on."""

FAMILY_TOOLS: Mapping[str, tuple[str, ...]] = {
    "bash": ("bash",),
    "fs": ("read", "write", "edit", "read_image"),
    "fs-search": ("glob", "grep"),
    "jobs": ("job_output", "job_kill", "job_list"),
    "todo": ("todo_write",),
    "working-directory": ("working_directory",),
    "plan-mode": ("exit_plan_mode",),
    "skill": ("skill",),
    "web": ("web_search", "web_fetch"),
    "goal": ("create_goal", "get_goal", "update_goal"),
    "workflow": ("workflow",),
    "ralph": ("ralph",),
    "subagent": ("subagent", "subagent_fork", "list_agents", "send_message", "interrupt_agent"),
    "hooks": (),
}
"""Each family and the tools native 0.2.1-rc.2 shows the model for it (observed with one
family's rows mounted at a time; 0.1.0-rc.8's `fs` has no `read_image`, it has no
`fs-search`, `web`, `working-directory` or `plan-mode`, and `ralph` is rc.8's alone).
The order is native 0.2.1-rc.2's order of the families' prompt guidance. `hooks` has no
tool: rc.8's Claude Code and Codex hook rows, which run around the other tools."""

FAMILIES: tuple[str, ...] = tuple(FAMILY_TOOLS)
"""Every family name, in native's order."""

TOOL_FAMILY: Mapping[str, str] = {
    tool: family for family, tools in FAMILY_TOOLS.items() for tool in tools
}
"""Built-in tool name -> its family."""


def families_of(tool_names: Iterable[str]) -> tuple[str, ...]:
    """The families owning these built-in tool names, in `FAMILIES` order; a name no
    family owns (another agent's own tool, e.g. acp-plus's `ask_user_question`) adds
    none."""
    wanted = {TOOL_FAMILY[name] for name in tool_names if name in TOOL_FAMILY}
    return tuple(family for family in FAMILIES if family in wanted)


def ordered(names: Iterable[str]) -> tuple[str, ...]:
    """Known family names in `FAMILIES` order (`all` is every family)."""
    chosen = set(names)
    if ALL in chosen:
        return FAMILIES
    return tuple(family for family in FAMILIES if family in chosen)


def tools_named(names: Iterable[str]) -> tuple[str, ...]:
    """Built-in tool names from family and tool names: a family stands for each of its
    tools (`fs` -> read, write, edit, read_image), a tool for itself; in `TOOL_FAMILY`'s
    order, each once. A name that is neither is left out (callers check names)."""
    chosen = set(names)
    return tuple(tool for tool, family in TOOL_FAMILY.items() if tool in chosen or family in chosen)
