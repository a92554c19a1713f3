"""The agents' own tools as `parity explore --builtin-tools` calls them: each tool's
parameters as native shows them to the model, and the kind of value each takes.

Native 0.2.1-rc.2's definitions (`parity show SCENARIO native --model` of a scenario
with `builtin_tools: all`), and `ralph`'s from 0.1.0-rc.8 (0.2.1-rc.2 mounts none);
tests/explore/test_builtin_tools.py holds the table to a live native's definitions, and
to every tool of every family `builtin_tools` accepts (`parity.scenario.families`),
plus the MCP resource tools native shows with an MCP server. Pure data.
"""

from __future__ import annotations

from collections.abc import Mapping

Params = Mapping[str, tuple[str, bool]]
"""Parameter -> (kind of value, required)."""

_SANDBOX: Params = {"justification": ("text", False), "sandbox_permissions": ("sandbox", False)}
"""The two parameters a sandboxed tool takes for a one-shot wider retry."""
_DELEGATE: Params = {
    "description": ("text", True),
    "prompt": ("text", True),
    "cwd": ("dir", False),
}

FAMILY_TOOLS: Mapping[str, Params] = {
    # bash
    "bash": {
        "command": ("command", True),
        "description": ("text", True),
        "workdir": ("path", False),
        "timeoutMs": ("int", False),
        "run_in_background": ("bool", False),
        **_SANDBOX,
    },
    # fs
    "read": {"file_path": ("path", True), "offset": ("int", False), "limit": ("int", False)},
    "write": {"file_path": ("path", True), "content": ("text", True), **_SANDBOX},
    "edit": {
        "file_path": ("path", True),
        "old_string": ("text", True),
        "new_string": ("text", True),
        "replace_all": ("bool", False),
        **_SANDBOX,
    },
    "read_image": {"file_path": ("path", True)},
    # fs-search
    "glob": {"pattern": ("glob", True), "path": ("path", False)},
    "grep": {"pattern": ("regex", True), "path": ("path", False), "include": ("glob", False)},
    # jobs
    "job_output": {"job_id": ("job", True), "wait": ("bool", False), "timeout_ms": ("int", False)},
    "job_kill": {"job_id": ("job", True), "reason": ("text", False)},
    "job_list": {},
    # todo
    "todo_write": {"todos": ("todos", True)},
    # working-directory, plan-mode, skill, web
    "working_directory": {"cd": ("dir", False)},
    "exit_plan_mode": {"plan": ("plan", True)},
    "skill": {"name": ("skill", True)},
    "web_search": {"queries": ("queries", True)},
    "web_fetch": {"url": ("url", True)},
    # goal
    "create_goal": {"objective": ("text", True), "max_goal_rounds": ("int", False)},
    "get_goal": {},
    "update_goal": {
        "goal_id": ("goal", True),
        "revision": ("int", True),
        "action": ("goal_action", True),
        "blocked_reason": ("text", False),
        "max_goal_rounds": ("int", False),
        "objective": ("text", False),
    },
    # workflow, ralph
    "workflow": {
        "script": ("script", True),
        "meta": ("meta", True),
        "args": ("args", False),
        "run_in_background": ("bool", False),
    },
    "ralph": {"objective": ("text", True), "maxRounds": ("int", False)},
    # subagent
    "subagent": _DELEGATE,
    "subagent_fork": _DELEGATE,
    "list_agents": {"scope": ("scope", False)},
    "send_message": {"agent_id": ("agent", True), "message": ("text", True)},
    "interrupt_agent": {"agent_id": ("agent", True)},
}
"""Every built-in tool of every family, with its parameters."""

_RESOURCE_LIST: Params = {"server": ("mcp_server", True), "cursor": ("cursor", False)}
MCP_RESOURCE_TOOLS: Mapping[str, Params] = {
    "list_mcp_resources": _RESOURCE_LIST,
    "list_mcp_resource_templates": _RESOURCE_LIST,
    "read_mcp_resource": {"server": ("mcp_server", True), "uri": ("uri", True)},
}
"""Native 0.2.1-rc.2's MCP resource tools: no family's, shown in every session with an
MCP server (docs/acp-plus.md, "MCP resources"), so a scenario that calls one gives its
sessions the harness's MCP bridge serving resources (`parity.explore.generate`)."""

TOOLS: Mapping[str, Params] = {**FAMILY_TOOLS, **MCP_RESOURCE_TOOLS}
"""Every tool a call may name, with its parameters."""
